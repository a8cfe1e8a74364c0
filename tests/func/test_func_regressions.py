"""Minimal reproductions of the mismatches tests/func/test_fuzz_func_vs_torch.py found
between tg.func / forward AD and torch.func (each failed before its fix); analytic values,
no PyTorch needed."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func as F
from tapegrad.compile import CompileWarning


def _t(x):
    return tg.tensor(np.asarray(x, dtype=np.float64))


def test_vmap_of_jvp_gives_the_first_sample_its_tangent():
    # the traced run (sample 0) went through tg.compile's tracer, which recorded the ops on
    # dual tensors without their tangents: sample 0's tangent came out zero
    x = np.array([[0.5, -1.0], [2.0, 0.3], [1.5, -0.7]])
    t = np.array([[1.0, 2.0], [-1.0, 0.5], [0.25, 3.0]])
    _, tangent = F.vmap(lambda a, u: F.jvp(tg.sin, (a,), (u,)))(_t(x), _t(t))
    np.testing.assert_allclose(tangent.numpy(), np.cos(x) * t, rtol=1e-12)
    jac = F.vmap(F.jacfwd(lambda a: a**3))(_t(x))
    np.testing.assert_allclose(jac.numpy(), np.stack([np.diag(3 * r**2) for r in x]), rtol=1e-12)
    hess = F.vmap(F.hessian(lambda a: (a**3).sum()))(_t(x))
    np.testing.assert_allclose(hess.numpy(), np.stack([np.diag(6 * r) for r in x]), rtol=1e-12)


def test_compiled_function_taking_a_jvp_gets_its_tangent_on_the_first_call():
    # the same root: tg.compile's traced first call returned a zero tangent
    f = tg.compile(lambda x: F.jvp(tg.sin, (x,), (tg.ones_like(x),))[1] * 1.0)
    x = _t([0.3, 1.0])
    with pytest.warns(CompileWarning, match="dual tensor of forward AD"):
        first = f(x)
    np.testing.assert_allclose(first.numpy(), np.cos([0.3, 1.0]), rtol=1e-12)
