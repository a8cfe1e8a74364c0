"""SummaryWriter.add_graph (the op graph TensorBoard's Graphs tab reads) and the torch
facade's torch.utils.tensorboard."""

import glob
import subprocess
import sys

import pytest

import tapegrad as tg


def _graph(log_dir):
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    (path,) = glob.glob(f"{log_dir}/events.out.tfevents.*")
    events = [Event.FromString(raw) for raw in RawEventFileLoader(path).Load()]
    (graph,) = [GraphDef.FromString(e.graph_def) for e in events if e.HasField("graph_def")]
    return {n.name: n for n in graph.node}


def _shape(node):
    return [d.size for d in node.attr["_output_shapes"].list.shape[0].dim]


def test_add_graph_writes_ops_parameters_scopes_and_shapes(tmp_path):
    pytest.importorskip("tensorboard")
    from tapegrad.utils.tensorboard import SummaryWriter

    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 2))
    model.train()
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, tg.randn(3, 4))
    nodes = _graph(tmp_path)
    first = nodes["Sequential/Linear[0]/linear.0"]
    assert first.op == "linear"
    assert list(first.input) == [
        "input/input.0",
        "Sequential/Linear[0]/weight",
        "Sequential/Linear[0]/bias",
    ]
    assert nodes["Sequential/Linear[0]/weight"].op == "Parameter"
    assert _shape(nodes["Sequential/Linear[0]/weight"]) == [8, 4]
    assert list(nodes["Sequential/ReLU[1]/relu.1"].input) == ["Sequential/Linear[0]/linear.0"]
    assert list(nodes["output/output.0"].input) == ["Sequential/Linear[2]/linear.2"]
    assert _shape(nodes["output/output.0"]) == [3, 2]
    assert all(not p.requires_grad or p.grad is None for p in model.parameters())


def test_add_graph_needs_an_example_input(tmp_path):
    pytest.importorskip("tensorboard")
    from tapegrad.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as w, pytest.raises(ValueError, match="example input"):
        w.add_graph(tg.nn.Linear(2, 2))


def test_torch_facade_tensorboard_is_lazy_and_is_tapegrads(tmp_path):
    pytest.importorskip("tensorboard")
    script = tmp_path / "script.py"
    script.write_text(
        "import sys\nimport torch\nimport torch.utils\n"
        "print('tensorboard' in sys.modules)\n"
        "from torch.utils.tensorboard import SummaryWriter\n"
        "import tapegrad.utils.tensorboard as tb\n"
        f"w = SummaryWriter({str(tmp_path / 'run')!r})\n"
        "w.add_graph(torch.nn.Linear(3, 1), torch.ones(2, 3))\nw.close()\n"
        "print(SummaryWriter is tb.SummaryWriter)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "tapegrad.compat.run", "torch", str(script)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["False", "True"]
    assert _graph(tmp_path / "run")["Linear/linear.0"].op == "linear"
