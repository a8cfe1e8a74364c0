"""Where NumPy's rules would silently differ from PyTorch's, tapegrad follows PyTorch
(issue 11): indexing layout and checks, contiguity for view, mixed float dtypes, in-place
writes after div/pow, .grad assignment, formatting, and PyTorch's warnings."""

import warnings

import numpy as np
import pytest

import tapegrad as tg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


X = np.arange(24.0).reshape(2, 3, 4)
MIXED_KEYS = [
    (0, slice(None), [1, 2]),
    (slice(None), 0, [1, 2]),
    (0, [1, 2], slice(None)),
    ([0, 1], slice(None), 0),
    (0, None, slice(None), [1, 2]),
    (Ellipsis, 0, [1, 2]),
    ([1, 0], 0, [1, 2]),
    (0, slice(None), [[1], [2]]),
    (1, slice(0, 2), [0, 3, 1]),
    (slice(None), [0, 2], 1),
]


@pytest.mark.parametrize("key", MIXED_KEYS, ids=str)
def test_integers_with_index_arrays_give_pytorchs_layout(torch, key):
    ours, theirs = tg.tensor(X)[key], torch.tensor(X)[key]
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # and the gradient lands where PyTorch puts it
    x, xt = tg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    w = np.random.default_rng(0).standard_normal(tuple(theirs.shape))
    (x[key] * tg.tensor(w)).sum().backward()
    (xt[key] * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("key", MIXED_KEYS, ids=str)
def test_setitem_with_mixed_keys_takes_values_in_pytorchs_layout(torch, key):
    shape = tuple(torch.tensor(X)[key].shape)
    v = np.random.default_rng(1).standard_normal(shape)
    ours, theirs = tg.tensor(X.copy()), torch.tensor(X.copy())
    ours[key] = tg.tensor(v)
    theirs[key] = torch.tensor(v)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = tg.tensor(X.copy())
    ours[key] = v  # a NumPy array value too
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_range_and_list_keys(torch):
    logits = np.random.default_rng(0).standard_normal((4, 3))
    labels = [2, 0, 1, 1]
    ours = tg.tensor(logits)[range(4), tg.tensor(labels)]
    theirs = torch.tensor(logits)[range(4), torch.tensor(labels)]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(
        tg.tensor(logits)[range(1, 4, 2)].numpy(), torch.tensor(logits)[range(1, 4, 2)].numpy()
    )
    np.testing.assert_array_equal(
        tg.tensor(logits)[[3, 0]].numpy(), torch.tensor(logits)[[3, 0]].numpy()
    )


@pytest.mark.parametrize(
    "key",
    [
        np.array([True, False]),  # too short for dim 0 (3)
        (slice(None), np.array([True, False, True])),  # dim 1 has 2
        (Ellipsis, np.array([True] * 3)),
        np.array([[True, False, True]]),  # (1, 3) against (3, 2)
    ],
)
def test_a_mask_of_the_wrong_shape_is_an_index_error(torch, key):
    with pytest.raises(IndexError, match="shape of the mask"):
        tg.ones(3, 2)[key]
    with pytest.raises(IndexError):
        torch.ones(3, 2)[
            tuple(
                torch.tensor(k) if isinstance(k, np.ndarray) else k
                for k in (key if isinstance(key, tuple) else (key,))
            )
        ]
    t = tg.ones(3, 2)
    with pytest.raises(IndexError, match="shape of the mask"):
        t[key] = 0.0


def test_masks_of_the_right_shape_still_select(torch):
    m = np.array([[True, False], [False, False], [True, True]])
    np.testing.assert_array_equal(
        tg.tensor(X[0, :, :2])[m].numpy(), torch.tensor(X[0, :, :2])[torch.tensor(m)].numpy()
    )
    m1 = np.array([True, False, True, True])
    np.testing.assert_array_equal(
        tg.tensor(X)[..., m1].numpy(), torch.tensor(X)[..., torch.tensor(m1)].numpy()
    )
    np.testing.assert_array_equal(
        tg.tensor(X)[1, m1[:3]].numpy(), torch.tensor(X)[1, torch.tensor(m1[:3])].numpy()
    )


@pytest.mark.parametrize("index", [[[-1], [0]], [[3], [0]]])
def test_gather_family_refuses_negative_and_out_of_range_indices(torch, index):
    x, idx = np.ones((2, 3)), np.array(index)
    with pytest.raises(IndexError, match="out of bounds"):
        tg.gather(tg.tensor(x), 1, tg.tensor(idx))
    with pytest.raises(IndexError, match="out of bounds"):
        tg.scatter_add(tg.zeros(2, 3), 1, tg.tensor(idx), tg.ones(2, 1))
    with pytest.raises(IndexError, match="out of bounds"):
        tg.zeros(2, 3).scatter_(1, tg.tensor(idx), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        tg.index_select(tg.tensor(x), 1, tg.tensor(idx[:, 0]))
    with pytest.raises(IndexError, match="out of bounds"):
        tg.zeros(3).index_add(0, tg.tensor(idx[:, 0]), tg.ones(2))
    # PyTorch refuses every one of them too (as RuntimeError or IndexError)
    ti = torch.tensor(idx)
    for call in (
        lambda: torch.gather(torch.tensor(x), 1, ti),
        lambda: torch.zeros(2, 3).scatter_add(1, ti, torch.ones(2, 1)),
        lambda: torch.index_select(torch.tensor(x), 1, ti[:, 0]),
        lambda: torch.zeros(3).index_add(0, ti[:, 0], torch.ones(2)),
    ):
        with pytest.raises((RuntimeError, IndexError)):
            call()


def test_plain_negative_indexing_still_counts_from_the_end(torch):
    np.testing.assert_array_equal(
        tg.tensor(X)[-1, tg.tensor([-1, 0])].numpy(),
        torch.tensor(X)[-1, torch.tensor([-1, 0])].numpy(),
    )


# ---------------------------------------------------------------- contiguity and view
def test_view_of_a_transpose_is_refused_as_in_pytorch(torch):
    a, at = tg.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match=r"reshape\(\.\.\.\) instead"):
        a.T.view(6)
    with pytest.raises(RuntimeError, match="reshape"):
        at.T.view(6)
    np.testing.assert_array_equal(
        a.T.contiguous().view(6).numpy(), at.T.contiguous().view(6).numpy()
    )
    np.testing.assert_array_equal(a.T.reshape(6).numpy(), at.T.reshape(6).numpy())
    assert a.T.view(3, 2).shape == (3, 2)  # a view that needs no copy is fine


def test_is_contiguous_matches_pytorch(torch):
    a, at = tg.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)
    cases = [
        lambda t: t,
        lambda t: t.transpose(0, 2),
        lambda t: t[:, :, ::2],
        lambda t: t.permute(1, 0, 2) * 2,
        lambda t: t.transpose(0, 1).contiguous(),
        lambda t: t[0],
    ]
    for f in cases:
        assert f(a).is_contiguous() == f(at).is_contiguous()


def test_conv_and_pool_outputs_can_be_viewed(torch):
    x = tg.randn(2, 3, 8, 8)
    y = tg.nn.MaxPool2d(2)(tg.nn.Conv2d(3, 4, 3)(x))
    assert y.is_contiguous() and y.view(2, -1).shape == (2, 36)


def test_contiguous_copy_is_differentiable(torch):
    w = np.random.default_rng(0).standard_normal((3, 2))
    a, at = tg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    (a.T.contiguous().view(6) * tg.arange(6.0)).sum().backward()
    (at.T.contiguous().view(6) * torch.arange(6.0)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), at.grad.numpy())


# ---------------------------------------------------------------- mixed float dtypes
def test_float64_input_through_a_float32_layer_is_refused(torch):
    x = np.ones((1, 2))
    with pytest.raises(RuntimeError, match="float64, float32"):
        tg.nn.Linear(2, 3)(tg.tensor(x))
    with pytest.raises(RuntimeError, match="dtype"):
        torch.nn.Linear(2, 3)(torch.tensor(x))
    with pytest.raises(RuntimeError, match="matmul: .*same dtype"):
        tg.ones(2, 2) @ tg.ones(2, 2, dtype=tg.float64)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises((TypeError, RuntimeError), match="dtype"):
        tg.nn.Conv2d(1, 1, 2)(tg.ones(1, 1, 3, 3, dtype=tg.float64))
    with pytest.raises(RuntimeError, match="type"):
        torch.nn.Conv2d(1, 1, 2)(torch.ones(1, 1, 3, 3, dtype=torch.float64))
    assert tg.nn.Linear(2, 3).double()(tg.tensor(x)).dtype == np.float64


# ---------------------------------------------------------------- in-place after div / pow
@pytest.mark.parametrize(
    "make", [lambda x: x * 3 / 2, lambda x: x**2, lambda x: 2 / x, lambda x: x / 4.0**0.5]
)
def test_in_place_after_div_or_pow_keeps_the_graph(torch, make):
    v = np.array([0.5, 1.5, 2.0])
    x, xt = tg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    y, yt = make(x), make(xt)
    y += 1
    yt += 1
    (y * y).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_in_place_still_detected_where_the_output_is_needed(torch):
    a, b = tg.tensor([3.0, 4.0]), tg.tensor([1.0, 2.0], requires_grad=True)
    y = a / b  # the divisor's gradient needs the dividend
    a += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    e = tg.tensor([1.0, 2.0], requires_grad=True)
    z = tg.tensor([3.0, 4.0]) ** e
    z += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    bt = torch.tensor([1.0, 2.0], requires_grad=True)
    zt = torch.tensor([3.0, 4.0]) ** bt
    zt += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        zt.sum().backward()


# ---------------------------------------------------------------- .grad, format, warnings
def test_assigning_a_non_tensor_grad_is_a_type_error(torch):
    x = tg.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match="Tensor or None"):
        x.grad = 1.0
    with pytest.raises(TypeError, match="Tensor or None"):
        torch.ones(3, requires_grad=True).grad = 1.0
    x.grad = tg.zeros(3)
    x.grad = None
    assert x.grad is None


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        (1.23456, ".4f"),
        (1.23456, ""),
        (3, "d"),
        (3, "5d"),
        (-0.000123, ".2e"),
        (2.5, ">8.2f"),
        (True, ""),
    ],
)
def test_format_of_a_0d_tensor_is_its_number(torch, value, spec):
    assert format(tg.tensor(value), spec) == format(torch.tensor(value), spec)


def test_format_of_a_tensor_with_elements(torch):
    assert f"{tg.tensor([1.0, 2.0])}" == str(tg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string"):
        format(tg.ones(2), ".3f")
    with pytest.raises(TypeError, match="unsupported format string"):
        format(torch.ones(2), ".3f")


def test_grad_of_a_non_leaf_warns_as_in_pytorch(torch):
    for lib in (tg, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        with pytest.warns(UserWarning, match="not a leaf"):
            assert y.grad is None
        y.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y.sum().backward()
            assert y.grad is not None and x.grad is not None  # retained and leaf: no warning


def test_softmax_without_dim_warns_as_in_pytorch(torch):
    for F, lib in ((tg.nn.functional, tg), (torch.nn.functional, torch)):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            F.softmax(lib.ones(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.nn.functional.softmax(tg.ones(2, 3), dim=1)
