"""Module.register_full_backward_hook / register_full_backward_pre_hook, as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg


def _linear():
    m = tg.nn.Linear(3, 2).double()
    with tg.no_grad():
        m.weight.copy_(tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=tg.float64))
        m.bias.zero_()
    return m


def test_the_hook_sees_input_and_output_gradients():
    m = _linear()
    seen = []
    m.register_full_backward_hook(lambda mod, gin, gout: seen.append((mod, gin, gout)))
    x = tg.tensor([[1.0, 1.0, 1.0]], dtype=tg.float64, requires_grad=True)
    (m(x) * tg.tensor([[1.0, 10.0]], dtype=tg.float64)).sum().backward()
    [(mod, gin, gout)] = seen
    assert mod is m and len(gin) == 1 and len(gout) == 1
    assert gout[0].tolist() == [[1.0, 10.0]]
    assert gin[0].tolist() == [[41.0, 52.0, 63.0]]  # gout @ W
    assert x.grad.tolist() == [[41.0, 52.0, 63.0]]


def test_a_returned_grad_input_replaces_the_input_gradient():
    m = _linear()
    m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 0.5,))
    x = tg.tensor([[1.0, 1.0, 1.0]], dtype=tg.float64, requires_grad=True)
    m(x).sum().backward()
    assert x.grad.tolist() == [[2.5, 3.5, 4.5]]
    assert m.weight.grad.tolist() == [[1.0] * 3] * 2  # parameters' gradients are not grad_input


def test_a_pre_hook_replaces_the_output_gradient_before_the_module_sees_it():
    m = _linear()
    order = []
    m.register_full_backward_pre_hook(lambda mod, gout: order.append("pre") or (gout[0] * 2,))
    m.register_full_backward_hook(lambda mod, gin, gout: order.append(("full", gout[0].tolist())))
    x = tg.tensor([[1.0, 0.0, 0.0]], dtype=tg.float64, requires_grad=True)
    m(x).sum().backward()
    assert order == ["pre", ("full", [[2.0, 2.0]])]
    assert x.grad.tolist() == [[10.0, 14.0, 18.0]]
    assert m.bias.grad.tolist() == [2.0, 2.0]


def test_without_an_input_that_requires_grad_grad_input_is_none():
    m = _linear()
    seen = []
    m.register_full_backward_hook(lambda mod, gin, gout: seen.append(gin))
    m(tg.ones(1, 3, dtype=tg.float64)).sum().backward()
    assert seen == [(None,)]


def test_non_tensor_arguments_get_none_and_the_handle_removes_the_hook():
    class Scale(tg.nn.Module):
        def forward(self, factor, x):
            return x * factor

    m = Scale()
    seen = []
    handle = m.register_full_backward_hook(lambda mod, gin, gout: seen.append(gin))
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    m(3.0, x).sum().backward()
    assert seen[0][0] is None and seen[0][1].tolist() == [3.0, 3.0]
    handle.remove()
    m(3.0, x).sum().backward()
    assert len(seen) == 1


def test_a_hook_returning_the_wrong_number_of_gradients_is_named():
    m = _linear()
    m.register_full_backward_hook(lambda mod, gin, gout: (gin[0], gin[0]))
    x = tg.ones(1, 3, dtype=tg.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="full backward hook returned 2 values for grad_input"):
        m(x).sum().backward()


def test_against_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
        w = np.arange(12.0).reshape(4, 3) / 10
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(w.ravel()[: p.numel()].reshape(tuple(p.shape))))
        seen = []
        m[1].register_full_backward_hook(
            lambda mod, gin, gout: seen.append((gin[0].tolist(), gout[0].tolist()))
        )
        m[2].register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 3,))
        x = lib.tensor(np.array([[0.5, -1.0, 2.0]]), requires_grad=True)
        m(x).pow(2).sum().backward()
        return seen, x.grad.tolist()

    ours, theirs = run(tg), run(torch)
    np.testing.assert_allclose(np.array(ours[0][0][0]), np.array(theirs[0][0][0]), rtol=1e-12)
    np.testing.assert_allclose(np.array(ours[0][0][1]), np.array(theirs[0][0][1]), rtol=1e-12)
    np.testing.assert_allclose(np.array(ours[1]), np.array(theirs[1]), rtol=1e-12)
