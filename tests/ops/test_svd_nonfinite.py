"""linalg.svd on matrices holding an inf or a NaN: LAPACK's gesdd never returns on an inf
in NumPy's OpenBLAS build (the interpreter hangs), so the op must not hand it one. Each case
runs in a child interpreter with a timeout, so a regression fails instead of hanging the
suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD_TIMEOUT_S = 120


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("bad", ["np.inf", "-np.inf"])
def test_an_inf_gives_nan_factors_for_its_matrix_only(bad):
    out = _run(
        f"""
        import numpy as np, tapegrad as tg
        a = np.arange(24, dtype=np.float64).reshape(2, 4, 3)
        a[0, 1, 2] = {bad}
        U, S, Vh = tg.linalg.svd(tg.tensor(a), full_matrices=False)
        u, s, vh = np.linalg.svd(a[1], full_matrices=False)
        assert np.isnan(U.numpy()[0]).all() and np.isnan(S.numpy()[0]).all()
        assert np.isnan(Vh.numpy()[0]).all()
        np.testing.assert_allclose(S.numpy()[1], s)
        np.testing.assert_allclose(np.abs(U.numpy()[1]), np.abs(u), atol=1e-12)
        assert np.isnan(tg.linalg.matrix_norm(tg.tensor(a[0]), ord=2).item())
        assert np.isnan(tg.linalg.svdvals(tg.tensor(a[0]))).all().item()
        print("ok")
        """
    )
    assert out == "ok"


def test_a_nan_is_refused_as_pytorch_refuses_it():
    out = _run(
        """
        import numpy as np, tapegrad as tg
        a = np.ones((3, 3)); a[1, 1] = np.nan
        try:
            tg.linalg.svd(tg.tensor(a))
        except RuntimeError as e:
            print(str(e).split(":")[0])
        """
    )
    assert out == "linalg.svd"
