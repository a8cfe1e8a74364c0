"""nn.init.dirac_, sparse_ and PyTorch's deprecated non-underscore names: values against
PyTorch (dirac exactly; sparse's pattern and statistics), warnings, errors, the facade."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.nn import init


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    "shape, groups",
    [((4, 4, 3), 1), ((6, 3, 3, 3), 1), ((3, 6, 5), 1), ((4, 2, 3, 3), 2), ((6, 1, 3, 2, 4), 3)],
)
def test_dirac_matches_torch(torch, shape, groups):
    mine = init.dirac_(tg.randn(*shape), groups)
    ref = torch.nn.init.dirac_(torch.randn(*shape), groups)
    np.testing.assert_array_equal(mine.numpy(), ref.numpy())


def test_dirac_convolution_is_the_identity(rng):
    w = tg.nn.Parameter(tg.empty(3, 3, 3, 3, dtype=tg.float64))
    assert init.dirac_(w) is w and w.requires_grad
    x = tg.tensor(rng.standard_normal((2, 3, 5, 5)))
    np.testing.assert_allclose(tg.nn.functional.conv2d(x, w, padding=1).detach().numpy(), x.numpy())


def test_dirac_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(tg.empty(2, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(tg.empty(3, 2, 3), 2)


def test_sparse_pattern_statistics_and_generator(torch):
    tg.manual_seed(0)
    w = init.sparse_(tg.empty(100, 400, dtype=tg.float64), sparsity=0.3, std=0.5)
    ref = torch.nn.init.sparse_(torch.empty(100, 400, dtype=torch.float64), 0.3, 0.5)
    # PyTorch's pattern: exactly ceil(sparsity * rows) zeros in each column
    np.testing.assert_array_equal((w.numpy() == 0).sum(0), (ref.numpy() == 0).sum(0))
    assert ((w.numpy() == 0).sum(0) == 30).all()
    nz = w.numpy()[w.numpy() != 0]
    assert abs(nz.mean()) < 0.01 and abs(nz.std() - 0.5) < 0.01
    a = init.sparse_(tg.empty(5, 7), 0.5, generator=tg.Generator().manual_seed(3))
    b = init.sparse_(tg.empty(5, 7), 0.5, generator=tg.Generator().manual_seed(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(tg.empty(3), 0.5)
    with pytest.raises(ValueError, match="sparse_: sparsity must be in"):
        init.sparse_(tg.empty(3, 3), 1.5)


_ALIASES = [
    ("uniform", (tg.empty, (3, 4)), ()),
    ("normal", (tg.empty, (3, 4)), ()),
    ("constant", (tg.empty, (3, 4)), (0.5,)),
    ("eye", (tg.empty, (3, 4)), ()),
    ("dirac", (tg.empty, (3, 3, 3)), ()),
    ("xavier_uniform", (tg.empty, (3, 4)), ()),
    ("xavier_normal", (tg.empty, (3, 4)), ()),
    ("kaiming_uniform", (tg.empty, (3, 4)), ()),
    ("kaiming_normal", (tg.empty, (3, 4)), ()),
    ("orthogonal", (tg.empty, (3, 4)), ()),
    ("sparse", (tg.empty, (3, 4)), (0.5,)),
]


@pytest.mark.parametrize("old, make, args", _ALIASES, ids=[a[0] for a in _ALIASES])
def test_deprecated_aliases_warn_as_torch_and_fill(torch, old, make, args):
    message = f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`."
    t = make[0](*make[1])
    tg.manual_seed(7)
    with pytest.warns(FutureWarning, match=re.escape(message)):
        out = getattr(init, old)(t, *args)
    assert out is t
    tg.manual_seed(7)
    expected = getattr(init, old + "_")(make[0](*make[1]), *args)
    np.testing.assert_array_equal(t.numpy(), expected.numpy())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(torch.nn.init, old)(torch.empty(*make[1]), *args)
    assert [(w.category, str(w.message)) for w in caught] == [(FutureWarning, message)]
    assert getattr(init, old).__name__ == old


def test_facade_reaches_the_new_names():
    from tapegrad.compat import torch as ttorch

    for name in ["dirac_", "sparse_"] + [a[0] for a in _ALIASES]:
        assert getattr(ttorch.nn.init, name) is getattr(init, name)
