"""MegEngine's user guide "Autodiff 高阶使用" (higher-order autodiff), run unchanged through
the `megengine` alias, with fixed inputs so that what it prints can be checked against the
derivatives worked out by hand.

Two of the guide's snippets are written against an older API (`x_grad = gm2.backward(y)`,
and a second `gm2.backward` in one recording); MegEngine 1.13's `backward` returns None and
allows one backward per recording, so here they read `x.grad` instead, as its own test
suite does.
"""

import numpy as np
import pytest

X = np.array([0.25, 0.5, 1.0], dtype="float32")


@pytest.fixture
def megengine():
    from tapegrad.compat import alias

    alias.install("megengine")
    try:
        import megengine

        yield megengine
    finally:
        alias.uninstall("megengine")


def _guide(mge):
    import megengine.functional as F
    from megengine.autodiff import GradManager

    out = {}
    # higher-order gradient: gm outside gm2 sees gm2's backward
    x = mge.tensor(X)
    gm, gm2 = GradManager().attach([x]), GradManager().attach([x])
    with gm:
        with gm2:
            y = F.cos(x)
            gm2.backward(y)
        x_grad = x.grad
        x.grad = None
        out["first"] = x_grad.numpy()
        gm.backward(x_grad)
    out["second"] = x.grad.numpy()

    # the nesting order matters: gm inside gm2 cannot see gm2's backward
    x = mge.tensor(X)
    gm, gm2 = GradManager().attach([x]), GradManager().attach([x])
    with gm2, gm:
        y = F.cos(x)
        gm2.backward(y)
        x_grad = x.grad
        x.grad = None
        gm.backward(x_grad)
    out["reversed"] = x.grad

    # forward mode by two reverse passes
    def jvp(inp, expr):
        with GradManager() as gm:
            with GradManager().attach([inp]) as gm2:
                oup = expr(inp)
                oup_grad = F.ones_like(oup)
                gm.attach(oup_grad)
                gm2.backward(oup, oup_grad)
            gm.backward(inp.grad)
        return oup, oup_grad.grad

    _, out["jvp"] = jvp(mge.tensor(X), F.cos)
    out["jvp"] = out["jvp"].numpy()

    # two first-order gradients at once: gm | gm2
    x = mge.tensor(X)
    gm, gm2 = GradManager().attach([x]), GradManager().attach([x])
    with gm | gm2:
        y = F.cos(x)
        gm.backward(y)
        gm2.backward(y)
    out["union"] = x.grad.numpy()

    # gm | gm2 are peers: gm does not see gm2's backward
    x = mge.tensor(X)
    gm, gm2 = GradManager().attach([x]), GradManager().attach([x])
    with gm | gm2:
        y = F.cos(x)
        gm2.backward(y)
        x_grad = x.grad
        x.grad = None
        gm.backward(x_grad)
        out["union_peer"] = x.grad
    for key, value in out.items():
        print(key, None if value is None else np.round(value.astype("float64"), 4).tolist())
    return out


def test_higher_order_guide_prints_the_analytic_derivatives(megengine, capsys):
    out = _guide(megengine)
    np.testing.assert_allclose(out["first"], -np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(out["second"], -np.cos(X), rtol=1e-6)
    assert out["reversed"] is None
    np.testing.assert_allclose(out["jvp"], -np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(out["union"], -2 * np.sin(X), rtol=1e-6)
    assert out["union_peer"] is None
    printed = capsys.readouterr().out.splitlines()
    expected = {
        "first": -np.sin(X),
        "second": -np.cos(X),
        "jvp": -np.sin(X),
        "union": -2 * np.sin(X),
    }
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in printed}
    for key, values in expected.items():
        assert lines[key] == str(np.round(values.astype("float64"), 4).tolist()), key
    assert lines["reversed"] == "None" and lines["union_peer"] == "None"
