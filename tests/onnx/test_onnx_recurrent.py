"""RNN, LSTM and GRU export as ONNX's own operators (one node per layer): onnxruntime
reproduces eager to 1e-5 for every layout, with the batch and the sequence length free."""

from __future__ import annotations

import io

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compile.replay import split

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
nn = tg.nn

_OPERATOR = {nn.RNN: "RNN", nn.LSTM: "LSTM", nn.GRU: "GRU"}


def _randn(rng, *shape, dtype=tg.float32):
    return tg.tensor(rng.standard_normal(shape), dtype=dtype)


def _eager(module, args):
    with tg.no_grad():
        out = module(*args)
    flat: list = []
    split(out, flat)
    return [t.numpy() for t in flat]


def _export(module, args, dynamic=None):
    """The model bytes and its graph; inputs named in0, in1..., outputs out0, out1..."""
    n_out = len(_eager(module, args))
    f = io.BytesIO()
    model = tg.onnx.export(
        module,
        tuple(args),
        f,
        input_names=[f"in{i}" for i in range(len(args))],
        output_names=[f"out{i}" for i in range(n_out)],
        dynamic_axes=dynamic,
    )
    return f.getvalue(), model.graph


def _check(model_bytes, module, inputs):
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    got = sess.run(None, {f"in{i}": a.numpy() for i, a in enumerate(inputs)})
    want = _eager(module, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _layer(cls, rng, **kw):
    tg.manual_seed(0)
    return cls(3, 4, **kw).eval()


def _dynamic(batch_first, n_states, n_out):
    """Batch and sequence axes free in the input, the batch free in states and outputs."""
    seq, batch = (1, 0) if batch_first else (0, 1)
    dyn = {"in0": {seq: "seq", batch: "batch"}, "out0": {seq: "seq", batch: "batch"}}
    dyn.update({f"in{i + 1}": {1: "batch"} for i in range(n_states)})
    dyn.update({f"out{i + 1}": {1: "batch"} for i in range(n_out - 1)})
    return dyn


def _states(cls, rng, layers_dirs, batch):
    n = 2 if cls is nn.LSTM else 1
    return [_randn(rng, layers_dirs, batch, 4) for _ in range(n)]


def _call_args(cls, x, states):
    if not states:
        return [x]
    return [x, tuple(states)] if cls is nn.LSTM else [x, states[0]]


CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=3, bidirectional=True),
    dict(batch_first=True),
    dict(num_layers=2, bidirectional=True, batch_first=True),
    dict(bias=False),
    dict(num_layers=2, dropout=0.3),  # in eval: no dropout
]


def _ids(kw):
    return ",".join(f"{k}={v}" for k, v in kw.items()) or "default"


class _WithState(nn.Module):
    """Takes the state as flat inputs (an LSTM's (h0, c0) as two)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x, *states):
        hx = tuple(states) if isinstance(self.layer, nn.LSTM) else states[0]
        return self.layer(x, hx)


@pytest.mark.parametrize("kw", CONFIGS, ids=[_ids(kw) for kw in CONFIGS])
@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU], ids=lambda c: c.__name__)
@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "given_state"])
def test_layer_is_one_onnx_node_per_layer_with_a_free_batch_and_length(cls, kw, with_state, rng):
    layer = _layer(cls, rng, **kw)
    dirs = 2 if kw.get("bidirectional") else 1
    layers_dirs = kw.get("num_layers", 1) * dirs
    batch_first = kw.get("batch_first", False)

    def inputs(seq, batch):
        x = _randn(rng, *((batch, seq, 3) if batch_first else (seq, batch, 3)))
        return [x] + (_states(cls, rng, layers_dirs, batch) if with_state else [])

    module = _WithState(layer).eval() if with_state else layer
    args = inputs(5, 2)
    n_out = 3 if cls is nn.LSTM else 2
    model, graph = _export(module, args, _dynamic(batch_first, len(args) - 1, n_out))
    ops = [n.op_type for n in graph.node]
    assert ops.count(_OPERATOR[cls]) == kw.get("num_layers", 1)
    assert "MatMul" not in ops and "Gemm" not in ops  # nothing unrolled
    for seq, batch in [(5, 2), (9, 6), (1, 1)]:
        _check(model, module, args if (seq, batch) == (5, 2) else inputs(seq, batch))


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU], ids=lambda c: c.__name__)
def test_relu_rnn_and_unbatched_input(cls, rng):
    kw = {"nonlinearity": "relu"} if cls is nn.RNN else {}
    layer = _layer(cls, rng, num_layers=2, bidirectional=True, **kw)
    x = _randn(rng, 6, 3)  # (L, H_in): no batch axis
    model, _ = _export(layer, [x], {"in0": {0: "seq"}, "out0": {0: "seq"}})
    _check(model, layer, [x])
    _check(model, layer, [_randn(rng, 11, 3)])
    states = _states(cls, rng, 4, 1)
    states = [s.squeeze(1) for s in states]  # (D * layers, H) unbatched
    module = _WithState(layer).eval()
    model, _ = _export(module, [x, *states])
    _check(model, module, [x, *states])


def test_weights_are_named_after_the_layer_in_onnx_layout(rng):
    net = nn.Sequential(nn.LSTM(3, 4, bidirectional=True)).eval()
    _, graph = _export(net, [_randn(rng, 5, 2, 3)])
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    w = inits["0.W_l0"]
    assert w.shape == (2, 16, 3)  # (directions, 4 gates * hidden, input)
    w_ih = net[0].weight_ih_l0_reverse.detach().numpy()
    i, f, g, o = np.split(w_ih, 4)
    np.testing.assert_array_equal(w[1], np.concatenate([i, o, f, g]))  # ONNX: i, o, f, c
    assert inits["0.B_l0"].shape == (2, 32)
    assert inits["0.R_l0"].shape == (2, 16, 4)


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU], ids=lambda c: c.__name__)
def test_float64_is_unrolled_as_onnxruntime_has_no_kernel(cls, rng):
    tg.manual_seed(0)
    layer = cls(3, 4, num_layers=2, bidirectional=True, dtype=tg.float64).eval()
    x = _randn(rng, 5, 2, 3, dtype=tg.float64)
    model, graph = _export(layer, [x])
    assert _OPERATOR[cls] not in [n.op_type for n in graph.node]
    _check(model, layer, [x])


def test_dropout_between_layers_in_training_is_refused(rng):
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5).train()
    with pytest.raises(RuntimeError, match=r"dropout.*layer \(root\) \(LSTM\).*eval"):
        tg.onnx.export(lstm, _randn(rng, 5, 2, 3), io.BytesIO())


class _Tagger(nn.Module):
    """Embedding, a bidirectional GRU, a linear head: a model around a recurrent layer."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)
        self.rnn = nn.GRU(3, 4, bidirectional=True, batch_first=True)
        self.head = nn.Linear(8, 5)

    def forward(self, idx):
        out, _ = self.rnn(self.emb(idx))
        return self.head(out)


def test_model_around_a_recurrent_layer_has_a_dynamic_batch(rng):
    tg.manual_seed(0)
    net = _Tagger().eval()
    idx = tg.tensor(rng.integers(0, 10, (2, 7)))
    model, graph = _export(net, [idx], {"in0": {0: "b", 1: "t"}, "out0": {0: "b", 1: "t"}})
    assert "rnn.W_l0" in {i.name for i in graph.initializer}
    _check(model, net, [idx])
    _check(model, net, [tg.tensor(rng.integers(0, 10, (5, 3)))])


def test_torch_facade_exports_an_lstm_as_an_onnx_node(tmp_path, rng):
    import tapegrad.compat.torch as torch

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True)
    path = tmp_path / "lstm.onnx"
    x = torch.tensor(rng.standard_normal((2, 5, 3)), dtype=torch.float32)
    torch.onnx.export(
        lstm,
        (x,),
        str(path),
        input_names=["x"],
        output_names=["y", "h", "c"],
        dynamic_axes={"x": {0: "n"}, "y": {0: "n"}, "h": {1: "n"}, "c": {1: "n"}},
    )
    graph = onnx.load(str(path)).graph
    assert [n.op_type for n in graph.node].count("LSTM") == 2
    x = torch.tensor(rng.standard_normal((4, 5, 3)), dtype=torch.float32)
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x.numpy()}
    )
    lstm.eval()
    with torch.no_grad():
        y, (h, c) = lstm(x)
    for g, w in zip(got, (y, h, c), strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)


class _ReversedLSTM(nn.LSTM):
    """A subclass with a forward of its own: its code is traced (the layer unrolled)."""

    def forward(self, input, hx=None):
        out, state = super().forward(input * -1.0, hx)
        return out * 2.0, state


def test_subclass_with_its_own_forward_is_traced(rng):
    tg.manual_seed(0)
    layer = _ReversedLSTM(3, 4).eval()
    x = _randn(rng, 5, 2, 3)
    model, graph = _export(layer, [x])
    assert "LSTM" not in [n.op_type for n in graph.node]
    _check(model, layer, [x])


class _GRUInside(tg.autograd.Function):
    """A Function with symbolic whose forward runs a GRU: nothing of it is traced."""

    gru = None

    @staticmethod
    def forward(ctx, x):
        return _GRUInside.gru(x)[0]

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError

    @staticmethod
    def symbolic(g, x):
        return g.op("Neg", x)  # any node: it only shows what was written


def test_recurrent_layer_inside_a_symbolic_function_is_not_traced(rng):
    tg.manual_seed(0)
    _GRUInside.gru = nn.GRU(3, 3).eval()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = _GRUInside.gru

        def forward(self, x):
            return _GRUInside.apply(x) + 1.0

    _, graph = _export(Net().eval(), [_randn(rng, 5, 2, 3)])
    ops = [n.op_type for n in graph.node]
    assert "Neg" in ops and not {"GRU", "Gemm", "MatMul", "Sigmoid"} & set(ops)


def test_a_forward_set_on_the_instance_is_traced_and_kept(rng):
    # an instance attribute `forward` is the layer's forward (code that may do anything
    # around it): it is traced, not replaced by the one-node export, and still set after
    layer = _layer(nn.GRU, rng)
    plain = layer.forward

    def doubled(x, hx=None):
        out, h = plain(x, hx)
        return out * 2.0, h

    layer.forward = doubled
    x = _randn(rng, 5, 2, 3)
    model_bytes, graph = _export(layer, [x])
    assert layer.__dict__.get("forward") is doubled
    assert "Mul" in [n.op_type for n in graph.node]
    _check(model_bytes, layer, [x])
