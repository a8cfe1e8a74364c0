"""`torch.cuda`: availability queries (tapegrad's GPU backend is CuPy)."""

from __future__ import annotations

from ..._facade import facade_getattr
from . import amp  # noqa: F401


def is_available() -> bool:
    """True when CuPy is installed and sees a GPU."""
    from .... import backend

    try:
        backend.cupy()
    except RuntimeError:
        return False
    return True


def device_count() -> int:
    return 1 if is_available() else 0


def manual_seed(seed) -> None:
    """Seed tapegrad's generator (one stream serves both devices)."""
    from ....random import manual_seed as _seed

    _seed(seed)


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    """Wait for queued GPU work (a no-op on the CPU)."""
    if is_available():
        from .... import backend

        backend.cupy().cuda.Device().synchronize()


def empty_cache() -> None:
    if is_available():
        from .... import backend

        backend.cupy().get_default_memory_pool().free_all_blocks()


__getattr__ = facade_getattr(
    __name__,
    "the PyTorch facade (torch.cuda)",
    {},
    {
        "Stream": "CUDA streams are not exposed by tapegrad",
    },
)
