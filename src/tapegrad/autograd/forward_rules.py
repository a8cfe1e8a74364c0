"""Written forward-mode (jvp) rules for the hottest ops; every other op derives its tangent
from its vjp rule (see forward_ad). Each rule is `rule(xp, tangents, *saved, out=out,
**params)` and runs on arrays (`xp` = NumPy) or, when the tangent must stay differentiable,
on tensors (`xp` = the op table), like the vjp rules beside which they belong.
"""
from __future__ import annotations

from ..ops import OPS, T


def _rule(name):
    return OPS[name].jvp


def _plus(a, b):
    if a is None:
        return b
    return a if b is None else a + b


@_rule("add")
def _(xp, tangents, *, out):
    return _plus(*tangents)


@_rule("sub")
def _(xp, tangents, *, out):
    ta, tb = tangents
    return _plus(ta, None if tb is None else -tb)


@_rule("mul")
def _(xp, tangents, x, y, *, out):
    ta, tb = tangents
    return _plus(None if ta is None else ta * y, None if tb is None else x * tb)


@_rule("div")
def _(xp, tangents, x, y, *, out):
    ta, tb = tangents
    return _plus(None if ta is None else ta / y, None if tb is None else -tb * out / y)


@_rule("neg")
def _(xp, tangents, *, out):
    return -tangents[0]


_OUT_RULES = {
    "exp": lambda t, out: t * out,
    "tanh": lambda t, out: t * (1.0 - out * out),
    "sigmoid": lambda t, out: t * out * (1.0 - out),
    "relu": lambda t, out: t * ~(out <= 0),  # slope 1 at relu(NaN), as the vjp
    "sqrt": lambda t, out: t / (out * 2.0),
}
_INPUT_RULES = {
    "log": lambda xp, t, x: t / x,
    "sin": lambda xp, t, x: t * xp.cos(x),
    "cos": lambda xp, t, x: -t * xp.sin(x),
    "square": lambda xp, t, x: t * x * 2.0,
}


def _out_rule(fn):
    return lambda xp, tangents, *, out: fn(tangents[0], out)


def _input_rule(fn):
    return lambda xp, tangents, x, *, out: fn(xp, tangents[0], x)


for _name, _fn in _OUT_RULES.items():
    OPS[_name].jvp(_out_rule(_fn))
for _name, _fn in _INPUT_RULES.items():
    OPS[_name].jvp(_input_rule(_fn))


@_rule("matmul")
def _(xp, tangents, a, b, *, out):
    ta, tb = tangents
    return _plus(None if ta is None else xp.matmul(ta, b),
                 None if tb is None else xp.matmul(a, tb))


def _linear_rule(op):
    """An op linear in its one input: the tangent goes through the op itself."""
    def rule(xp, tangents, *, out, **params):
        if xp is T:
            return op(tangents[0], **params)
        return op.forward(xp.module, tangents[0], **params)
    return rule


for _name in ("sum", "mean", "reshape", "transpose", "getitem", "swapaxes", "expand_dims",
              "squeeze", "broadcast_to"):
    if _name in OPS and OPS[_name].jvp_rule is None:
        OPS[_name].jvp(_linear_rule(OPS[_name]))

WRITTEN = tuple(sorted(n for n, op in OPS.items() if op.jvp_rule is not None))
