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
from typing import Any

import numpy as np

from ..ops import parallel
from .tracing import Instr, Trace

ENABLED = True  # bench/NOTES.md, stop 21, measured the step with and without it

# order index -> (rule, saved slots it reads, its parameters)
Override = tuple[Callable[..., Any], list[int], dict[str, Any]]


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
