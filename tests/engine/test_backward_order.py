"""backward's node order (engine/backward.py `_order`) is the reverse of a depth-first
post-order from the roots, children in edge order: checked against a recursive walk on
random graphs (which node runs first decides the order gradients are summed in)."""

import random

import tapegrad as tg
from tapegrad.engine import collector
from tapegrad.engine.backward import _order
from tapegrad.engine.node import ACCUMULATE
from tapegrad.engine.state import AMBIENT


def _reference(roots, own_mask, targets):
    seen, order = set(), []

    def visit(node):
        for child in node.next:
            if child is None or child in seen:
                continue
            if not (child.tapes & own_mask or child in targets):
                continue
            seen.add(child)
            visit(child)
        order.append(node)

    for root in roots:
        if root not in seen:
            seen.add(root)
            visit(root)
    return order, seen


def _random_graph(rng):
    pool = [tg.ones(3, requires_grad=True) for _ in range(3)] + [tg.ones(3)]
    for _ in range(rng.randint(1, 40)):
        a, b = rng.choice(pool), rng.choice(pool)
        kind = rng.randrange(4)
        if kind == 0:
            pool.append(a * b)
        elif kind == 1:
            pool.append(a + 2.0)
        elif kind == 2:
            pool.append((a - b).tanh())
        else:
            pool.append(a.detach() * b)
    return [t for t in pool if t.grad_fn is not None]


def test_order_is_a_depth_first_post_order():
    try:
        _check_random_graphs(random.Random(0))
    finally:
        collector.thaw()  # thousands of nodes and no backward: give the collector its objects


def _check_random_graphs(rng):
    for _ in range(200):
        made = _random_graph(rng)
        if not made:
            continue
        roots = [t.grad_fn for t in rng.sample(made, min(len(made), rng.randint(1, 3)))]
        targets = {t.grad_fn for t in rng.sample(made, min(len(made), rng.randint(0, 2)))}
        for mask in (AMBIENT, 2):  # the graph's tape, and one that tracks none of it
            order, seen, tapes = _order(roots, mask, targets)
            want, want_seen = _reference(roots, mask, targets)
            assert order == want
            assert seen == want_seen
            assert tapes == _tapes_of(want)


def _tapes_of(nodes):
    tapes = 0
    for node in nodes:
        if node.op is not ACCUMULATE:
            tapes |= node.tapes
    return tapes
