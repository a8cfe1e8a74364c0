"""Neural-network ops: softmax/log_softmax, linear, dropout, embedding, one_hot.

The fused losses live in `nn_losses.py` and the normalisation ops in `nn_norm.py`, registered
after this module (the losses' rules use the helper ops defined here).

Fused ops whose rules must stay differentiable (softmax, the softmax cross-entropy, NLL,
linear, embedding) compute their gradients with *helper ops* of their own (`softmax_backward`,
`linear_grad_input`, ...). Each helper is an op with `array_twin=True`: the tensor namespace
finds the op when a backward is recorded (second order) and a first-order backward calls its
forward directly on arrays as `xp.<name>`. So second derivatives of these
ops need nothing but this module.
"""

from __future__ import annotations

import math

import numpy as np

from .promotion import check_same_float
from .quiet import quiet
from .registry import defop

__all__: list[str] = []


def _torch_arr(torch, a, like):
    return None if a is None else torch.as_tensor(np.asarray(a), dtype=like.dtype)


# ================================================================= softmax family
@defop(saves="out", name="softmax", array_twin=True)
def _softmax(xp, x, *, axis=-1):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        if x.size == 0:  # nothing to normalise (max over an empty axis has no identity)
            return x.copy()
        e = xp.exp(x - x.max(axis=axis, keepdims=True))
        e /= e.sum(axis=axis, keepdims=True)
        return e


@_softmax.vjp
def _(xp, g, out, *, axis=-1):
    return (xp.softmax_backward(g, out, axis=axis),)


@defop(saves=("g", "y"), name="softmax_backward", array_twin=True)
def _softmax_backward(xp, g, y, *, axis=-1):
    """The gradient of softmax with output y: y * (g - sum(g * y))."""
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        gy = g * y
        return gy - y * gy.sum(axis=axis, keepdims=True)


@_softmax_backward.vjp
def _(xp, h, g, y, *, axis=-1, needs):
    # r = y * (g - s), s = sum(g * y): linear in g, bilinear in (g, y)
    gg = xp.softmax_backward(h, y, axis=axis) if needs[0] else None
    gy = None
    if needs[1]:
        s = xp.sum(g * y, axis=axis, keepdims=True)
        gy = h * (g - s) - xp.sum(h * y, axis=axis, keepdims=True) * g
    return gg, gy


def _softmax_samples(rng):
    return [
        ((rng.standard_normal((3, 5)),), {"axis": -1}),
        ((rng.standard_normal((3, 5)),), {"axis": 0}),
        ((rng.standard_normal((2, 3, 4)),), {"axis": 1}),
        ((rng.standard_normal((4,)),), {"axis": 0}),
    ]


_softmax.sample(_softmax_samples)
_softmax.reference(lambda torch, x, axis=-1: torch.softmax(x, axis))
_softmax_backward.sample(
    lambda rng: [
        (
            (rng.standard_normal((3, 5)), _softmax.forward(np, rng.standard_normal((3, 5)))),
            {"axis": -1},
        ),
        (
            (
                rng.standard_normal((2, 3, 4)),
                _softmax.forward(np, rng.standard_normal((2, 3, 4)), axis=1),
            ),
            {"axis": 1},
        ),
    ]
)


@defop(saves="out", name="log_softmax", array_twin=True)
def _log_softmax(xp, x, *, axis=-1):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        if x.size == 0:
            return x.copy()
        z = x - x.max(axis=axis, keepdims=True)
        z -= xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
        return z


@_log_softmax.vjp
def _(xp, g, out, *, axis=-1):
    return (xp.log_softmax_backward(g, out, axis=axis),)


@defop(saves=("g", "y"), name="log_softmax_backward", array_twin=True)
def _log_softmax_backward(xp, g, y, *, axis=-1):
    """The gradient of log_softmax with output y: g - exp(y) * sum(g)."""
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return g - xp.exp(y) * g.sum(axis=axis, keepdims=True)


@_log_softmax_backward.vjp
def _(xp, h, g, y, *, axis=-1, needs):
    e = xp.exp(y)
    gg = h - xp.sum(h * e, axis=axis, keepdims=True) if needs[0] else None
    gy = -h * e * xp.sum(g, axis=axis, keepdims=True) if needs[1] else None
    return gg, gy


_log_softmax.sample(_softmax_samples)
_log_softmax.reference(lambda torch, x, axis=-1: torch.log_softmax(x, axis))
_log_softmax_backward.sample(
    lambda rng: [
        (
            (rng.standard_normal((3, 5)), _log_softmax.forward(np, rng.standard_normal((3, 5)))),
            {"axis": -1},
        ),
        (
            (
                rng.standard_normal((2, 3, 4)),
                _log_softmax.forward(np, rng.standard_normal((2, 3, 4)), axis=1),
            ),
            {"axis": 1},
        ),
    ]
)


# ================================================================= linear
@defop(saves=("x", "w"), name="linear", array_twin=True)
def _linear(xp, x, w, b=None):
    check_same_float("linear", x, w, b)
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        out = x @ w.T
        if b is not None:
            out += b
        return out


@_linear.vjp
def _(xp, g, x, w, *, needs):
    # one GEMM per wanted gradient; the bias gradient is a column sum
    gx = xp.linear_grad_input(g, w) if needs[0] else None
    gw = xp.linear_grad_weight(g, x) if needs[1] else None
    gb = xp.linear_grad_bias(g) if needs[2] else None
    return gx, gw, gb


@defop(saves=("g", "w"), name="linear_grad_input", array_twin=True)
def _linear_grad_input(xp, g, w):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return g @ w


@_linear_grad_input.vjp
def _(xp, h, g, w, *, needs):
    return (
        xp.linear(h, w, None) if needs[0] else None,
        xp.linear_grad_weight(g, h) if needs[1] else None,
    )


@defop(saves=("g", "x"), name="linear_grad_weight", array_twin=True)
def _linear_grad_weight(xp, g, x):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        if g.ndim != 2:  # fold every leading dimension into the batch (not -1: maybe empty)
            rows = math.prod(g.shape[:-1])
            g = g.reshape(rows, g.shape[-1])
            x = x.reshape(rows, x.shape[-1])
        return g.T @ x


@_linear_grad_weight.vjp
def _(xp, h, g, x, *, needs):
    return (
        xp.linear(x, h, None) if needs[0] else None,
        xp.linear_grad_input(g, h) if needs[1] else None,
    )


@defop(saves=("g",), name="linear_grad_bias", array_twin=True)
def _linear_grad_bias(xp, g):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return (
            g.reshape(math.prod(g.shape[:-1]), g.shape[-1]).sum(axis=0) if g.ndim != 1 else g.copy()
        )


@_linear_grad_bias.vjp
def _(xp, h, g):
    return (xp.broadcast_to(h, g.shape),)


@_linear.sample
def _(rng):
    r = rng.standard_normal
    return [
        ((r((4, 3)), r((5, 3)), r((5,))), {}),
        ((r((2, 4, 3)), r((5, 3)), r((5,))), {}),  # extra leading dimension
        ((r((3,)), r((5, 3)), r((5,))), {}),  # a single vector
        ((r((4, 3)), r((2, 3)), None), {}),  # no bias
    ]


_linear.reference(lambda torch, x, w, b=None: torch.nn.functional.linear(x, w, b))
_linear_grad_input.sample(
    lambda rng: [
        ((rng.standard_normal((4, 5)), rng.standard_normal((5, 3))), {}),
        ((rng.standard_normal((2, 4, 5)), rng.standard_normal((5, 3))), {}),
    ]
)
_linear_grad_weight.sample(
    lambda rng: [
        ((rng.standard_normal((4, 5)), rng.standard_normal((4, 3))), {}),
        ((rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 4, 3))), {}),
    ]
)
_linear_grad_bias.sample(
    lambda rng: [
        ((rng.standard_normal((4, 5)),), {}),
        ((rng.standard_normal((2, 4, 5)),), {}),
        ((rng.standard_normal((5,)),), {}),
    ]
)


# ================================================================= dropout, embedding, one_hot
@defop(name="dropout")
def _dropout(xp, x, *, mask):
    """x * mask, where mask (kept / (1 - p)) was drawn by the caller and is kept for backward."""
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return x * mask


@_dropout.vjp
def _(xp, g, *, mask):
    return (g * mask,)


@_dropout.sample
def _(rng):
    mask = (rng.random((3, 4)) > 0.3) / 0.7
    return [((rng.standard_normal((3, 4)),), {"mask": mask})]


_dropout.reference(lambda torch, x, mask: x * torch.as_tensor(mask, dtype=x.dtype))


@defop(saves=("indices", "weight"), name="embedding", array_twin=True)
def _embedding(xp, indices, weight, *, padding_idx=None):
    return weight[indices]


@_embedding.vjp
def _(xp, g, indices, weight, *, padding_idx=None):
    # weight is saved for its row count only (the module holds it anyway)
    return None, xp.embedding_backward(
        g, indices, num_weights=weight.shape[0], padding_idx=padding_idx
    )


@defop(saves=("indices",), name="embedding_backward", array_twin=True)
def _embedding_backward(xp, g, indices, *, num_weights, padding_idx=None):
    """Scatter-add the rows of g into a (num_weights, ...) zero array: repeats accumulate."""
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        flat = indices.reshape(-1)
        gw = xp.zeros((num_weights,) + g.shape[indices.ndim :], dtype=g.dtype)
        rows = g.reshape((flat.size,) + gw.shape[1:])
        if xp is np or getattr(xp, "module", None) is np:
            np.add.at(gw, flat, rows)
        else:  # CuPy
            import cupyx

            cupyx.scatter_add(gw, flat, rows)
        if _has_row(padding_idx, num_weights):
            gw[padding_idx] = 0
        return gw


def _has_row(padding_idx, num_weights):
    """Whether the padding row exists: PyTorch drops the gradient of the lookups that equal
    padding_idx, so with no such row (an empty weight) there is nothing to drop."""
    return padding_idx is not None and -num_weights <= padding_idx < num_weights


@_embedding_backward.vjp
def _(xp, h, indices, *, num_weights, padding_idx=None):
    # the adjoint of a scatter-add is a gather (with the padding row's gradient held at zero)
    if _has_row(padding_idx, num_weights):
        keep = np.ones((num_weights,) + (1,) * (h.ndim - 1), dtype=h.dtype)
        keep[padding_idx] = 0
        h = h * keep
    return xp.embedding(indices, h), None


@_embedding.sample
def _(rng):
    w = rng.standard_normal((6, 3))
    return [
        ((np.array([0, 2, 2, 5]), w), {}),  # a repeated index
        ((np.array([[1, 3], [4, 1]]), w), {"padding_idx": 0}),  # padding row unused
    ]


_embedding.reference(
    lambda torch, idx, w, padding_idx=None: torch.nn.functional.embedding(
        idx, w, padding_idx=padding_idx
    )
)


@_embedding_backward.sample
def _(rng):
    return [
        ((rng.standard_normal((4, 3)), np.array([0, 2, 2, 5])), {"num_weights": 6}),
        (
            (rng.standard_normal((2, 2, 3)), np.array([[1, 0], [4, 1]])),
            {"num_weights": 6, "padding_idx": 1},
        ),
    ]


@defop(differentiable=False, name="one_hot")
def _one_hot(xp, indices, *, num_classes):
    return (xp.expand_dims(indices, -1) == xp.arange(num_classes)).astype(np.int64)
