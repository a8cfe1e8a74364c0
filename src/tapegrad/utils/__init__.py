"""tg.utils: helpers around training (`tg.utils.checkpoint`); submodules load on first use."""
from __future__ import annotations

import importlib

_SUBMODULES = ("checkpoint",)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
