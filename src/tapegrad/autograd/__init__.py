"""tg.autograd: the public autograd API over the one engine (all three recording styles).

Most of it loads on first use (`__getattr__` below), so `import tapegrad` does not pay for
forward AD, `Function`, `GradManager`, `functional`, ... in a script that never touches them
(bench W7). `record` and `gradcheck` are imported here: each is a function named like its
own module, and the function must win (a submodule imported later would otherwise replace
the package attribute with the module).
"""

from __future__ import annotations

from .engine_api import backward, grad  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .modes import *  # noqa: F401,F403
from .modes import __all__ as _modes_all
from .record import *  # noqa: F401,F403
from .record import __all__ as _record_all

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
