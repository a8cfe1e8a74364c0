"""detect_anomaly, graph.to_dot and viz.draw."""

import shutil
import sys
import threading

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import Function


def test_detect_anomaly_names_op_and_forward_traceback():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.autograd.detect_anomaly():
        assert tg.autograd.is_anomaly_enabled()
        y = x * float("inf")  # created here: the traceback must point at this line
        with pytest.raises(RuntimeError) as info:
            y.backward(tg.ones(2))
    msg = str(info.value)
    assert "MulBackward" in msg and "nan or inf" in msg
    assert "test_anomaly_graph.py" in msg and 'y = x * float("inf")' in msg
    assert x.grad is None  # nothing was written
    assert not tg.autograd.is_anomaly_enabled()


def test_without_anomaly_mode_inf_passes_silently():
    x = tg.tensor([1.0], requires_grad=True)
    (x * float("inf")).backward(tg.ones(1))
    assert np.isinf(x.grad.numpy()).all()


def test_detect_anomaly_checks_zero_dim_gradients_for_finiteness():
    # a 0-d gradient is a NumPy scalar, not an ndarray: zero must pass and inf must be caught
    x = tg.tensor(2.0, requires_grad=True)
    with tg.autograd.detect_anomaly():
        (x * 0).backward()
    assert x.grad.item() == 0.0
    x = tg.tensor(1.0, requires_grad=True)
    with tg.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="MulBackward"):
        (x * float("inf")).backward()
    assert x.grad is None


def test_detect_anomaly_as_decorator_and_nested():
    @tg.autograd.detect_anomaly()
    def run():
        assert tg.autograd.is_anomaly_enabled()
        with tg.autograd.set_detect_anomaly(False):
            assert not tg.autograd.is_anomaly_enabled()
        return tg.autograd.is_anomaly_enabled()

    assert run() is True
    assert not tg.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_as_function_and_exception_safety():
    try:
        tg.autograd.set_detect_anomaly(True)
        assert tg.autograd.is_anomaly_enabled()
    finally:
        tg.autograd.set_detect_anomaly(False)
    assert not tg.autograd.is_anomaly_enabled()
    with pytest.raises(ValueError), tg.autograd.detect_anomaly():
        raise ValueError
    assert not tg.autograd.is_anomaly_enabled()


def test_anomaly_mode_is_per_thread():
    barrier = threading.Barrier(2, timeout=10)
    seen = []

    def other():
        barrier.wait()
        seen.append(tg.autograd.is_anomaly_enabled())
        barrier.wait()

    t = threading.Thread(target=other)
    t.start()
    with tg.autograd.detect_anomaly():
        barrier.wait()
        barrier.wait()
    t.join()
    assert seen == [False]


def test_anomaly_in_custom_function_backward_names_it():
    class BadGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = tg.tensor([1.0], requires_grad=True)
    with tg.autograd.detect_anomaly():
        y = BadGrad.apply(x)
        with pytest.raises(RuntimeError, match=r"BadGradBackward.*nan or inf"):
            y.backward()


# ------------------------------------------------------------------ to_dot
def test_to_dot_names_ops_leaves_and_tapes():
    w = tg.tensor([[1.0, 2.0]], requires_grad=True)
    b = tg.tensor([0.5], requires_grad=True)
    x = tg.ones(1, 2)
    y = w * x + b
    dot = tg.autograd.graph.to_dot(y, params={"weight": w, "bias": b})
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    for text in (
        "AddBackward",
        "MulBackward",
        "weight",
        "bias",
        "(1, 2)",
        "(1,)",
        "tapes: ambient",
        "output (1, 2)",
    ):
        assert text in dot, text
    assert dot.count("->") == 4  # w->mul, mul->add, b->add, add->output (x is a constant)


def test_to_dot_of_a_leaf_and_of_record_scope_tensors():
    w = tg.tensor([1.0], requires_grad=True)
    assert "tapes: ambient" in tg.autograd.graph.to_dot(w)
    record = getattr(tg.autograd, "record", None)
    if callable(record) and hasattr(tg.Tensor, "attach_grad"):
        v = tg.tensor([1.0])
        v.attach_grad()
        with record():
            z = v * 2
        assert "tapes: record" in tg.autograd.graph.to_dot(z)


def test_to_dot_deep_graph_and_shared_nodes():
    x = tg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):  # iterative walk: no recursion limit
        y = y * 1.0
    dot = tg.autograd.graph.to_dot([y, y + x])
    assert dot.count("MulBackward") == 5000


def test_to_dot_rejects_bad_params():
    with pytest.raises(TypeError, match="params"):
        tg.autograd.graph.to_dot(tg.tensor(1.0, requires_grad=True), params={"w": 3})


# ------------------------------------------------------------------ viz.draw
def test_draw_without_graphviz_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz -> ImportError
    y = tg.tensor(1.0, requires_grad=True) * 2
    with pytest.raises(ImportError, match=r'pip install "tapegrad\[viz\]"'):
        tg.viz.draw(y, tmp_path / "g.svg")


def test_draw_dot_format_needs_no_graphviz(tmp_path):
    y = tg.tensor(1.0, requires_grad=True) * 2
    path = tg.viz.draw(y, tmp_path / "g.dot")
    assert "MulBackward" in (tmp_path / "g.dot").read_text()
    assert path.endswith("g.dot")


def test_draw_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="unsupported format"):
        tg.viz.draw(tg.tensor(1.0, requires_grad=True) * 2, tmp_path / "g.bmp")


def test_draw_svg_with_graphviz(tmp_path):
    pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("the Graphviz 'dot' program is not installed")
    y = tg.tensor([1.0, 2.0], requires_grad=True) * 2
    tg.viz.draw(y, tmp_path / "g.svg")
    assert "<svg" in (tmp_path / "g.svg").read_text()
