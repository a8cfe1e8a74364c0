"""tg.nn.functional: every layer as a function, and the losses."""

from __future__ import annotations

from .functional_activations import *  # noqa: F401,F403
from .functional_adaptive_max import *  # noqa: F401,F403
from .functional_conv import *  # noqa: F401,F403
from .functional_core import *  # noqa: F401,F403
from .functional_ctc import *  # noqa: F401,F403
from .functional_distance import *  # noqa: F401,F403
from .functional_embedding_bag import *  # noqa: F401,F403
from .functional_grid import *  # noqa: F401,F403
from .functional_likelihood import *  # noqa: F401,F403
from .functional_losses_extra import *  # noqa: F401,F403
from .functional_misc import *  # noqa: F401,F403
from .functional_norms import *  # noqa: F401,F403
from .functional_patches import *  # noqa: F401,F403
from .functional_pool_extra import *  # noqa: F401,F403
from .functional_resample import *  # noqa: F401,F403
from .functional_stochastic import *  # noqa: F401,F403
