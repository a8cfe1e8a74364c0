"""tg.nn: modules, layers, losses, initialisation."""

from __future__ import annotations

from ..malloc_policy import apply_malloc_policy
from . import functional, init, utils  # noqa: F401
from .activation_layers import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .containers import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .embedding_bag import *  # noqa: F401,F403
from .extra_layers import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .losses_extra import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .norm_layers import *  # noqa: F401,F403
from .patch_layers import *  # noqa: F401,F403
from .pool_extra_layers import *  # noqa: F401,F403
from .resample_layers import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .stochastic_layers import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403

# large activations from the heap, not fresh page-faulting mmaps (tapegrad/malloc_policy.py)
apply_malloc_policy()
