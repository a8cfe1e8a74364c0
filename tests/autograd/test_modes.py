"""Recording modes: per thread, nestable, exception-safe, decorators, PyTorch's quirks."""

import threading

import pytest

import tapegrad as tg
from tapegrad.engine.state import AMBIENT, state


def _x():
    return tg.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_records_nothing_and_restores():
    x = _x()
    assert tg.is_grad_enabled()
    with tg.no_grad():
        assert not tg.is_grad_enabled()
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert tg.is_grad_enabled()
    z = x * 2
    assert z.grad_fn is not None and z.grad_fn.name() == "MulBackward"


def test_modes_are_exported_in_both_places():
    for name in (
        "no_grad",
        "enable_grad",
        "set_grad_enabled",
        "inference_mode",
        "is_grad_enabled",
        "is_inference_mode_enabled",
    ):
        assert getattr(tg, name) is getattr(tg.autograd, name)


def test_constructing_a_mode_changes_nothing():
    x = _x()
    ng = tg.no_grad()
    im = tg.inference_mode()
    assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()
    assert (x * 2).requires_grad
    with ng:
        assert not tg.is_grad_enabled()
    with im:
        assert tg.is_inference_mode_enabled()
    assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()


def test_enable_grad_inside_no_grad_and_nesting():
    x = _x()
    with tg.no_grad():
        with tg.enable_grad():
            assert tg.is_grad_enabled()
            y = x * 3
            with tg.no_grad():
                assert (x * 3).grad_fn is None
            assert tg.is_grad_enabled()
        assert not tg.is_grad_enabled()
    y.backward(tg.ones(2))
    assert x.grad.tolist() == [3.0, 3.0]


def test_enable_grad_keeps_other_tapes():
    prev = state.active
    try:
        state.active = AMBIENT | 2  # as if a record() scope were open
        with tg.enable_grad():
            assert state.active == AMBIENT | 2
        with tg.no_grad():
            assert state.active == 0
        assert state.active == AMBIENT | 2
    finally:
        state.active = prev


def test_mode_restored_after_exception():
    with pytest.raises(ValueError, match="boom"), tg.no_grad():
        raise ValueError("boom")
    assert tg.is_grad_enabled()

    @tg.inference_mode()
    def fails():
        raise KeyError("inside")

    with pytest.raises(KeyError):
        fails()
    assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()


def test_decorators_called_and_bare():
    @tg.no_grad()
    def called(a):
        return a * 2, tg.is_grad_enabled()

    @tg.no_grad
    def bare(a):
        return a * 2, tg.is_grad_enabled()

    @tg.enable_grad
    def reenable(a):
        return a * 2

    @tg.inference_mode
    def infer():
        return tg.is_inference_mode_enabled()

    x = _x()
    for fn in (called, bare):
        y, enabled = fn(x)
        assert not enabled and y.grad_fn is None
    assert bare.__name__ == "bare"
    with tg.no_grad():
        assert reenable(x).grad_fn is not None
    assert infer() is True
    assert tg.is_grad_enabled()


def test_decorated_function_can_recurse():
    @tg.no_grad()
    def depth(n):
        assert not tg.is_grad_enabled()
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(5) == 5
    assert tg.is_grad_enabled()


def test_decorated_generator_runs_its_body_in_the_mode():
    @tg.no_grad()
    def gen():
        for _ in range(2):
            received = yield tg.is_grad_enabled()
            assert received == "ping"
        return "done"

    g = gen()
    assert next(g) is False
    assert tg.is_grad_enabled()  # the caller runs with its own mode between yields
    assert g.send("ping") is False
    with pytest.raises(StopIteration) as stop:
        g.send("ping")
    assert stop.value.value == "done"
    assert tg.is_grad_enabled()


def test_no_grad_rejects_arguments():
    with pytest.raises(TypeError, match="no_grad"):
        tg.no_grad(3)


def test_set_grad_enabled_as_function_switches_at_once():
    x = _x()
    try:
        tg.set_grad_enabled(False)
        assert not tg.is_grad_enabled()
        assert (x * 2).grad_fn is None
        tg.set_grad_enabled(True)
        assert tg.is_grad_enabled()
    finally:
        tg.set_grad_enabled(True)


def test_set_grad_enabled_as_scope_and_decorator():
    with tg.set_grad_enabled(False):
        assert not tg.is_grad_enabled()
        with tg.set_grad_enabled(True):
            assert tg.is_grad_enabled()
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()

    @tg.set_grad_enabled(False)
    def f():
        return tg.is_grad_enabled()

    assert tg.is_grad_enabled()  # decorating does not leave the mode switched
    assert f() is False
    assert tg.is_grad_enabled()


def test_set_grad_enabled_rejects_non_bool():
    with pytest.raises(TypeError, match="bool"):
        tg.set_grad_enabled("no")


def test_inference_mode():
    x = _x()
    with tg.inference_mode():
        assert tg.is_inference_mode_enabled() and not tg.is_grad_enabled()
        y = x * 2
        with tg.inference_mode(False):
            assert not tg.is_inference_mode_enabled() and tg.is_grad_enabled()
        assert tg.is_inference_mode_enabled()
    assert y.grad_fn is None
    assert not tg.is_inference_mode_enabled()
    with tg.inference_mode(mode=False):
        assert tg.is_grad_enabled()


def test_modes_nested_in_two_threads_at_once():
    """Each thread sees only its own mode, while the other holds a different one."""
    barrier = threading.Barrier(2, timeout=10)
    results = {}
    errors = []

    def worker(name, outer, inner):
        try:
            x = _x()
            seen = []
            with outer():
                barrier.wait()  # both threads are inside their outer mode now
                seen.append((tg.is_grad_enabled(), (x * 1).grad_fn is not None))
                with inner():
                    barrier.wait()
                    seen.append((tg.is_grad_enabled(), (x * 1).grad_fn is not None))
                    barrier.wait()
                seen.append(tg.is_grad_enabled())
                barrier.wait()
            seen.append(tg.is_grad_enabled())
            results[name] = seen
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
            barrier.abort()

    a = threading.Thread(target=worker, args=("a", tg.no_grad, tg.enable_grad))
    b = threading.Thread(target=worker, args=("b", tg.enable_grad, tg.no_grad))
    a.start()
    b.start()
    a.join()
    b.join()
    assert not errors, errors
    assert results["a"] == [(False, False), (True, True), False, True]
    assert results["b"] == [(True, True), (False, False), True, True]
    assert tg.is_grad_enabled()


def test_a_new_thread_starts_with_grad_enabled():
    out = []
    with tg.no_grad():
        t = threading.Thread(target=lambda: out.append(tg.is_grad_enabled()))
        t.start()
        t.join()
    assert out == [True]


def test_one_mode_object_shared_by_two_threads():
    mode = tg.no_grad()
    barrier = threading.Barrier(2, timeout=10)
    seen = []

    def worker():
        with mode:
            barrier.wait()
            seen.append(tg.is_grad_enabled())
            barrier.wait()
        seen.append(tg.is_grad_enabled())

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [False, False, True, True]
