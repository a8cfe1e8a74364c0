"""`tg.onnx.export`: a module's traced forward written as an ONNX model."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..compile.tracing import ARG, CONST, EXTERNAL, Instr, Trace
from ..tensor import Tensor
from . import _ops
from ._graph import Graph
from ._symbolic import Pick, SymbolicCall, write_call
from ._trace import trace_forward

OPSET = 17


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        from ..utils import install_hint

        raise ImportError(
            f"tg.onnx.export needs the onnx package: {install_hint('onnx')}"
        ) from None
    return onnx


# per input or output name: {axis: "label"} or [axis, ...]
DynamicAxes = Mapping[str, Mapping[int, str] | Sequence[int]]


def _dims(
    shape: Sequence[int], axes: Mapping[int, str] | Sequence[int], name: str
) -> list[int | str]:
    """The shape with the dynamic axes named (`{0: "batch"}` or `[0]`)."""
    dims: list[int | str] = list(shape)
    named = axes if isinstance(axes, dict) else {a: f"{name}_dim{a}" for a in axes}
    for a, label in named.items():
        if not -len(dims) <= int(a) < len(dims):
            raise ValueError(
                f"tg.onnx.export: dynamic_axes[{name!r}] names axis {a}, but "
                f"{name} has {len(dims)} dimensions"
            )
        dims[int(a)] = str(label)
    return dims


def _value_info(
    onnx: Any,
    name: str,
    array: np.ndarray[Any, Any],
    axes: Mapping[int, str] | Sequence[int] | None,
) -> Any:
    elem = onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
    return onnx.helper.make_tensor_value_info(name, elem, _dims(array.shape, axes or (), name))


def _names(given: Iterable[str] | None, count: int, prefix: str, what: str) -> list[str]:
    if given is None:
        return [f"{prefix}{i}" if count > 1 else prefix for i in range(count)]
    names = list(given)
    if len(names) != count or len(set(names)) != count:
        raise ValueError(
            f"tg.onnx.export: {what} has {len(names)} names {names}, but the "
            f"model has {count} {what.split('_')[0]}s; give one distinct name each"
        )
    return names


def export(
    module: Any,
    args: Any,
    path: Any,
    opset_version: int = OPSET,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    dynamic_axes: DynamicAxes | None = None,
) -> Any:
    """Write `module`'s forward on `args` as an ONNX model (opset 17) at `path`.

    The forward is traced once (as `tg.compile` traces it) without recording gradients;
    parameters and buffers become initializers named after their place in the module
    (`0.weight`), every traced op becomes ONNX nodes. Put the module in eval mode first
    (dropout and batch norm in training mode are not exported). An op without an ONNX
    mapping raises a RuntimeError naming the op and the layer that ran it. RNN, LSTM and
    GRU layers become ONNX's `RNN`/`LSTM`/`GRU` operators (weights converted to ONNX's
    layout and gate order); a custom `tg.autograd.Function` with a static
    `symbolic(g, *args)` method writes its nodes through `g` (`tg.onnx.SymbolicContext`),
    one without is traced through.

    Args:
        module: a `tg.nn.Module` (or any callable of tensors made of tapegrad ops).
        args: the example input: a tensor or a tuple of tensors (nested tuples are flattened).
        path: the file to write (a path), or a writable binary file object.
        opset_version: the ONNX opset; 17 is the one written.
        input_names: one name per (flattened) input; `input`, `input0`... by default.
        output_names: one name per (flattened) output; `output`, `output0`... by default.
        dynamic_axes: `{name: {axis: "label"}}` or `{name: [axis, ...]}` for inputs and
            outputs whose sizes vary (the batch), as in `torch.onnx.export`.

    Returns:
        the `onnx.ModelProto` written.

    >>> net = tg.nn.Sequential(tg.nn.Linear(4, 3), tg.nn.ReLU()).eval()
    >>> model = tg.onnx.export(net, tg.ones(2, 4), "net.onnx",
    ...                        dynamic_axes={"input": {0: "batch"}})  # doctest: +SKIP
    """
    onnx = _onnx()
    if opset_version != OPSET:
        raise ValueError(
            f"tg.onnx.export: opset_version={opset_version} is not written; "
            f"tapegrad writes opset {OPSET} (which onnxruntime >= 1.14 reads)"
        )
    if isinstance(args, Tensor):
        args = (args,)
    elif not isinstance(args, (tuple, list)):
        raise TypeError(
            f"tg.onnx.export: args must be a tensor or a tuple of tensors, got "
            f"{type(args).__name__}"
        )
    traced = trace_forward(module, tuple(args))
    trace = traced.trace
    dynamic = dict(dynamic_axes or {})
    g = Graph(onnx, OPSET)
    names: dict[int, str] = {}  # slot -> its value's name in the graph
    in_names = _names(input_names, len(traced.inputs), "input", "input_names")
    out_names = _names(output_names, len(traced.outputs), "output", "output_names")
    unknown = set(dynamic) - set(in_names) - set(out_names)
    if unknown:
        raise ValueError(
            f"tg.onnx.export: dynamic_axes names {sorted(unknown)}, which are "
            f"neither inputs {in_names} nor outputs {out_names}"
        )
    inputs = []
    for slot, name in zip(traced.inputs, in_names):
        names[slot] = name
        inputs.append(_value_info(onnx, name, trace.values[slot]._data, dynamic.get(name)))
    first_user: dict[int, Any] = {}
    for instr in trace.instrs:
        for s in instr.ins:
            first_user.setdefault(s, instr)
    g.taken.update(in_names, out_names)
    dynamic_sizes = {
        trace.values[slot].shape[int(a)]
        for slot, name in zip(traced.inputs, in_names)
        for a in (dynamic.get(name) or ())
    }
    for slot, kind in enumerate(trace.kinds):
        if kind != EXTERNAL:
            continue
        t = trace.values[slot]
        known = traced.params.get(id(t))
        if known is None:
            if slot in first_user and dynamic_sizes & set(t.shape):
                owner = traced.owner.get(first_user[slot].out, "(top level)")
                raise RuntimeError(
                    f"tg.onnx.export: layer {owner} reads a tensor it made itself (shape "
                    f"{tuple(t.shape)}, such as a zero initial state) with the traced "
                    "size of a dynamic axis, which would stay fixed in the model. Pass that "
                    "tensor as an input (e.g. args=(x, h0)) or export without dynamic_axes."
                )
            known = g.fresh("constant")
        names[slot] = g.initializer(g.unique(known), t._data)
    calls: dict[int, list[str]] = {}  # a symbolic call's slot -> the names of its outputs
    for instr in trace.instrs:
        op = instr.op
        if isinstance(op, SymbolicCall):
            layer = traced.owner.get(instr.out, "(top level)")
            calls[instr.out] = write_call(g, op, trace.values, names, layer)
        elif isinstance(op, Pick):
            names[instr.out] = calls[instr.ins[0]][op.index]
        else:
            names[instr.out] = _convert(g, trace, instr, names, traced.owner)
    outputs = []
    for slot, name in zip(traced.outputs, out_names):
        g.node("Identity", [names[slot]], [name])
        outputs.append(_value_info(onnx, name, trace.values[slot]._data, dynamic.get(name)))
    graph = onnx.helper.make_graph(g.nodes, type(module).__name__, inputs, outputs, g.initializers)
    opsets = [onnx.helper.make_opsetid("", OPSET)]
    opsets += [onnx.helper.make_opsetid(d, 1) for d in sorted(g.domains)]
    model = onnx.helper.make_model(graph, producer_name="tapegrad", opset_imports=opsets)
    model.ir_version = min(model.ir_version, 8)  # what onnxruntime releases of opset 17 read
    onnx.checker.check_model(model)
    if hasattr(path, "write"):
        path.write(model.SerializeToString())
    else:
        onnx.save(model, os.fspath(path))
    return model


def _input_name(
    g: Graph, trace: Trace, slot: int, names: dict[int, str], dtype: np.dtype[Any]
) -> str | None:
    if trace.kinds[slot] == CONST:
        value = trace.values[slot]
        if value is None:
            return None
        return g.const(value, dtype if np.ndim(value) == 0 else None)
    return names[slot]


def _convert(
    g: Graph, trace: Trace, instr: Instr, names: dict[int, str], owner: dict[int, str]
) -> str:
    op = instr.op.name
    out = trace.values[instr.out]._data
    arrays = [
        trace.values[s]._data
        if trace.kinds[s] in (ARG, EXTERNAL, "op")
        else np.asarray(trace.values[s])
        if trace.values[s] is not None
        else None
        for s in instr.ins
    ]
    ins = [_input_name(g, trace, s, names, out.dtype) for s in instr.ins]
    p = instr.params
    try:
        if op in _ops.UNARY and not p:
            return g.node(_ops.UNARY[op], [ins[0]])
        if op in _ops.BINARY and len(ins) == 2:
            cast = [
                x
                if a is None or a.dtype == out.dtype or op == "pow"
                else g.node("Cast", [x], to=g.onnx.helper.np_dtype_to_tensor_dtype(out.dtype))
                for x, a in zip(ins, arrays)
            ]
            return g.node(_ops.BINARY[op], cast)
        if op in _ops.NEEDS_PARAM_NAMES:

            def param_name(key: str) -> str:
                slot = instr.param_slots.get(key)
                return names[slot] if slot is not None else g.const(p[key])

            return _ops.NEEDS_PARAM_NAMES[op](g, ins, p, arrays, out, param_name)
        converter = _ops.CONVERTERS.get(op)
        if converter is None:
            raise _ops.Unsupported("")
        return converter(g, ins, p, arrays, out)
    except _ops.Unsupported as e:
        why = f": {e}" if str(e) else ""
        layer = owner.get(instr.out, "(top level)")
        raise RuntimeError(
            f"tg.onnx.export: op {op!r} in layer {layer} has no ONNX mapping{why}. The exported "
            "layers are listed in docs/guides/compile.md (Exporting to ONNX); write the layer "
            "with those ops, or leave it out of the exported module."
        ) from None
