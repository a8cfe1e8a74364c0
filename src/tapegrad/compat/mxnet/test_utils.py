"""`mx.test_utils`: the comparison and random-data helpers MXNet tests are written with.

Written from MXNet 1.9.1's documentation of each helper (dense storage only):

    >>> from tapegrad.compat.mxnet.test_utils import assert_almost_equal, rand_shape_nd
    >>> assert_almost_equal(mx.nd.array([1.0, 2.0]), [1.0, 2.00001])
    >>> len(rand_shape_nd(3))
    3

Tolerances default by dtype as MXNet's do (`rtol` 1e-2 / 1e-4 / 1e-5 and `atol` 1e-1 /
1e-3 / 1e-20 for float16 / float32 / float64; the looser of the two inputs' wins).
`from mxnet.test_utils import *` also gives `np` (NumPy), `mx`, `NDArray` and `array`,
as MXNet's module does.
"""

from __future__ import annotations

import contextlib
import os
import random as _pyrandom

import numpy as np

from .. import mxnet as mx
from .context import Context, cpu, current_context  # noqa: F401
from .ndarray import array  # noqa: F401
from .ndarray.ndarray import NDArray  # noqa: F401
from .numpy_extension import use_np  # noqa: F401
from .util import getenv, setenv  # noqa: F401

_DEFAULT_CONTEXT = [None]
_RTOLS = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOLS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}


def default_context() -> Context:
    """The context tests run on: the one `set_default_context` chose, else the current one."""
    return _DEFAULT_CONTEXT[0] or current_context()


def set_default_context(ctx) -> None:
    _DEFAULT_CONTEXT[0] = ctx


def default_dtype():
    """float32, MXNet's default dtype."""
    return np.float32


def effective_dtype(dat) -> np.dtype:
    """The dtype whose tolerances a comparison of `dat` should use: its own dtype (MXNet
    answers float16 only for float32 GEMM/convolution outputs on TF32 GPUs, which tapegrad
    does not use)."""
    return np.dtype(dat.dtype)


def _numpy(a) -> np.ndarray:
    if hasattr(a, "asnumpy"):
        return a.asnumpy()
    return np.asarray(a)


def _tolerance(arrays, given, table, default):
    if given is not None:
        return given
    found = [table.get(a.dtype) for a in arrays if a.dtype in table]
    return max(found) if found else default


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True) -> bool:
    """True when |a - b| <= atol + rtol * |b| everywhere (tolerances by dtype when None)."""
    a, b = _numpy(a), _numpy(b)
    if not use_broadcast and a.shape != b.shape:
        return False
    rtol = _tolerance((a, b), rtol, _RTOLS, 1e-5)
    atol = _tolerance((a, b), atol, _ATOLS, 1e-20)
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(
    a,
    b,
    rtol=None,
    atol=None,
    names=("a", "b"),
    equal_nan=False,
    use_broadcast=True,
    mismatches=(10, 10),
) -> None:
    """Raise AssertionError (with the worst element) unless `almost_equal(a, b, ...)`."""
    a_np, b_np = _numpy(a), _numpy(b)
    if not use_broadcast and a_np.shape != b_np.shape:
        raise AssertionError(f"shapes differ: {names[0]} {a_np.shape}, {names[1]} {b_np.shape}")
    if use_broadcast and a_np.shape != b_np.shape:
        try:
            a_np, b_np = np.broadcast_arrays(a_np, b_np)
        except ValueError:
            raise AssertionError(
                f"shapes don't broadcast: {names[0]} {a_np.shape}, {names[1]} {b_np.shape}"
            ) from None
    rtol = _tolerance((a_np, b_np), rtol, _RTOLS, 1e-5)
    atol = _tolerance((a_np, b_np), atol, _ATOLS, 1e-20)
    try:
        np.testing.assert_allclose(
            a_np,
            b_np,
            rtol=rtol,
            atol=atol,
            equal_nan=equal_nan,
            err_msg=f"{names[0]} vs {names[1]}",
        )
    except AssertionError as exc:
        raise AssertionError(
            f"arrays not almost equal (rtol={rtol}, atol={atol}):\n{exc}"
        ) from None


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True) -> None:
    """NumPy's assert_allclose on arrays of any kind (MXNet's tolerances: rtol 1e-7,
    atol 0, NaN equal to NaN)."""
    np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")) -> None:
    """`assert_almost_equal` where NaN in either input is ignored."""
    a_np, b_np = np.copy(_numpy(a)), np.copy(_numpy(b))
    nan = np.isnan(a_np) | np.isnan(b_np)
    a_np[nan], b_np[nan] = 0, 0
    assert_almost_equal(a_np, b_np, rtol, atol, names)


def same(a, b) -> bool:
    """True when `a` and `b` hold exactly the same values (and shapes)."""
    return bool(np.array_equal(_numpy(a), _numpy(b)))


def assert_exception(f, exception_type, *args, **kwargs) -> None:
    """Assert that `f(*args, **kwargs)` raises `exception_type`."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")


def random_arrays(*shapes):
    """Standard-normal NumPy arrays of `default_dtype()`, one per shape (one shape: the array)."""
    arrays = [
        np.array(np.random.randn(), dtype=default_dtype())
        if len(s) == 0
        else np.random.randn(*s).astype(default_dtype())
        for s in shapes
    ]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform [low, high) NumPy arrays (float32 unless `dtype`), one per shape."""
    dtype = dtype or default_dtype()
    arrays = [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False) -> tuple:
    """A random shape of `num_dim` dimensions, each in [1, dim] ([0, dim] if allowed)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False) -> tuple:
    low = 0 if allow_zero_size else 1
    return _pyrandom.randint(low, dim0), _pyrandom.randint(low, dim1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False) -> tuple:
    low = 0 if allow_zero_size else 1
    return (
        _pyrandom.randint(low, dim0),
        _pyrandom.randint(low, dim1),
        _pyrandom.randint(low, dim2),
    )


def rand_ndarray(
    shape,
    stype="default",
    density=None,
    dtype=None,
    modifier_func=None,
    shuffle_csr_indices=False,
    distribution=None,
    ctx=None,
):
    """A dense NDArray of uniform [0, 1) values (`stype` other than "default" is refused:
    sparse storage does not exist in tapegrad)."""
    if stype != "default":
        raise ValueError(
            f"rand_ndarray: stype {stype!r} is not supported; only dense "
            "('default') storage exists in tapegrad"
        )
    values = np.random.uniform(0.0, 1.0, size=shape)
    if modifier_func is not None:
        values = modifier_func(values)
    return mx.nd.array(values, ctx=ctx, dtype=dtype or default_dtype())


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None) -> None:
    """`assert_almost_equal` over two optimizer states (arrays, nested tuples, or None:
    nothing to compare)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2, strict=False):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(
    opt1,
    opt2,
    shape,
    dtype,
    w_stype="default",
    g_stype="default",
    rtol=1e-4,
    atol=1e-5,
    compare_states=True,
    ntensors=1,
) -> None:
    """One update of the same random weight and gradient by two `mx.optimizer` objects:
    their states (before and after) and weights must agree. Dense storage only; a list of
    shapes (MXNet's multi-tensor form, `ntensors`) updates `opt2` with lists of indices.

    >>> from tapegrad.compat.mxnet.test_utils import compare_optimizer
    >>> # without momentum, NAG's update is SGD's
    >>> compare_optimizer(mx.optimizer.SGD(wd=0.1), mx.optimizer.NAG(wd=0.1), (2, 3), "float32")
    """
    if w_stype != "default" or g_stype != "default":
        raise ValueError(
            f"compare_optimizer: w_stype={w_stype!r}, g_stype={g_stype!r}: sparse storage "
            "is not supported; only dense ('default') arrays exist in tapegrad"
        )
    ctx = default_context()
    shapes = shape if isinstance(shape, list) else [shape]
    if not isinstance(shape, list) and ntensors != 1:
        raise ValueError("compare_optimizer: ntensors > 1 needs a list of shapes")
    w2 = [mx.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shapes]
    g2 = [mx.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shapes]
    w1, g1 = [w.copy() for w in w2], [g.copy() for g in g2]
    if not isinstance(shape, list):
        state1 = opt1.create_state_multi_precision(0, w1[0])
        state2 = opt2.create_state_multi_precision(0, w2[0])
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1[0], g1[0], state1)
        opt2.update_multi_precision(0, w2[0], g2[0], state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1[0], w2[0], rtol=rtol, atol=atol)
        return
    states2 = [opt2.create_state_multi_precision(0, w) for w in w2]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, states2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, states2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


@contextlib.contextmanager
def environment(*args):
    """Set environment variables inside the block, restoring them after:
    `environment("NAME", "1")` or `environment({"A": "1", "B": None})` (None unsets)."""
    if len(args) == 2:
        values = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        values = dict(args[0])
    else:
        raise ValueError("environment: pass (name, value) or one dict of names to values")
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            setenv(k, v)
        yield
    finally:
        for k, v in saved.items():
            setenv(k, v)


@contextlib.contextmanager
def discard_stderr():
    """Send everything written to stderr (file descriptor 2) to /dev/null inside the block."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def list_gpus() -> list:
    """The GPUs visible to tapegrad (ids)."""
    return list(range(mx.context.num_gpus()))


def check_gluon_hybridize_consistency(
    net_builder, data_l, numpy_func=None, test_grad=True, rtol=1e-4, atol=1e-4
) -> None:
    """Build the block with `net_builder()` twice, run it eagerly and hybridized (the second
    with the first's parameter values) on copies of the arrays `data_l`, and assert the
    outputs agree, with `numpy_func(*numpy inputs)` when given, and (`test_grad`) the
    inputs' gradients of `out.backward()` too."""
    from .autograd import record

    values = None
    results = []
    for hybridize in (False, True):
        net = net_builder()
        net.initialize()
        if hybridize:
            net.hybridize()
        inputs = [x.copy() for x in data_l]
        for x in inputs:
            x.attach_grad()
        if values is not None:  # a dry run gives deferred parameters their shapes
            net(*inputs)
            for p, v in zip(net.collect_params().values(), values, strict=True):
                p.set_data(v)
        with record():
            out = net(*inputs)
        if test_grad:
            out.backward()
        if values is None:
            values = [p.data().asnumpy() for p in net.collect_params().values()]
        grads = [x.grad.asnumpy() for x in inputs] if test_grad else []
        results.append((out.asnumpy(), grads))
    (eager, eager_grads), (hybrid, hybrid_grads) = results
    if numpy_func is not None:
        expected = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(eager, expected, rtol=rtol, atol=atol)
    assert_almost_equal(hybrid, eager, rtol=rtol, atol=atol)
    for h, e in zip(hybrid_grads, eager_grads, strict=True):
        assert_almost_equal(h, e, rtol=rtol, atol=atol)
