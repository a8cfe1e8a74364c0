"""tg.autograd: the public autograd API over the one engine (all three recording styles)."""

from __future__ import annotations

from . import forward_ad, functional, graph  # noqa: F401
from .anomaly import *  # noqa: F401,F403
from .engine_api import backward, grad  # noqa: F401
from .function import *  # noqa: F401,F403
from .grad_manager import *  # noqa: F401,F403
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .modes import *  # noqa: F401,F403
from .record import *  # noqa: F401,F403
