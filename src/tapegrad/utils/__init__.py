"""tg.utils: `checkpoint` (activation checkpointing), `tensorboard` (SummaryWriter, optional
extra), the install hints every optional feature gives, and `cli` (argparse helpers).
`checkpoint` and `tensorboard` load on first use."""

from __future__ import annotations

import importlib
import typing as _typing

from . import cli
from .hints import install_hint

__all__ = ["install_hint", "checkpoint", "cli", "tensorboard"]

_LAZY = ("checkpoint", "tensorboard")  # tensorboard is an optional extra


# what `__getattr__` loads on first use, declared for type checkers
if _typing.TYPE_CHECKING:
    import types

    from . import checkpoint as checkpoint
    from . import tensorboard as tensorboard


def __getattr__(name: str) -> types.ModuleType:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
