"""`megengine.tensor`, the module: `from megengine.tensor import Tensor, Parameter` works.

As in MegEngine, the package attribute `mge.tensor` is the function that makes a tensor
(`mge.tensor([1.0])`); this module is what `import megengine.tensor` and `from
megengine.tensor import ...` load. The types live in `_tensor.py`.
"""

from __future__ import annotations

from ._tensor import Parameter, Tensor, tensor

__all__ = ["Tensor", "Parameter", "tensor"]
