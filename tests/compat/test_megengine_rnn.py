"""mge.module's RNNCell, LSTMCell, RNN and LSTM: MegEngine 1.13's parameter names and
packed `_flatten_weights` layout, values and gradients against torch.nn with the same
weights copied in, and the misuse errors."""

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.module as M
from tapegrad.compat.megengine.autodiff import GradManager


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _unpack(m, packed=None):
    """MegEngine's packing of `packed` (default m._flatten_weights), written out
    independently: per layer, per direction, in memory order weight_ih, weight_hh,
    bias_ih, bias_hh."""
    packed = m._flatten_weights if packed is None else packed
    flat = packed.numpy().reshape(-1)
    g = packed.shape[0]
    off, out = 0, {}
    for layer in range(m.num_layers):
        for d in range(m.num_directions):
            n_in = m.input_size if layer == 0 else m.num_directions * m.hidden_size
            sfx = f"l{layer}" + ("_reverse" if d else "")
            for name, n, shape in [
                ("weight_ih", g * n_in, (g, n_in)),
                ("weight_hh", g * m.hidden_size, (g, m.hidden_size)),
            ] + ([("bias_ih", g, (g,)), ("bias_hh", g, (g,))] if m.bias else []):
                out[f"{name}_{sfx}"] = flat[off : off + n].reshape(shape)
                off += n
    assert off == flat.size
    return out


def _torch_twin(torch, m, kind):
    cls = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM}[kind]
    kw = {"nonlinearity": m.nonlinearity} if kind == "rnn" else {}
    t = cls(
        m.input_size,
        m.hidden_size,
        m.num_layers,
        bias=m.bias,
        batch_first=m.batch_first,
        bidirectional=m.bidirectional,
        **kw,
    ).double()
    with torch.no_grad():
        for name, value in _unpack(m).items():
            getattr(t, name).copy_(torch.from_numpy(value.astype(np.float64)))
    return t


def test_parameter_names_and_packed_shape_follow_megengine():
    m = M.LSTM(3, 4, num_layers=2, bidirectional=True)
    names = [k for k, _ in m.named_parameters()]
    # sorted attribute names: _flatten_weights first, then the (unused) cells
    assert names[0] == "_flatten_weights"
    assert names[1:5] == [
        "cells.0.0.bias_hh",
        "cells.0.0.bias_ih",
        "cells.0.0.weight_hh",
        "cells.0.0.weight_ih",
    ]
    assert len(names) == 1 + 4 * 4
    # G = 4 * 4; per direction: layer 0 3 + 4 + 2, layer 1 8 + 4 + 2
    assert tuple(m._flatten_weights.shape) == (16, 2 * 9 + 2 * 14)
    assert tuple(M.RNN(3, 4, bias=False)._flatten_weights.shape) == (4, 7)
    bound = 1 / np.sqrt(4)
    w = m._flatten_weights.numpy()
    assert np.abs(w).max() <= bound and w.std() > bound / 3


def test_cell_without_bias_keeps_zero_bias_buffers():
    cell = M.RNNCell(3, 2, bias=False)
    assert [k for k, _ in cell.named_parameters()] == ["weight_hh", "weight_ih"]
    sd = cell.state_dict()
    assert list(sd) == ["bias_hh", "bias_ih", "weight_hh", "weight_ih"]
    np.testing.assert_array_equal(sd["bias_ih"], np.zeros(2, "float32"))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_cell_matches_torch(torch, nonlinearity):
    cell = M.RNNCell(3, 5, nonlinearity=nonlinearity)
    t = torch.nn.RNNCell(3, 5, nonlinearity=nonlinearity).double()
    with torch.no_grad():
        for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
            getattr(t, name).copy_(torch.from_numpy(getattr(cell, name).numpy()).double())
    rng = np.random.default_rng(0)
    x, h = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    got = cell(mge.tensor(x, "float32"), mge.tensor(h, "float32")).numpy()
    want = t(torch.from_numpy(x), torch.from_numpy(h)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # hx=None means zeros
    got0 = cell(mge.tensor(x, "float32")).numpy()
    np.testing.assert_allclose(got0, t(torch.from_numpy(x)).detach().numpy(), atol=1e-6)


def test_lstm_cell_matches_torch_values_and_grads(torch):
    cell = M.LSTMCell(3, 4)
    t = torch.nn.LSTMCell(3, 4).double()
    with torch.no_grad():
        for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
            getattr(t, name).copy_(torch.from_numpy(getattr(cell, name).numpy()).double())
    rng = np.random.default_rng(1)
    x, h, c = (rng.standard_normal(s) for s in [(2, 3), (2, 4), (2, 4)])
    gm = GradManager().attach(cell.parameters())
    with gm:
        h1, c1 = cell(
            mge.tensor(x, "float32"), (mge.tensor(h, "float32"), mge.tensor(c, "float32"))
        )
        gm.backward((h1 * 2 + c1).sum())
    th, tc = t(torch.from_numpy(x), (torch.from_numpy(h), torch.from_numpy(c)))
    (th * 2 + tc).sum().backward()
    np.testing.assert_allclose(h1.numpy(), th.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c1.numpy(), tc.detach().numpy(), rtol=1e-5, atol=1e-6)
    for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
        np.testing.assert_allclose(
            getattr(cell, name).grad.numpy(), getattr(t, name).grad.numpy(), rtol=1e-4, atol=1e-5
        )


@pytest.mark.parametrize(
    "kind, layers, bidirectional, batch_first, bias",
    [
        ("rnn", 1, False, False, True),
        ("rnn", 2, True, True, True),
        ("rnn", 2, False, False, False),
        ("lstm", 1, False, True, True),
        ("lstm", 2, True, False, True),
        ("lstm", 1, True, True, False),
    ],
)
def test_rnn_and_lstm_match_torch_values_and_grads(
    torch, kind, layers, bidirectional, batch_first, bias
):
    cls = M.RNN if kind == "rnn" else M.LSTM
    m = cls(
        3, 4, num_layers=layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional
    )
    t = _torch_twin(torch, m, kind)
    rng = np.random.default_rng(2)
    seq, batch, d = 5, 2, 2 if bidirectional else 1
    x = rng.standard_normal((batch, seq, 3) if batch_first else (seq, batch, 3))
    h0 = rng.standard_normal((d * layers, batch, 4))
    c0 = rng.standard_normal((d * layers, batch, 4))
    hx = mge.tensor(h0, "float32")
    thx = torch.from_numpy(h0)
    if kind == "lstm":
        hx, thx = (hx, mge.tensor(c0, "float32")), (thx, torch.from_numpy(c0))
    gm = GradManager().attach([m._flatten_weights])
    with gm:
        out, hn = m(mge.tensor(x, "float32"), hx)
        states = hn if kind == "lstm" else (hn,)
        gm.backward(out.sum() + sum((s * s).sum() for s in states))
    tout, thn = t(torch.from_numpy(x), thx)
    tstates = thn if kind == "lstm" else (thn,)
    (tout.sum() + sum((s * s).sum() for s in tstates)).backward()
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-5)
    for s, ts in zip(states, tstates):
        np.testing.assert_allclose(s.numpy(), ts.detach().numpy(), rtol=1e-5, atol=1e-5)
    # the gradient lands in the packed parameter, in MegEngine's memory order
    for name, g in _unpack(m, m._flatten_weights.grad).items():
        np.testing.assert_allclose(g, getattr(t, name).grad.numpy(), rtol=1e-4, atol=1e-4)


def test_default_state_is_zeros_and_cells_take_no_part():
    m = M.LSTM(2, 3, batch_first=True)
    x = mge.tensor(np.random.default_rng(3).standard_normal((2, 4, 2)), "float32")
    out, (h, c) = m(x)
    zeros = mge.tensor(np.zeros((1, 2, 3), "float32"))
    out2, _ = m(x, (zeros, zeros))
    np.testing.assert_array_equal(out.numpy(), out2.numpy())
    np.testing.assert_array_equal(h.numpy()[0], out.numpy()[:, -1])
    # the cells are kept for MegEngine's state dict keys; forward reads _flatten_weights
    M.init.fill_(m.cells[0][0].weight_ih, 5.0)
    np.testing.assert_array_equal(m(x)[0].numpy(), out.numpy())


def test_state_dict_round_trip():
    a, b = M.RNN(2, 3, num_layers=2), M.RNN(2, 3, num_layers=2)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(b._flatten_weights.numpy(), a._flatten_weights.numpy())
    x = mge.tensor(np.ones((3, 1, 2), "float32"))
    np.testing.assert_array_equal(b(x)[0].numpy(), a(x)[0].numpy())


def test_dropout_between_layers_only_in_training():
    mge.random.seed(0)
    m = M.RNN(2, 8, num_layers=2, dropout=0.5)
    x = mge.tensor(np.ones((3, 2, 2), "float32"))
    m.eval()
    a, b = m(x)[0].numpy(), m(x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    m.train()
    assert not np.allclose(m(x)[0].numpy(), a)


def test_misuse_raises_naming_the_layer():
    with pytest.raises(ValueError, match="RNN: dropout"):
        M.RNN(2, 3, dropout=1.5)
    with pytest.raises(ValueError, match="RNNCell: nonlinearity"):
        M.RNNCell(2, 3, nonlinearity="sigmoid")
    with pytest.raises(NotImplementedError, match="LSTM: proj_size"):
        M.LSTM(2, 3, proj_size=1)
    with pytest.raises(ValueError, match=r"LSTM: input must have shape \(seq, batch, 2\)"):
        M.LSTM(2, 3)(mge.tensor(np.ones((3, 4), "float32")))
    with pytest.raises(ValueError, match=r"RNN: hx must have shape \(1, 4, 3\)"):
        M.RNN(2, 3)(mge.tensor(np.ones((5, 4, 2), "float32")), mge.tensor(np.ones((4, 3))))
    with pytest.raises(TypeError, match="LSTMCell: hx must be a pair"):
        M.LSTMCell(2, 3)(mge.tensor(np.ones((4, 2), "float32")), mge.tensor(np.ones((4, 3))))


@pytest.mark.parametrize("cls", [M.RNN, M.LSTM])
def test_packed_gradient_matches_finite_differences(cls):
    # the facade computes in float32 (as MegEngine): central differences with eps 1e-2
    # are accurate to about 1e-4 here, far below the size of the gradients checked
    m = cls(2, 3, num_layers=2, bidirectional=True)
    x = mge.tensor(np.random.default_rng(4).standard_normal((4, 2, 2)), "float32")

    def loss(module):
        out, state = module(x)
        h = state[0] if isinstance(state, tuple) else state
        return (out * out).sum() + h.sum()

    gm = GradManager().attach([m._flatten_weights])
    with gm:
        gm.backward(loss(m))
    grad = m._flatten_weights.grad.numpy().reshape(-1)
    w0 = m._flatten_weights.numpy().astype(np.float64)
    flat = w0.reshape(-1)
    # entries spread over both layers and directions (the last ones: layer 1, reverse)
    for k in np.linspace(0, flat.size - 1, 9).astype(int):
        vals = []
        for sign in (1, -1):
            w = flat.copy()
            w[k] += sign * 1e-2
            m.load_state_dict({"_flatten_weights": w.reshape(w0.shape)}, strict=False)
            vals.append(float(loss(m).numpy()))
        fd = (vals[0] - vals[1]) / 2e-2
        np.testing.assert_allclose(grad[k], fd, rtol=2e-2, atol=2e-3)
