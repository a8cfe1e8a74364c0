"""Exporting a custom `tg.autograd.Function` (or a layer) as ONNX nodes of its own choosing.

A Function class with a static `symbolic(g, *args)` method is one call of the trace: its
`forward` runs as usual (not traced into), and the export calls `symbolic` with a
`SymbolicContext` `g` and one argument per argument of `apply`: a `Value` for each tensor,
the Python value itself for the others (PyTorch's convention). `symbolic` writes nodes with
`g.op(...)` and returns one `Value` per tensor output of `forward`. A Function without
`symbolic` is traced through: the ops its `forward` runs are exported one by one.

    >>> class Clip(tg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x, low):
    ...         return x.clip(low, None)
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         ...
    ...     @staticmethod
    ...     def symbolic(g, x, low):
    ...         return g.op("Clip", x, g.constant(low, x.dtype))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._graph import Graph

_SUFFIXES = {"i", "f", "s", "t"}  # PyTorch's attribute-type suffixes: axis_i, alpha_f...


@dataclass(frozen=True)
class Value:
    """A value of the ONNX graph being written: its `name`, and, where the trace knows them
    (the inputs a `symbolic` gets), the traced `shape` and NumPy `dtype`."""

    name: str
    shape: tuple[int, ...] | None = None
    dtype: np.dtype[Any] | None = None

    @property
    def ndim(self) -> int | None:
        """The number of dimensions (None where the shape is not known)."""
        return None if self.shape is None else len(self.shape)


class SymbolicContext:
    """What a `symbolic(g, ...)` method gets as `g`: it writes ONNX nodes.

    `g.op("Gemm", a, b, transB_i=1)` appends a node and returns its output (`outputs=2`:
    a tuple of two). Inputs are `Value`s, None (an absent optional input), or numbers and
    arrays (made constants). Attributes are keyword arguments, named as in the ONNX operator,
    optionally with PyTorch's type suffix (`alpha_f`, `axes_i`, `mode_s`, `value_t`).
    `g.constant(array)` is a constant value; `g.opset` the opset written (17)."""

    def __init__(self, graph: Graph, opset: int, who: str) -> None:
        self._graph = graph
        self.opset = opset
        self._who = who

    def op(
        self,
        op_type: str,
        *inputs: Any,
        outputs: int = 1,
        domain: str = "",
        **attributes: Any,
    ) -> Value | tuple[Value, ...]:
        """Append one `op_type` node (of `domain`, the standard one by default)."""
        if not isinstance(op_type, str) or not op_type:
            raise TypeError(f"{self._who}: g.op needs an ONNX operator name, got {op_type!r}")
        if not isinstance(outputs, int) or isinstance(outputs, bool) or outputs < 1:
            raise ValueError(f"{self._who}: g.op(outputs=...) must be a positive int")
        names = [self._input(x, i, op_type) for i, x in enumerate(inputs)]
        attrs = {self._attr_name(k): self._attr_value(k, v) for k, v in attributes.items()}
        g = self._graph
        outs = [g.fresh(op_type.lower()) for _ in range(outputs)]
        if domain:
            g.domains.add(domain)
            attrs["domain"] = domain
        g.node(op_type, names, outs, **attrs)
        values = tuple(Value(name) for name in outs)
        return values[0] if outputs == 1 else values

    def constant(self, value: Any, dtype: Any = None, name: str | None = None) -> Value:
        """A constant of the graph (an initializer): an array, a number or a tensor, cast
        to `dtype` when given; `name` names it (otherwise equal constants are shared)."""
        array = _as_array(value, dtype)
        if name is not None:
            return Value(self._graph.initializer(self._graph.unique(name), array), array.shape)
        return Value(self._graph.const(array), array.shape, array.dtype)

    def _input(self, x: Any, i: int, op_type: str) -> str:
        if x is None:
            return ""  # ONNX's "this optional input is absent"
        if isinstance(x, Value):
            return x.name
        if isinstance(x, (int, float, np.ndarray, np.generic)) or _is_tensor(x):
            return self._graph.const(_as_array(x, None))
        raise TypeError(
            f"{self._who}: input {i} of g.op({op_type!r}) is a {type(x).__name__}; give a "
            "Value (an argument of symbolic, or what g.op returned), None, or a constant"
        )

    @staticmethod
    def _attr_name(key: str) -> str:
        base, _, suffix = key.rpartition("_")
        return base if base and suffix in _SUFFIXES else key

    def _attr_value(self, key: str, value: Any) -> Any:
        suffix = key.rpartition("_")[2] if "_" in key else ""
        if suffix == "t" or _is_tensor(value) or isinstance(value, np.ndarray):
            return self._graph.onnx.numpy_helper.from_array(_as_array(value, None))
        if suffix == "i":
            return [int(v) for v in value] if isinstance(value, (list, tuple)) else int(value)
        if suffix == "f":
            return [float(v) for v in value] if isinstance(value, (list, tuple)) else float(value)
        if suffix == "s":
            return [str(v) for v in value] if isinstance(value, (list, tuple)) else str(value)
        return value


def _is_tensor(x: object) -> bool:
    from ..tensor import Tensor

    return isinstance(x, Tensor)


def _as_array(value: Any, dtype: Any) -> np.ndarray[Any, Any]:
    if _is_tensor(value):
        value = value._data
    elif dtype is None and type(value) is float:
        # as PyTorch's g.op and tg.tensor: the default dtype, not NumPy's float64 (a float64
        # constant next to a float32 value is a graph onnxruntime refuses to load)
        from .. import dtypes

        dtype = dtypes.get_default_dtype()
    return np.ascontiguousarray(np.asarray(value, dtype=dtype))


class SymbolicCall:
    """The pseudo-instruction of a call exported by a `symbolic`: `args` are, per argument,
    ("slot", slot) for a tensor and ("value", v) for anything else."""

    def __init__(
        self,
        name: str,
        symbolic: Callable[..., Any],
        args: list[tuple[str, Any]],
        kwargs: dict[str, Any],
        n_out: int,
    ) -> None:
        self.name, self.symbolic, self.n_out = name, symbolic, n_out
        self.args, self.kwargs = args, kwargs


class Pick:
    """The pseudo-instruction taking tensor output `index` of a `SymbolicCall`."""

    def __init__(self, name: str, index: int) -> None:
        self.name = f"{name}[{index}]"
        self.index = index


def write_call(
    g: Graph,
    call: SymbolicCall,
    values: Sequence[Any],
    names: Mapping[int, str],
    layer: str,
) -> list[str]:
    """Run the call's `symbolic` on the graph; the names of its tensor outputs."""
    who = f"tg.onnx.export: {call.name}.symbolic (in layer {layer})"
    args: list[Any] = []
    for kind, x in call.args:
        if kind == "slot":
            t = values[x]
            args.append(Value(names[x], tuple(t.shape), t._data.dtype))
        else:
            args.append(x)
    out = call.symbolic(SymbolicContext(g, g.opset, who), *args, **call.kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) != call.n_out or not all(isinstance(v, Value) for v in outs):
        got = ", ".join(type(v).__name__ for v in outs)
        raise RuntimeError(
            f"{who} returned ({got}), but forward returned {call.n_out} tensor(s): return "
            "one Value (what g.op returns) per tensor output, in order"
        )
    return [v.name for v in outs]
