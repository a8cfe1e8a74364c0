"""Regression tests for the bad input issue 12 found accepted, and for warnings that leaked:
each is refused with a contract exception that says what was wrong (as PyTorch refuses it),
or computed silently with NaN/Inf left in the values (as PyTorch computes it)."""

from __future__ import annotations

import io
import json
import os
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops.registry import OPS

F = tg.nn.functional


# ------------------------------------------------------------ .grad assignment
def test_assigning_a_number_to_grad_is_a_type_error():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(TypeError, match="expected to be a Tensor or None.*float"):
        x.grad = 1.0
    assert x.grad is None


def test_assigning_an_integer_grad_to_a_float_tensor_is_refused():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient with dtype int64 to a tensor of dtype"):
        x.grad = tg.zeros(3, dtype=tg.int64)
    x.grad = tg.ones(3)
    (x * 2).sum().backward()  # the next backward accumulates into a float gradient
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3])


# ------------------------------------------------------------ creation
@pytest.mark.parametrize(
    "make",
    [
        lambda: tg.randn(3, dtype=tg.int64),
        lambda: tg.rand(3, dtype=tg.int64),
        lambda: tg.normal(0.0, 1.0, (3,), dtype=tg.int64),
        lambda: tg.uniform(0.0, 1.0, (3,), dtype=tg.bool_),
        lambda: tg.randn_like(tg.zeros(3, dtype=tg.int64)),
    ],
)
def test_random_floats_refuse_an_integer_dtype(make):
    with pytest.raises(RuntimeError, match="samples a floating dtype"):
        make()


def test_random_dtypes_match_torch_refusal():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.randn(3, dtype=torch.int64)
    assert tg.randn(3, dtype=tg.float64).dtype == tg.float64


@pytest.mark.parametrize(
    "make",
    [
        lambda: tg.zeros(2.5),
        lambda: tg.ones((2, 1.5)),
        lambda: tg.empty(3.0),
        lambda: tg.randn(2.0),
    ],
)
def test_fractional_sizes_are_refused(make):
    with pytest.raises(TypeError, match="sizes must be integers"):
        make()


def test_integer_like_sizes_still_work():
    assert tg.zeros(np.int64(2), 3).shape == (2, 3)
    assert tg.ones(tg.tensor(4)).shape == (4,)


def test_complex_data_is_refused_clearly():
    with pytest.raises(TypeError, match="complex data.*real dtypes only"):
        tg.tensor(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="complex"):
        tg.tensor([1j, 2.0])


# ------------------------------------------------------------ modules
@pytest.mark.parametrize("args", [(2.5, 3), (2, 3.0), (True, 3)])
def test_linear_feature_counts_must_be_ints(args):
    with pytest.raises(TypeError, match="Linear: .*must be an int"):
        tg.nn.Linear(*args)


@pytest.mark.parametrize(
    "kw,what",
    [
        ({"kernel_size": 0}, "kernel_size"),
        ({"kernel_size": (3, 0)}, "kernel_size"),
        ({"kernel_size": 3, "stride": 0}, "stride"),
        ({"kernel_size": 3, "dilation": 0}, "dilation"),
        ({"kernel_size": 3, "padding": -1}, "padding"),
    ],
)
def test_conv_refuses_empty_windows_and_steps(kw, what):
    with pytest.raises(ValueError, match=f"Conv2d: {what} must be"):
        tg.nn.Conv2d(1, 1, **kw)


def test_bce_weight_must_not_broadcast_beyond_the_input():
    with pytest.raises(RuntimeError, match="weight of shape \\(3, 4\\) doesn't broadcast"):
        F.binary_cross_entropy(tg.tensor(0.5), tg.tensor(0.5), weight=tg.ones(3, 4))
    with pytest.raises(RuntimeError, match="pos_weight"):
        F.binary_cross_entropy_with_logits(tg.zeros(3), tg.zeros(3), pos_weight=tg.ones(2, 3))


# ------------------------------------------------------------ integer arithmetic
@pytest.mark.parametrize(
    "expr",
    [
        lambda a: a // 0,
        lambda a: a % 0,
        lambda a: a // tg.tensor([0, 1]),
        lambda a: tg.remainder(a, tg.tensor([1, 0])),
    ],
)
def test_integer_division_by_zero_is_refused_as_torch(expr):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        expr(tg.tensor([1, 2]))


def test_float_division_by_zero_is_silent_inf_and_nan():
    torch = pytest.importorskip("torch")
    a = [1.0, -2.0, 0.0]
    for op in (lambda x: x // 0, lambda x: x % 0, lambda x: x / 0):
        ours = op(tg.tensor(a)).numpy()
        np.testing.assert_array_equal(ours, op(torch.tensor(a)).numpy())


def test_out_of_range_python_int_wraps_as_torch():
    torch = pytest.importorskip("torch")
    for op in (lambda x: x + 300, lambda x: x - 300, lambda x: x * 300, lambda x: 300 + x):
        ours = op(tg.tensor(np.array([1, 200], np.uint8)))
        theirs = op(torch.tensor([1, 200], dtype=torch.uint8))
        assert ours.dtype == tg.uint8
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ------------------------------------------------------------ checkpoints
def _rewrite_format(blob: bytes, version) -> bytes:
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + n])
    meta = json.loads(header["__metadata__"]["tapegrad"])
    meta["format"] = version
    header["__metadata__"]["tapegrad"] = json.dumps(meta)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + blob[8 + n :]


@pytest.mark.parametrize("version", [2, 0, "1", None, 1.5])
def test_an_unknown_checkpoint_format_is_refused(version):
    buf = io.BytesIO()
    tg.save({"w": tg.ones(2)}, buf)
    blob = _rewrite_format(buf.getvalue(), version)
    assert tg.load(io.BytesIO(_rewrite_format(buf.getvalue(), 1)))["w"].tolist() == [1, 1]
    with pytest.raises(ValueError, match=f"checkpoint format {version!r}.*reads format 1"):
        tg.load(io.BytesIO(blob))


def test_save_takes_a_bytes_path_and_respects_the_umask(tmp_path):
    path = os.fsencode(tmp_path / "ck.safetensors")
    old = os.umask(0o027)
    try:
        tg.save({"w": tg.ones(2)}, path)
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o640  # 0o666 & ~0o027, as open() would give
    assert tg.load(path)["w"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------ warnings that leaked
@pytest.mark.parametrize(
    "expr",
    [
        lambda: tg.tensor([-1.0, 0.0]).log(),
        lambda: tg.tensor([-1.0]).sqrt(),
        lambda: tg.tensor([0.0]).reciprocal(),
        lambda: tg.tensor([1.0, 0.0]) / 0.0,
        lambda: tg.tensor([0.0]) ** -1.0,
        lambda: tg.tensor([np.inf]).sin(),
        lambda: tg.tensor([1000.0]).exp(),
        lambda: tg.tensor([[np.inf, -np.inf]]).softmax(-1),
        lambda: tg.tensor([np.inf, 0.0]).prod(),
        lambda: tg.tensor([[np.inf], [-np.inf]]).var(),
        lambda: tg.zeros(0).var(),
        lambda: tg.tensor([[np.inf, 1.0]]) @ tg.tensor([[0.0], [1.0]]),
    ],
)
def test_invalid_values_compute_silently_as_in_torch(expr):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = expr()
    assert not np.isfinite(out.numpy()).all() or out.numel() == 0


@pytest.mark.parametrize(
    "fn,x",
    [
        (lambda t: t.sqrt(), 0.0),
        (lambda t: t.log(), 0.0),
        (lambda t: t.rsqrt(), 0.0),
        (lambda t: t**0.5, 0.0),
        (lambda t: t.abs() ** 0.5, 0.0),
    ],
)
def test_backward_at_a_singular_point_is_silent(fn, x):
    torch = pytest.importorskip("torch")
    t = tg.tensor([x], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn(t).sum().backward()
    tt = torch.tensor([x], dtype=torch.float32, requires_grad=True)
    fn(tt).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())


def test_empty_batches_through_norms_and_softmax():
    torch = pytest.importorskip("torch")
    x = np.zeros((0, 4))
    for ours_fn, torch_fn in [
        (lambda a: F.softmax(a, 0), lambda a: torch.softmax(a, 0)),
        (lambda a: F.log_softmax(a, 0), lambda a: torch.log_softmax(a, 0)),
        (
            lambda a: F.batch_norm(a, tg.zeros(4, dtype=tg.float64), tg.ones(4, dtype=tg.float64)),
            lambda a: torch.nn.functional.batch_norm(
                a, torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
            ),
        ),
        (lambda a: F.group_norm(a, 2), lambda a: torch.nn.functional.group_norm(a, 2)),
        (
            lambda a: F.linear(a, tg.ones(3, 4, dtype=tg.float64)),
            lambda a: torch.nn.functional.linear(a, torch.ones(3, 4, dtype=torch.float64)),
        ),
    ]:
        a = tg.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = ours_fn(a)
            out.sum().backward()
        ref = torch_fn(torch.tensor(x))
        assert out.shape == tuple(ref.shape)
        assert a.grad.shape == x.shape


def test_flip_and_movedim_of_a_zero_d_tensor():
    x = tg.tensor(1.5)
    assert x.flip(0).item() == 1.5 and x.flip(-1).shape == ()
    assert tg.movedim(x, 0, 0).item() == 1.5
    with pytest.raises(IndexError):
        x.flip(1)


# ------------------------------------------------------------ NumPy errors name the op
@pytest.mark.parametrize(
    "expr,kind,words",
    [
        (
            lambda: tg.ones(2, 3) + tg.ones(4),
            ValueError,
            ["add:", "(2, 3) float32", "(4,) float32"],
        ),
        # the op itself (tg.amax refuses an empty tensor first, with PyTorch's RuntimeError)
        (lambda: OPS["amax"](tg.zeros(0)), ValueError, ["amax:", "(0,) float32"]),
        (
            lambda: tg.take_along_dim(tg.ones(2, 3), tg.tensor([[5]]), 1),
            IndexError,
            ["take_along_axis:", "out of bounds"],
        ),
    ],
)
def test_numpy_errors_inside_an_op_name_the_op_and_its_inputs(expr, kind, words):
    with pytest.raises(kind) as info:
        expr()
    for word in words:
        assert word in str(info.value)


def test_an_op_that_names_itself_keeps_its_message():
    with pytest.raises(ValueError, match="^matmul: shapes \\(3,\\) and \\(4,\\) don't align"):
        tg.ones(3) @ tg.ones(4)


@pytest.mark.parametrize("fast", [True, False])
def test_quiet_forwards_silence_numpy_either_way(fast, monkeypatch):
    from tapegrad.ops import quiet as q

    if not fast:  # NumPy without the error-state context variable: np.errstate
        monkeypatch.setattr(q, "quiet", q._errstate)
    elif q._STATE is None:
        pytest.skip("this NumPy has no error-state context variable")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with q.quiet():
            out = np.log(np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(np.isnan(out), [True, False, False])
    with pytest.warns(RuntimeWarning):  # and the user's own NumPy state is left as it was
        np.log(np.array([-1.0]))


def _with_metadata(blob: bytes, text: str) -> bytes:
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + n])
    header["__metadata__"]["tapegrad"] = text
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + blob[8 + n :]


@pytest.mark.parametrize(
    "skeleton",
    [
        '{"format": 1, "object": ' + "[" * 100_000 + "]" * 100_000 + "}",  # json: RecursionError
        '{"format": 1, "object": ' + '{"t": "list", "items": [' * 5000 + "]}" * 5000 + "}",
    ],
)
def test_deeply_nested_metadata_is_refused_naming_the_file(skeleton, tmp_path):
    buf = io.BytesIO()
    tg.save({"w": tg.ones(2)}, buf)
    path = tmp_path / "deep.safetensors"
    path.write_bytes(_with_metadata(buf.getvalue(), skeleton))
    with pytest.raises(ValueError, match="deep.safetensors' has damaged tapegrad metadata"):
        tg.load(path)
