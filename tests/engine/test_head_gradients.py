"""One validator of head gradients (autograd/heads.py): every entry point that takes them
raises the same exception type with the same message for the same mistake, and writes
nothing when it raises."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autodiff import GradManager


def _ambient():
    return tg.tensor([1.0, 2.0], requires_grad=True)


def _tensor_backward(build, grads):
    x = _ambient()
    (y,) = build(x)
    y.backward(grads[0])
    return x


def _tensor_backward_out_grad(build, grads):
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with tg.autograd.record():
        (y,) = build(x)
    y.backward(out_grad=grads[0])
    return x


def _autograd_backward(build, grads):
    x = _ambient()
    tg.autograd.backward(build(x), grad_tensors=grads)
    return x


def _autograd_grad(build, grads):
    x = _ambient()
    tg.autograd.grad(build(x), [x], grad_outputs=grads)
    return x


def _autograd_grad_head_grads(build, grads):
    x = _ambient()
    tg.autograd.grad(build(x), [x], head_grads=grads)
    return x


def _mxnet_backward(build, grads):
    from tapegrad.compat.mxnet import autograd as mx_autograd

    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with tg.autograd.record():
        ys = build(x)
    mx_autograd.backward(ys, head_grads=grads)
    return x


def _grad_manager(build, grads):
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    with gm:
        gm.backward(build(x), grads)
    return x


ONE_ROOT = [_tensor_backward, _tensor_backward_out_grad]
MANY_ROOTS = [
    _autograd_backward,
    _autograd_grad,
    _autograd_grad_head_grads,
    _mxnet_backward,
    _grad_manager,
]
ALL = ONE_ROOT + MANY_ROOTS


def _raised(path, build, grads):
    with pytest.raises(Exception) as info:
        path(build, grads)
    return type(info.value), str(info.value)


def _same_everywhere(paths, build, grads):
    seen = {path.__name__: _raised(path, build, grads) for path in paths}
    assert len(set(seen.values())) == 1, seen
    return next(iter(seen.values()))


def test_a_gradient_of_another_shape():
    kind, msg = _same_everywhere(ALL, lambda x: [x * 2], [tg.ones(3)])
    assert kind is RuntimeError
    assert msg.startswith(
        "Mismatch in shape: gradient 0 has shape (3,) but tensor 0 has shape (2,)"
    )


def test_a_gradient_that_is_not_floating_point():
    kind, msg = _same_everywhere(ALL, lambda x: [x * 2], [tg.tensor([1, 2])])
    assert kind is TypeError
    assert msg.startswith("gradient 0 has dtype int64 but tensor 0 is float32")


def test_a_different_number_of_gradients_and_tensors():
    kind, msg = _same_everywhere(MANY_ROOTS, lambda x: [x * 2, x * 3], [tg.ones(2)])
    assert kind is RuntimeError
    assert msg.startswith("got 2 tensors but 1 gradients")


def test_the_second_head_is_checked_before_anything_runs():
    kind, msg = _same_everywhere(MANY_ROOTS, lambda x: [x * 2, x * 3], [tg.ones(2), tg.ones(5)])
    assert kind is RuntimeError and "gradient 1 has shape (5,)" in msg


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.__name__)
def test_nothing_is_written_when_a_head_is_rejected(path):
    written = []

    def build(x):
        x.grad = tg.tensor([7.0, 7.0])
        written.append(x)
        return [x * 2]

    with pytest.raises((RuntimeError, TypeError)):
        path(build, [tg.ones(3)])
    np.testing.assert_array_equal(written[0].grad.numpy(), [7.0, 7.0])


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.__name__)
def test_a_valid_head_gradient_is_used(path):
    x = path(lambda x: [x * 2], [tg.tensor([1.0, 10.0], dtype=tg.float64)])  # cast to float32
    if path in (_autograd_grad, _autograd_grad_head_grads):
        assert x.grad is None  # grad() returns, it does not write
    else:
        np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])
        assert x.grad.dtype == x.dtype


def test_no_gradient_for_a_non_scalar_root():
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        _tensor_backward(lambda x: [x * 2], [None])
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        _autograd_backward(lambda x: [x * 2], None)
    # MXNet's record scope and MegEngine's GradManager start from ones, whatever the shape
    np.testing.assert_allclose(
        _tensor_backward_out_grad(lambda x: [x * 2], [None]).grad.numpy(), [2.0, 2.0]
    )
    np.testing.assert_allclose(_grad_manager(lambda x: [x * 2], None).grad.numpy(), [2.0, 2.0])
