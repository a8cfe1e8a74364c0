"""Each tapegrad op the layers of `tg.nn` dispatch, written as ONNX (opset 17) nodes.

A converter gets the graph, the input value names (None for an absent optional input),
the op's parameters and the traced arrays (shapes and dtypes of inputs and output), and
returns the name of the value it computes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._graph import Graph

Ins = list[str | None]  # input value names, None for an absent optional input
Params = dict[str, Any]  # the op's parameters
Arrays = list[Any]  # the traced inputs (arrays, or Python constants)
Array = np.ndarray[Any, Any]  # the traced output
Converter = Callable[[Graph, Ins, Params, Arrays, Array], str]


class Unsupported(Exception):
    """This op, with these parameters, has no ONNX mapping (the message says why)."""


_UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "neg": "Neg",
    "sin": "Sin",
    "cos": "Cos",
    "erf": "Erf",
    "floor": "Floor",
    "ceil": "Ceil",
    "reciprocal": "Reciprocal",
    "detach": "Identity",
    "contiguous": "Identity",
    "clone": "Identity",
}
_BINARY = {
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "div": "Div",
    "matmul": "MatMul",
    "pow": "Pow",
    "maximum": "Max",
    "minimum": "Min",
}


def _pads(padding: Any) -> list[int]:
    """tapegrad's ((lo, hi), ...) per spatial axis -> ONNX's [lo..., hi...]."""
    return [lo for lo, _ in padding] + [hi for _, hi in padding]


def _linear(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x, w, b = (list(ins) + [None])[:3]
    if arrays[0].ndim == 2:
        return g.node("Gemm", [x, w] + ([b] if b else []), transB=1)
    y = g.node("MatMul", [x, g.node("Transpose", [w], perm=[1, 0])])
    return g.node("Add", [y, b]) if b else y


def _conv(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x, w, b = (list(ins) + [None])[:3]
    return g.node(
        "Conv",
        [x, w] + ([b] if b else []),
        strides=list(p["stride"]),
        pads=_pads(p["padding"]),
        dilations=list(p["dilation"]),
        group=p["groups"],
        kernel_shape=list(arrays[1].shape[2:]),
    )


def _conv_transpose(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x, w, b = (list(ins) + [None])[:3]
    k = arrays[1].shape[2:]
    extra = []
    for size, target, st, (lo, hi), d, kk in zip(
        arrays[0].shape[2:], p["out_shape"], p["stride"], p["padding"], p["dilation"], k
    ):
        natural = (size - 1) * st - lo - hi + d * (kk - 1) + 1
        extra.append(target - natural)
    if any(e < 0 for e in extra):
        raise Unsupported(f"output size {p['out_shape']} is smaller than the padding allows")
    return g.node(
        "ConvTranspose",
        [x, w] + ([b] if b else []),
        strides=list(p["stride"]),
        pads=_pads(p["padding"]),
        dilations=list(p["dilation"]),
        group=p["groups"],
        kernel_shape=list(k),
        output_padding=extra,
    )


def _max_pool(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    return g.node(
        "MaxPool",
        [ins[0]],
        kernel_shape=list(p["kernel"]),
        strides=list(p["stride"]),
        pads=_pads(p["padding"]),
        dilations=list(p.get("dilation") or (1,) * len(p["kernel"])),
    )


def _avg_pool(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    if p.get("divisor_override") or any(p.get("ceil_extra") or ()):
        raise Unsupported("ceil_mode=True and divisor_override have no ONNX AveragePool twin")
    if any(d != 1 for d in p.get("dilation") or ()):
        raise Unsupported("a dilated average pool needs opset 19")
    return g.node(
        "AveragePool",
        [ins[0]],
        kernel_shape=list(p["kernel"]),
        strides=list(p["stride"]),
        pads=_pads(p["padding"]),
        count_include_pad=int(p.get("count_include_pad", True)),
    )


def _adaptive_avg_pool(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    sizes = arrays[0].shape[2:]
    if all(o == 1 for o in p["out_size"]):
        return g.node("GlobalAveragePool", [ins[0]])
    if any(s % o for s, o in zip(sizes, p["out_size"])):
        raise Unsupported(
            f"input size {tuple(sizes)} is not a multiple of the output size "
            f"{tuple(p['out_size'])} (windows of varying size)"
        )
    kernel = [s // o for s, o in zip(sizes, p["out_size"])]
    return g.node("AveragePool", [ins[0]], kernel_shape=kernel, strides=kernel)


def _affine(g: Graph, ins: Ins, arrays: Arrays, channels: Any, dtype: Any) -> tuple[str, str]:
    """Scale and bias names; ones and zeros when the layer has none (affine=False)."""
    w = ins[1] if len(ins) > 1 and ins[1] else g.const(np.ones(channels, dtype))
    b = ins[2] if len(ins) > 2 and ins[2] else g.const(np.zeros(channels, dtype))
    return w, b


def _batch_norm(
    g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array, param_names: Callable[[str], str]
) -> str:
    if p.get("training") or p.get("running_mean") is None:
        raise Unsupported(
            "batch norm in training mode (batch statistics); call module.eval() before exporting"
        )
    x = arrays[0]
    w, b = _affine(g, ins, arrays, x.shape[1], x.dtype)
    mean, var = param_names("running_mean"), param_names("running_var")
    return g.node("BatchNormalization", [ins[0], w, b, mean, var], epsilon=float(p["eps"]))


def _layer_norm(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x = arrays[0]
    w, b = _affine(g, ins, arrays, x.shape[-p["ndim"] :], x.dtype)
    return g.node("LayerNormalization", [ins[0], w, b], axis=-p["ndim"], epsilon=float(p["eps"]))


def _group_norm(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x = arrays[0]
    groups = p["num_groups"]
    grouped = g.node("Reshape", [ins[0], g.ints([0, groups, -1])])
    mean = g.node("ReduceMean", [grouped], axes=[2], keepdims=1)
    centred = g.node("Sub", [grouped, mean])
    var = g.node("ReduceMean", [g.node("Mul", [centred, centred])], axes=[2], keepdims=1)
    eps = g.const(p["eps"], x.dtype)
    normed = g.node("Div", [centred, g.node("Sqrt", [g.node("Add", [var, eps])])])
    y = g.node("Reshape", [normed, g.node("Shape", [ins[0]])])
    shape = [x.shape[1]] + [1] * (x.ndim - 2)
    if len(ins) > 1 and ins[1]:
        y = g.node("Mul", [y, g.node("Reshape", [ins[1], g.ints(shape)])])
    if len(ins) > 2 and ins[2]:
        y = g.node("Add", [y, g.node("Reshape", [ins[2], g.ints(shape)])])
    return y


def _embedding(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    idx = ins[0]
    if arrays[0].dtype != np.int64:
        idx = g.node("Cast", [idx], to=g.onnx.TensorProto.INT64)
    return g.node("Gather", [ins[1], idx], axis=0)


def _gelu(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x, dt = ins[0], arrays[0].dtype
    half = g.node("Mul", [x, g.const(0.5, dt)])
    if p.get("approximate", "none") == "tanh":
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.const(0.044715, dt)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.const(math.sqrt(2 / math.pi), dt)])])
    else:
        t = g.node("Erf", [g.node("Mul", [x, g.const(1 / math.sqrt(2), dt)])])
    return g.node("Mul", [half, g.node("Add", [t, g.const(1.0, dt)])])


def _softplus(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    x, dt = ins[0], arrays[0].dtype
    beta, threshold = float(p.get("beta", 1.0)), float(p.get("threshold", 20.0))
    bx = x if beta == 1.0 else g.node("Mul", [x, g.const(beta, dt)])
    soft = g.node("Softplus", [bx])
    if beta != 1.0:
        soft = g.node("Div", [soft, g.const(beta, dt)])
    return g.node("Where", [g.node("Greater", [bx, g.const(threshold, dt)]), x, soft])


def _reshape(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    # leading sizes kept from the input are written 0 ("copy"): a dynamic batch stays dynamic
    shape, in_shape = list(out.shape), list(arrays[0].shape)
    target = list(p["shape"]) if -1 in p["shape"] else shape
    for i, size in enumerate(target):
        if i >= len(in_shape) or size != in_shape[i]:
            break
        target[i] = 0
    return g.node("Reshape", [ins[0], g.ints(target)])


def _swapaxes(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    perm = list(range(arrays[0].ndim))
    a, b = p["axis1"] % len(perm), p["axis2"] % len(perm)
    perm[a], perm[b] = perm[b], perm[a]
    return g.node("Transpose", [ins[0]], perm=perm)


def _permute(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    axes = p.get("axes", p.get("dims"))
    if axes is None:
        axes = list(range(arrays[0].ndim))[::-1]
    return g.node("Transpose", [ins[0]], perm=[int(a) % arrays[0].ndim for a in axes])


def _reduce(onnx_op: str) -> Converter:
    def convert(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
        axis = p.get("axis")
        ndim = arrays[0].ndim
        axes = (
            list(range(ndim))
            if axis is None
            else [a % ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
        )
        keep = int(bool(p.get("keepdims", False)))
        if onnx_op == "ReduceSum":  # an input since opset 13
            return g.node(onnx_op, [ins[0], g.ints(axes)], keepdims=keep)
        return g.node(onnx_op, [ins[0]], axes=axes, keepdims=keep)

    return convert


def _stack(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    axis = p.get("axis", 0) % out.ndim
    parts = [g.node("Unsqueeze", [x, g.ints([axis])]) for x in ins]
    return parts[0] if len(parts) == 1 else g.node("Concat", parts, axis=axis)


def _concat(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    axis = p.get("axis", 0) % out.ndim
    return g.node("Concat", list(ins), axis=axis)


def _getitem(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    key = p["key"]
    key = key if isinstance(key, tuple) else (key,)
    ndim = arrays[0].ndim
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        fill = ndim - (len(key) - 1 - sum(k is None for k in key))
        key = key[:i] + (slice(None),) * fill + key[i + 1 :]
    starts: list[int] = []
    ends: list[int] = []
    axes: list[int] = []
    steps: list[int] = []
    drop: list[int] = []
    axis = 0
    unsqueeze: list[int] = []
    for k in key:
        if k is None:
            unsqueeze.append(axis + len(unsqueeze) - len(drop))
            continue
        if isinstance(k, slice):
            if k != slice(None):
                start, stop, step = k.indices(arrays[0].shape[axis])
                if step < 0:
                    raise Unsupported("a negative slice step")
                starts.append(start)
                ends.append(stop)
                axes.append(axis)
                steps.append(step)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            size = arrays[0].shape[axis]
            starts.append(int(k) % size)
            ends.append(int(k) % size + 1)
            axes.append(axis)
            steps.append(1)
            drop.append(axis)
        else:
            raise Unsupported(
                f"indexing with {type(k).__name__} (only ints, slices, None and ... are exported)"
            )
        axis += 1
    y = ins[0]
    if axes:
        y = g.node("Slice", [y, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if drop:
        y = g.node("Squeeze", [y, g.ints(drop)])
    if unsqueeze:
        y = g.node("Unsqueeze", [y, g.ints(unsqueeze)])
    if y is None or y == ins[0]:  # no slicing at all: a value of its own still
        return g.node("Identity", [y])
    return y


def _simple(onnx_op: str, **fixed: Any) -> Converter:
    def convert(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
        attrs = {name: (p[key] if not callable(key) else key(p)) for name, key in fixed.items()}
        return g.node(onnx_op, [ins[0]], **attrs)

    return convert


def _silu(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    return g.node("Mul", [ins[0], g.node("Sigmoid", [ins[0]])])


def _dropout(g: Graph, ins: Ins, p: Params, arrays: Arrays, out: Array) -> str:
    # the op runs only in training (with a drawn mask): eval-mode dropout dispatches nothing
    if p.get("mask") is not None or (p.get("training", True) and p.get("p", 0)):
        raise Unsupported("dropout in training mode; call module.eval() before exporting")
    return g.node("Identity", [ins[0]])


CONVERTERS: dict[str, Converter] = {
    "linear": _linear,
    "conv": _conv,
    "conv_transpose": _conv_transpose,
    "max_pool": _max_pool,
    "avg_pool": _avg_pool,
    "adaptive_avg_pool": _adaptive_avg_pool,
    "layer_norm": _layer_norm,
    "group_norm": _group_norm,
    "embedding": _embedding,
    "gelu": _gelu,
    "softplus": _softplus,
    "silu": _silu,
    "reshape": _reshape,
    "swapaxes": _swapaxes,
    "transpose": _permute,
    "permute": _permute,
    "mean": _reduce("ReduceMean"),
    "sum": _reduce("ReduceSum"),
    "max": _reduce("ReduceMax"),
    "stack": _stack,
    "concatenate": _concat,
    "cat": _concat,
    "getitem": _getitem,
    "softmax": _simple("Softmax", axis="axis"),
    "log_softmax": _simple("LogSoftmax", axis="axis"),
    "leaky_relu": _simple("LeakyRelu", alpha=lambda p: float(p["negative_slope"])),
    "elu": _simple("Elu", alpha=lambda p: float(p["alpha"])),
    "dropout": _dropout,
}
NEEDS_PARAM_NAMES: dict[str, Callable[..., str]] = {"batch_norm": _batch_norm}
UNARY, BINARY = _UNARY, _BINARY
