"""Interop with other array libraries: DLPack both ways, and NumPy ufuncs on tensors.

- `tg.from_dlpack(x)` makes a tensor that shares memory with `x` (a NumPy array, a PyTorch
  tensor, a CuPy array, or anything else with `__dlpack__`); `Tensor.__dlpack__` and
  `__dlpack_device__` (via `export_dlpack`) hand a tensor's memory to `np.from_dlpack`,
  `torch.from_dlpack`, `cupy.from_dlpack`, zero copy.
- `array_ufunc` is `Tensor.__array_ufunc__`: a NumPy ufunc called on tensors. The ufuncs of
  Python's operators (`ndarray * t`, `np.add(a, t)`) and the math tapegrad has a function
  for (`np.exp(t)` is `tg.exp(t)`) run as tapegrad ops: the result is a tensor, recorded
  like any op. Any other ufunc, or a ufunc method (`np.add.reduce`, `np.add.at`, `out=`),
  runs in NumPy on the tensors' arrays and gives tensors back (what PyTorch does for
  `np.exp(torch_tensor)`), for tensors that don't require grad; with one that does, it
  raises a TypeError naming the tapegrad function to use, or `t.detach().numpy()`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .engine.state import AMBIENT
from .engine.versions import bump_version
from .tensor import Tensor, _wrap

__all__ = ["array_ufunc", "export_dlpack", "from_dlpack"]

_CPU, _CUDA = 1, 2  # DLPack device types (DLDeviceType)


def from_dlpack(x) -> Tensor:
    """A tensor on the same memory as `x` (zero copy): a write through either shows in both.

    `x` is any object with `__dlpack__` and `__dlpack_device__`: NumPy arrays and PyTorch
    CPU tensors give CPU tensors, CuPy arrays and PyTorch CUDA tensors give CUDA tensors
    (with CuPy installed). A PyTorch tensor that requires grad must be `.detach()`ed first.

    >>> a = np.arange(3.0)
    >>> t = tg.from_dlpack(a); t[0] = 7.0
    >>> float(a[0])
    7.0
    """
    if isinstance(x, Tensor):
        return x
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        hint = (
            " (a bare DLPack capsule, e.g. from torch.utils.dlpack.to_dlpack: pass the "
            "tensor itself instead)"
            if type(x).__name__ == "PyCapsule"
            else ""
        )
        raise TypeError(
            f"from_dlpack: expected an object with __dlpack__ (a NumPy array, a "
            f"PyTorch tensor, a CuPy array), got {type(x).__name__}{hint}"
        )
    device_type = int(x.__dlpack_device__()[0])
    try:
        if device_type == _CPU:
            arr = np.from_dlpack(x)
        elif device_type == _CUDA:
            arr = backend.cupy().from_dlpack(x)
        else:
            raise TypeError(
                f"from_dlpack: {type(x).__name__} lives on DLPack device type "
                f"{device_type}; tapegrad holds CPU (1) and CUDA (2) memory only"
            )
    except (RuntimeError, BufferError) as e:
        msg = str(e)
        if "requires grad" in msg or "require gradient" in msg:
            raise RuntimeError(
                "from_dlpack: the PyTorch tensor requires grad, so it can't be "
                "shared; pass x.detach() (tapegrad then tracks its own "
                "gradients)"
            ) from None
        raise RuntimeError(
            f"from_dlpack: {type(x).__name__} refused to export its memory ({msg})"
        ) from None
    return _wrap(arr)


def export_dlpack(
    t: Tensor,
    *,
    stream: Any = None,
    max_version: Any = None,
    dl_device: Any = None,
    copy: bool | None = None,
) -> Any:
    """`Tensor.__dlpack__`: a DLPack capsule of `t`'s memory, from its backend array."""
    if t._tapes & AMBIENT:
        raise RuntimeError(
            "Can't export tensors that require gradient, use tensor.detach() "
            "(it shares the memory; tapegrad keeps tracking the original)"
        )
    # only the keywords the caller gave: an older NumPy's __dlpack__ takes none of them
    kwargs: dict[str, Any] = {
        k: v
        for k, v in (
            ("stream", stream),
            ("max_version", max_version),
            ("dl_device", dl_device),
            ("copy", copy),
        )
        if v is not None
    }
    try:
        return t._data.__dlpack__(**kwargs)
    except BufferError as e:
        raise BufferError(f"Tensor.__dlpack__: {e}; export a copy instead: t.clone()") from None


# ufunc name -> (method of a tensor on the left, reflected method of a tensor on the right)
_BINARY_OPERATORS = {
    "add": ("__add__", "__radd__"),
    "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"),
    "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"),
    "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"),
    "matmul": ("__matmul__", "__rmatmul__"),
    "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"),
    "less": ("__lt__", "__gt__"),
    "less_equal": ("__le__", "__ge__"),
    "equal": ("__eq__", "__eq__"),
    "not_equal": ("__ne__", "__ne__"),
    "bitwise_and": ("__and__", "__rand__"),
    "bitwise_or": ("__or__", "__ror__"),
    "bitwise_xor": ("__xor__", "__rxor__"),
}
_UNARY_OPERATORS = {
    "negative": "__neg__",
    "absolute": "__abs__",
    "invert": "__invert__",
    "positive": "__pos__",
}
# ufuncs that are a tapegrad function of the same name
_FUNCTIONS = frozenset(
    (
        "exp",
        "expm1",
        "log",
        "log1p",
        "log2",
        "sqrt",
        "square",
        "reciprocal",
        "sin",
        "cos",
        "tan",
        "tanh",
        "sign",
        "floor",
        "ceil",
        "trunc",
        "isnan",
        "isinf",
        "isfinite",
        "logical_not",
        "logical_and",
        "logical_or",
        "logical_xor",
        "maximum",
        "minimum",
    )
)


def _tapegrad_call(name: str, inputs: tuple[Any, ...]) -> Any:
    """The ufunc as tapegrad runs it (recorded), or NotImplemented when it has no twin."""
    if name in _BINARY_OPERATORS and len(inputs) == 2:
        x, y = inputs
        if isinstance(x, Tensor):
            return getattr(x, _BINARY_OPERATORS[name][0])(y)
        return getattr(y, _BINARY_OPERATORS[name][1])(x)
    if name in _UNARY_OPERATORS and len(inputs) == 1:
        return getattr(inputs[0], _UNARY_OPERATORS[name])()
    if name in _FUNCTIONS:
        import tapegrad

        return getattr(tapegrad, name)(
            *(Tensor(x) if isinstance(x, np.ndarray) else x for x in inputs)
        )
    return NotImplemented


def _wrap_result(result: Any, cls: type[Tensor]) -> Any:
    if isinstance(result, tuple):
        return tuple(_wrap_result(r, cls) for r in result)
    if isinstance(result, (np.ndarray, np.generic)):
        return _wrap(np.asarray(result), 0, cls)
    return result


def array_ufunc(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`Tensor.__array_ufunc__` (see the module docstring for what runs where)."""
    name = ufunc.__name__
    if method == "__call__" and not kwargs:
        result = _tapegrad_call(name, inputs)
        if result is not NotImplemented:
            return result
    what = f"numpy.{name}" + ("" if method == "__call__" else f".{method}")
    outs = kwargs.get("out", ())
    outs = outs if isinstance(outs, tuple) else (outs,)
    tensors = [x for x in inputs + outs if isinstance(x, Tensor)]
    if any(t._tapes & AMBIENT for t in tensors):
        import tapegrad

        fix = (
            f"use tg.{name}(...) to keep the gradient, or "
            if hasattr(tapegrad, name) and method == "__call__"
            else "use the tapegrad function of the same math to keep the gradient, or "
        )
        raise TypeError(
            f"{what}: a tensor that requires grad can't go through NumPy (its "
            f"gradient would be lost); {fix}t.detach().numpy() to leave autograd"
        )
    if any(backend.device_of(t._data) != "cpu" for t in tensors):
        raise TypeError(
            f"{what}: NumPy can't run on a CUDA tensor; use tapegrad's function, or t.cpu()"
        )
    cls = type(tensors[0])
    cls = getattr(cls, "_array_class", cls)
    arrays = tuple(x._data if isinstance(x, Tensor) else x for x in inputs)
    if "out" in kwargs:
        kwargs = {**kwargs, "out": tuple(o._data if isinstance(o, Tensor) else o for o in outs)}
    result = getattr(ufunc, method)(*arrays, **kwargs)
    changed = list(outs) + ([inputs[0]] if method == "at" else [])  # written in place
    for t in changed:
        if isinstance(t, Tensor):
            bump_version(t)
    if "out" in kwargs:  # NumPy gives back the out arrays: give back the tensors
        given = tuple(outs)
        return given[0] if len(given) == 1 else given
    return _wrap_result(result, cls)
