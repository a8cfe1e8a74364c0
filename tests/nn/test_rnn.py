"""RNN, LSTM, GRU and their cells against PyTorch with the same weights (outputs, final
states, gradients of inputs, initial states and every parameter), plus errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _pair(cls, *args, **kw):
    ours = getattr(tg.nn, cls)(*args, **kw).double()
    theirs = getattr(torch.nn, cls)(*args, **kw).double()
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(dict(ours.named_parameters())) == list(state)  # same names, same order
    ours.load_state_dict(state)
    return ours, theirs


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


CASES = [
    ("RNN", dict(num_layers=2)),
    ("RNN", dict(nonlinearity="relu", batch_first=True)),
    ("RNN", dict(bidirectional=True, bias=False)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, batch_first=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(num_layers=3, batch_first=True)),
    ("GRU", dict(bidirectional=True, num_layers=2, bias=False)),
]


@pytest.mark.parametrize("cls,kw", CASES)
def test_matches_torch(cls, kw, rng):
    ours, theirs = _pair(cls, 3, 4, **kw)
    layers, dirs = kw.get("num_layers", 1), 2 if kw.get("bidirectional") else 1
    n, seq = 2, 5
    x = rng.standard_normal((n, seq, 3) if kw.get("batch_first") else (seq, n, 3))
    h0 = rng.standard_normal((layers * dirs, n, 4))
    c0 = rng.standard_normal((layers * dirs, n, 4))
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ho, ht = tg.tensor(h0, requires_grad=True), torch.tensor(h0, requires_grad=True)
    co, ct = tg.tensor(c0, requires_grad=True), torch.tensor(c0, requires_grad=True)
    if cls == "LSTM":
        out, (h, c) = ours(xo, (ho, co))
        tout, (th, tc) = theirs(xt, (ht, ct))
        _close(c, tc)
        extra, textra = (c * c).sum(), (tc * tc).sum()
    else:
        out, h = ours(xo, ho)
        tout, th = theirs(xt, ht)
        extra, textra = 0.0, 0.0
    assert tuple(out.shape) == tuple(tout.shape) and tuple(h.shape) == tuple(th.shape)
    _close(out, tout)
    _close(h, th)
    w = rng.standard_normal(tuple(out.shape))
    ((out * tg.tensor(w)).sum() + (h * h).sum() + extra).backward()
    ((tout * torch.tensor(w)).sum() + (th * th).sum() + textra).backward()
    _close(xo.grad, xt.grad)
    _close(ho.grad, ht.grad)
    if cls == "LSTM":
        _close(co.grad, ct.grad)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad, tparams[name].grad)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_default_state_and_unbatched_input(cls, rng):
    ours, theirs = _pair(cls, 3, 4, num_layers=2)
    x = rng.standard_normal((6, 3))  # (L, H_in): no batch dim
    out, state = ours(tg.tensor(x))
    tout, tstate = theirs(torch.tensor(x))
    _close(out, tout)
    assert out.shape == (6, 4)
    if cls == "LSTM":
        _close(state[0], tstate[0])
        _close(state[1], tstate[1])
    else:
        _close(state, tstate)
        assert state.shape == (2, 4)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cls, rng):
    ours, theirs = _pair(cls, 3, 5)
    x = rng.standard_normal((4, 3))
    h = rng.standard_normal((4, 5))
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    if cls == "LSTMCell":
        c = rng.standard_normal((4, 5))
        ho, co = ours(xo, (tg.tensor(h), tg.tensor(c)))
        th, tc = theirs(xt, (torch.tensor(h), torch.tensor(c)))
        _close(co, tc)
        (ho.sum() + (co * co).sum()).backward()
        (th.sum() + (tc * tc).sum()).backward()
    else:
        ho, th = ours(xo, tg.tensor(h)), theirs(xt, torch.tensor(h))
        (ho * ho).sum().backward()
        (th * th).sum().backward()
    _close(ho, th)
    _close(xo.grad, xt.grad)
    _close(ours.weight_hh.grad, theirs.weight_hh.grad)
    # unbatched and default state
    out = ours(tg.tensor(x[0]))
    tout = theirs(torch.tensor(x[0]))
    _close(out[0] if cls == "LSTMCell" else out, tout[0] if cls == "LSTMCell" else tout)


def test_gru_gradcheck(rng):
    gru = tg.nn.GRU(2, 3, batch_first=True).double()
    x = tg.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    h0 = tg.tensor(rng.standard_normal((1, 2, 3)), requires_grad=True)
    assert gradcheck(lambda x, h: gru(x, h)[0], (x, h0))


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_second_order_through_the_time_loop(cls, rng):
    m = getattr(tg.nn, cls)(2, 2, batch_first=True).double()
    x = tg.tensor(rng.standard_normal((1, 3, 2)), requires_grad=True)
    assert gradgradcheck(lambda x: m(x)[0], (x,))


def test_long_sequence_backward_is_linear_in_length(rng):
    """Each time step is an output of one split node, so a long sequence stays cheap and its
    gradients match a step-by-step cell loop."""
    lstm = tg.nn.LSTM(3, 4).double()
    cell = tg.nn.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = rng.standard_normal((200, 2, 3))
    xa, xb = tg.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    out, _ = lstm(xa)
    out.sum().backward()
    h = c = tg.zeros(2, 4, dtype=tg.float64)
    total = 0.0
    for t in range(200):
        h, c = cell(xb[t], (h, c))
        total = total + h.sum()
    total.backward()
    np.testing.assert_allclose(xa.grad.numpy(), xb.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        lstm.weight_hh_l0.grad.numpy(), cell.weight_hh.grad.numpy(), rtol=1e-10, atol=1e-12
    )


def test_dropout_between_layers_only_in_training(rng):
    lstm = tg.nn.LSTM(3, 8, num_layers=2, dropout=0.5).double()
    x = tg.tensor(rng.standard_normal((4, 2, 3)))
    lstm.eval()
    a, _ = lstm(x)
    b, _ = lstm(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    lstm.train()
    tg.manual_seed(1)
    c, _ = lstm(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


def test_parameters_init_and_repr():
    lstm = tg.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    names = [n for n, _ in lstm.named_parameters()]
    tnames = [
        n for n, _ in torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True).named_parameters()
    ]
    assert names == tnames
    assert lstm.weight_ih_l1.shape == (16, 8) and lstm.weight_hh_l0_reverse.shape == (16, 4)
    bound = 1 / math.sqrt(4)
    assert all(np.abs(p.detach().numpy()).max() <= bound for p in lstm.parameters())
    assert repr(lstm) == repr(torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True))
    assert len(lstm.all_weights) == 4


def test_variable_length_loop_is_dynamic(rng):
    """The same module runs on sequences of different lengths (the graph is rebuilt)."""
    rnn = tg.nn.RNN(2, 3)
    for length in (1, 4, 9):
        out, h = rnn(tg.randn(length, 2, 2))
        assert out.shape == (length, 2, 3)
        out.sum().backward()
    assert rnn.weight_hh_l0.grad is not None


def test_errors_say_what_and_how():
    lstm = tg.nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"LSTM: input has 5 features .* input_size is 3"):
        lstm(tg.randn(6, 2, 5))
    with pytest.raises(ValueError, match=r"LSTM: expected input with 3 dims \(L, N, H_in\)"):
        lstm(tg.randn(6))
    with pytest.raises(
        ValueError, match=r"LSTM: expected h0 of shape \(2, 2, 4\), got \(1, 2, 4\)"
    ):
        lstm(tg.randn(6, 2, 3), (tg.zeros(1, 2, 4), tg.zeros(2, 2, 4)))
    with pytest.raises(TypeError, match=r"hx must be a tuple \(h0, c0\)"):
        lstm(tg.randn(6, 2, 3), tg.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="GRU: expected h0 of shape"):
        tg.nn.GRU(3, 4)(tg.randn(6, 2, 3), tg.zeros(1, 3, 4))
    with pytest.raises(ValueError, match="nonlinearity must be 'tanh' or 'relu'"):
        tg.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        tg.nn.GRU(3, 0)
    with pytest.raises(ValueError, match=r"GRUCell: expected input of shape \(N, 3\)"):
        tg.nn.GRUCell(3, 4)(tg.randn(2, 5))
