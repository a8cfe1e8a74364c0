"""Facades that run MXNet, MegEngine and PyTorch code on tapegrad (docs/migrating-from-*.md).

    from tapegrad.compat import mxnet as mx          # Apache MXNet (autograd, Gluon)
    import tapegrad.compat.megengine as mge          # MegEngine (GradManager, F, M)
    import tapegrad.compat.torch as torch            # PyTorch (autograd, nn, optim)

Each facade maps names and sets defaults on the one engine; a name it does not provide
raises an AttributeError that says so. `python -m tapegrad.compat.run mxnet script.py`
runs an unchanged script. The facades load on first use: importing tapegrad costs nothing.
"""

from __future__ import annotations

import importlib

__all__ = ["mxnet", "megengine", "torch", "alias"]


def __getattr__(name: str):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(
        f"module {__name__!r} has no attribute {name!r}; the facades are {', '.join(__all__[:3])}"
    )
