"""`torch.onnx`: importable, so a script that imports it runs; exporting is not supported yet.

    >>> import tapegrad.compat.torch.onnx as onnx
    >>> onnx.is_in_onnx_export()  # onnx.export(...) raises NotImplementedError, saying why
    False
"""
from __future__ import annotations

from .._facade import facade_getattr


def export(model, args=(), f=None, *rest, **options):
    """Refuses: tapegrad cannot write ONNX files yet (the model itself runs as usual)."""
    raise NotImplementedError(
        "torch.onnx.export: ONNX export is not supported by tapegrad yet; save the weights "
        "with torch.save(model.state_dict(), path) (tapegrad's safetensors) instead"
    )


def is_in_onnx_export() -> bool:
    """False: tapegrad never traces for export."""
    return False


__getattr__ = facade_getattr(__name__, "the PyTorch facade (torch.onnx)", {}, {
    "dynamo_export": "ONNX export is not supported by tapegrad yet",
})
