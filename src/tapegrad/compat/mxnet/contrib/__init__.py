"""`mx.contrib`: only `mx.contrib.autograd` (MXNet's early autograd API) is provided."""

from __future__ import annotations

from ..._facade import facade_getattr
from . import autograd  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.contrib)",
    {},
    {
        "onnx": "ONNX export is not provided",
        "quantization": "quantization is not provided",
        "text": "not provided",
        "tensorrt": "not provided",
    },
)
