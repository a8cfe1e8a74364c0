"""`tg.utils.tensorboard.SummaryWriter`: scalars and histograms for TensorBoard, written with
the `tensorboard` package's own event-file writer (an optional extra: no TensorFlow needed).

    from tapegrad.utils.tensorboard import SummaryWriter
    with SummaryWriter("runs/mlp") as w:
        for step, loss in enumerate(losses):
            w.add_scalar("train/loss", loss, step)
        w.add_histogram("fc1.weight", model[0].weight, step)

Then `tensorboard --logdir runs`. `add_graph(model, example_input)` writes the model's op
graph (traced with `tg.compile`'s tracer: one node per op, grouped by module, with shapes)
for TensorBoard's Graphs tab.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from .hints import install_hint

if TYPE_CHECKING:
    from ..nn.module import Module

try:
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.graph_pb2 import GraphDef
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError:
    raise ImportError(
        f"tg.utils.tensorboard needs the tensorboard package: {install_hint('tensorboard')}"
    ) from None

__all__ = ["SummaryWriter"]


def _array(values: Any) -> np.ndarray[Any, np.dtype[np.float64]]:
    data = getattr(values, "_data", values)  # a tg.Tensor
    if hasattr(data, "get"):  # a CuPy array
        data = data.get()
    return np.asarray(data, dtype=np.float64)


def _scalar(value: Any, tag: str) -> float:
    arr = _array(value)
    if arr.size != 1:
        raise ValueError(
            f"SummaryWriter.add_scalar({tag!r}): expected one number, got shape "
            f"{arr.shape}; log a reduction (.mean()) or use add_histogram"
        )
    return float(arr.reshape(()))


class SummaryWriter:
    """Write TensorBoard event files into `log_dir` (default `runs/<date>_<host><comment>`,
    as PyTorch's SummaryWriter).

    Args:
        log_dir: the run's folder (created).
        comment: appended to the default folder name.
        max_queue: events buffered before a write; flush_secs: seconds between flushes.
        filename_suffix: appended to the event file's name.
    """

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, value: Any, global_step: int | None, walltime: float | None) -> None:
        event = Event(
            wall_time=time.time() if walltime is None else walltime, summary=Summary(value=[value])
        )
        if global_step is not None:
            event.step = int(global_step)
        self._writer.add_event(event)

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """One number (a float, a 1-element array or tensor) under `tag` at `global_step`."""
        self._add(
            Summary.Value(tag=tag, simple_value=_scalar(scalar_value, tag)), global_step, walltime
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: Mapping[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Several numbers at once, as `main_tag/key` (one chart section in TensorBoard)."""
        for key, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{key}", value, global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
    ) -> None:
        """The distribution of `values` (a tensor or array): `bins` is anything
        `numpy.histogram` takes ("tensorflow", PyTorch's default name, means "auto")."""
        arr = _array(values).ravel()
        if arr.size == 0:
            raise ValueError(f"SummaryWriter.add_histogram({tag!r}): values is empty")
        if not np.all(np.isfinite(arr)):
            raise ValueError(
                f"SummaryWriter.add_histogram({tag!r}): values hold NaN or inf "
                "(did training diverge?)"
            )
        counts, edges = np.histogram(arr, bins="auto" if bins == "tensorflow" else bins)
        hist = HistogramProto(
            min=float(arr.min()),
            max=float(arr.max()),
            num=int(arr.size),
            sum=float(arr.sum()),
            sum_squares=float(np.dot(arr, arr)),
            bucket_limit=edges[1:].tolist(),
            bucket=counts.tolist(),
        )
        self._add(Summary.Value(tag=tag, histo=hist), global_step, walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """A note (markdown) under `tag`, shown in TensorBoard's text tab."""
        from tensorboard.plugins.text.summary_v2 import text_pb

        summary = text_pb(tag, text_string)
        self._add(summary.value[0], global_step, walltime)

    def add_graph(
        self,
        model: Module,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """The op graph of `model(*input_to_model)` (one example input, a tensor or a tuple
        of them), as TensorBoard's Graphs tab shows it: inputs, parameters (by name), one
        node per op inside its module's scope, outputs. The model runs once, without
        recording gradients; control flow follows that input. `verbose` prints the nodes;
        `use_strict_trace` is accepted for PyTorch's signature."""
        if input_to_model is None:
            raise ValueError(
                "SummaryWriter.add_graph(model, input_to_model): pass an example "
                "input (a tensor or a tuple of tensors) to run the model on"
            )
        graph = _graph_def(model, input_to_model)
        if verbose:
            for node in graph.node:
                print(f"{node.name} = {node.op}({', '.join(node.input)})")
        self._writer.add_event(Event(wall_time=time.time(), graph_def=graph.SerializeToString()))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _shape_attr(t: Any) -> dict[str, Any]:
    dims = [TensorShapeProto.Dim(size=int(n)) for n in getattr(t, "shape", ())]
    return {
        "_output_shapes": AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(dim=dims)])),
        "dtype": AttrValue(s=str(t.dtype).encode()),
    }


def _graph_def(model: Module, inputs: Any) -> GraphDef:
    """Trace `model(*inputs)` and turn the trace into a GraphDef."""
    from .. import no_grad
    from ..compile import hook
    from ..compile.tracing import ARG, CONST, EXTERNAL, Trace, value_read_guard
    from ..tensor import Tensor

    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    root = type(model).__name__
    scopes = {"": root}  # module name -> its scope path ("Sequential/Linear[0]")
    marks: list[
        tuple[int, str | None]
    ] = []  # (instruction index, scope name or None for "leave the scope")
    trace = Trace()
    handles: list[Any] = []
    for name, m in model.named_modules():
        if not name:
            continue
        parent, _, last = name.rpartition(".")
        scope = f"{type(m).__name__}[{last}]"
        scopes[name] = f"{scopes.get(parent, root)}/{scope}"
        handles.append(
            m.register_forward_pre_hook(
                lambda mod, a, scope=scope: marks.append((len(trace.instrs), scope))
            )
        )
        handles.append(
            m.register_forward_hook(lambda mod, a, out: marks.append((len(trace.instrs), None)))
        )
    names = {}  # id(parameter or buffer) -> its node name, in its module's scope
    for n, t in list(model.named_parameters()) + list(model.named_buffers()):
        owner, _, leaf = n.rpartition(".")
        names[id(t)] = f"{scopes.get(owner, root)}/{leaf}"
    for pos, a in enumerate(args):
        if isinstance(a, Tensor):
            trace.add_arg(a, pos)
    if hook.local.trace is not None:
        raise RuntimeError(
            "SummaryWriter.add_graph: called while tg.compile traces; call it "
            "outside the compiled function"
        )
    hook.local.trace = trace
    try:
        with value_read_guard(), no_grad():
            out = model(*args)
    finally:
        hook.local.trace = None
        trace.unmark_all()
        for h in handles:
            h.remove()

    node_of: dict[int, str] = {}  # slot -> node name
    nodes = []
    for slot, kind in enumerate(trace.kinds):
        value = trace.values[slot]
        if kind == ARG:
            node_of[slot] = f"input/input.{trace.arg_pos[slot]}"
            nodes.append(NodeDef(name=node_of[slot], op="IO Node", attr=_shape_attr(value)))
        elif kind == EXTERNAL:
            node_of[slot] = names.get(id(value), f"{root}/constant.{slot}")
            nodes.append(
                NodeDef(
                    name=node_of[slot],
                    op="Parameter" if id(value) in names else "Constant",
                    attr=_shape_attr(value),
                )
            )
    stack = [root]
    marks.reverse()
    for k, instr in enumerate(trace.instrs):
        while marks and marks[-1][0] <= k:
            _, entered = marks.pop()
            if entered is None:
                stack.pop()
            else:
                stack.append(entered)
        name = f"{'/'.join(stack)}/{instr.op.name}.{k}"
        node_of[instr.out] = name
        nodes.append(
            NodeDef(
                name=name,
                op=instr.op.name,
                attr=_shape_attr(trace.values[instr.out]),
                input=[node_of[s] for s in instr.ins if trace.kinds[s] != CONST and s in node_of],
            )
        )
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for i, t in enumerate(outs):
        out_slot = trace._slot_of.get(id(t)) if isinstance(t, Tensor) else None
        if out_slot is not None and out_slot in node_of:
            nodes.append(
                NodeDef(
                    name=f"output/output.{i}",
                    op="IO Node",
                    input=[node_of[out_slot]],
                    attr=_shape_attr(t),
                )
            )
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
