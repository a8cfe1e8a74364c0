"""gradcheck's check_backward_ad / check_forward_ad: which modes are checked against finite
differences (PyTorch: reverse mode by default, forward mode on request)."""

import pytest

import tapegrad as tg
from tapegrad.autograd import Function, gradcheck
from tapegrad.autograd.gradcheck import GradcheckError


class ExpForwardOnly(Function):
    """exp with a jvp and no backward: only forward mode can differentiate it."""

    @staticmethod
    def forward(ctx, x):
        y = tg.exp(x)
        ctx.result = y
        return y

    @staticmethod
    def jvp(ctx, tangent):
        return tangent * ctx.result


class ExpWrongJvp(ExpForwardOnly):
    @staticmethod
    def jvp(ctx, tangent):
        return 2 * tangent * ctx.result  # twice the true derivative


def _x():
    return tg.tensor([[0.1, -0.4], [1.2, 0.3]], dtype="float64", requires_grad=True)


def test_forward_mode_only_never_calls_backward():
    assert gradcheck(ExpForwardOnly.apply, (_x(),), check_forward_ad=True, check_backward_ad=False)


def test_backward_mode_is_the_default_and_needs_backward():
    with pytest.raises(NotImplementedError, match="backward"):
        gradcheck(ExpForwardOnly.apply, (_x(),))


def test_forward_mode_catches_a_wrong_jvp():
    kwargs = {"check_forward_ad": True, "check_backward_ad": False}
    assert not gradcheck(ExpWrongJvp.apply, (_x(),), raise_exception=False, **kwargs)
    with pytest.raises(GradcheckError, match="forward mode"):
        gradcheck(ExpWrongJvp.apply, (_x(),), **kwargs)


def test_both_modes_on_builtin_ops_with_several_inputs_and_outputs():
    a = tg.tensor([0.5, -1.5, 2.0], dtype="float64", requires_grad=True)
    b = tg.tensor([1.0, 0.25, -0.75], dtype="float64", requires_grad=True)

    def fn(a, scale, b):
        return tg.sin(a) * b * scale, (a * b).sum()

    assert gradcheck(fn, (a, 3.0, b), check_forward_ad=True)


def test_checking_nothing_is_an_error():
    with pytest.raises(ValueError, match="check_backward_ad and check_forward_ad"):
        gradcheck(tg.exp, (_x(),), check_backward_ad=False)
