"""`torch.utils.data.dataloader`: DataLoader, default_collate, default_convert,
get_worker_info (tapegrad.data)."""

from __future__ import annotations

from ...._facade import facade_getattr

__getattr__ = facade_getattr(
    __name__,
    "the PyTorch facade (torch.utils.data.dataloader)",
    {
        name: f"tapegrad.data:{name}"
        for name in ("DataLoader", "default_collate", "default_convert", "get_worker_info")
    },
)
