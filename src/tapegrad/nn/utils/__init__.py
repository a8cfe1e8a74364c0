"""tg.nn.utils: gradient clipping, parameter vectors, packed sequences (`rnn`),
parametrizations (`parametrize`, `parametrizations`), the older weight and spectral
normalisation hooks, and folding a BatchNorm into the layer before it (`fusion`).

>>> total = tg.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # doctest: +SKIP
"""

from __future__ import annotations

from . import parametrizations, parametrize, rnn  # noqa: F401
from .clip_grad import *  # noqa: F401,F403
from .convert_parameters import *  # noqa: F401,F403
from .fusion import *  # noqa: F401,F403
from .hook_norms import *  # noqa: F401,F403
