"""A plain first-order backward runs its own loop (engine/backward.py `_first_order`);
anomaly mode, `inputs=` and `autograd.grad` run the general one. On random graphs with every
kind of edge both loops must give the same gradients, bit for bit (same rules, same order
of summation): broadcasting inputs, a multi-output op, parameters, saved outputs, a leaf
used many times, constants, tensor hooks and retain_grad on intermediate results."""

import random

import numpy as np
import pytest

import tapegrad as tg


def _build(seed):
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    leaves = [
        tg.tensor(np_rng.standard_normal((2, 3)), requires_grad=True),
        tg.tensor(np_rng.standard_normal(3), requires_grad=True),
        tg.tensor(np_rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True),
    ]
    pool = [leaves[0], leaves[1], leaves[0] * 1.0, tg.tensor(np_rng.standard_normal((2, 3)))]
    retained = []
    for _ in range(rng.randint(2, 30)):
        a, b = rng.choice(pool), rng.choice(pool)
        kind = rng.randrange(10)
        if kind == 0:
            made = a * b  # broadcasting when one is the (3,) leaf
        elif kind == 1:
            made = a + 0.5
        elif kind == 2:
            made = (a - b).tanh()
        elif kind == 3:
            made = a.exp() * 0.1  # saves its output
        elif kind == 4:
            made = a.sum(dim=0, keepdim=True) + b  # parameters, broadcasting back
        elif kind == 5:
            first, second = (a + tg.zeros((2, 3), dtype=tg.float64)).unbind(0)
            made = first * second.sin()  # outputs 0 and 1 of one node
        elif kind == 6:
            made = a.detach() * b
        elif kind == 7:
            made = a * leaves[2].double()  # a float32 leaf, cast
        elif kind == 8:
            made = a * 2.0
            if made.requires_grad:
                made.register_hook(lambda g: g * 3.0)
        else:
            made = b / (a * a + 1.0)
            if made.requires_grad:
                made.retain_grad()
                retained.append(made)
        pool.append(made.reshape(made.shape) if made.ndim else made)
    root = sum((t.sum() for t in pool[4:]), tg.zeros(()))
    return leaves, retained, root


def _grads(seed, anomaly):
    leaves, retained, root = _build(seed)
    if root.grad_fn is None:
        return None
    if anomaly:
        with tg.autograd.detect_anomaly():
            root.backward()
    else:
        root.backward()
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves + retained]


@pytest.mark.parametrize("seed", range(60))
def test_the_first_order_loop_gives_the_general_loops_gradients(seed):
    plain, general = _grads(seed, False), _grads(seed, True)
    assert (plain is None) == (general is None)
    if plain is None:
        return
    for p, g in zip(plain, general):
        assert (p is None) == (g is None)
        if p is not None:
            assert p.dtype == g.dtype and p.shape == g.shape
            np.testing.assert_array_equal(p, g)


def test_the_first_order_loop_refuses_a_freed_graph_and_a_changed_input():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.0).tanh().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    h = x * 1.0
    z = h.exp()
    h.add_(1.0)  # exp saved its output, not h: still fine
    w = (h * h).sum()
    with tg.no_grad():
        h.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.backward()
    z.sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), 2 * (1 - np.tanh([2.0, 4.0]) ** 2) + np.exp([1.0, 2.0])
    )
