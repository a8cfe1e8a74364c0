"""tg.autograd: the public autograd API over the one engine (all three recording styles).

Most of it loads on first use (`__getattr__` below), so `import tapegrad` does not pay for
forward AD, `Function`, `GradManager`, `functional`, ... in a script that never touches them
(bench W7). `record` and `gradcheck` are imported here: each is a function named like its
own module, and the function must win (a submodule imported later would otherwise replace
the package attribute with the module).
"""

from __future__ import annotations

import typing as _typing

from .engine_api import backward, grad  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .modes import *  # noqa: F401,F403
from .modes import __all__ as _modes_all
from .record import *  # noqa: F401,F403
from .record import __all__ as _record_all

# what `__getattr__` below loads on first use, declared for type checkers (which would see
# each as `object`: `class F(tg.autograd.Function)` would be an invalid base class)
if _typing.TYPE_CHECKING:
    from . import anomaly as anomaly
    from . import forward_ad as forward_ad
    from . import function as function
    from . import function_backward as function_backward
    from . import functional as functional
    from . import grad_manager as grad_manager
    from . import graph as graph
    from .anomaly import detect_anomaly as detect_anomaly
    from .anomaly import is_anomaly_enabled as is_anomaly_enabled
    from .anomaly import set_detect_anomaly as set_detect_anomaly
    from .function import Function as Function
    from .function import FunctionCtx as FunctionCtx
    from .function import once_differentiable as once_differentiable
    from .grad_manager import AttachDtypeError as AttachDtypeError
    from .grad_manager import GradManager as GradManager
    from .grad_manager import GradManagerGroup as GradManagerGroup

# name -> the submodule that holds it, imported the first time the name is read
_LAZY = {
    **dict.fromkeys(("detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"), "anomaly"),
    **dict.fromkeys(("Function", "FunctionCtx", "once_differentiable"), "function"),
    **dict.fromkeys(("GradManager", "GradManagerGroup", "AttachDtypeError"), "grad_manager"),
}
_LAZY_SUBMODULES = frozenset(
    (
        "anomaly",
        "forward_ad",
        "function",
        "function_backward",
        "functional",
        "grad_manager",
        "graph",
    )
)

__all__ = sorted(
    {"backward", "grad", "gradcheck", "gradgradcheck", *_modes_all, *_record_all, *_LAZY}
)


def __getattr__(name: str) -> object:
    """`tg.autograd.Function`, `tg.autograd.functional`, ... loaded on first use (see the top)."""
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)  # the import binds it here
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'tapegrad.autograd' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY.keys() | _LAZY_SUBMODULES)
