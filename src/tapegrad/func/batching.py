"""Batching rules for `vmap`: per op name, how to run the op once on a whole batch.

A rule sees the op's inputs as backend arrays, each either *batched* (the batch is its
leading dimension, size `size`) or not (one value shared by every sample), and returns the
op's batched result: what stacking the per-sample results along a new dimension 0 would give.

    @batching_rule("linear")
    def _(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
        ...

A rule that can't handle a call (an index array, a weighted loss) raises `NoRule`; `vmap`
then runs the function once per sample instead. Rules never see a call where no input is
batched: that result is the same for every sample. Elementwise ops broadcast; ops with an
axis or a shape shift it past the batch dimension; a few (matmul, linear and its gradient
helpers, cross-entropy) are written out; convolution, pooling and normalisation fold the
batch into the op's own batch or channel dimension (batching_nn.py).

An op without a rule is *looped*: its forward runs once per sample inside the batched
replay and the results are stacked (PyTorch's vmap does the same). That is slower than a
rule but much faster than running the whole function per sample; `LOOP_REFUSED` lists the
ops whose forward has effects a loop would repeat (batch norm's running statistics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LOOP_REFUSED", "NoRule", "RULES", "batching_rule", "has_rule", "run_batched"]

Rule = Callable[..., Any]
RULES: dict[str, Rule] = {}  # op name -> rule(op, xp, arrays, batched, params, size)


class NoRule(Exception):
    """This op call has no batching rule: `vmap` falls back to one call per sample."""

    def __init__(self, op: str, why: str = "no batching rule") -> None:
        super().__init__(f"{op}: {why}")
        self.op = op


def batching_rule(*names: str) -> Callable[[Rule], Rule]:
    """Register `rule` as the batching rule of each op in `names` (decorator)."""

    def register(rule: Rule) -> Rule:
        for name in names:
            RULES[name] = rule
        return rule

    return register


LOOP_REFUSED = frozenset({"batch_norm"})  # forwards with effects: never looped


def has_rule(name: str) -> bool:
    """Whether vmap can batch op `name`: by its rule, or else by looping its forward."""
    return name in RULES or name not in LOOP_REFUSED


def run_batched(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """The op's batched result, by its rule, or by looping its forward over the samples
    (`NoRule` for an op in LOOP_REFUSED)."""
    rule = RULES.get(op.name)
    if rule is None:
        if op.name in LOOP_REFUSED:
            raise NoRule(op.name, "its forward has effects a loop would repeat")
        rule = _loop
    return rule(op, xp, arrays, batched, params, size)


def _loop(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """The fallback rule: the op's forward once per sample, stacked."""
    return xp.stack(
        [
            op.forward(
                xp, *(a[i] if b else a for a, b in zip(arrays, batched, strict=True)), **params
            )
            for i in range(size)
        ]
    )


# ---------------------------------------------------------------- helpers
def _ndim(a: Any, batched: bool) -> int:
    """The per-sample number of dimensions."""
    return getattr(a, "ndim", 0) - (1 if batched else 0)


def _materialize(xp: Any, a: Any, batched: bool, size: int) -> Any:
    """`a` with a batch dimension (a shared value repeated, as a broadcast view)."""
    if batched:
        return a
    a = xp.asarray(a)
    return xp.broadcast_to(a[None], (size,) + a.shape)


def _pad_to(xp: Any, a: Any, nd: int) -> Any:
    """A batched array with unit dimensions after the batch so its sample has `nd` dims
    (then NumPy broadcasting lines samples up the way it lines up unbatched values)."""
    missing = nd - (a.ndim - 1)
    return a.reshape(a.shape[:1] + (1,) * missing + a.shape[1:]) if missing > 0 else a


def _align(xp: Any, arrays: list[Any], batched: list[bool]) -> list[Any]:
    nd = max(_ndim(a, b) for a, b in zip(arrays, batched, strict=True))
    return [_pad_to(xp, a, nd) if b else a for a, b in zip(arrays, batched, strict=True)]


def _axis(axis: int, nd: int, op: str) -> int:
    if not -max(nd, 1) <= axis < max(nd, 1):
        raise NoRule(op, f"axis {axis} out of range for {nd} dims")
    return axis % max(nd, 1) + 1


def _axes(axis: Any, nd: int, op: str) -> Any:
    """A per-sample axis (int, tuple or None: every axis) moved past the batch."""
    if axis is None:
        return tuple(range(1, nd + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, nd, op) for a in axis)
    return _axis(axis, nd, op)


def _with_batch_shape(params: dict[str, Any], size: int, *names: str) -> dict[str, Any]:
    out = dict(params)
    for name in names:
        if out.get(name) is not None:
            out[name] = (size,) + tuple(out[name])
    return out


# ---------------------------------------------------------------- elementwise
_ELEMENTWISE = (
    "abs",
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "clip",
    "clone",
    "cos",
    "div",
    "elu",
    "equal",
    "erf",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "gelu",
    "greater",
    "greater_equal",
    "invert",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "leaky_relu",
    "lerp",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "not_equal",
    "pow",
    "reciprocal",
    "relu",
    "remainder",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "silu",
    "sin",
    "softplus",
    "sqrt",
    "square",
    "sub",
    "tan",
    "tanh",
    "trunc",
    "where",
    "astype",
)


@batching_rule(*_ELEMENTWISE)
def _elementwise(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    return op.forward(xp, *_align(xp, arrays, batched), **params)


@batching_rule("detach")  # tg.compile's alias pseudo-op: `detach()`, `.data`
def _alias(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    return arrays[0]


# ---------------------------------------------------------------- axis-shifted
_REDUCTIONS = (
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "prod",
    "logsumexp",
    "std",
    "var",
    "all",
    "any",
    "vector_norm",
)


@batching_rule(*_REDUCTIONS)
def _reduction(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    p = _with_batch_shape(params, size, "in_shape")
    p["axis"] = _axes(params.get("axis"), x.ndim - 1, op.name)
    return op.forward(xp, x, **p)


@batching_rule(
    "softmax",
    "log_softmax",
    "softmax_backward",
    "log_softmax_backward",
    "cumsum",
    "cumprod",
    "argmax",
    "argmin",
)
def _along_axis(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    if params.get("axis") is None:
        raise NoRule(op.name, "axis=None flattens the sample")
    arrays = [_materialize(xp, a, b, size) for a, b in zip(arrays, batched, strict=True)]
    p = dict(params)
    p["axis"] = _axis(params["axis"], arrays[0].ndim - 1, op.name)
    return op.forward(xp, *arrays, **p)


@batching_rule("swapaxes")
def _swapaxes(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    nd = x.ndim - 1
    return xp.swapaxes(x, _axis(params["axis1"], nd, op.name), _axis(params["axis2"], nd, op.name))


@batching_rule("transpose")
def _transpose(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    nd = x.ndim - 1
    axes = params.get("axes")
    axes = tuple(range(nd, 0, -1)) if axes is None else tuple(_axis(a, nd, op.name) for a in axes)
    return xp.transpose(x, (0,) + axes)


@batching_rule("moveaxis")
def _moveaxis(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    nd = x.ndim - 1
    return xp.moveaxis(
        x, _axes(params["source"], nd, op.name), _axes(params["destination"], nd, op.name)
    )


@batching_rule("expand_dims")
def _expand_dims(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    axis = params["axis"]
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out_nd = x.ndim - 1 + len(axes)
    return xp.expand_dims(x, tuple(_axis(a, out_nd, op.name) for a in axes))


@batching_rule("squeeze")
def _squeeze(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    axis = params.get("axis")
    if axis is None:
        axis = tuple(i for i, n in enumerate(x.shape[1:]) if n == 1)
    return xp.squeeze(x, _axes(axis, x.ndim - 1, op.name)) if axis != () else x


# ---------------------------------------------------------------- shapes
@batching_rule("reshape")
def _reshape(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    return x.reshape((size,) + tuple(params["shape"]))


@batching_rule("broadcast_to")
def _broadcast_to(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    shape = tuple(params["shape"])
    return xp.broadcast_to(_pad_to(xp, x, len(shape)), (size,) + shape)


@batching_rule("sum_to")
def _sum_to(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    shape = tuple(params["shape"])
    lead = x.ndim - 1 - len(shape)
    if lead > 0:
        x = x.sum(axis=tuple(range(1, lead + 1)))
    keep = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and x.shape[i + 1] != 1)
    return x.sum(axis=keep, keepdims=True) if keep else x


_BASIC_KEY = (int, slice, type(None), type(Ellipsis))


def _batched_key(key: Any, op: str) -> tuple[Any, ...]:
    keys: tuple[Any, ...] = key if isinstance(key, tuple) else (key,)
    for k in keys:
        if type(k) not in _BASIC_KEY:
            raise NoRule(op, f"index {type(k).__name__} (only ints, slices, None, ...)")
    return (slice(None),) + keys


@batching_rule("getitem")
def _getitem(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (x,) = arrays
    return x[_batched_key(params["key"], op.name)]


@batching_rule("getitem_backward")
def _getitem_backward(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (g,) = arrays
    p = _with_batch_shape(params, size, "shape")
    p["key"] = _batched_key(params["key"], op.name)
    return op.forward(xp, g, **p)


# ---------------------------------------------------------------- linear algebra
@batching_rule("matmul")
def _matmul(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    a, b = arrays
    ba, bb = batched
    vec_a, vec_b = _ndim(a, ba) == 1, _ndim(b, bb) == 1
    if vec_a and ba:
        a = a[:, None, :]
    if vec_b and bb:
        b = b[..., None]
    a, b = _align(xp, [a, b], [ba, bb])
    out = xp.matmul(a, b)
    if vec_b and bb:
        out = out[..., 0]
    if vec_a and ba:
        out = out[..., 0, :] if not (vec_b and bb) else out[..., 0]
    return out


@batching_rule("linear", "linear_grad_input")
def _linear(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    if not batched[1]:  # shared weights: the op acts on the last dimension only
        if len(arrays) > 2 and batched[2]:  # a per-sample bias alone
            out = op.forward(xp, arrays[0], arrays[1], None, **params)
            return _pad_to(xp, arrays[2], out.ndim - (1 if batched[0] else 0)) + out
        return op.forward(xp, *arrays, **params)
    # per-sample weights (an ensemble): one batched GEMM, rows of each sample against its own
    x, w = _materialize(xp, arrays[0], batched[0], size), arrays[1]
    rows = x.reshape(size, -1, x.shape[-1])
    # linear: x @ w.T, (B, out, in); linear_grad_input: g @ w, (B, out, in) with g's last = out
    out = xp.matmul(rows, xp.swapaxes(w, -1, -2) if op.name == "linear" else w)
    out = out.reshape(x.shape[:-1] + out.shape[-1:])
    if len(arrays) > 2 and arrays[2] is not None:
        out = out + _pad_to(xp, _materialize(xp, arrays[2], batched[2], size), out.ndim - 1)
    return out


@batching_rule("linear_grad_weight")
def _linear_grad_weight(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    g, x = (_materialize(xp, a, b, size) for a, b in zip(arrays, batched, strict=True))
    g = g.reshape(size, -1, g.shape[-1])
    x = x.reshape(size, -1, x.shape[-1])
    return xp.matmul(xp.swapaxes(g, -1, -2), x)


@batching_rule("linear_grad_bias")
def _linear_grad_bias(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    (g,) = arrays
    return g.reshape(size, -1, g.shape[-1]).sum(axis=1)


# ---------------------------------------------------------------- losses
def _plain_loss(op: Any, params: dict[str, Any], x: Any, nd: int) -> None:
    if params.get("weight") is not None or params.get("label_smoothing"):
        raise NoRule(op.name, "a class weight or label smoothing")
    if nd != 2:
        raise NoRule(op.name, f"{nd}-d logits (rows of classes only)")


@batching_rule("cross_entropy")
def _cross_entropy(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    x, target = (_materialize(xp, a, b, size) for a, b in zip(arrays, batched, strict=True))
    _plain_loss(op, params, x, x.ndim - 1)
    rows = x.shape[1]
    flat = op.forward(
        xp, x.reshape(-1, x.shape[-1]), target.reshape(-1), **{**params, "reduction": "none"}
    ).reshape(size, rows)
    reduction = params.get("reduction", "mean")
    if reduction == "none":
        return flat
    total = flat.sum(axis=1)
    if reduction == "sum":
        return total
    count = (target != params.get("ignore_index", -100)).sum(axis=1)
    with xp.errstate(divide="ignore", invalid="ignore"):  # all ignored: nan, as PyTorch
        return total / count.astype(x.dtype)


@batching_rule("cross_entropy_backward")
def _cross_entropy_backward(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    g, x, target = (_materialize(xp, a, b, size) for a, b in zip(arrays, batched, strict=True))
    _plain_loss(op, params, x, x.ndim - 1)
    rows = x.shape[1]
    reduction = params.get("reduction", "mean")
    if reduction == "none":
        scale = g
    else:
        scale = xp.broadcast_to(g.reshape(size, 1), (size, rows))
        if reduction == "mean":
            count = (target != params.get("ignore_index", -100)).sum(axis=1, keepdims=True)
            with xp.errstate(divide="ignore", invalid="ignore"):
                scale = scale / count.astype(x.dtype)
    out = op.forward(
        xp,
        scale.reshape(-1).astype(x.dtype),
        x.reshape(-1, x.shape[-1]),
        target.reshape(-1),
        **{**params, "reduction": "none"},
    )
    return out.reshape(x.shape)


@batching_rule("stack")
def _stack(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    arrays = [_materialize(xp, a, b, size) for a, b in zip(arrays, batched, strict=True)]
    axis = params.get("axis", 0)
    return xp.stack(arrays, _axis(axis, arrays[0].ndim, op.name))  # the result has one more dim


@batching_rule("concatenate")
def _concatenate(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    arrays = [_materialize(xp, a, b, size) for a, b in zip(arrays, batched, strict=True)]
    axis = params.get("axis", 0)
    if axis is None:
        raise NoRule(op.name, "axis=None flattens the sample")
    return xp.concatenate(arrays, _axis(axis, arrays[0].ndim - 1, op.name))
