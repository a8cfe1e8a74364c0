"""The `-symbol.json` file of `HybridBlock.export`: a traced forward, as tapegrad ops.

MXNet's export writes the block's symbol graph; tapegrad has no symbols, so the file holds
what `tg.compile` traces instead (the trace of `tg.onnx.export`): a straight-line list of
op-table calls on numbered slots. `SymbolBlock.imports` runs it again through the
dispatcher, op by op, so it records like any eager code (gradients reach the loaded
parameters) and gives the same numbers as the block it came from.

    {"format": "tapegrad-graph", "version": 1,
     "inputs":  [{"name": "data", "slot": 0, "shape": [2, 5], "dtype": "float32"}],
     "params":  [{"slot": 1, "name": "dense0_weight", "keys": ["0.weight"], ...}],
     "constants": [{"slot": 7, "value": {"array": ...}}],
     "nodes":   [{"op": "linear", "inputs": [{"slot": 0}, {"slot": 1}], "params": {},
                  "out": 3}],
     "outputs": [3], "template": {"leaf": 0}, "predict_only": ["dropout0"]}

What the format keeps of the trace, and so of the block: the graph is the one traced, in
predict mode (dropout off, batch norm from the running statistics), for the input shapes
and dtypes of the forward before `export` (a SymbolBlock refuses others; under
`record()` it warns once when the block had layers that train differently, listed in
`predict_only`); parameters are
named by their Gluon names (`collect_params()` keys) and stored in the `.params` file under
their structural names ("0.weight"), as `save_parameters` writes them. Values in the
file are typed JSON (tuples, slices, dtypes, arrays in base64), never pickles.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

from ....compile.replay import _Leaf
from ....compile.tracing import ALIAS, CONST, EXTERNAL

FORMAT, VERSION = "tapegrad-graph", 1


# ------------------------------------------------------------------ values
def encode(v, where: str):
    """`v` as typed JSON (the inverse of `decode`); `where` names the op for errors."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, np.ndarray):
        a = np.asarray(v, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        return {
            "array": base64.b64encode(a.tobytes()).decode("ascii"),
            "dtype": a.dtype.str,
            "shape": list(a.shape),
        }
    if isinstance(v, np.generic):
        return {"scalar": encode(np.asarray(v), where)}
    if isinstance(v, np.dtype):
        return {"dtype": v.str}
    if isinstance(v, type) and issubclass(v, np.generic):
        return {"dtype_type": np.dtype(v).str}
    if isinstance(v, tuple):
        return {"tuple": [encode(x, where) for x in v]}
    if isinstance(v, list):
        return [encode(x, where) for x in v]
    if isinstance(v, dict):
        return {"dict": [[encode(k, where), encode(x, where)] for k, x in v.items()]}
    if isinstance(v, slice):
        return {"slice": [encode(v.start, where), encode(v.stop, where), encode(v.step, where)]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, _Leaf):
        return {"leaf": v.index}
    raise RuntimeError(
        f"HybridBlock.export: {where} takes a {type(v).__name__} ({v!r}), which the graph "
        "file can't store; write the layer with arrays, numbers, tuples and slices as op "
        "arguments"
    )


def decode(v):
    if isinstance(v, list):
        return [decode(x) for x in v]
    if not isinstance(v, dict):
        return v
    (kind, body), *_ = v.items()
    if kind == "array":
        flat = np.frombuffer(base64.b64decode(body), dtype=np.dtype(v["dtype"]))
        return flat.reshape(v["shape"]).copy()
    if kind == "float":
        return float(body)
    if kind == "scalar":
        return decode(body)[()]
    if kind == "dtype":
        return np.dtype(body)
    if kind == "dtype_type":
        return np.dtype(body).type
    if kind == "tuple":
        return tuple(decode(x) for x in body)
    if kind == "dict":
        return {decode(k): decode(x) for k, x in body}
    if kind == "slice":
        return slice(*(decode(x) for x in body))
    if kind == "ellipsis":
        return Ellipsis
    if kind == "leaf":
        return _Leaf(body)
    raise ValueError(f"SymbolBlock.imports: unknown value kind {kind!r} in the graph file")


# ------------------------------------------------------------------ writing
def graph_of(block, args: tuple, input_names: list) -> dict:
    """The graph file's content: `block`'s forward on `args`, traced in predict mode."""
    from ....onnx._trace import trace_forward
    from ....ops.registry import OPS

    traced = trace_forward(block, args)
    trace = traced.trace
    keys: dict[int, list] = {}  # id(parameter) -> its structural names
    for key, p in block._collect_params_with_prefix().items():
        keys.setdefault(id(p), []).append(key)
    by_var = {id(p._var): p for p in block.collect_params().values() if p._var is not None}
    graph: dict = {"format": FORMAT, "version": VERSION, "inputs": [], "params": []}
    for slot, name in zip(traced.inputs, input_names, strict=True):
        a = trace.values[slot]
        graph["inputs"].append(
            {"name": name, "slot": slot, "shape": list(a.shape), "dtype": np.dtype(a.dtype).str}
        )
    constants = []
    for slot, kind in enumerate(trace.kinds):
        if kind != EXTERNAL:
            continue
        t = trace.values[slot]
        p = by_var.get(id(t))
        if p is None:  # a tensor the forward made or holds itself: its value, kept
            constants.append({"slot": slot, "value": encode(t.detach().numpy(), "a constant")})
            continue
        if id(p) not in keys:
            raise RuntimeError(
                f"HybridBlock.export: parameter {p.name!r} is read by the forward but "
                "belongs to no block attribute, so save_parameters does not write it; "
                "assign it to an attribute of the block that uses it"
            )
        graph["params"].append(
            {
                "slot": slot,
                "name": p.name,
                "keys": keys[id(p)],
                "shape": list(t.shape),
                "dtype": np.dtype(t.dtype).str,
                "grad_req": p.grad_req,
            }
        )
    graph["constants"] = constants
    nodes = []
    for instr in trace.instrs:
        name = instr.op.name
        where = f"op {name!r} (in layer {traced.owner.get(instr.out, '(top level)')})"
        if instr.op is not ALIAS and OPS.get(name) is not instr.op:
            raise RuntimeError(
                f"HybridBlock.export: {where} is not in tapegrad's op table, so the graph "
                "file can't name it"
            )
        ins = [
            {"value": encode(trace.values[s], where)} if trace.kinds[s] == CONST else {"slot": s}
            for s in instr.ins
        ]
        params = {
            k: {"slot": instr.param_slots[k]}
            if k in instr.param_slots
            else {"value": encode(v, where)}
            for k, v in instr.params.items()
        }
        op = "(alias)" if instr.op is ALIAS else name
        nodes.append({"op": op, "inputs": ins, "params": params, "out": instr.out})
    graph["nodes"] = nodes
    graph["outputs"] = list(traced.outputs)
    graph["template"] = encode(traced.template, "the forward's result")
    graph["predict_only"] = predict_only_layers(block)
    return graph


def predict_only_layers(block) -> list:
    """The layers of `block` that act differently in training (dropout, batch statistics):
    the traced predict-mode graph does not have their training behaviour."""
    from .nn.basic_layers import BatchNorm, Dropout
    from .rnn import LSTM

    found: list = []

    def visit(b):
        if (
            (isinstance(b, Dropout) and b._rate)
            or (isinstance(b, BatchNorm) and not b._use_global_stats)
            or (isinstance(b, LSTM) and b._dropout)
        ):
            found.append(b.name)

    block.apply(visit)
    return found


def write(block, args: tuple, input_names: list, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(graph_of(block, args, input_names), f)


# ------------------------------------------------------------------ reading
def read(path) -> dict:
    with open(path, encoding="utf-8") as f:
        try:
            graph = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(
                f"SymbolBlock.imports: {path} is not a graph file written by "
                f"HybridBlock.export (not JSON: {e})"
            ) from None
    if not isinstance(graph, dict) or graph.get("format") != FORMAT:
        raise ValueError(
            f"SymbolBlock.imports: {path} is not a graph file written by tapegrad's "
            "HybridBlock.export (MXNet's own symbol JSON can't be run here: rebuild the "
            "network from gluon.nn layers and load_parameters() its .params file)"
        )
    if graph.get("version") != VERSION:
        raise ValueError(
            f"SymbolBlock.imports: {path} is version {graph.get('version')} of the graph "
            f"file; this tapegrad reads version {VERSION}"
        )
    return graph


def run(graph: dict, inputs: list, params: dict):
    """Run the graph's nodes on `inputs` (tensors, in the graph's input order) and `params`
    (slot -> tensor), through the dispatcher; returns the forward's result."""
    from .... import creation
    from ....ops.registry import OPS, dispatch

    values: dict = {}
    for spec, x in zip(graph["inputs"], inputs, strict=True):
        values[spec["slot"]] = x
    values.update(params)
    for c in graph["constants"]:
        values[c["slot"]] = creation.tensor(decode(c["value"]))

    def arg(ref):
        return values[ref["slot"]] if "slot" in ref else decode(ref["value"])

    for node in graph["nodes"]:
        ins = [arg(ref) for ref in node["inputs"]]
        kw = {
            # an array parameter that was a tensor's storage (batch norm's running
            # statistics): predict mode only reads it
            k: values[ref["slot"]].detach().numpy() if "slot" in ref else decode(ref["value"])
            for k, ref in node["params"].items()
        }
        if node["op"] == "(alias)":
            values[node["out"]] = ins[0].detach()
            continue
        op = OPS.get(node["op"])
        if op is None:
            raise ValueError(
                f"SymbolBlock: the graph calls op {node['op']!r}, which this tapegrad's op "
                "table lacks (the file was written by another version)"
            )
        values[node["out"]] = dispatch(op, *ins, **kw)
    from ....compile.replay import rebuild

    return rebuild(decode(graph["template"]), [values[s] for s in graph["outputs"]])
