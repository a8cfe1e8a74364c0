"""tg.utils: `tensorboard` (SummaryWriter, optional extra), the install hints every
optional feature gives, and `cli` (argparse helpers)."""
from __future__ import annotations

from . import cli
from .hints import install_hint

__all__ = ["install_hint", "cli", "tensorboard"]


def __getattr__(name: str):
    if name == "tensorboard":  # imported on use: tensorboard is an optional extra
        import importlib

        return importlib.import_module(".tensorboard", __name__)
    raise AttributeError(f"module 'tapegrad.utils' has no attribute {name!r}")
