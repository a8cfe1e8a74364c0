"""Recording state is per thread: one thread inside record(), another not, at the same time."""

from __future__ import annotations

import threading

import numpy as np

import tapegrad as tg
from tapegrad import autograd as ag
from tapegrad.autodiff import GradManager


def _run(*targets):
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported by the main thread
                errors.append(e)

        return run

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    if errors:
        raise errors[0]


def test_record_in_one_thread_is_invisible_to_another():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    both_in = threading.Barrier(2, timeout=10)
    seen = {}

    def recorder():
        with ag.record():
            both_in.wait()  # the other thread is running now, outside any scope
            seen["recorder"] = (ag.is_recording(), ag.is_training(), (x * 2).grad_fn is not None)
            both_in.wait()  # keep the scope open until the other thread has looked
        seen["recorder_after"] = (ag.is_recording(), ag.is_training())

    def plain():
        both_in.wait()
        seen["plain"] = (ag.is_recording(), ag.is_training(), (x * 2).grad_fn is not None)
        both_in.wait()

    _run(recorder, plain)
    assert seen["recorder"] == (True, True, True)
    assert seen["plain"] == (False, False, False)
    assert seen["recorder_after"] == (False, False)


def test_pause_and_train_mode_in_parallel_threads():
    both_in = threading.Barrier(3, timeout=10)
    seen = {}

    def a():
        with ag.record(), ag.pause():
            both_in.wait()
            seen["a"] = (ag.is_recording(), ag.is_training())
            both_in.wait()

    def b():
        with ag.train_mode():
            both_in.wait()
            seen["b"] = (ag.is_recording(), ag.is_training())
            both_in.wait()

    def c():
        with ag.record(train_mode=False):
            both_in.wait()
            seen["c"] = (ag.is_recording(), ag.is_training())
            both_in.wait()

    _run(a, b, c)
    assert seen == {"a": (False, False), "b": (False, True), "c": (True, False)}
    assert (ag.is_recording(), ag.is_training()) == (False, False)


def test_grad_manager_records_only_in_its_thread():
    x = tg.tensor([3.0])
    gm = GradManager().attach(x)
    both_in = threading.Barrier(2, timeout=10)
    seen = {}

    def recorder():
        with gm:
            both_in.wait()
            y = x * x
            both_in.wait()
            gm.backward(y)

    def other():
        both_in.wait()
        seen["other_recorded"] = (x * x).grad_fn is not None
        both_in.wait()

    _run(recorder, other)
    assert seen["other_recorded"] is False
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_concurrent_backwards_into_a_shared_variable_lose_no_update():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad(grad_req="add")
    w = tg.tensor([1.0, 1.0])
    gm = GradManager().attach(w)
    n = 50

    def work():
        for _ in range(n):
            with ag.record():
                y = x * 3
            y.backward()
        for _ in range(n):
            local = GradManager().attach(w)  # one manager per thread, a shared tensor
            with local:
                local.backward(w * 2)

    _run(work, work)
    np.testing.assert_allclose(x.grad.numpy(), [2 * n * 3.0] * 2)
    np.testing.assert_allclose(w.grad.numpy(), [2 * n * 2.0] * 2)
    assert gm.attached_tensors() == [w]
