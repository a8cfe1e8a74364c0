"""Issue 12: graphs built at once in several threads from a *fresh* leaf must share its
AccumulateGrad node, or a backward that looks for the leaf loses the gradient."""

import os
import threading

import numpy as np
import pytest

import tapegrad as tg

THREADS = 8
# CI runs 200 rounds; the soak (TAPEGRAD_THREAD_ROUNDS=10000) is run by hand before a release
ROUNDS = int(os.environ.get("TAPEGRAD_THREAD_ROUNDS", "200"))


def _run_together(work):
    """Run `work(i)` in THREADS threads released at the same moment; re-raise failures."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def body(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.fixture
def switch_often(monkeypatch):
    """Widen the race window so that it shows every round, not one in ten: threads switch
    as often as the interpreter allows, and making a leaf's AccumulateGrad node sleeps
    (releasing the GIL), as a busy machine would preempt there."""
    import sys
    import time

    from tapegrad.engine import node as node_module

    class SlowNode(node_module.Node):
        __slots__ = ()

        def __init__(self, *args, **kwargs):
            time.sleep(0.0002)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(node_module, "Node", SlowNode)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_backward_inputs_on_a_fresh_shared_leaf_gets_every_gradient(switch_often):
    for _ in range(ROUNDS):
        w = tg.tensor(np.ones(4), requires_grad=True)
        got = [None] * THREADS

        def work(i, w=w, got=got):
            y = (w * float(i + 1)).sum()
            y.backward(inputs=[w])
            got[i] = True

        _run_together(work)
        assert all(got)
        # each thread added (i + 1) to every element of w.grad
        np.testing.assert_allclose(w.grad.numpy(), np.full(4, sum(range(1, THREADS + 1))))


def test_autograd_grad_on_a_fresh_shared_leaf_finds_it(switch_often):
    for _ in range(ROUNDS):
        w = tg.tensor(np.ones(3), requires_grad=True)
        got = [None] * THREADS

        def work(i, w=w, got=got):
            (g,) = tg.autograd.grad((w * w * float(i)).sum(), [w])
            got[i] = g.numpy().copy()

        _run_together(work)
        for i, g in enumerate(got):
            np.testing.assert_allclose(g, 2.0 * i * np.ones(3))
        assert w.grad is None


def test_all_threads_share_one_accumulate_node(switch_often):
    for _ in range(ROUNDS):
        w = tg.tensor(np.ones(2), requires_grad=True)
        nodes = [None] * THREADS

        def work(i, w=w, nodes=nodes):
            nodes[i] = (w * 2.0).grad_fn.next_functions[0][0]

        _run_together(work)
        assert all(n is nodes[0] for n in nodes)


def test_grad_managers_on_a_fresh_shared_parameter_drop_no_update(switch_often):
    for _ in range(ROUNDS):
        w = tg.tensor(np.zeros(2))
        managers = [tg.autodiff.GradManager().attach(w) for _ in range(THREADS)]

        def work(i, w=w, managers=managers):
            gm = managers[i]
            with gm:
                gm.backward((w * float(i + 1)).sum())

        _run_together(work)
        np.testing.assert_allclose(w.grad.numpy(), np.full(2, sum(range(1, THREADS + 1))))
