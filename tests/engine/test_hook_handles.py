"""Hook handles are keyed by their own id: removing one (even twice) removes only it."""

import pytest

import tapegrad as tg


def _leaf():
    return tg.tensor([1.0, 2.0], requires_grad=True)


def _register_non_leaf(x, hook):
    h = x * 1.0
    return h, h.register_hook(hook)


@pytest.mark.parametrize("where", ["leaf", "non-leaf"])
def test_same_function_twice_remove_one_handle_twice(where):
    calls = []

    def hook(g):
        calls.append(1)

    x = _leaf()
    if where == "leaf":
        root, first, second = x, x.register_hook(hook), x.register_hook(hook)
    else:
        root = x * 1.0
        first, second = root.register_hook(hook), root.register_hook(hook)
    first.remove()
    first.remove()  # harmless, and must not take out `second`
    (root * 2).sum().backward()
    assert calls == [1]
    second.remove()
    calls.clear()
    (x * 2).sum().backward()
    assert calls == []


def test_post_accumulate_hook_handles_are_independent():
    x = _leaf()
    calls = []

    def hook(t):
        calls.append(t.grad.tolist())

    first = x.register_post_accumulate_grad_hook(hook)
    x.register_post_accumulate_grad_hook(hook)
    first.remove()
    first.remove()
    (x * 3).sum().backward()
    assert calls == [[3.0, 3.0]]


def test_handles_have_distinct_ids_and_work_as_context_managers():
    x = _leaf()
    calls = []
    with x.register_hook(lambda g: calls.append("a")) as a:
        b = x.register_hook(lambda g: calls.append("b"))
        assert a.id != b.id
        (x * 1.0).sum().backward()
    (x * 1.0).sum().backward()
    assert calls == ["a", "b", "b"]


def test_a_hook_may_remove_itself_while_running():
    x = _leaf()
    calls = []
    handles = []

    def once(g):
        calls.append(1)
        handles[0].remove()

    h = x * 1.0
    handles.append(h.register_hook(once))
    h.register_hook(lambda g: calls.append(2))
    h.sum().backward(retain_graph=True)
    h.sum().backward()
    assert calls == [1, 2, 2]
