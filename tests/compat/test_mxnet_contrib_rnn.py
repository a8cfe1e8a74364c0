"""mx.gluon.contrib: the convolutional recurrent cells against the same equations on
PyTorch's convolutions, PixelShuffle1D/2D/3D against PyTorch's pixel_shuffle,
SparseEmbedding's (dense) gradient, dynamic_unroll against unroll, contrib.data."""

from __future__ import annotations

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx

contrib = mx.gluon.contrib


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _params(cell):
    return {k[len(cell.prefix) :]: p.data().asnumpy() for k, p in cell.collect_params().items()}


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_conv2d_cells_follow_their_equations(torch, mode):
    F = torch.nn.functional
    cell = getattr(contrib.rnn, f"Conv2D{mode}Cell")((3, 6, 5), 4, (3, 3), (3, 3), i2h_pad=(1, 0))
    cell.initialize(mx.init.Uniform(0.3))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 6, 5)).astype(np.float32)
    states = [
        mx.nd.array(rng.normal(size=s["shape"]).astype(np.float32)) for s in cell.state_info(2)
    ]
    out, new_states = cell(mx.nd.array(x), states)
    p = {k: torch.tensor(v) for k, v in _params(cell).items()}
    h = torch.tensor(states[0].asnumpy())
    i2h = F.conv2d(torch.tensor(x), p["i2h_weight"], p["i2h_bias"], padding=(1, 0))
    h2h = F.conv2d(h, p["h2h_weight"], p["h2h_bias"], padding=(1, 1))
    if mode == "RNN":
        want = [torch.tanh(i2h + h2h)]
    elif mode == "LSTM":
        i, f, g, o = (i2h + h2h).chunk(4, dim=1)
        c = torch.sigmoid(f) * torch.tensor(states[1].asnumpy()) + torch.sigmoid(i) * torch.tanh(g)
        want = [torch.sigmoid(o) * torch.tanh(c), c]
    else:
        (ir, iz, i_n), (hr, hz, hn) = i2h.chunk(3, dim=1), h2h.chunk(3, dim=1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        want = [(1 - z) * torch.tanh(i_n + r * hn) + z * h]
    assert out.shape == (2, 4, 6, 3)
    for got, ref in zip(new_states, want, strict=True):
        np.testing.assert_allclose(got.asnumpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_conv_cell_infers_its_input_channels_and_unrolls():
    cell = contrib.rnn.Conv1DGRUCell((0, 7), 5, 3, 3)
    cell.initialize()
    out, [h] = cell.unroll(4, mx.nd.ones((2, 4, 3, 7)), merge_outputs=True)
    assert out.shape == (2, 4, 5, 5) and h.shape == (2, 5, 5)
    assert cell.i2h_weight.shape == (15, 3, 3)
    with pytest.raises(ValueError, match="h2h_kernel must be odd"):
        contrib.rnn.Conv1DRNNCell((3, 7), 5, 3, 2)
    with pytest.raises(ValueError, match="conv_layout 'NWC' is not supported"):
        contrib.rnn.Conv1DRNNCell((7, 3), 5, 3, 3, conv_layout="NWC")


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_pixel_shuffle_matches_torch(torch, dims):
    layer = getattr(contrib.nn, f"PixelShuffle{dims}D")(2)
    shape = (2, 3 * 2**dims) + (3,) * dims
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = layer(mx.nd.array(x)).asnumpy()
    if dims == 2:
        want = torch.nn.functional.pixel_shuffle(torch.tensor(x), 2).numpy()
    else:  # torch's pixel_shuffle is 2-D only: the same rule written out
        n, c = shape[0], 3
        t = x.reshape((n, c) + (2,) * dims + (3,) * dims)
        order = [0, 1] + [a for i in range(dims) for a in (2 + dims + i, 2 + i)]
        want = t.transpose(order).reshape((n, c) + (6,) * dims)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="do not divide"):
        layer(mx.nd.ones((1, 3) + (2,) * dims))


def test_sparse_embedding_gradient_is_ones_on_the_looked_up_rows():
    layer = contrib.nn.SparseEmbedding(10, 4)
    layer.initialize()
    with mx.autograd.record():
        y = layer(mx.nd.array([3, 4, 2, 0, 1]))
    y.backward()
    grad = layer.weight.grad().asnumpy()
    assert (grad[:5] == 1).all() and (grad[5:] == 0).all()


def test_dynamic_unroll_equals_unroll_with_valid_length():
    cell = mx.gluon.rnn.LSTMCell(6)
    cell.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.normal(shape=(5, 3, 4))  # TNC
    states = cell.begin_state(3)
    lengths = mx.nd.array([5, 2, 4])
    got, got_states = contrib.rnn.rnn_cell.dynamic_unroll(cell, x, states, valid_length=lengths)
    want, want_states = cell.unroll(
        5, x, states, layout="TNC", merge_outputs=True, valid_length=lengths
    )
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy())
    for a, b in zip(got_states, want_states, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy())
    assert list(contrib.data.IntervalSampler(5, 2)) == [0, 2, 4, 1, 3]
