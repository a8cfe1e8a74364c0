"""tg.nn.functional: every layer as a function, and the losses."""

from __future__ import annotations

from .functional_activations import *  # noqa: F401,F403
from .functional_conv import *  # noqa: F401,F403
from .functional_core import *  # noqa: F401,F403
from .functional_likelihood import *  # noqa: F401,F403
from .functional_losses_extra import *  # noqa: F401,F403
