"""The public contract, /work/shared/API.md, end to end.

Part 1: every public name the contract mentions exists (one case per name, so a missing
name is reported by name). Part 2: behaviour, with asserted values, of the names that the
rest of the suite does not already exercise.
"""

from __future__ import annotations

import functools
import importlib
import operator
import threading

import numpy as np
import pytest

import tapegrad as tg

# ---------------------------------------------------------------------------- the names
# (root, dotted names): the root is a module path or "Tensor"; names are space separated

_SECTION_1 = {
    "tapegrad": """
        tensor as_tensor from_numpy set_default_dtype get_default_dtype
        zeros ones full empty arange linspace eye zeros_like ones_like full_like empty_like
        rand randn randint normal uniform manual_seed
        float16 float32 float64 bfloat16 int8 int16 int32 int64 uint8 bool
        neg abs exp expm1 log log1p log2 sqrt rsqrt square reciprocal sin cos tan tanh sigmoid
        relu leaky_relu elu gelu silu softplus erf sign floor ceil round clamp clip maximum
        minimum where pow add sub mul div
        sum mean prod amax amin max min argmax argmin var std logsumexp norm cumsum all any
        matmul dot outer einsum tensordot linalg.inv linalg.det linalg.slogdet linalg.solve
        reshape view flatten squeeze unsqueeze expand_dims transpose permute swapaxes moveaxis
        expand broadcast_to repeat tile flip cat concatenate stack split chunk pad
        gather scatter_add index_select take_along_axis masked_fill
        Tensor save load
    """,
    "Tensor": """
        shape ndim dtype device T numel size item tolist numpy asnumpy
        __add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__
        __floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__
        __neg__ __abs__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__
        __iadd__ __isub__ __imul__ __itruediv__ __getitem__ __setitem__
        neg abs exp expm1 log log1p log2 sqrt rsqrt square reciprocal sin cos tan tanh sigmoid
        relu erf sign floor ceil round clamp clip maximum minimum where pow add sub mul div
        sum mean prod amax amin max min argmax argmin var std logsumexp norm cumsum all any
        matmul dot outer reshape view flatten squeeze unsqueeze transpose permute swapaxes
        moveaxis expand broadcast_to repeat tile flip split chunk
        gather scatter_add index_select masked_fill
        add_ sub_ mul_ div_ zero_ fill_ copy_ clamp_ relu_ sigmoid_ exp_
        requires_grad requires_grad_ is_leaf grad_fn grad retain_grad register_hook
        register_post_accumulate_grad_hook backward detach data _version
        attach_grad grad_req to cpu cuda
    """,
}

_SECTION_2 = {
    "tapegrad": """
        no_grad enable_grad set_grad_enabled inference_mode is_grad_enabled
        is_inference_mode_enabled func.grad func.value_and_grad viz.draw
        autodiff.GradManager autodiff.GradManager.attach autodiff.GradManager.attached_tensors
        autodiff.GradManager.record autodiff.GradManager.release autodiff.GradManager.backward
        autodiff.GradManager.__enter__ autodiff.GradManager.__exit__
    """,
    "tapegrad.autograd": """
        backward grad Function Function.apply once_differentiable gradcheck gradgradcheck
        detect_anomaly graph.to_dot
        no_grad enable_grad set_grad_enabled inference_mode is_grad_enabled
        is_inference_mode_enabled
        record pause train_mode predict_mode is_recording is_training set_recording
        set_training mark_variables
    """,
    "tapegrad.autograd.functional": "vjp jvp jacobian hessian hvp vhp",
}

_SECTION_4 = {
    "tapegrad.nn": """
        Module Parameter Sequential ModuleList Linear Conv1d Conv2d ConvTranspose2d MaxPool2d
        AvgPool2d AdaptiveAvgPool2d BatchNorm1d BatchNorm2d LayerNorm GroupNorm Dropout
        Embedding RNN LSTM GRU MultiheadAttention TransformerEncoderLayer Flatten
        ReLU LeakyReLU ELU GELU SiLU Sigmoid Tanh Softplus Softmax LogSoftmax
        Module.parameters Module.named_parameters Module.state_dict Module.load_state_dict
        Module.zero_grad Module.train Module.eval Module.to Module.apply
        init utils.clip_grad_norm_
    """,
    "tapegrad.nn.init": """
        uniform_ normal_ constant_ zeros_ ones_ xavier_uniform_ xavier_normal_
        kaiming_uniform_ kaiming_normal_
    """,
    "tapegrad.nn.functional": """
        linear conv1d conv2d conv_transpose2d max_pool2d avg_pool2d adaptive_avg_pool2d
        batch_norm layer_norm group_norm dropout embedding
        relu leaky_relu elu gelu silu sigmoid tanh softplus
        mse_loss l1_loss smooth_l1_loss cross_entropy nll_loss binary_cross_entropy
        binary_cross_entropy_with_logits kl_div softmax log_softmax one_hot
        scaled_dot_product_attention
    """,
    "tapegrad.optim": """
        SGD Adam AdamW RMSprop Adagrad Optimizer.zero_grad Optimizer.step Optimizer.state_dict
        lr_scheduler.StepLR lr_scheduler.CosineAnnealingLR lr_scheduler.LinearLR
    """,
    "tapegrad.data": "Dataset TensorDataset DataLoader load_digits",
}

_SECTION_5 = {
    "tapegrad.compat.mxnet": """
        np nd autograd np.arange nd.random.normal autograd.record autograd.grad
        gluon.nn.Block gluon.nn.HybridBlock gluon.nn.Sequential gluon.nn.HybridSequential
        gluon.nn.Dense gluon.nn.Dropout gluon.nn.BatchNorm gluon.nn.Block.initialize
        gluon.nn.Block.collect_params gluon.nn.HybridBlock.hybridize
        gluon.Parameter gluon.Parameter.data gluon.Parameter.grad gluon.Parameter.initialize
        gluon.loss.L2Loss gluon.loss.SoftmaxCrossEntropyLoss gluon.Trainer gluon.Trainer.step
    """,
    "tapegrad.compat.mxnet.gluon.nn": "Dense",
    "tapegrad.compat.megengine": """
        tensor Tensor autodiff.GradManager functional module optimizer
        distributed.make_allreduce_cb
    """,
    "tapegrad.compat.megengine.autodiff": "GradManager",
    "tapegrad.compat.torch": """
        tensor autograd autograd.Function autograd.grad autograd.backward nn nn.Module
        nn.Linear nn.functional optim optim.SGD optim.Adam
    """,
    "tapegrad.compat.torch.autograd": "Function",
}

_SECTION_6 = {
    "tapegrad.distributed": """
        init get_rank get_world_size all_reduce broadcast all_gather barrier
        DistributedDataParallel make_allreduce_cb
    """,
    "Tensor": "to cpu cuda",
}


def _cases():
    out = []
    for section in (_SECTION_1, _SECTION_2, _SECTION_4, _SECTION_5, _SECTION_6):
        for root, names in section.items():
            out += [(root, name) for name in names.split()]
    return out


_CASES = _cases()


def _resolve(root: str, name: str):
    obj = tg.Tensor if root == "Tensor" else importlib.import_module(root)
    return functools.reduce(getattr, name.split("."), obj)


@pytest.mark.parametrize(
    ("root", "name"),
    _CASES,
    ids=[f"{'tg' if r == 'tapegrad' else r.replace('tapegrad.', 'tg.')}.{n}" for r, n in _CASES],
)
def test_public_name_exists(root, name):
    value = _resolve(root, name)  # AttributeError names what is missing
    assert value is not None or name == "bfloat16"  # None where the backend has no bfloat16


def test_ctx_grad_fn_and_handle_names_exist():
    seen = {}

    class Probe(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            for attr in (
                "save_for_backward",
                "needs_input_grad",
                "mark_dirty",
                "mark_non_differentiable",
                "set_materialize_grads",
            ):
                seen[attr] = hasattr(ctx, attr)
            ctx.save_for_backward(x)
            ctx.anything = 3  # any attribute on ctx
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["saved_tensors"] = len(ctx.saved_tensors) == 1 and ctx.anything == 3
            return g * 2

    x = tg.tensor([1.0], requires_grad=True)
    y = Probe.apply(x)
    assert callable(y.grad_fn.name) and isinstance(y.grad_fn.next_functions, tuple)
    handle = y.register_hook(lambda g: None)
    handle.remove()
    y.backward()
    assert seen == dict.fromkeys(seen, True) and len(seen) == 6
    assert x.grad.tolist() == [2.0]


# ---------------------------------------------------------------------------- 1. creation
def test_linspace_eye_arange_full_values():
    np.testing.assert_allclose(tg.linspace(0, 1, 5).numpy(), [0.0, 0.25, 0.5, 0.75, 1.0])
    assert tg.linspace(0, 1, 5).dtype == tg.float32 and tg.linspace(2, 3, 0).shape == (0,)
    assert tg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert tg.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert tg.eye(2, dtype=tg.int64).dtype == tg.int64
    assert tg.arange(4).tolist() == [0, 1, 2, 3] and tg.arange(4).dtype == tg.int64
    assert tg.arange(1, 2, 0.5).tolist() == [1.0, 1.5] and tg.arange(1, 2, 0.5).dtype == tg.float32
    assert tg.full((2,), 7).tolist() == [7, 7] and tg.full((2,), 7).dtype == tg.int64
    assert tg.full((1, 2), 1.5).dtype == tg.float32
    e = tg.empty(2, 3)
    assert e.shape == (2, 3) and e.dtype == tg.float32
    assert tg.zeros((2, 3)).shape == tg.ones(2, 3).shape == (2, 3)


def test_like_functions_keep_shape_dtype_device_and_take_device():
    x = tg.tensor([[1.0, 2.0, 3.0]], dtype=tg.float64)
    sevens = tg.full_like(x, 7)
    assert sevens.tolist() == [[7.0, 7.0, 7.0]] and sevens.dtype == tg.float64
    assert tg.ones_like(x).tolist() == [[1.0] * 3] and tg.zeros_like(x).tolist() == [[0.0] * 3]
    assert tg.empty_like(x).shape == (1, 3) and tg.empty_like(x).dtype == tg.float64
    for like in (tg.zeros_like, tg.ones_like, tg.empty_like):
        out = like(x, device="cpu", dtype=tg.float32)
        assert out.device == "cpu" and out.dtype == tg.float32 and out.shape == (1, 3)
    f = tg.full_like(x, 2.5, device="cpu", requires_grad=True)
    assert f.device == "cpu" and f.requires_grad and f.is_leaf and f.tolist() == [[2.5] * 3]
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        tg.zeros_like(x, device="tpu")


def test_random_creation_shapes_ranges_and_dtypes():
    tg.manual_seed(0)
    r = tg.rand(1000)
    assert r.dtype == tg.float32 and r.min().item() >= 0.0 and r.max().item() < 1.0
    ri = tg.randint(3, 6, size=(500,))
    assert ri.dtype == tg.int64 and set(ri.tolist()) == {3, 4, 5}
    assert tg.randint(2, size=(4,)).max().item() < 2
    n = tg.normal(10.0, 0.5, size=(4000,))
    assert n.dtype == tg.float32 and abs(n.mean().item() - 10.0) < 0.05
    assert abs(n.std().item() - 0.5) < 0.05
    u = tg.uniform(-2.0, -1.0, size=(2, 500))
    assert u.shape == (2, 500) and u.min().item() >= -2.0 and u.max().item() < -1.0
    assert tg.randn(2, 3).shape == (2, 3) and tg.randn(2, 3).dtype == tg.float32
    with pytest.raises(ValueError, match="high .* must be greater than low"):
        tg.randint(5, 5)


def test_manual_seed_reproducible_across_two_calls():
    tg.manual_seed(1234)
    a = (tg.rand(5).tolist(), tg.randn(3).tolist(), tg.randint(0, 100, size=(4,)).tolist())
    tg.manual_seed(1234)
    b = (tg.rand(5).tolist(), tg.randn(3).tolist(), tg.randint(0, 100, size=(4,)).tolist())
    assert a == b
    tg.manual_seed(1235)
    assert tg.rand(5).tolist() != a[0]


def test_manual_seed_generators_are_per_thread():
    tg.manual_seed(7)
    expected = [tg.rand(3).tolist() for _ in range(2)]

    tg.manual_seed(7)
    first = tg.rand(3).tolist()
    other = {}

    def worker():  # its own seed and draws must not touch the main thread's stream
        tg.manual_seed(99)
        other["a"] = tg.rand(50).tolist()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert [first, tg.rand(3).tolist()] == expected
    tg.manual_seed(99)
    assert tg.rand(50).tolist() == other["a"]  # and the thread's seed was reproducible


def test_tensor_dtypes_from_python_and_numpy():
    assert tg.tensor(1.5).dtype == tg.float32 and tg.tensor([1, 2]).dtype == tg.int64
    assert tg.tensor([True]).dtype == tg.bool
    for dt in (np.float64, np.float16, np.int8, np.int16, np.int32, np.uint8):
        assert tg.tensor(np.zeros(2, dtype=dt)).dtype == dt
    assert tg.tensor([1, 2], dtype=tg.float64).dtype == tg.float64


def test_python_floats_with_a_float64_dtype_keep_their_precision():
    # not through float32 first: 0.1 stays 0.1, 1e308 stays finite
    assert tg.tensor([0.1], dtype=tg.float64).item() == 0.1
    assert tg.tensor(1e308, dtype=tg.float64).item() == 1e308
    assert tg.as_tensor([0.1], dtype=tg.float64).item() == 0.1
    assert tg.tensor([0.1]).dtype == tg.float32  # no dtype: still the default


@pytest.mark.parametrize(
    "data", ["abc", b"x", np.array(["a"]), [object()]], ids=["str", "bytes", "str-array", "object"]
)
def test_non_numeric_data_is_refused(data):
    with pytest.raises(TypeError, match="cannot make a tensor from .*give numbers"):
        tg.tensor(data)


def test_ragged_data_says_what_is_wrong():
    with pytest.raises(ValueError, match="nested sequences must have the same length"):
        tg.tensor([[1, 2], [3]])


def test_set_default_dtype_affects_python_floats():
    old = tg.get_default_dtype()
    try:
        tg.set_default_dtype(tg.float64)
        assert tg.get_default_dtype() == tg.float64
        assert tg.tensor(1.0).dtype == tg.float64 and tg.tensor([0.5, 1]).dtype == tg.float64
        assert tg.zeros(2).dtype == tg.float64 and tg.linspace(0, 1, 3).dtype == tg.float64
        assert tg.tensor([1, 2]).dtype == tg.int64  # ints are untouched
    finally:
        tg.set_default_dtype(old)
    assert tg.tensor(1.0).dtype == tg.float32 == old


def test_as_tensor_and_from_numpy_share_memory_tensor_copies():
    a = np.arange(3.0)
    shared, also, copied = tg.from_numpy(a), tg.as_tensor(a), tg.tensor(a)
    a[0] = 9.0
    assert shared.tolist()[0] == also.tolist()[0] == 9.0 and copied.tolist()[0] == 0.0


def test_bfloat16_where_the_backend_has_it():
    if tg.bfloat16 is None:
        pytest.skip("this NumPy has no bfloat16 (ml_dtypes not installed)")
    assert tg.tensor([1.0, 2.0], dtype=tg.bfloat16).dtype == tg.bfloat16


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool"])
def test_only_floating_tensors_may_require_grad(dtype):
    t = tg.zeros(2, dtype=getattr(tg, dtype))
    with pytest.raises(RuntimeError, match="only tensors of floating point dtype"):
        t.requires_grad_()
    for fdt in (tg.float16, tg.float32, tg.float64):
        assert tg.zeros(2, dtype=fdt).requires_grad_().requires_grad


# ---------------------------------------------------------------------------- 1. attributes
def test_shape_ndim_dtype_device_T_numel_size():
    t = tg.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dtype == tg.float32 and t.device == "cpu"
    assert t.numel() == 24 and t.size() == (2, 3, 4)
    assert t.size(0) == 2 and t.size(1) == 3 and t.size(-1) == 4 and t.size(dim=-3) == 2
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(3)
    m = tg.tensor([[1.0, 2.0, 3.0]])
    assert m.T.shape == (3, 1) and m.T.tolist() == [[1.0], [2.0], [3.0]]


def test_item_and_tolist():
    assert tg.tensor([[2.5]]).item() == 2.5 and isinstance(tg.tensor(3).item(), int)
    with pytest.raises(ValueError, match="only one-element tensors"):
        tg.tensor([1.0, 2.0]).item()
    out = tg.tensor([[1, 2], [3, 4]]).tolist()
    assert out == [[1, 2], [3, 4]] and isinstance(out, list) and isinstance(out[0][0], int)
    assert tg.tensor(1.5).tolist() == 1.5


def test_numpy_shares_memory_and_refuses_tensors_that_require_grad():
    t = tg.tensor([1.0, 2.0])
    t.numpy()[0] = 5.0
    assert t.tolist() == [5.0, 2.0]
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*[Uu]se tensor\.detach\(\)\.numpy\(\)"):
        w.numpy()
    assert w.detach().numpy().tolist() == [1.0]


def test_asnumpy_always_copies():
    t = tg.tensor([1.0, 2.0])
    a = t.asnumpy()
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0] and isinstance(a, np.ndarray)
    w = tg.tensor([3.0], requires_grad=True)
    assert w.asnumpy().tolist() == [3.0]  # works whatever the tensor tracks


def test_to_cpu_cuda_on_cpu():
    t = tg.tensor([1.0], requires_grad=True)
    assert t.cpu() is t and t.to("cpu") is t
    d = t.to(tg.float64)
    assert d.dtype == tg.float64 and d.grad_fn is not None
    d.sum().backward()
    assert t.grad.tolist() == [1.0] and t.grad.dtype == tg.float32


# ---------------------------------------------------------------------------- 1. operators
_SCALARS = [2, 2.0, np.float64(2.0), np.float32(2.0), np.int64(2), np.array(2.0)]


@pytest.mark.parametrize("scalar", _SCALARS, ids=lambda s: type(s).__name__)
def test_operators_with_python_and_numpy_scalars_keep_float32(scalar):
    x = tg.tensor([1.0, 3.0, 4.0])
    results = {
        "+": (x + scalar, [3.0, 5.0, 6.0]),
        "r+": (scalar + x, [3.0, 5.0, 6.0]),
        "-": (x - scalar, [-1.0, 1.0, 2.0]),
        "r-": (scalar - x, [1.0, -1.0, -2.0]),
        "*": (x * scalar, [2.0, 6.0, 8.0]),
        "r*": (scalar * x, [2.0, 6.0, 8.0]),
        "/": (x / scalar, [0.5, 1.5, 2.0]),
        "r/": (scalar / x, [2.0, 2 / 3, 0.5]),
        "//": (x // scalar, [0.0, 1.0, 2.0]),
        "r//": (scalar // x, [2.0, 0.0, 0.0]),
        "%": (x % scalar, [1.0, 1.0, 0.0]),
        "r%": (scalar % x, [0.0, 2.0, 2.0]),
        "**": (x**scalar, [1.0, 9.0, 16.0]),
        "r**": (scalar**x, [2.0, 8.0, 16.0]),
    }
    for op, (out, expected) in results.items():
        assert isinstance(out, tg.Tensor), op
        assert out.dtype == tg.float32, f"{op} with {type(scalar).__name__} gave {out.dtype}"
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, err_msg=op)


def test_int_tensors_never_promote_a_float32_graph_to_float64():
    ints = tg.tensor([1, 2])
    assert (ints * 2.5).dtype == tg.float32 and (ints * 2.5).tolist() == [2.5, 5.0]
    assert (ints / 2).dtype == tg.float32 and (ints / ints).tolist() == [1.0, 1.0]
    assert (ints + tg.ones(2)).dtype == tg.float32 and tg.sqrt(tg.tensor([4])).tolist() == [2.0]
    assert (ints * np.float64(0.5)).dtype == tg.float32
    assert (tg.ones(2, dtype=tg.float16) * ints).dtype == tg.float16
    w = tg.ones(2, requires_grad=True)
    y = (w * tg.arange(2)).sum()  # an int64 constant in a float32 graph
    y.backward()
    assert y.dtype == tg.float32 and w.grad.dtype == tg.float32 and w.grad.tolist() == [0.0, 1.0]
    # float64 asked for: an input, dtype=, or the default dtype
    assert (tg.ones(2, dtype=tg.float64) * ints).dtype == tg.float64
    assert ints.double().dtype == tg.float64 and ints.sum(dtype=tg.float64).dtype == tg.float64
    old = tg.get_default_dtype()
    try:
        tg.set_default_dtype(tg.float64)
        assert (ints * 2.5).dtype == tg.float64
    finally:
        tg.set_default_dtype(old)


def test_operators_between_tensors_and_their_gradients():
    a = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = tg.tensor([[2.0, 0.5], [1.0, 2.0]], requires_grad=True)
    assert (a @ b).tolist() == [[4.0, 4.5], [10.0, 9.5]]
    assert (-a).tolist() == [[-1.0, -2.0], [-3.0, -4.0]]
    assert abs(tg.tensor([-1.5, 2.0])).tolist() == [1.5, 2.0]
    assert (a // b).tolist() == [[0.0, 4.0], [3.0, 2.0]] and (a % b).tolist() == [
        [1.0, 0.0],
        [0.0, 0.0],
    ]
    (a * b + a / b - a**2).sum().backward()
    np.testing.assert_allclose(
        a.grad.numpy(), b.detach().numpy() + 1 / b.detach().numpy() - 2 * a.detach().numpy()
    )
    np.testing.assert_allclose(
        b.grad.numpy(), a.detach().numpy() - a.detach().numpy() / b.detach().numpy() ** 2
    )


def test_comparisons_give_bool_and_never_require_grad():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    expected = {
        "<": ([True, False, False], x < 2),
        "<=": ([True, True, False], x <= 2),
        ">": ([False, False, True], x > 2),
        ">=": ([False, True, True], x >= 2),
        "==": ([False, True, False], x == 2),
        "!=": ([True, False, True], x != 2),
        "r<": ([False, False, True], operator.lt(2, x)),  # reflected: x.__gt__(2)
        "np<": ([False, False, True], operator.lt(np.float64(2), x)),
        "t==t": ([True, True, True], x == x),
    }
    for op, (values, out) in expected.items():
        assert out.dtype == tg.bool and out.tolist() == values, op
        assert not out.requires_grad and out.grad_fn is None, op
    with tg.autograd.record():
        v = tg.tensor([1.0])
        v.attach_grad()
        assert not (v > 0).requires_grad


def test_inplace_operators_bump_version_and_keep_identity():
    t = tg.tensor([1.0, 2.0])
    same, v0 = t, t._version  # an int, as in PyTorch (the counter is shared by views)
    t += 1
    t -= 0.5
    t *= 4
    t /= 2
    assert t is same and t.tolist() == [3.0, 5.0] and t._version == v0 + 4


def test_inplace_methods_and_alpha():
    t = tg.tensor([1.0, 2.0])
    t.add_(tg.ones(2), alpha=-0.5)
    assert t.tolist() == [0.5, 1.5]
    t.sub_(1, alpha=2)
    assert t.tolist() == [-1.5, -0.5]
    t.mul_(2).div_(4)
    assert t.tolist() == [-0.75, -0.25]
    t.clamp_(min=-0.5).exp_().zero_().fill_(2.0)
    assert t.tolist() == [2.0, 2.0]
    t.copy_(tg.tensor([-1.0, 0.0])).relu_()
    assert t.tolist() == [0.0, 0.0] and t.sigmoid_().tolist() == [0.5, 0.5]
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.add_(a, alpha=3)  # recorded on a non-leaf
    b.sum().backward()
    assert a.grad.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.add_(1, alpha=2)


def test_indexing_forms_and_setitem():
    t = tg.arange(12.0).reshape(3, 4)
    assert t[1].tolist() == [4.0, 5.0, 6.0, 7.0] and t[:, -1].tolist() == [3.0, 7.0, 11.0]
    assert t[[0, 2], [1, 3]].tolist() == [1.0, 11.0]
    assert t[t > 9].tolist() == [10.0, 11.0]
    assert t[None].shape == (1, 3, 4) and t[..., 0].tolist() == [0.0, 4.0, 8.0]
    with pytest.raises(IndexError):
        t[3]
    t[0, :2] = -1.0
    assert t[0].tolist() == [-1.0, -1.0, 2.0, 3.0]
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[tg.tensor([0, 0, 2])].sum().backward()  # repeated indices accumulate
    assert x.grad.tolist() == [2.0, 0.0, 1.0]


def test_arith_functions_are_methods_too():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    assert x.add(1, alpha=2).tolist() == [3.0, 4.0] and x.sub(x).tolist() == [0.0, 0.0]
    assert tg.add(x, x, alpha=3).tolist() == [4.0, 8.0] and tg.sub(x, 1, alpha=2).tolist() == [
        -1.0,
        0.0,
    ]
    assert x.mul(3).tolist() == [3.0, 6.0] and x.div(2).tolist() == [0.5, 1.0]
    assert x.neg().tolist() == [-1.0, -2.0] and x.pow(2).tolist() == [1.0, 4.0]
    (x.add(x, alpha=2) + x.pow(2)).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]


def test_pytorch_conventions_where_numpy_differs():
    t = tg.arange(6.0).reshape(2, 3)
    assert t.transpose(0, 1).shape == (3, 2)
    assert [p.shape for p in tg.split(tg.arange(5.0), 2)] == [(2,), (2,), (1,)]
    assert tg.arange(2.0).repeat(2).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert tg.flip(tg.arange(3.0), 0).tolist() == [2.0, 1.0, 0.0]
    assert tg.tensor([1.0, 3.0]).var().item() == 2.0  # correction=1
    values, indices = tg.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert tg.pad(tg.ones(2, 2), (1, 0)).shape == (2, 3)  # last dim first, as PyTorch
    np.testing.assert_allclose(tg.gelu(tg.tensor([1.0])).item(), 0.8413447, rtol=1e-5)


def test_dim_axis_keepdim_keepdims_spellings():
    t = tg.arange(6.0).reshape(2, 3)
    a = t.sum(dim=1, keepdim=True)
    b = t.sum(axis=1, keepdims=True)
    assert a.tolist() == b.tolist() == [[3.0], [12.0]]
    assert tg.mean(t, axis=-1).tolist() == tg.mean(t, dim=-1).tolist() == [1.0, 4.0]


@pytest.mark.parametrize(
    "name",
    [
        "unsqueeze",
        "expand_dims",
        "split",
        "chunk",
        "index_select",
        "gather",
        "take_along_axis",
        "scatter_add",
        "cat",
        "stack",
        "squeeze",
        "flip",
        "cumsum",
        "softmax",
    ],
)
def test_shape_and_index_functions_take_dim_or_axis(name):
    t = tg.arange(24.0).reshape(2, 3, 4)
    idx = tg.tensor([[[2, 0, 1, 0]], [[1, 1, 0, 2]]])
    calls = {
        "unsqueeze": lambda **k: tg.unsqueeze(t, **k),
        "expand_dims": lambda **k: tg.expand_dims(t, **k),
        "split": lambda **k: tg.split(t, [1, 2], **k)[1],
        "chunk": lambda **k: tg.chunk(t, 3, **k)[2],
        "index_select": lambda **k: tg.index_select(t, index=tg.tensor([2, 0]), **k),
        "gather": lambda **k: tg.gather(t, index=idx, **k),
        "take_along_axis": lambda **k: tg.take_along_axis(t, idx, **k),
        "scatter_add": lambda **k: tg.scatter_add(tg.zeros(2, 3, 4), index=idx, src=t[:, :1], **k),
        "cat": lambda **k: tg.cat([t, t], **k),
        "stack": lambda **k: tg.stack([t, t], **k),
        "squeeze": lambda **k: tg.squeeze(t[:, :1], **k),
        "flip": lambda **k: tg.flip(t, **{"dims" if "dim" in k else "axis": k.popitem()[1]}),
        "cumsum": lambda **k: tg.cumsum(t, **k),
        "softmax": lambda **k: tg.nn.functional.softmax(t, **k),
    }
    with_dim, with_axis = calls[name](dim=1), calls[name](axis=1)
    assert with_dim.shape == with_axis.shape and with_dim.tolist() == with_axis.tolist()


def test_methods_take_axis_too():
    t = tg.arange(6.0).reshape(2, 3)
    idx = tg.tensor([[2], [0]])
    assert t.unsqueeze(axis=1).shape == (2, 1, 3)
    assert t.split(2, axis=1)[1].tolist() == [[2.0], [5.0]]
    assert t.chunk(3, axis=1)[0].tolist() == [[0.0], [3.0]]
    assert t.index_select(axis=1, index=tg.tensor([2])).tolist() == [[2.0], [5.0]]
    assert t.gather(axis=1, index=idx).tolist() == [[2.0], [3.0]]
    assert t.sum(axis=1, keepdims=True).tolist() == [[3.0], [12.0]]


def test_dim_and_axis_together_or_neither_raise():
    t = tg.zeros(2, 3)
    with pytest.raises(TypeError, match="not both"):
        tg.unsqueeze(t, 0, axis=1)
    with pytest.raises(TypeError, match="missing argument 'dim'"):
        tg.gather(t, index=tg.zeros(2, 3, dtype=tg.int64))
    with pytest.raises(TypeError, match="missing argument 'index'"):
        tg.index_select(t, 0)


def test_max_ties_share_the_gradient():
    x = tg.tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


# ---------------------------------------------------------------------------- 2. recording
def test_modes_at_top_level_and_in_autograd_are_the_same():
    for name in (
        "no_grad",
        "enable_grad",
        "set_grad_enabled",
        "inference_mode",
        "is_grad_enabled",
        "is_inference_mode_enabled",
    ):
        assert getattr(tg, name) is getattr(tg.autograd, name), name
    x = tg.tensor([1.0], requires_grad=True)
    with tg.inference_mode():
        assert tg.is_inference_mode_enabled() and not tg.is_grad_enabled()
        assert (x * 2).grad_fn is None
    assert not tg.is_inference_mode_enabled() and tg.is_grad_enabled()


def _mode_state():
    A = tg.autograd
    return (
        tg.is_grad_enabled(),
        tg.is_inference_mode_enabled(),
        A.is_recording(),
        A.is_training(),
        A.is_anomaly_enabled(),
    )


_MODES = {
    "no_grad": (lambda: tg.no_grad(), (False, False, False, None, None)),
    "enable_grad": (lambda: tg.enable_grad(), (True, False, None, None, None)),
    "set_grad_enabled": (lambda: tg.set_grad_enabled(True), (True, False, None, None, None)),
    "inference_mode": (lambda: tg.inference_mode(), (False, True, False, None, None)),
    "record": (lambda: tg.autograd.record(), (True, False, True, True, None)),
    "record-predict": (
        lambda: tg.autograd.record(train_mode=False),
        (True, None, True, False, None),
    ),
    "pause": (lambda: tg.autograd.pause(), (False, False, False, False, None)),
    "train_mode": (lambda: tg.autograd.train_mode(), (None, None, None, True, None)),
    "predict_mode": (lambda: tg.autograd.predict_mode(), (None, None, None, False, None)),
    "detect_anomaly": (lambda: tg.autograd.detect_anomaly(), (None, None, None, None, True)),
}


@pytest.mark.parametrize("name", list(_MODES))
def test_mode_objects_change_state_only_inside_restore_nest_and_decorate(name):
    make, expected = _MODES[name]
    base = _mode_state()
    make()  # constructing changes nothing
    assert _mode_state() == base

    def check(state):
        assert all(e is None or s == e for s, e in zip(state, expected, strict=True)), state

    with tg.no_grad():  # nested in another mode, restored even when the body raises
        outer = _mode_state()
        with pytest.raises(KeyError), make():
            check(_mode_state())
            raise KeyError("body")
        assert _mode_state() == outer

    @make()
    def decorated():
        return _mode_state()

    check(decorated())
    assert _mode_state() == base


def test_record_scope_state_functions():
    A = tg.autograd
    assert not A.is_recording() and not A.is_training()
    with A.record():
        assert A.is_recording() and A.is_training()
        with A.pause():
            assert not A.is_recording() and not A.is_training()
        with A.predict_mode():
            assert A.is_recording() and not A.is_training()
    with A.train_mode():
        assert A.is_training() and not A.is_recording()
    assert A.set_recording(True) is False and A.set_recording(False) is True
    assert A.set_training(True) is False and A.set_training(False) is True
    assert not A.is_recording() and not A.is_training()


def test_jvp_matches_the_jacobian():
    x = tg.tensor([1.0, 2.0], dtype=tg.float64)
    v = tg.tensor([1.0, -1.0], dtype=tg.float64)
    out, jv = tg.autograd.functional.jvp(lambda t: t**3, x, v)
    assert out.tolist() == [1.0, 8.0] and jv.tolist() == [3.0, -12.0]


def test_func_grad_and_value_and_grad():
    f = lambda x, y: (x * x * y).sum()  # noqa: E731
    x, y = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    assert tg.func.grad(f)(x, y).tolist() == [6.0, 16.0]
    assert tg.func.grad(f, argnums=1)(x, y).tolist() == [1.0, 4.0]
    value, g = tg.func.value_and_grad(f)(x, y)
    assert value.item() == 19.0 and g.tolist() == [6.0, 16.0]


def test_to_dot_names_the_ops():
    x = tg.tensor([1.0], requires_grad=True)
    dot = tg.autograd.graph.to_dot((x.exp() * 2).sum())
    assert dot.lstrip().startswith("digraph") and "Exp" in dot and "Mul" in dot


def test_grad_manager_attach_record_backward():
    w = tg.tensor([1.0, 2.0])
    gm = tg.autodiff.GradManager()
    assert gm.attach(w, callbacks=lambda t, g: g * 10) is gm
    assert gm.attached_tensors() == [w]
    with gm:
        gm.backward((w * w).sum())
    assert w.grad.tolist() == [20.0, 40.0]
    gm.record()
    with pytest.raises(RuntimeError):
        gm.record()
    gm.release()


# ---------------------------------------------------------------------------- 4. nn, optim, io
def test_module_api_roundtrip_through_save_and_load(tmp_path):
    tg.manual_seed(0)
    net = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Flatten(), tg.nn.Linear(4, 2))
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert net.training and not net.eval().training and net.train().training
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Sequential" and seen.count("Linear") == 2
    path = tmp_path / "net.safetensors"
    tg.save(net.state_dict(), path)
    other = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Flatten(), tg.nn.Linear(4, 2))
    other.load_state_dict(tg.load(path))
    x = tg.randn(5, 3)
    np.testing.assert_array_equal(net(x).detach().numpy(), other(x).detach().numpy())
    net(x).sum().backward()
    net.zero_grad()
    assert all(p.grad is None or not p.grad.numpy().any() for p in net.parameters())
    assert net.to("cpu") is net


def test_init_and_clip_grad_norm():
    w = tg.nn.Parameter(tg.zeros(3, 4))
    assert w.grad_req == "add" and w.requires_grad
    tg.nn.init.constant_(w, 0.5)
    assert w.detach().numpy().tolist() == [[0.5] * 4] * 3
    tg.nn.init.ones_(w)
    tg.nn.init.zeros_(w)
    assert not w.detach().numpy().any()
    w.grad = tg.full((3, 4), 2.0)
    total = tg.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    assert abs(float(total) - np.sqrt(12 * 4.0)) < 1e-5
    assert abs(np.linalg.norm(w.grad.numpy()) - 1.0) < 1e-5


def test_optimizer_step_and_schedulers():
    w = tg.nn.Parameter(tg.tensor([1.0]))
    opt = tg.optim.SGD([w], lr=0.5)
    sched = tg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    (w * 2).sum().backward()
    opt.step()
    sched.step()
    assert w.detach().numpy().tolist() == [0.0] and abs(opt.param_groups[0]["lr"] - 0.05) < 1e-12
    opt.zero_grad(set_to_none=True)
    assert w.grad is None and "param_groups" in opt.state_dict()


def test_data_loader_batches_and_a_real_data_set():
    ds = tg.data.TensorDataset(tg.arange(10.0), tg.arange(10))
    batches = list(tg.data.DataLoader(ds, batch_size=4))
    assert [b[0].shape for b in batches] == [(4,), (4,), (2,)]
    assert batches[0][1].tolist() == [0, 1, 2, 3]
    images, labels, _ = tg.data.load_digits()
    assert images.shape == (1797, 8, 8) and labels[:3].tolist() == [0, 1, 2]


# ---------------------------------------------------------------------------- 5. facades
def test_facade_imports_and_mxnet_conventions():
    from tapegrad.compat import megengine as mge
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.megengine.autodiff import GradManager
    from tapegrad.compat.mxnet.gluon.nn import Dense
    from tapegrad.compat.torch.autograd import Function

    assert GradManager is not None and Dense is mx.gluon.nn.Dense and Function is not None
    assert mx.np.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert mx.np.array([1, 2]).dtype == mx.nd.array([1, 2]).dtype == tg.float32  # as MXNet
    assert mx.nd.array([1.5]).asnumpy().dtype == np.float32
    assert mx.nd.random.normal(shape=(2, 3)).shape == (2, 3)
    x = mx.np.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x).sum()
    g = mx.autograd.grad(y, [x])
    assert isinstance(g, list) and g[0].tolist() == [2.0, 4.0]
    p = mx.gluon.Parameter("w", shape=(2,))
    p.initialize()
    assert p.grad_req == "write" and p.data().shape == (2,) and p.grad().tolist() == [0.0, 0.0]
    assert callable(mge.distributed.make_allreduce_cb("MEAN"))


def test_megengine_optimizer_chain():
    from tapegrad.compat import megengine as mge
    from tapegrad.compat.megengine import optimizer as optim

    w = mge.Parameter([1.0, 2.0]) if hasattr(mge, "Parameter") else mge.tensor([1.0, 2.0])
    opt = optim.SGD([w], lr=0.5)
    gm = mge.autodiff.GradManager().attach([w])
    with gm:
        gm.backward((w * w).sum())
    opt.step().clear_grad()
    assert w.tolist() == [0.0, 0.0] and w.grad is None


# ---------------------------------------------------------------------------- 6. distributed
def test_distributed_world_of_one():
    D = tg.distributed
    D.init()
    assert D.get_rank() == 0 and D.get_world_size() == 1
    t = tg.tensor([1.0, 2.0])
    assert D.all_reduce(t, "mean") is t and t.tolist() == [1.0, 2.0]
    assert D.broadcast(t, src=0) is t
    gathered = D.all_gather(t)
    assert len(gathered) == 1 and gathered[0].tolist() == [1.0, 2.0]
    D.barrier()
    cb = D.make_allreduce_cb("sum")
    assert cb(t, t).tolist() == [1.0, 2.0]
    net = D.DistributedDataParallel(tg.nn.Linear(2, 1))
    net(tg.ones(3, 2)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
