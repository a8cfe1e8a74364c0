"""Compiled training steps write exactly what eager writes: parameters, gradients,
optimizer state; steps that can't be replayed run eagerly with one warning."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.compile import CompileWarning


def _mlp():
    tg.manual_seed(0)
    return nn.Sequential(
        nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4)
    )


def _cnn(batch_norm):
    tg.manual_seed(0)
    layers = [nn.Conv2d(1, 4, 3, padding=1)]
    if batch_norm:
        layers.append(nn.BatchNorm2d(4))
    layers += [nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)]
    return nn.Sequential(*layers)


def _state(net, opt):
    arrays = [p.detach().numpy().copy() for p in net.parameters()]
    arrays += [
        np.array("no grad") if p.grad is None else p.grad.numpy().copy() for p in net.parameters()
    ]
    arrays += [b.numpy().copy() for b in net.buffers() if b is not None]
    for st in opt.state.values():
        arrays += [
            np.asarray(v._data if isinstance(v, tg.Tensor) else v).copy()
            for _, v in sorted(st.items())
        ]
    return arrays


def _run(make, data, compiled, zero_first=True):
    net, opt = make()

    def step(x, y):
        if zero_first:
            opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        if not zero_first:
            net.zero_grad()
        return loss

    run = tg.compile(step) if compiled else step
    losses = [run(x, y).detach().numpy().copy() for x, y in data]
    return losses, _state(net, opt), run


def _cnn_and_sgd(batch_norm):
    net = _cnn(batch_norm)
    return net, tg.optim.SGD(net.parameters(), lr=0.05)


def _batches(rng, shape, classes, n=20):
    return [
        (
            tg.tensor(rng.standard_normal(shape), dtype=tg.float32),
            tg.tensor(rng.integers(0, classes, shape[0])),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize(
    "optimizer",
    [
        lambda p: tg.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-3),
        lambda p: tg.optim.Adam(p, lr=1e-2),
    ],
)
def test_twenty_compiled_mlp_steps_equal_eager_bitwise(rng, optimizer):
    data = _batches(rng, (6, 8), 4)

    def make():
        net = _mlp()
        return net, optimizer(net.parameters())

    want_losses, want_state, _ = _run(make, data, compiled=False)
    got_losses, got_state, run = _run(make, data, compiled=True)
    assert run.cache_info().hits == 19 and run.eager_reason is None
    for got, want in zip(got_losses + got_state, want_losses + want_state, strict=True):
        assert_array_equal(got, want)


def test_compiled_cnn_step_and_zero_grad_after_step(rng):
    data = _batches(rng, (3, 1, 8, 8), 3, n=6)

    def make():
        return _cnn_and_sgd(batch_norm=False)

    want = _run(make, data, compiled=False, zero_first=False)
    got = _run(make, data, compiled=True, zero_first=False)
    assert got[2].cache_info().hits == 5
    for a, b in zip(got[0] + got[1], want[0] + want[1], strict=True):
        assert_array_equal(a, b)


def test_cnn_with_batch_norm_in_training_compiles_and_equals_eager(rng):
    data = _batches(rng, (3, 1, 8, 8), 3, n=20)

    def make():
        return _cnn_and_sgd(batch_norm=True)

    want = _run(make, data, compiled=False)
    got = _run(make, data, compiled=True)
    assert got[2].cache_info().hits == 19 and got[2].eager_reason is None
    for a, b in zip(got[0] + got[1], want[0] + want[1], strict=True):
        assert_array_equal(a, b)  # parameters, gradients, running stats, batch count


def test_batch_norm_with_a_cumulative_average_runs_eagerly(rng):
    net = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=None))
    fast = tg.compile(net)
    x = tg.tensor(rng.standard_normal((5, 4)), dtype=tg.float32)
    with pytest.warns(CompileWarning, match="momentum=None"):
        fast(x)
    fast(x)
    assert net[1].num_batches_tracked.item() == 2


def test_steps_that_cannot_be_replayed_say_why(rng):
    net = _mlp()
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x, y = _batches(rng, (6, 8), 4, n=1)[0]

    def ops_after_backward(x, y):
        out = net(x)
        F.cross_entropy(out, y).backward()
        opt.step()
        return out.argmax(1)

    def item_at_the_end(x, y):
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        return loss.item()

    def create_graph(x, y):
        F.cross_entropy(net(x), y).backward(create_graph=True)

    for fn, why in (
        (ops_after_backward, "after backward"),
        (item_at_the_end, "value"),
        (create_graph, "kind not replayed"),
    ):
        with pytest.warns(CompileWarning, match=why):
            tg.compile(fn)(x, y)
        for p in net.parameters():
            p.grad = None


def test_gradient_clipping_between_backward_and_step_runs_eagerly(rng):
    x, y = _batches(rng, (6, 8), 4, n=1)[0]
    results = []
    for compiled in (False, True):
        net = _mlp()
        opt = tg.optim.SGD(net.parameters(), lr=0.1)

        def step(x, y, net=net, opt=opt):
            opt.zero_grad()
            F.cross_entropy(net(x), y).backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.01)
            opt.step()

        run = tg.compile(step) if compiled else step
        if compiled:
            with pytest.warns(CompileWarning, match=r"reads a \.grad|outside backward"):
                run(x, y)
        else:
            run(x, y)
        run(x, y)
        results.append([p.detach().numpy().copy() for p in net.parameters()])
    for got, want in zip(*results, strict=True):
        assert_array_equal(got, want)


def test_freezing_a_parameter_is_a_new_signature(rng):
    net = _mlp()
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x, y = _batches(rng, (6, 8), 4, n=1)[0]

    @tg.compile
    def step(x, y):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    step(x, y)
    step(x, y)
    first = net[0].weight
    first.requires_grad_(False)
    before = first.detach().numpy().copy()
    step(x, y)
    step(x, y)
    assert first.grad is None
    assert_array_equal(first.detach().numpy(), before)
    assert step.cache_info().misses == 2


def test_a_parameter_changed_between_backward_and_step_runs_eagerly(rng):
    net = _mlp()
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x, y = _batches(rng, (6, 8), 4, n=1)[0]

    @tg.compile
    def step(x, y):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        with tg.no_grad():
            net[0].weight.mul_(0.5)  # a parameter the optimizer steps, changed outside it
        opt.step()

    with pytest.warns(CompileWarning, match="outside backward"):
        step(x, y)
    before = net[0].weight.detach().numpy().copy()
    step(x, y)
    assert not np.array_equal(net[0].weight.detach().numpy(), before)


def test_a_raw_array_write_without_a_version_bump_is_noticed(rng):
    net = _mlp()
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x, y = _batches(rng, (6, 8), 4, n=1)[0]

    @tg.compile
    def step(x, y):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        net[0].bias._data -= 0.25  # as an update loop on raw arrays would, unversioned
        opt.step()

    with pytest.warns(CompileWarning, match="outside backward"):
        step(x, y)
    before = net[0].bias.detach().numpy().copy()
    step(x, y)  # eager: the raw write happens again
    grad = net[0].bias.grad.numpy()
    assert_array_equal(
        net[0].bias.detach().numpy(), (before - np.float32(0.25)) - np.float32(0.1) * grad
    )


def _lstm_and_adam():
    tg.manual_seed(0)
    net = _LSTMNet()
    return net, tg.optim.Adam(net.parameters(), lr=1e-2)


class _LSTMNet(nn.Module):
    """A 2-layer LSTM (its cell splits are custom Functions) with dropout between layers."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 8, num_layers=2, batch_first=True, dropout=0.2)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def test_twenty_compiled_lstm_steps_equal_eager_bitwise(rng):
    data = _batches(rng, (4, 6, 5), 3, n=20)
    want = _run(_lstm_and_adam, data, compiled=False)
    got = _run(_lstm_and_adam, data, compiled=True)
    assert got[2].cache_info().hits == 19 and got[2].eager_reason is None
    for a, b in zip(got[0] + got[1], want[0] + want[1], strict=True):
        assert_array_equal(a, b)  # losses, parameters, gradients, Adam's moments


def _cnn_with_dropout_and_adamw():
    tg.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.25),
        nn.Linear(4 * 4 * 4, 3),
    )
    return net, tg.optim.AdamW(net.parameters(), lr=1e-2, weight_decay=1e-2)


def test_twenty_compiled_steps_with_dropout_draw_the_masks_eager_draws(rng):
    data = _batches(rng, (3, 1, 8, 8), 3, n=20)
    want = _run(_cnn_with_dropout_and_adamw, data, compiled=False)
    after_eager = tg.random.generator().random()
    got = _run(_cnn_with_dropout_and_adamw, data, compiled=True)
    assert got[2].cache_info().hits == 19 and got[2].eager_reason is None
    assert tg.random.generator().random() == after_eager  # the same stream consumed
    for a, b in zip(got[0] + got[1], want[0] + want[1], strict=True):
        assert_array_equal(a, b)


def _one_ulp_up(w):
    w[3, 5] = np.nextafter(w[3, 5], np.float32(1))


@pytest.mark.parametrize(
    "write",
    [
        _one_ulp_up,  # one element changed a little
        # values moved, the same 8-byte words in other places (a sum of the words would not
        # change): two columns for the next two, then a shuffle of the whole weight
        lambda w: w.__setitem__((slice(None), [0, 1, 2, 3]), w[:, [2, 3, 0, 1]]),
        lambda w: np.random.default_rng(0).shuffle(w.reshape(-1).view(np.uint64)),
    ],
    ids=["one-ulp", "swap", "shuffle"],
)
def test_a_raw_write_into_a_large_parameter_is_noticed(rng, write):
    net = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 3))  # 128 KiB weight
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x = tg.tensor(rng.standard_normal((4, 128)), dtype=tg.float32)
    y = tg.tensor(rng.integers(0, 3, 4))
    w = net[0].weight._data

    @tg.compile
    def step(x, y):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        write(w)  # no version bump
        opt.step()

    with pytest.warns(CompileWarning, match="outside backward"):
        step(x, y)
