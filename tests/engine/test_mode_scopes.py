"""Recording/training state changes only through the mode scopes, and every library
function that changes it for a while restores it, exceptions included."""

import ast
import pathlib

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.engine.state import state


class Boom(Exception):
    pass


def _mode_state():
    return state.active, state.training, state.inference, len(state.saved_modes)


def _raise(*_):
    raise Boom


def _under_each_mode():
    """The caller's modes a helper must give back: default, no_grad, record, training."""
    return [
        ("default", lambda: tg.enable_grad()),
        ("no_grad", lambda: tg.no_grad()),
        ("record", lambda: tg.autograd.record()),
        ("predict", lambda: tg.autograd.predict_mode()),
    ]


class _RaisesInForward(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise Boom

    @staticmethod
    def backward(ctx, g):
        return g


class _RaisesInBackward(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise Boom


class _OnceRaises(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @tg.autograd.once_differentiable
    def backward(ctx, g):
        raise Boom


def _x():
    return tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)


# Each path sets up outside the caller's mode (a graph to backward through, ...) and
# returns the call that raises inside it.
def _function_forward():
    x = _x()
    return lambda: _RaisesInForward.apply(x)


def _function_backward():
    y = _RaisesInBackward.apply(_x()).sum()
    return y.backward


def _once_differentiable_backward():
    x = _x()
    y = _OnceRaises.apply(x).sum()
    return lambda: tg.autograd.grad(y, [x], create_graph=True)


def _backward_with_modes():
    x = _x()
    y = (x * 2).sum()
    x.register_hook(_raise)
    return lambda: tg.autograd.backward([y], create_graph=True, train_mode=True)


def _grad_with_modes():
    x = _x()
    h = x * 2
    h.register_hook(_raise)
    y = h.sum()
    return lambda: tg.autograd.grad(y, [x], create_graph=True, train_mode=False)


def _gradcheck_evaluation():
    # raises only in the finite-difference evaluations (run with recording off)
    def fn(t):
        if not tg.is_grad_enabled():
            raise Boom
        return (t * t).sum()

    x = _x()
    return lambda: tg.autograd.gradcheck(fn, (x,))


def _functional_vjp():
    x = _x()
    return lambda: tg.autograd.functional.vjp(_raise, x, tg.ones(2))


def _functional_jacobian():
    x = _x()
    return lambda: tg.autograd.functional.jacobian(_raise, x)


def _func_grad():
    return lambda: tg.func.grad(_raise)(tg.tensor(1.0))


def _optimizer_closure():
    opt = tg.optim.SGD([_x()], lr=0.1)
    return lambda: opt.step(_raise)


PATHS = [
    _function_forward,
    _function_backward,
    _once_differentiable_backward,
    _backward_with_modes,
    _grad_with_modes,
    _gradcheck_evaluation,
    _functional_vjp,
    _functional_jacobian,
    _func_grad,
    _optimizer_closure,
]


@pytest.mark.parametrize("caller", _under_each_mode(), ids=lambda c: c[0])
@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.__name__.lstrip("_"))
def test_an_exception_restores_the_callers_modes(path, caller):
    act = path()
    with caller[1]():
        before = _mode_state()
        with pytest.raises(Boom):
            act()
        assert _mode_state() == before


def test_the_helpers_change_the_mode_while_they_run():
    seen = {}

    class Probe(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward"] = tg.is_grad_enabled()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = tg.is_grad_enabled()
            return g * 2

    x = _x()
    Probe.apply(x).sum().backward()
    with tg.no_grad():
        tg.optim.SGD([x], lr=0.1).step(lambda: seen.setdefault("closure", tg.is_grad_enabled()))
        tg.func.grad(lambda t: (seen.setdefault("func.grad", tg.is_grad_enabled()), t.sum())[1])(x)
    assert seen == {"forward": False, "backward": False, "closure": True, "func.grad": True}
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# Who may assign the thread's recording mask: the scopes themselves, the two plain-function
# switches PyTorch and MXNet code calls (set_grad_enabled, set_recording), and the
# GradManager's record()/release() of its own tape bit.
# forward_ad.py defines the `dual_level` mode scope (the FORWARD tape's bit)
_ALLOWED = {
    "engine/state.py",
    "autograd/modes.py",
    "autograd/record.py",
    "autograd/grad_manager.py",
    "autograd/forward_ad.py",
}


def _is_mode_field(attr):
    if attr.attr == "active":
        return True
    # `training` is also nn.Module's own flag: only the thread state's counts
    return (
        attr.attr in ("training", "inference")
        and isinstance(attr.value, ast.Name)
        and attr.value.id in ("state", "st", "_state", "_tape_state")
    )


def test_only_the_mode_modules_assign_the_recording_mask():
    src = pathlib.Path(tg.__file__).parent
    offenders = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel in _ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                for leaf in ast.walk(t):
                    if isinstance(leaf, ast.Attribute) and _is_mode_field(leaf):
                        offenders.append(f"{rel}:{node.lineno}")
    assert offenders == [], "set modes through a scope (autograd/modes.py): " + ", ".join(offenders)
