"""Compile-only fused derivative rules for whole training steps.

A traced `max_pool(relu(x))` with windows that tile the input (2x2 stride 2: every CNN's
pooling) runs two rules in eager: the max pool's, which recomputes the forward's stages to
find each window's first maximum and writes g there (zeros elsewhere), then relu's, which
multiplies that full-size gradient by `relu_out != 0`. The product of the two is one
pass per kernel offset here: the offset's first-maximum mask (`x_off == out` and no earlier
offset), and-ed with the pooled `out != 0` (at the window's maximum, `relu_out` *is* `out`;
elsewhere the gradient is `g * 0` in both), then `g * mask` written into that offset's
strided view of the result (W3's pool1: 4.6 -> 2.0 ms, pool2: 1.26 -> 0.68, one thread).

Bit for bit eager's result: each position gets `g` multiplied by 0 or 1 twice in eager
(pool's mask, relu's mask) and once by their product here, and multiplying by 0 or 1 gives
the same bits in either order (`-0.0` for a negative g, NaN for an infinite one). A window
whose maximum is NaN (eager's last-NaN rule), a non-contiguous or non-float input, or one
the windows do not tile exactly take the two eager rules instead.

Only whole steps use it (`step.StepProgram`): there the backward runs inside the call, so
nothing can change the pooled output it reads between forward and backward (a compiled
function's returned outputs could be changed in place before their backward, which eager's
rules would not see, as they read only relu's output).
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from ..ops import conv as _conv_module
from ..ops import conv_direct, parallel
from .tracing import CONST, OP, Instr, Trace

conv: Any = _conv_module  # (its window helpers are untyped: called through Any here)
ENABLED = True  # bench/NOTES.md, stop 21, measured the step with and without it

# order index -> (rule, saved slots it reads, its parameters)
Override = tuple[Callable[..., Any], list[int], dict[str, Any]]
# an instruction's output slot -> (its forward, returning (result, an extra value), the
# slot the extra value gets)
Producer = tuple[Callable[..., Any], int]


def _passthrough(xp: Any, g: Any) -> tuple[Any]:
    """relu's rule where the max pool's fused rule below already applied relu's mask."""
    return (g,)


def _tiles_2d(params: dict[str, Any]) -> bool:
    kernel = tuple(params["kernel"])
    return (
        len(kernel) == 2
        and tuple(params["stride"]) == kernel
        and all(d == 1 for d in params["dilation"])
        and not any(lo or hi for lo, hi in params["padding"])
    )


def _fast_relu_max_pool_backward(g: Any, x: Any, out: Any, kernel: tuple[int, int]) -> Any:
    """d(max_pool(relu))/d(relu's input) for tiling 2-D windows, or None (see the module
    docstring for when and why it equals eager's two rules)."""
    k0, k1 = kernel
    if (
        type(g) is not np.ndarray
        or type(x) is not np.ndarray
        or type(out) is not np.ndarray
        or x.ndim != 4
        or g.dtype.kind != "f"
        or x.dtype != g.dtype
        or out.dtype != g.dtype
        or not x.flags.c_contiguous
        or g.shape != out.shape
        or x.shape[:2] + (x.shape[2] // k0, x.shape[3] // k1) != out.shape
        or x.shape[2] % k0
        or x.shape[3] % k1
        or np.isnan(out).any()
    ):
        return None
    n, c, h, w = x.shape
    rows = x.reshape(n, c, h // k0, k0, w)  # a window row: rows[:, :, i, r, j*k1 : (j+1)*k1]
    dx = np.empty(x.shape, dtype=g.dtype)
    drows = dx.reshape(rows.shape)
    last = k0 * k1 - 1

    def body(lo: int, hi: int) -> None:
        live = np.not_equal(out[lo:hi], 0)
        gs = g[lo:hi]
        taken = None
        for r in range(k0):
            for s in range(k1):
                if r * k1 + s == last and taken is not None:
                    hit = np.logical_not(taken, out=taken)  # (no NaN: some offset holds it)
                else:
                    hit = np.equal(rows[lo:hi, :, :, r, s::k1], out[lo:hi])
                    if taken is None:
                        taken = hit.copy()
                    else:
                        np.greater(hit, taken, out=hit)  # a hit where no earlier offset hit
                        taken |= hit
                np.logical_and(hit, live, out=hit)
                np.multiply(gs, hit, out=drows[lo:hi, :, :, r, s::k1])

    parallel.for_slices(np, n, body, elements=x.size)
    return dx


def _relu_max_pool_rule(pool_rule: Any, relu_rule: Any) -> Callable[..., Any]:
    def rule(xp: Any, g: Any, x: Any, out: Any, **params: Any) -> tuple[Any]:
        with np.errstate(all="ignore"):  # inf * 0 is NaN here as in eager's rules, silently
            if getattr(xp, "module", xp) is np:
                dx = _fast_relu_max_pool_backward(g, x, out, tuple(params["kernel"]))
                if dx is not None:
                    return (dx,)
            (d,) = pool_rule(xp, g, x, **params)
            return (relu_rule(xp, d, x)[0],)

    rule.__name__ = "relu_max_pool_backward"
    return rule


def backward_overrides(
    trace: Trace, order: list[Instr], diff_outputs: list[int], wanted: list[int]
) -> dict[int, Override]:
    """Fused rules for the backward program of a whole step, by index into `order`.
    Decided on op names, parameters and the graph alone (the lean rebuilds have no arrays)."""
    if not ENABLED:
        return {}
    position = {id(instr): k for k, instr in enumerate(order)}
    made_by = {instr.out: instr for instr in order}
    deposits: dict[int, int] = {}
    for instr in order:
        for s, e in zip(instr.ins, instr.edges, strict=True):
            if e:
                deposits[s] = deposits.get(s, 0) + 1
    readers: dict[int, int] = {}  # slot -> how many traced instructions read it
    for instr in trace.instrs:
        for s in (*instr.ins, *instr.param_slots.values()):
            readers[s] = readers.get(s, 0) + 1
    found: dict[int, Override] = {}
    for k, pool in enumerate(order):
        if (
            getattr(pool.op, "name", None) != "max_pool"
            or len(pool.ins) != 1
            or not pool.edges[0]
            or pool.param_slots
            or not _tiles_2d(pool.params)
        ):
            continue
        slot = pool.ins[0]
        relu = made_by.get(slot)
        if (
            relu is None
            or getattr(relu.op, "name", None) != "relu"
            or id(relu) not in position
            or position[id(relu)] < k
            or len(relu.ins) != 1
            or relu.param_slots
            or readers.get(slot) != 1  # relu's output feeds this pool and nothing else
            or deposits.get(slot) != 1
            or slot in diff_outputs
            or slot in wanted
            or pool.op.rule is None
            or relu.op.rule is None
        ):
            continue
        rule = _relu_max_pool_rule(pool.op.rule, relu.op.rule)
        found[k] = (rule, [slot, pool.out], dict(pool.params))
        found[position[id(relu)]] = (_passthrough, [], {})
    return found


# ---------------------------------------------------------------- conv: windows kept
# A conv on the im2col path copies the input's windows into a (C*K, N*L) matrix for its
# GEMM (or per sample, (N, C*K, L), for few rows: conv._im2col_rows), and its weight
# gradient copies the same windows again (W3's conv2: ~1 ms each, conv1 ~0.2, one thread).
# In a whole step the forward can write them into a fresh array instead of the per-thread
# scratch buffer and hand it to the backward program (held from forward to backward: 7.2
# MiB for conv2, 1.8 for conv1), whose weight gradient then multiplies it directly. Same
# windows, same GEMMs, so the same bits (checked on the traced arrays when the program is
# built); with intra-op threads on (ops/parallel.py), the ops' own split paths run instead.


class _Extra:
    """The trace's value for a slot only a fused forward fills (no tensor behind it)."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data = np.empty(0)


def _im2col_path(x_shape: tuple[int, ...], w_shape: tuple[int, ...], p: dict[str, Any]) -> str:
    """Which window matrix eager's 2-D conv and its weight gradient build: "cols" (one
    (C*K, N*L) matrix, one GEMM), "rows" (per sample, conv._im2col_rows: few rows), or ""."""
    c, o, kernel, groups = x_shape[1], w_shape[0], tuple(w_shape[2:]), p["groups"]
    if (
        len(x_shape) != 4
        or groups != 1
        or conv._is_pointwise(kernel, p["padding"])
        or conv_direct.correlates(c, o, groups, p["stride"])
        or conv_direct.weight_grad_applies(c, o, groups, p["stride"])
        or conv._is_depthwise(c, o, groups)
    ):
        return ""
    return "rows" if conv._is_sample_major(c, kernel, groups) else "cols"


def _blocks(x: Any, kernel: tuple[int, ...], out_sizes: tuple[int, ...]) -> list[Any]:
    """conv._batch_blocks for this conv: the sample blocks eager's "cols" paths go by."""
    n, c = x.shape[:2]
    return list(conv._batch_blocks(n, c * prod(kernel) * prod(out_sizes) * x.dtype.itemsize))


def _windows_of(
    x: Any, kernel: tuple[int, ...], p: dict[str, Any], layout: str
) -> tuple[Any, tuple[int, ...]]:
    """The window matrix of conv._im2col_rows (layout "rows": (N, C*K, L)) or, for "cols",
    conv._window_matrix's view (C, *K, N, *S_out) copied whole into a fresh array (not a
    scratch buffer), as a (C*K, N*L) matrix: eager's `_cols_block` of samples lo:hi is its
    columns lo*L:hi*L."""
    stride, padding, dilation = p["stride"], p["padding"], p["dilation"]
    if layout == "rows":
        out_sizes = conv._geometry(x.shape, kernel, stride, padding, dilation)
        xpad = conv._padded(np, x, padding, role="conv.pad")
        win = conv._windows(np, xpad, kernel, stride, dilation, out_sizes)
        view = win.transpose((0, 1, 4, 5, 2, 3))  # (N, C, *K, *S_out)
        rows = np.empty(view.shape, dtype=x.dtype)
        rows[...] = view
        return rows.reshape(x.shape[0], -1, prod(out_sizes)), tuple(out_sizes)
    view, out_sizes = conv._window_matrix(np, x, kernel, stride, padding, dilation)
    cols = np.empty(view.shape, dtype=x.dtype)
    batch = (slice(None),) * (1 + len(kernel))  # the axes before N in (C, *K, N, *S_out)
    for lo, hi in _blocks(x, kernel, tuple(out_sizes)):  # in eager's blocks: cache-hot
        cols[batch + (slice(lo, hi),)] = view[batch + (slice(lo, hi),)]
    return cols.reshape(-1, x.shape[0] * prod(out_sizes)), tuple(out_sizes)


def _conv_keeping_windows(forward: Any) -> Callable[..., Any]:
    def conv_forward(xp: Any, x: Any, w: Any, b: Any, **p: Any) -> tuple[Any, Any]:
        if (
            parallel.intra_op_threads() > 1
            or getattr(xp, "module", xp) is not np
            or type(x) is not np.ndarray
            or type(w) is not np.ndarray
            or x.dtype != w.dtype
            or (b is not None and (type(b) is not np.ndarray or b.dtype != x.dtype))
        ):
            return forward(xp, x, w, b, **p), None
        layout = _im2col_path(x.shape, w.shape, p)
        if not layout:
            return forward(xp, x, w, b, **p), None
        n, o = x.shape[0], w.shape[0]
        kernel = tuple(w.shape[2:])
        with np.errstate(all="ignore"):
            cols, out_sizes = _windows_of(x, kernel, p, layout)
            if layout == "rows":  # conv._sample_major_forward
                res = np.matmul(w.reshape(o, -1), cols)
                return conv._add_bias(res.reshape((n, o) + out_sizes), b), cols
            # conv._conv_forward's blocks, each GEMM reading its columns of the kept matrix
            out = np.empty((n, o) + out_sizes, dtype=np.result_type(x, w))
            wm = w.reshape(1, o, -1)
            size = prod(out_sizes)
            for lo, hi in _blocks(x, kernel, out_sizes):
                res = conv._gemm(np, wm, cols[None, :, lo * size : hi * size])
                conv._from_acc(np, res.reshape((o, hi - lo) + out_sizes), b, out[lo:hi])
            return out, cols

    conv_forward.__name__ = "conv_keeping_windows"
    return conv_forward


def _weight_grad(cols: Any, g: Any, w_shape: tuple[int, ...], layout: str) -> Any:
    """conv._conv_weight_grad_forward's im2col paths on the kept windows."""
    n, o = g.shape[:2]
    if layout == "rows":  # conv._sample_major_weight_grad: per sample, then summed
        gm = g.reshape(n, o, cols.shape[2])
        out = conv.scratch(np, "conv.gemm", (n, o, cols.shape[1]), cols.dtype)
        return np.matmul(gm, cols.swapaxes(-1, -2), out=out).sum(axis=0).reshape(w_shape)
    # the blocks of samples, each block's cols g^T added into the transposed gradient
    dtype = np.result_type(cols, g)
    acc = np.zeros((1, cols.shape[0], o), dtype=dtype)
    size = prod(g.shape[2:])
    blocks = conv._batch_blocks(n, cols.shape[0] * size * np.dtype(dtype).itemsize)
    for lo, hi in blocks:
        gm = conv._channel_block(np, g, lo, hi, 1, "conv.g")
        part = np.matmul(
            cols[None, :, lo * size : hi * size],
            gm.transpose(0, 2, 1),
            out=conv.scratch(np, "conv.gemm", acc.shape, dtype),
        )
        acc += part
    return np.ascontiguousarray(acc.transpose(0, 2, 1)).reshape(w_shape)


def _conv_rule_with_windows(conv_rule: Any) -> Callable[..., Any]:
    def rule(xp: Any, g: Any, x: Any, w: Any, cols: Any, *, needs: Any, **p: Any) -> Any:
        if (
            cols is None
            or not needs[1]
            or parallel.intra_op_threads() > 1
            or type(g) is not np.ndarray
            or g.dtype != cols.dtype
        ):
            return conv_rule(xp, g, x, w, needs=needs, **p)
        gx, _, gb = conv_rule(xp, g, x, w, needs=(needs[0], False, *needs[2:]), **p)
        layout = _im2col_path(x.shape, w.shape, p)
        with np.errstate(all="ignore"):
            return gx, _weight_grad(cols, g, w.shape, layout), gb

    rule.__name__ = "conv_backward_with_windows"
    return rule


def _windows_check(instr: Instr, trace: Trace, forward: Callable[..., Any]) -> bool:
    """The fused forward and weight gradient give the op's bits on the traced arrays."""
    arrays: list[Any] = [
        trace.values[s]._data if trace.kinds[s] != CONST else trace.values[s] for s in instr.ins
    ]
    x, w = arrays[0], arrays[1]
    b = arrays[2] if len(arrays) > 2 else None
    if any(type(a) is not np.ndarray for a in (x, w)) or x.dtype.kind != "f":
        return False
    p = instr.params
    with np.errstate(all="ignore"):
        expected = instr.op.forward(instr.xp, x, w, b, **p)
        got, cols = forward(instr.xp, x, w, b, **p)
        if cols is None or got.dtype != expected.dtype or got.tobytes() != expected.tobytes():
            return False
        g = np.random.default_rng(0).standard_normal(expected.shape).astype(expected.dtype)
        dw = conv._conv_weight_grad_forward(np, x, g, kernel=tuple(w.shape[2:]), **p)
        layout = _im2col_path(x.shape, w.shape, p)
        return bool(_weight_grad(cols, g, w.shape, layout).tobytes() == dw.tobytes())


def windows_kept(
    trace: Trace, order: list[Instr], overrides: dict[int, Override]
) -> dict[int, Producer]:
    """Convs on the im2col path whose weight gradient the step computes: their forward
    keeps the window matrix for the backward (adds the rule to `overrides`, makes the
    extra slots in `trace`); by the conv instruction's output slot."""
    if not ENABLED:
        return {}
    producers: dict[int, Producer] = {}
    for k, instr in enumerate(order):
        if (
            getattr(instr.op, "name", None) != "conv"
            or k in overrides
            or len(instr.ins) not in (2, 3)
            or not instr.edges[1]
            or instr.param_slots
            or instr.op.rule is None
            or trace.kinds[instr.ins[0]] == CONST
        ):
            continue
        x, w = (trace.values[s]._data for s in instr.ins[:2])
        forward = _conv_keeping_windows(instr.op.forward)
        try:  # (conv.py's private helpers, mirrored here: if they change, no rewrite)
            if not _im2col_path(x.shape, w.shape, instr.params):
                continue
            if not _windows_check(instr, trace, forward):
                continue
        except Exception:  # noqa: BLE001
            continue
        extra = trace._new_slot(OP, _Extra())
        producers[instr.out] = (forward, extra)
        rule = _conv_rule_with_windows(instr.op.rule)
        overrides[k] = (rule, [instr.ins[0], instr.ins[1], extra], dict(instr.params))
    return producers
