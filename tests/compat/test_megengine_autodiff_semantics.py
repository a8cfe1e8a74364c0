"""MegEngine 1.13's documented GradManager / Function semantics on the facade, one test each.

Expected values are derived analytically (float64 inputs where the tolerance matters);
the upstream tests these follow run unchanged with tools/megengine_conformance.py.
"""

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F
from tapegrad.compat.megengine.autodiff import Function, GradManager


@pytest.fixture
def x_np(rng):
    return rng.uniform(0.1, 1.0, 6)


def _x(v):
    return mge.tensor(v, dtype="float64")


def test_outer_manager_records_inner_backward_second_order(x_np):
    x = _x(x_np)
    gm, gm2 = GradManager().attach(x), GradManager().attach(x)
    with gm:
        with gm2:
            gm2.backward(F.cos(x))
        np.testing.assert_allclose(x.grad.numpy(), -np.sin(x_np))
        gm.backward(x.grad)
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x_np) - np.cos(x_np))


def test_a_manager_that_began_later_does_not_see_an_earlier_ones_backward(x_np):
    x = _x(x_np)
    gm, gm2 = GradManager().attach(x), GradManager().attach(x)
    with gm2, gm:  # gm2 begins first: gm (inner) must not record gm2's backward
        gm2.backward(F.cos(x))
        gm.backward(x.grad)
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x_np))


def test_union_records_both_and_neither_sees_the_other(x_np):
    x = _x(x_np)
    gm, gm2 = GradManager().attach(x), GradManager().attach(x)
    with gm | gm2:
        assert gm.is_recording and gm2.is_recording
        y = F.cos(x)
        gm2.backward(y)
        gm.backward(x.grad)  # x.grad is a constant to gm: nothing added
        np.testing.assert_allclose(x.grad.numpy(), -np.sin(x_np))
        x.grad = None
    with gm | gm2:
        y = F.cos(x)
        gm.backward(y)
        gm2.backward(y)
    np.testing.assert_allclose(x.grad.numpy(), -2 * np.sin(x_np))
    assert not gm.is_recording and not gm2.is_recording


@pytest.mark.parametrize("f, df", [(F.sin, np.cos), (lambda t: t * t * t, lambda v: 3 * v * v)])
def test_forward_mode_by_two_reverse_passes(x_np, f, df):
    x = _x(x_np)
    with GradManager() as gm:
        with GradManager().attach(x) as gm2:
            y = f(x)
            v = F.zeros_like(y)
            gm.attach(v)
            gm2.backward(y, v)  # x.grad = J^T v, linear in v and recorded by gm
        gm.backward(x.grad)  # d(sum J^T v)/dv = J 1: the Jacobian-vector product
    np.testing.assert_allclose(v.grad.numpy(), df(x_np))


def test_dy_broadcasts_to_y():
    x = mge.tensor([[1.0, 2.0], [3.0, 4.0]])
    gm = GradManager().attach(x)
    with gm:
        gm.backward(x * x, mge.tensor([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 40.0], [6.0, 80.0]])


def test_custom_function_keeps_its_input_for_a_second_order_backward(x_np):
    class MySin(Function):
        def forward(self, x):
            self.inp = x
            return F.sin(mge.Tensor(x.numpy()))

        def backward(self, dy):
            return F.cos(self.inp) * dy

    class MyCos(Function):
        def forward(self, x):
            self.inp = x
            return F.cos(mge.Tensor(x.numpy()))

        def backward(self, dy):
            return -MySin()(self.inp) * dy

    x = _x(x_np)
    gm, gm2 = GradManager().attach(x), GradManager().attach(x)
    with gm:
        with gm2:
            gm2.backward(MyCos()(x))
        gm.backward(x.grad)
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x_np) - np.cos(x_np), rtol=1e-6)


def test_custom_function_gets_none_for_an_output_off_the_loss_and_rejects_non_tensors():
    seen = []

    class Pair(Function):
        def forward(self, a, b):
            return a * 2, b * 3

        def backward(self, ga, gb):
            seen.append(gb)
            return ga * 2, None

    a, b = mge.Parameter([1.0]), mge.Parameter([2.0])
    gm = GradManager().attach([a, b])
    with gm:
        out, _ = Pair()(a, b)
        gm.backward(out)
    assert seen == [None] and b.grad is None
    np.testing.assert_allclose(a.grad.numpy(), [2.0])
    with pytest.raises(TypeError, match=r"op Pair expect type Tensor as inputs"):
        Pair()(a, 1.0)


def test_release_drops_the_recorded_history():
    w = mge.Parameter([3.0])
    gm = GradManager().attach(w)
    gm.record()
    kept = w * 2  # recorded, then released: a constant from now on
    gm.release()
    with gm:
        gm.backward(kept * w)
    np.testing.assert_allclose(w.grad.numpy(), [6.0])  # d(6 * w)/dw, not 2 * 2w


def test_leaving_with_by_an_exception_drops_the_history():
    w = mge.Parameter([3.0])
    gm = GradManager().attach(w)
    with pytest.raises(ZeroDivisionError), gm:
        kept = w * 2
        _ = 1 / 0
    assert not gm.is_recording
    with gm:
        gm.backward(kept * w)
    np.testing.assert_allclose(w.grad.numpy(), [6.0])


def test_a_new_manager_on_a_dead_managers_bit_inherits_no_history():
    import gc

    w = mge.Parameter([3.0])
    gm = GradManager().attach(w)
    gm.record()
    kept = w * 2
    bit = gm._bit
    del gm
    gc.collect()
    from tapegrad.engine import state as engine_state

    others = []  # other freed bits may come first: take managers until ours is handed out
    for _ in range(len(engine_state._free_bits) + 1):
        gm2 = GradManager()
        if gm2._bit == bit:
            break
        others.append(gm2)
    assert gm2._bit == bit  # the freed bit is reused...
    gm2.attach(w)
    with gm2:
        gm2.backward(kept * w)
    np.testing.assert_allclose(w.grad.numpy(), [6.0])  # ...without the old history


def test_inplace_operators_rebind():
    x = mge.tensor([2.0])
    gm = GradManager().attach(x)
    with gm:
        y = x * x
        before = y
        y *= y
        gm.backward(y)
    assert before is not y
    np.testing.assert_allclose(before.numpy(), [4.0])
    np.testing.assert_allclose(x.grad.numpy(), [4 * 2.0**3])  # d x^4 / dx


def test_callback_returning_none_gives_no_gradient():
    x = mge.Parameter([1.0])
    gm = GradManager().attach(x, callbacks=lambda t, g: None)
    with gm:
        gm.backward(x * 2)
    assert x.grad is None


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8"])
def test_attach_of_an_int_tensor_raises_assertion_error_and_type_error(dtype):
    x = mge.tensor([1], dtype=dtype)
    with pytest.raises(AssertionError):
        GradManager().attach([x])
    with pytest.raises(TypeError, match="only floating point"):
        GradManager().attach([x])


def test_expand_dims_takes_a_list_of_axes():
    x = mge.tensor(np.ones((2, 3)))
    assert F.expand_dims(x, [2, 3]).shape == (2, 3, 1, 1)
    assert F.expand_dims(x, [0, -1]).shape == (1, 2, 3, 1)


def test_sort_argsort_topk_follow_megengine():
    x = mge.tensor([3.0, 1.0, 2.0])
    values, idx = F.sort(x, descending=True)
    assert values.numpy().tolist() == [3.0, 2.0, 1.0] and idx.numpy().tolist() == [0, 2, 1]
    assert F.argsort(x).numpy().tolist() == [1, 2, 0]
    values, idx = F.topk(x, 2)  # the k smallest unless descending
    assert values.numpy().tolist() == [1.0, 2.0] and idx.numpy().tolist() == [1, 2]


def test_nn_names_at_functional_top_level():
    for name in (
        "conv2d",
        "max_pool2d",
        "avg_pool2d",
        "batch_norm",
        "embedding",
        "leaky_relu",
        "gelu",
        "silu",
        "softplus",
        "interpolate",
    ):
        assert callable(getattr(F, name)), name


def test_pixel_shuffle_and_interpolate_values():
    x = mge.tensor(np.arange(8.0).reshape(1, 8, 1, 1))
    out = F.pixel_shuffle(x, 2)
    assert out.shape == (1, 2, 2, 2)
    np.testing.assert_allclose(out.numpy()[0, 1], [[4.0, 5.0], [6.0, 7.0]])
    img = mge.tensor(np.array([[[[0.0, 1.0], [2.0, 3.0]]]]))
    up = F.vision.interpolate(img, size=(3, 3), align_corners=True)
    np.testing.assert_allclose(up.numpy()[0, 0], [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]])
    near = F.vision.interpolate(img, scale_factor=2, mode="nearest")
    np.testing.assert_allclose(near.numpy()[0, 0, :, 0], [0, 0, 2, 2])


def test_clip_grad_norm_and_value():
    import tapegrad.compat.megengine.optimizer as optim

    p = mge.Parameter([3.0, 4.0])
    p.grad = mge.tensor([3.0, 4.0])
    assert float(optim.clip_grad_norm([p], max_norm=1.0).numpy()) == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    optim.clip_grad_value([p], lower=-0.1, upper=0.7)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.7], rtol=1e-6)


def test_core_and_jit_import_and_core_options_raise_on_use():
    import tapegrad.compat.megengine.core as core
    import tapegrad.compat.megengine.core.tensor.dtype as dtype
    import tapegrad.compat.megengine.jit as jit

    assert callable(jit.trace)
    assert dtype.is_differentible_dtype("float16") and not dtype.is_differentible_dtype("int8")
    with pytest.raises(NotImplementedError, match="set_option"):
        core.set_option("enable_drop", 1)
    with pytest.raises(AttributeError, match="internals are out of scope"):
        _ = core._imperative_rt


def test_more_nn_functions_at_top_level():
    x = mge.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(
        F.pad(x, ((1, 0), (0, 2)), constant_value=9).numpy(),
        [[9, 9, 9, 9, 9], [0, 1, 2, 9, 9], [3, 4, 5, 9, 9]],
    )
    z = np.sqrt(1.5)  # (x - mean) / std of [0, 1, 2] is [-1, 0, 1] * sqrt(3/2)
    np.testing.assert_allclose(
        F.layer_norm(x, 3, affine=False).numpy(), [[-z, 0, z]] * 2, rtol=1e-4
    )
    np.testing.assert_allclose(
        F.hswish(mge.tensor([-4.0, 1.0, 4.0])).numpy(), [0.0, 4 / 6, 4.0], rtol=1e-6
    )
    np.testing.assert_allclose(F.logsigmoid(mge.tensor([0.0])).numpy(), [-np.log(2)], rtol=1e-6)
