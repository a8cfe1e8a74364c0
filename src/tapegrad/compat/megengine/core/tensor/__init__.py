"""`megengine.core.tensor`: importable; its internals are out of scope (see `dtype`)."""

from __future__ import annotations

from ...._facade import facade_getattr
from . import dtype  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (megengine.core.tensor)",
    {},
    {
        "amp": "mixed precision is not supported",
        "megbrain_graph": "MegEngine's graph runtime is out of scope",
    },
)
