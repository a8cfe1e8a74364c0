"""nn.utils.rnn (PackedSequence and the pack/pad helpers) and the recurrent layers on packed
input: against PyTorch, by finite differences, and the errors for bad input."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck
from tapegrad.nn.utils import rnn as R

LENGTHS = [4, 6, 2, 6]  # unsorted, with a tie


def _x(rng, T=6, B=4, H=3):
    return rng.standard_normal((T, B, H))


def test_pack_and_pad_round_trip_values():
    x = _x(np.random.default_rng(0))
    packed = R.pack_padded_sequence(tg.tensor(x), LENGTHS, enforce_sorted=False)
    # step by step, the running sequences longest first (ties keep their batch order)
    assert packed.batch_sizes.tolist() == [4, 4, 3, 3, 2, 2]
    assert packed.sorted_indices.tolist() == [1, 3, 0, 2]
    assert packed.unsorted_indices.tolist() == [2, 0, 3, 1]
    np.testing.assert_array_equal(packed.data.numpy()[:4], x[0, [1, 3, 0, 2]])
    np.testing.assert_array_equal(packed.data.numpy()[-2:], x[5, [1, 3]])
    padded, lengths = R.pad_packed_sequence(packed, padding_value=-1.0, total_length=8)
    assert lengths.tolist() == LENGTHS and padded.shape == (8, 4, 3)
    for b, n in enumerate(LENGTHS):
        np.testing.assert_array_equal(padded.numpy()[:n, b], x[:n, b])
        assert (padded.numpy()[n:, b] == -1.0).all()


def test_helpers_match_pytorch():
    torch = pytest.importorskip("torch")
    tr = torch.nn.utils.rnn
    rng = np.random.default_rng(1)
    seqs = [rng.standard_normal((n, 2)) for n in (5, 3, 3, 1)]
    for side in ("right", "left"):
        for batch_first in (False, True):
            want = tr.pad_sequence(
                [torch.tensor(s) for s in seqs], batch_first, 0.5, padding_side=side
            )
            got = R.pad_sequence([tg.tensor(s) for s in seqs], batch_first, 0.5, side)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    want = tr.pack_sequence([torch.tensor(s) for s in seqs])
    got = R.pack_sequence([tg.tensor(s) for s in seqs])
    np.testing.assert_array_equal(got.data.numpy(), want.data.numpy())
    assert got.batch_sizes.tolist() == want.batch_sizes.tolist()
    assert got.sorted_indices is None and want.sorted_indices is None
    for a, b in zip(R.unpack_sequence(got), tr.unpack_sequence(want)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = _x(rng)
    tp = tr.pack_padded_sequence(torch.tensor(x).transpose(0, 1), LENGTHS, True, False)
    gp = R.pack_padded_sequence(tg.tensor(x).swapaxes(0, 1), LENGTHS, True, False)
    np.testing.assert_array_equal(gp.data.numpy(), tp.data.numpy())
    assert gp.sorted_indices.tolist() == tp.sorted_indices.tolist()


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layers_on_packed_input_match_pytorch(mode, bidirectional):
    torch = pytest.importorskip("torch")
    tr = torch.nn.utils.rnn
    rng = np.random.default_rng(2)
    x = _x(rng)
    theirs = getattr(torch.nn, mode)(3, 5, num_layers=2, bidirectional=bidirectional).double()
    ours = getattr(tg.nn, mode)(3, 5, num_layers=2, bidirectional=bidirectional).double()
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    dirs = 2 if bidirectional else 1
    h0 = rng.standard_normal((2 * dirs, 4, 5))  # in the batch's order: permuted inside
    hx_t = (torch.tensor(h0), torch.tensor(h0 * 0.5)) if mode == "LSTM" else torch.tensor(h0)
    hx_g = (tg.tensor(h0), tg.tensor(h0 * 0.5)) if mode == "LSTM" else tg.tensor(h0)
    tx, gx = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    t_out, t_h = theirs(tr.pack_padded_sequence(tx, LENGTHS, enforce_sorted=False), hx_t)
    g_out, g_h = ours(R.pack_padded_sequence(gx, LENGTHS, enforce_sorted=False), hx_g)
    assert isinstance(g_out, R.PackedSequence)
    t_pad, _ = tr.pad_packed_sequence(t_out)
    g_pad, _ = R.pad_packed_sequence(g_out)
    np.testing.assert_allclose(g_pad.detach().numpy(), t_pad.detach().numpy(), atol=1e-12)
    t_states = t_h if mode == "LSTM" else (t_h,)
    g_states = g_h if mode == "LSTM" else (g_h,)
    for a, b in zip(g_states, t_states):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    (t_pad.sum() + sum((s**2).sum() for s in t_states)).backward()
    (g_pad.sum() + sum((s**2).sum() for s in g_states)).backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    assert not gx.grad.numpy()[2:, 2].any()  # padding gets no gradient


def test_gradients_by_finite_differences():
    rng = np.random.default_rng(3)
    x = tg.tensor(_x(rng, T=4, B=3, H=2), requires_grad=True)
    gru = tg.nn.GRU(2, 3, bidirectional=True).double()

    def f(x):
        packed = R.pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
        out, h = gru(packed)
        padded, _ = R.pad_packed_sequence(out, batch_first=True)
        return padded.sum() + (h**2).sum()

    assert gradcheck(f, (x,))


def test_bad_input():
    x = tg.tensor(_x(np.random.default_rng(4)))
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        R.pack_padded_sequence(x, LENGTHS)
    with pytest.raises(RuntimeError, match="greater than 0"):
        R.pack_padded_sequence(x, [6, 3, 0, 0])
    with pytest.raises(RuntimeError, match="longer than the input's 6 steps"):
        R.pack_padded_sequence(x, [7, 3, 2, 1])
    with pytest.raises(ValueError, match="one length per sequence"):
        R.pack_padded_sequence(x, [6, 3])
    with pytest.raises(TypeError, match="lengths must hold integers"):
        R.pack_padded_sequence(x, [6.0, 3.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="total_length must be at least"):
        R.pad_packed_sequence(R.pack_padded_sequence(x, [6, 3, 2, 1]), total_length=5)
    with pytest.raises(TypeError, match="expected a PackedSequence"):
        R.pad_packed_sequence(x)
    with pytest.raises(ValueError, match="same trailing shape"):
        R.pad_sequence([tg.zeros(2, 3), tg.zeros(2, 4)])
    with pytest.raises(ValueError, match="padding_side"):
        R.pad_sequence([tg.zeros(2, 3)], padding_side="middle")
    with pytest.raises(ValueError, match="input has 2 features"):
        tg.nn.LSTM(3, 4)(R.pack_sequence([tg.zeros(2, 2)]))


def test_facade_imports_it_as_pytorch_does(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\n"
        "from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n"
        "x = torch.zeros(3, 2, 4)\n"
        "out, h = torch.nn.LSTM(4, 5)(pack_padded_sequence(x, torch.tensor([3, 1])))\n"
        "print(type(out).__name__, pad_packed_sequence(out)[1].tolist(), tuple(h[0].shape))\n"
        "print(torch.nn.utils.rnn.pad_sequence([torch.zeros(2), torch.zeros(1)]).shape)\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "tapegrad.compat.run", "torch", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "PackedSequence [3, 1] (1, 2, 5)"
