"""Batching rules for the convolution, pooling and normalisation ops (rules: batching.py).

These ops already work on a batch (N, C, *S) per sample, so the vmapped dimension B is
folded into one of their own dimensions and the op runs once, the way functorch batches
them:

- **into the batch** N (an input batched, the weights shared): (B, N, C, *S) -> (B*N, C, *S);
  every sample of the op is independent, so this is exact and costs no copy.
- **into the channels, with groups** (per-sample weights, or a per-sample weight
  gradient): (B, N, C, *S) -> (N, B*C, *S) and weights (B, O, C/G, *K) -> (B*O, C/G, *K)
  with B*G groups: group b*G + g of the big convolution is group g of sample b.
- **batch norm** normalises over N and the space, per channel: per-sample statistics are
  per-(sample, channel) statistics, so B goes into the channels (no groups needed). Batch
  norm that updates running statistics is refused (`NoRule`): the per-sample loop updates
  them once per sample, as the loop over samples would.
"""

from __future__ import annotations

from typing import Any

from .batching import NoRule, _materialize, batching_rule


# ---------------------------------------------------------------- folding helpers
def _into_batch(a: Any) -> Any:
    """(B, N, ...) -> (B*N, ...)."""
    return a.reshape((a.shape[0] * a.shape[1],) + a.shape[2:])


def _out_of_batch(a: Any, size: int) -> Any:
    """(B*N, ...) -> (B, N, ...)."""
    return a.reshape((size, a.shape[0] // size) + a.shape[1:])


def _into_channels(xp: Any, a: Any) -> Any:
    """(B, N, C, *S) -> (N, B*C, *S): channel b*C + c is channel c of sample b."""
    b, n, c = a.shape[:3]
    return xp.swapaxes(a, 0, 1).reshape((n, b * c) + a.shape[3:])


def _out_of_channels(xp: Any, a: Any, size: int) -> Any:
    """(N, B*C, *S) -> (B, N, C, *S), in fresh row-major memory (as the op's own result)."""
    n, bc = a.shape[:2]
    return xp.ascontiguousarray(xp.swapaxes(a.reshape((n, size, bc // size) + a.shape[2:]), 0, 1))


def _flat(xp: Any, a: Any, batched: bool, size: int) -> Any:
    """A per-channel vector (or weight) with the batch folded in front: (B*O, ...)."""
    if a is None:
        return None
    a = _materialize(xp, a, batched, size)
    return a.reshape((a.shape[0] * a.shape[1],) + a.shape[2:])


def _add_batched_bias(xp: Any, out: Any, b: Any) -> Any:
    """out (B, N, O, *S) plus a per-sample bias b (B, O)."""
    return out + b.reshape(b.shape[:1] + (1,) + b.shape[1:] + (1,) * (out.ndim - 3))


# ---------------------------------------------------------------- convolution
def _conv_like(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """conv(x, w, b) and conv_transpose(y, w, b): one grouped call for the whole batch."""
    x, w, b = arrays
    bx, bw, bb = batched
    if not bw:  # shared weights: B joins the batch (x is batched, else only b is)
        if not bx:
            out = op.forward(xp, x, w, None, **params)
            return _add_batched_bias(xp, xp.broadcast_to(out[None], (size,) + out.shape), b)
        out = _out_of_batch(op.forward(xp, _into_batch(x), w, None if bb else b, **params), size)
        return _add_batched_bias(xp, out, b) if bb else out
    # per-sample weights: B joins the channels and the groups
    xg = _into_channels(xp, _materialize(xp, x, bx, size))
    p = {**params, "groups": params["groups"] * size}
    out = op.forward(xp, xg, _flat(xp, w, bw, size), _flat(xp, b, bb, size), **p)
    return _out_of_channels(xp, out, size)


batching_rule("conv", "conv_transpose")(_conv_like)


@batching_rule("conv_weight_grad")
def _conv_weight_grad(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """conv_weight_grad(x, g): one weight gradient per sample, by B*G groups."""
    x, g = (_into_channels(xp, _materialize(xp, a, b, size)) for a, b in zip(arrays, batched))
    out = op.forward(xp, x, g, **{**params, "groups": params["groups"] * size})
    return out.reshape((size, out.shape[0] // size) + out.shape[1:])


# ---------------------------------------------------------------- pooling
@batching_rule(
    "max_pool",
    "avg_pool",
    "adaptive_avg_pool",
    "max_pool_backward",
    "max_pool_gather",
    "avg_pool_backward",
    "adaptive_avg_pool_backward",
)
def _pool(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """A pooling op (or its gradient op): samples are independent, B joins the batch."""
    folded = [_into_batch(_materialize(xp, a, b, size)) for a, b in zip(arrays, batched)]
    return _out_of_batch(op.forward(xp, *folded, **params), size)


# ---------------------------------------------------------------- normalisation
def _per_sample_affine(
    xp: Any, w: Any, b: Any, bw: bool, bb: bool, size: int, lead: int
) -> tuple[Any, Any]:
    """w, b materialized and shaped to broadcast against the batched output: the batch, then
    `lead` unit dimensions, then their own per-sample shape."""

    def shaped(a: Any, batched: bool) -> Any:
        if a is None:
            return None
        a = _materialize(xp, a, batched, size)
        return a.reshape(a.shape[:1] + (1,) * lead + a.shape[1:])

    return shaped(w, bw), shaped(b, bb)


@batching_rule("layer_norm")
def _layer_norm(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """Normalises the trailing dims of each sample: a batched x works as it is; per-sample
    weights are applied after, as the op applies them (out * w, then + b)."""
    x, w, b = arrays
    bx, bw, bb = batched
    x = _materialize(xp, x, bx, size)
    if not (bw or bb):
        return op.forward(xp, x, w, b, **params)
    out = op.forward(xp, x, None, None, **params)
    lead = out.ndim - 1 - params.get("ndim", 1)
    wb, bb_ = _per_sample_affine(xp, w, b, bw, bb, size, lead)
    if wb is not None:
        out = out * wb
    if bb_ is not None:
        out = out + bb_
    return out


@batching_rule("group_norm")
def _group_norm(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """Statistics per (sample, group): shared weights fold B into the batch; per-sample
    weights into the channels, with B times the groups."""
    x, w, b = arrays
    bx, bw, bb = batched
    x = _materialize(xp, x, bx, size)
    if not (bw or bb):
        return _out_of_batch(op.forward(xp, _into_batch(x), w, b, **params), size)
    p = {**params, "num_groups": params.get("num_groups", 1) * size}
    out = op.forward(xp, _into_channels(xp, x), _flat(xp, w, bw, size), _flat(xp, b, bb, size), **p)
    return _out_of_channels(xp, out, size)


@batching_rule("batch_norm")
def _batch_norm(
    op: Any, xp: Any, arrays: list[Any], batched: list[bool], params: dict[str, Any], size: int
) -> Any:
    """Per-channel statistics (training) or running statistics (eval) of each sample: B
    joins the channels, the per-channel vectors are repeated (or flattened) to match."""
    if params.get("training", True) and params.get("running_mean") is not None:
        raise NoRule(
            op.name,
            "batch norm updates its running statistics in place (once per sample in the "
            "per-sample loop)",
        )
    x, w, b = arrays
    bx, bw, bb = batched
    p = dict(params)
    for name in ("running_mean", "running_var"):
        if p.get(name) is not None:
            p[name] = xp.tile(p[name], size)
    x = _materialize(xp, x, bx, size)
    out = op.forward(xp, _into_channels(xp, x), _flat(xp, w, bw, size), _flat(xp, b, bb, size), **p)
    return _out_of_channels(xp, out, size)
