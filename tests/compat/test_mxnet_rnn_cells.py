"""mx.gluon.rnn: the cells, unroll, the modifier cells and the fused RNN / GRU layers.

Values against PyTorch's cells and layers (same gate orders once the weights are copied),
the fused layers against their own `_unfuse()` stack of cells, gradients by finite
differences in float64, and valid_length against unrolling each sequence alone.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx

rnn = mx.gluon.rnn


def _set(block, values: dict) -> None:
    params = block.collect_params()
    for name, v in values.items():
        params[name].set_data(mx.nd.array(v, dtype=v.dtype))


def _random_params(block, rng, dtype=np.float32) -> dict:
    return {
        name: rng.normal(0, 0.5, p.shape).astype(dtype)
        for name, p in block.collect_params().items()
    }


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("make", "torch_name", "kwargs"),
    [
        (lambda: rnn.RNNCell(5, input_size=3), "RNNCell", {}),
        (
            lambda: rnn.RNNCell(5, activation="relu", input_size=3),
            "RNNCell",
            {"nonlinearity": "relu"},
        ),
        (lambda: rnn.LSTMCell(5, input_size=3), "LSTMCell", {}),
        (lambda: rnn.GRUCell(5, input_size=3), "GRUCell", {}),
    ],
)
def test_cells_match_torch_cells(torch, make, torch_name, kwargs):
    rng = np.random.default_rng(0)
    cell = make()
    cell.initialize()
    values = _random_params(cell, rng)
    _set(cell, values)
    ref = getattr(torch.nn, torch_name)(3, 5, **kwargs)
    with torch.no_grad():
        for name, v in values.items():
            kind = name[len(cell.prefix) :]  # i2h_weight -> weight_ih ...
            side, what = kind.split("_")
            getattr(ref, f"{what}_{'ih' if side == 'i2h' else 'hh'}").copy_(torch.tensor(v))
    xs = rng.normal(size=(4, 2, 3)).astype(np.float32)
    outs, states = cell.unroll(4, [mx.nd.array(x) for x in xs], merge_outputs=False)
    h = torch.zeros(2, 5)
    c = torch.zeros(2, 5)
    for t in range(4):
        if torch_name == "LSTMCell":
            h, c = ref(torch.tensor(xs[t]), (h, c))
        else:
            h = ref(torch.tensor(xs[t]), h)
        np.testing.assert_allclose(outs[t].asnumpy(), h.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy(), h.detach().numpy(), rtol=1e-5, atol=1e-6)
    if torch_name == "LSTMCell":
        np.testing.assert_allclose(states[1].asnumpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("layer", "torch_name", "kwargs"),
    [
        (lambda: rnn.GRU(4, num_layers=2, bidirectional=True, input_size=3), "GRU", {}),
        (
            lambda: rnn.RNN(4, num_layers=2, bidirectional=True, input_size=3),
            "RNN",
            {"nonlinearity": "relu"},
        ),
        (lambda: rnn.RNN(4, activation="tanh", input_size=3), "RNN", {"nonlinearity": "tanh"}),
    ],
)
def test_fused_layers_match_torch(torch, layer, torch_name, kwargs):
    rng = np.random.default_rng(1)
    net = layer()
    net.initialize()
    values = _random_params(net, rng)
    _set(net, values)
    bidirectional = net._dir == 2
    ref = getattr(torch.nn, torch_name)(
        3, 4, num_layers=net._num_layers, bidirectional=bidirectional, **kwargs
    )
    with torch.no_grad():
        for name, v in values.items():
            direction, layer_i, side, what = (
                name[len(net.prefix)],
                name[len(net.prefix) + 1],
                *name[len(net.prefix) + 3 :].split("_"),
            )
            suffix = "_reverse" if direction == "r" else ""
            attr = f"{what}_{'ih' if side == 'i2h' else 'hh'}_l{layer_i}{suffix}"
            getattr(ref, attr).copy_(torch.tensor(v))
    x = rng.normal(size=(6, 2, 3)).astype(np.float32)
    h0 = rng.normal(size=(net._num_layers * net._dir, 2, 4)).astype(np.float32)
    out, [h] = net(mx.nd.array(x), [mx.nd.array(h0)])
    ref_out, ref_h = ref(torch.tensor(x), torch.tensor(h0))
    np.testing.assert_allclose(out.asnumpy(), ref_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h.asnumpy(), ref_h.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fused_layer_equals_its_unfused_cells(mode, bidirectional):
    make = {
        "lstm": rnn.LSTM,
        "gru": rnn.GRU,
        "rnn_tanh": lambda *a, **k: rnn.RNN(*a, activation="tanh", **k),
    }[mode]
    net = make(6, num_layers=2, layout="NTC", bidirectional=bidirectional)
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.normal(shape=(3, 5, 4))
    states = net.begin_state(3)
    fused_out, fused_states = net(x, states)
    stack = net._unfuse()  # the same Parameters, under the same names
    assert set(stack.collect_params()) == set(net.collect_params())
    cell_out, cell_states = stack.unroll(5, x, layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(fused_out.asnumpy(), cell_out.asnumpy(), rtol=1e-5, atol=1e-6)
    per_state = len(fused_states)  # LSTM: h and c for each (layer, direction)
    for k, fused in enumerate(fused_states):
        stacked = np.stack([s.asnumpy() for s in cell_states[k::per_state]])
        np.testing.assert_allclose(fused.asnumpy(), stacked, rtol=1e-5, atol=1e-6)


def test_gru_cell_gradient_by_finite_differences():
    rng = np.random.default_rng(2)
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize()
    cell.cast("float64")
    _set(cell, _random_params(cell, rng, np.float64))
    x0 = rng.normal(size=(2, 4, 2))

    def loss(x_np):
        x = mx.nd.array(x_np, dtype="float64")
        x.attach_grad()
        with mx.autograd.record():
            out, states = cell.unroll(4, x, layout="NTC", merge_outputs=True)
            value = (out * out).sum() + states[0].sum()
        value.backward()
        return float(value.asscalar()), x.grad.asnumpy()

    _, grad = loss(x0)
    eps = 1e-6
    numeric = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        up, down = x0.copy(), x0.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (loss(up)[0] - loss(down)[0]) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "make",
    [
        lambda: rnn.LSTMCell(4),
        lambda: rnn.BidirectionalCell(rnn.GRUCell(4), rnn.GRUCell(4)),
        lambda: _residual_stack(),
    ],
)
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_valid_length_masks_outputs_and_keeps_each_sequences_last_state(make, layout):
    cell = make()
    cell.initialize(mx.init.Uniform(0.5))
    lengths = [2, 5, 3]
    shape = (3, 5, 4) if layout == "NTC" else (5, 3, 4)
    x = mx.nd.random.normal(shape=shape)
    outs, states = cell.unroll(
        5, x, layout=layout, merge_outputs=True, valid_length=mx.nd.array(lengths)
    )
    t_axis = layout.find("T")
    for i, n in enumerate(lengths):
        one = x[i : i + 1, :n] if layout == "NTC" else x[:n, i : i + 1]
        ref_out, ref_states = cell.unroll(n, one, layout=layout, merge_outputs=True)
        got = outs.asnumpy()
        got = got[i : i + 1] if layout == "NTC" else got[:, i : i + 1]
        valid = np.take(got, range(n), axis=t_axis)
        np.testing.assert_allclose(valid, ref_out.asnumpy(), rtol=1e-5, atol=1e-6)
        assert not np.take(got, range(n, 5), axis=t_axis).any()  # padding is zero
        for s, ref in zip(states, ref_states, strict=True):
            np.testing.assert_allclose(s.asnumpy()[i : i + 1], ref.asnumpy(), rtol=1e-5, atol=1e-6)


def _residual_stack():
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.ResidualCell(rnn.RNNCell(4)))
    stack.add(rnn.LSTMCell(4))
    return stack


def test_merge_outputs_follows_the_inputs_kind_when_none():
    cell = rnn.RNNCell(3)
    cell.initialize()
    steps = [mx.nd.ones((2, 4)) for _ in range(3)]
    outs, _ = cell.unroll(3, steps)
    assert isinstance(outs, list) and outs[0].shape == (2, 3)
    merged, _ = cell.unroll(3, steps, merge_outputs=True)
    assert merged.shape == (2, 3, 3)
    np.testing.assert_allclose(merged.asnumpy()[:, 1], outs[1].asnumpy())
    tnc, _ = cell.unroll(3, mx.nd.ones((3, 2, 4)), layout="TNC", merge_outputs=True)
    assert tnc.shape == (3, 2, 3)


def test_residual_cell_adds_the_input():
    base = rnn.GRUCell(4, input_size=4)
    res = rnn.ResidualCell(base)
    res.initialize(mx.init.Zero())
    x = mx.nd.random.normal(shape=(2, 3, 4))
    out, _ = res.unroll(3, x, merge_outputs=True)
    # zero weights: each GRU step gives h' = (1 - 0.5) * tanh(0) + 0.5 * h = 0
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy(), rtol=1e-6)


def test_zoneout_and_dropout_cells_change_nothing_outside_training():
    base = rnn.LSTMCell(4, input_size=3)
    zone = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    zone.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.normal(shape=(2, 3, 3))
    got, _ = zone.unroll(3, x, merge_outputs=True)
    base._modified = False  # read the base cell alone (a test-only look behind the wrapper)
    ref, _ = base.unroll(3, x, merge_outputs=True)
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy())
    drop = rnn.DropoutCell(0.5)
    out, states = drop.unroll(3, x, merge_outputs=True)
    np.testing.assert_array_equal(out.asnumpy(), x.asnumpy())
    assert states == []


def test_zoneout_in_training_keeps_either_the_new_or_the_previous_value():
    base = rnn.RNNCell(50, input_size=3)
    zone = rnn.ZoneoutCell(base, zoneout_outputs=0.5)
    zone.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.normal(shape=(4, 2, 3))
    with mx.autograd.record():
        outs, _ = zone.unroll(2, x, merge_outputs=False)
    first = outs[0].asnumpy()
    zeros = first == 0  # the previous output of step 0 is zeros
    assert 0.2 < zeros.mean() < 0.8


def test_misuse_raises_clear_errors():
    net = rnn.GRU(4, num_layers=2)
    net.initialize()
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape. Expecting \(2, 3, 4\)"):
        net(mx.nd.ones((5, 3, 2)), [mx.nd.zeros((1, 3, 4))])
    with pytest.raises(ValueError, match="activation must be 'relu' or 'tanh'"):
        rnn.RNN(4, activation="gelu")
    with pytest.raises(ValueError, match="layout must be"):
        rnn.LSTM(4, layout="NCT")
    with pytest.raises(ValueError, match="state_clip_min"):
        rnn.LSTM(4, state_clip_min=-1.0)
    bi = rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2))
    with pytest.raises(NotImplementedError, match="use unroll"):
        bi(mx.nd.ones((1, 2)), bi.begin_state(1))
    base = rnn.RNNCell(2)
    rnn.ZoneoutCell(base, 0.1)
    with pytest.raises(RuntimeError, match="call the modifier cell instead"):
        base(mx.nd.ones((1, 2)), [mx.nd.zeros((1, 2))])
    with pytest.raises(RuntimeError, match="already modified"):
        rnn.ResidualCell(base)
    cell = rnn.RNNCell(2)
    cell.initialize()
    with pytest.raises(ValueError, match="length is 4 but the inputs have 3 steps"):
        cell.unroll(4, mx.nd.ones((2, 3, 5)))
    with pytest.raises(TypeError, match="rate must be a number"):
        rnn.DropoutCell("0.5")


def test_hybridized_stack_gives_the_eager_values():
    stack = rnn.HybridSequentialRNNCell()
    stack.add(rnn.LSTMCell(5))
    stack.add(rnn.GRUCell(5))
    stack.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.normal(shape=(2, 4, 3))
    eager, eager_states = stack.unroll(4, x, merge_outputs=True)
    stack.hybridize()
    for _ in range(2):  # the first call runs eagerly, the second replays
        hybrid, hybrid_states = stack.unroll(4, x, merge_outputs=True)
        np.testing.assert_allclose(hybrid.asnumpy(), eager.asnumpy(), rtol=1e-6)
        for a, b in zip(hybrid_states, eager_states, strict=True):
            np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


def test_cell_names_and_repr():
    stack = rnn.HybridSequentialRNNCell(prefix="lstm0_")
    with stack.name_scope():
        stack.add(
            rnn.BidirectionalCell(rnn.LSTMCell(3, prefix="l0_"), rnn.LSTMCell(3, prefix="r0_"))
        )
    assert sorted(stack.collect_params()) == sorted(
        f"lstm0_{d}0_{k}"
        for d in "lr"
        for k in ("h2h_bias", "h2h_weight", "i2h_bias", "i2h_weight")
    )
    assert repr(rnn.GRUCell(4, input_size=2)) == "GRUCell(2 -> 12)"
    assert (
        repr(rnn.RNN(4, 2, bidirectional=True))
        == "RNN(None -> 4, TNC, num_layers=2, bidirectional)"
    )


def test_projected_lstm_matches_torch_proj_size(torch):
    rng = np.random.default_rng(3)
    net = rnn.LSTM(6, num_layers=2, projection_size=3, bidirectional=True, input_size=4)
    net.initialize()
    values = _random_params(net, rng)
    _set(net, values)
    ref = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3)
    names = {
        "i2h_weight": "weight_ih",
        "h2h_weight": "weight_hh",
        "h2r_weight": "weight_hr",
        "i2h_bias": "bias_ih",
        "h2h_bias": "bias_hh",
    }
    with torch.no_grad():
        for name, v in values.items():
            own = name[len(net.prefix) :]  # l0_i2h_weight
            suffix = "_reverse" if own[0] == "r" else ""
            getattr(ref, f"{names[own[3:]]}_l{own[1]}{suffix}").copy_(torch.tensor(v))
    x = rng.normal(size=(5, 2, 4)).astype(np.float32)
    out, (h, c) = net(mx.nd.array(x), net.begin_state(2))
    with warnings.catch_warnings():  # torch: "not supported with oneDNN", its own fallback
        warnings.simplefilter("ignore", UserWarning)
        ref_out, (ref_h, ref_c) = ref(torch.tensor(x))
    assert out.shape == (5, 2, 6) and h.shape == (4, 2, 3) and c.shape == (4, 2, 6)
    for got, want in ((out, ref_out), (h, ref_h), (c, ref_c)):
        np.testing.assert_allclose(got.asnumpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    stack = net._unfuse()  # contrib.rnn.LSTMPCell cells under the same names
    cell_out, _ = stack.unroll(5, mx.nd.array(x), layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(cell_out.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)


def test_variational_dropout_keeps_one_mask_per_sequence():
    base = rnn.RNNCell(40, input_size=3)
    cell = mx.gluon.contrib.rnn.VariationalDropoutCell(base, drop_outputs=0.5)
    cell.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.normal(shape=(2, 6, 3))
    with mx.autograd.record():
        out, _ = cell.unroll(6, x, merge_outputs=True)
    dropped = out.asnumpy() == 0  # (N, T, C): the same units dropped at every step
    assert 0.2 < dropped.mean() < 0.8
    assert (dropped == dropped[:, :1]).all()
    states_cell = mx.gluon.contrib.rnn.VariationalDropoutCell(
        rnn.GRUCell(5, input_size=3), drop_inputs=0.5, drop_states=0.5
    )
    states_cell.initialize()
    predict, _ = states_cell.unroll(6, x, merge_outputs=True)  # outside training: no dropout
    states_cell.base_cell._modified = False
    plain, _ = states_cell.base_cell.unroll(6, x, merge_outputs=True)
    np.testing.assert_allclose(predict.asnumpy(), plain.asnumpy())


def test_unroll_on_symbols_says_what_to_do():
    cell = rnn.LSTMCell(3)
    with pytest.raises(TypeError, match="tapegrad builds no symbol graphs"):
        cell.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])


def test_lstm_bias_sets_the_forget_gate_only():
    cell = rnn.LSTMCell(3, input_size=2, i2h_bias_initializer=mx.init.LSTMBias(forget_bias=2.0))
    cell.initialize()
    np.testing.assert_array_equal(cell.i2h_bias.data().asnumpy(), [0, 0, 0, 2, 2, 2] + [0] * 6)
    assert isinstance(mx.init.create("lstmbias"), mx.init.LSTMBias)
    with pytest.raises(ValueError, match="4 \\* hidden_size"):
        mx.init.LSTMBias()("b", (6,))
