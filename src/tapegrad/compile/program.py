"""A trace turned into two straight-line Python functions of arrays.

`forward(*boundary arrays) -> (outputs, saved)` calls each traced op's array forward in
order; `backward(*output grads, *saved) -> boundary grads` calls the ops' derivative rules
in the order the eager engine would, with the engine's own bookkeeping (sum back
broadcast gradients, cast to the input's dtype, add a second gradient *after* the first),
so both run exactly the floating-point operations eager runs. Slots become local
variables; ops, parameters and constants become default arguments (local lookups).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar, cast

import numpy as np

from ..ops.quiet import quiet
from . import fusion, inline
from .tracing import ARG, CONST, EXTERNAL, OP, Instr, Trace

Generated = Callable[..., Any]  # a function the program wrote (its source exec'd)
# matmul's first-input gradient into an aligned array: (template, (shape, dtype)) (see
# `_aligned_gradient`)
AlignedGradient = tuple[str, tuple[tuple[int, ...], np.dtype[Any]]]
# what `build_backward` decides on the traced arrays, per rule `k` of its order, kept for
# the rebuilds: `k` -> `inline.gradients`' templates, `(k, "in place")` ->
# `inline.gradient_in_place`'s template, `(k, "aligned")` -> `_aligned_gradient`'s result
InlinedRules = dict[
    int | tuple[int, Literal["in place", "aligned"]],
    dict[int, str] | str | AlignedGradient | None,
]

_F64 = np.dtype(np.float64)


class _Env(dict[str, Any]):
    """Names the generated code reads, each bound once as a default argument."""

    def __init__(self) -> None:
        super().__init__()
        self._names: dict[tuple[str, int], str] = {}  # (prefix, id(value)) -> name

    def bind(self, prefix: str, value: Any) -> str:
        name = self._names.get((prefix, id(value)))
        if name is None:
            name = self._names[prefix, id(value)] = f"{prefix}{len(self)}"
            self[name] = value
        return name


def _arrays_of(trace: Trace, slots: Iterable[int]) -> list[Any]:
    from ..tensor import Tensor

    return [v._data if isinstance(v, Tensor) else v for v in (trace.values[s] for s in slots)]


_RERUN_LIMIT = 4096  # elements: above it a forward is not run again, its result is checked


def _conversion(trace: Trace, instr: Instr, env: _Env, var: str) -> list[str]:
    """Lines that redo what the dispatcher does to a forward's result (an array from a
    NumPy scalar, float64 nobody asked for cast back). A small forward is run once more on
    the traced arrays to see which apply (then the replay pays nothing); a large one, or
    one taking arrays as parameters (batch norm's running statistics, dropout's mask), gets
    the dispatcher's two checks instead, which cost nothing beside its own work."""
    final = trace.values[instr.out]._data
    arrays = _arrays_of(trace, instr.ins)
    large = max((getattr(a, "size", 1) for a in arrays), default=1) > _RERUN_LIMIT
    if large or any(isinstance(v, np.ndarray) for v in instr.params.values()):
        ndarray = env.bind("T", np.ndarray)
        lines = [f"    if type({var}) is not {ndarray}: {var} = {env.bind('A', np.asarray)}({var})"]
        if final.dtype != _F64:
            lines.append(
                f"    if {var}.dtype == {env.bind('D', _F64)}: "
                f"{var} = {var}.astype({env.bind('D', final.dtype)})"
            )
        return lines
    raw = instr.op.forward(instr.xp, *arrays, **instr.params)
    lines = []
    if type(raw) is not np.ndarray:
        lines.append(f"    {var} = {env.bind('A', np.asarray)}({var})")
        raw = np.asarray(raw)
    if raw.dtype != final.dtype:
        lines.append(f"    {var} = {var}.astype({env.bind('D', final.dtype)})")
    return lines


def _call(
    env: _Env,
    fn: Callable[..., Any],
    first: str,
    args: list[str],
    params: dict[str, Any],
    slots: dict[str, int] | None = None,
) -> str:
    """`fn(first, *args, **params)`; parameters in `slots` (name -> slot) are read from
    slot variables (an array parameter that is a traced tensor's storage)."""
    slots = slots or {}
    kw = "".join(
        f", {k}=v{slots[k]}" if k in slots else f", {k}={env.bind('K', v)}"
        for k, v in params.items()
    )
    return f"{env.bind('F', fn)}({first}{''.join(', ' + a for a in args)}{kw})"


def op_saved(instr: Instr) -> list[int]:
    """The slots whose values an instruction's rule reads, in order."""
    return [instr.out if i == -1 else instr.ins[i] for i in instr.op.saved_indices(len(instr.ins))]


def kept_slots(order: Iterable[Instr]) -> set[int]:
    """The slots eager's nodes keep, and so version-check, for these rules: what each rule
    reads, less a value only the gradient of an input without an edge would need
    (`Op.saves_only_for`: `x * 2.0` keeps no `x`), plus the array parameters read."""
    kept: set[int] = set()
    for instr in order:
        op = instr.op
        save_for = getattr(op, "save_for", None)
        for j, i in enumerate(op.saved_indices(len(instr.ins))):
            needed_by = save_for[j] if save_for is not None else None
            if needed_by is not None and not any(instr.edges[k] for k in needed_by):
                continue
            kept.add(instr.out if i == -1 else instr.ins[i])
        kept.update(instr.param_slots.values())
    return kept


def _slot_name(trace: Trace, env: _Env, slot: int) -> str:
    if trace.kinds[slot] == CONST:
        return env.bind("C", trace.values[slot])
    return f"v{slot}"


def _define(name: str, params: list[str], body: list[str], env: _Env) -> tuple[Generated, str]:
    # the whole program runs with NumPy's warnings off, as each op and the engine's
    # backward do (inlined `x / y` warned at a zero divisor where eager does not)
    body = [f"    with {env.bind('Q', quiet)}():", *("    " + line for line in body)]
    signature = list(params) + (["*"] + [f"{k}={k}" for k in env] if env else [])
    head = f"def {name}({', '.join(signature)}):"
    source = "\n".join([head, *body]) + "\n"
    scope = dict(env)
    exec(compile(source, f"<tg.compile {name}>", "exec"), scope)  # noqa: S102
    return scope[name], source


def boundary_slots(trace: Trace) -> list[int]:
    """Arguments first (by position), then externals, as the generated functions take them."""
    args = sorted((s for s, k in enumerate(trace.kinds) if k == ARG), key=trace.arg_pos.__getitem__)
    return args + [s for s, k in enumerate(trace.kinds) if k == EXTERNAL]


_FREE_BYTES = 1 << 16  # intermediates this large are dropped after their last use


def _live_instrs(trace: Trace, kept: set[int]) -> list[Instr]:
    """Dead-code elimination: the instructions whose result reaches a kept slot (traced
    ops are free of side effects, or the function would not have compiled)."""
    needed = set(kept)
    live = []
    for instr in reversed(trace.instrs):
        op = instr.op
        if instr.out in needed or getattr(op, "effect", False) or getattr(op, "keep", False):
            live.append(instr)
            needed.update(instr.ins)
            needed.update(instr.param_slots.values())
    return live[::-1]


def _drops(trace: Trace, instrs: list[Instr], kept: set[int]) -> dict[int, list[int]]:
    """instruction index -> large intermediates whose last use it is (freed right after,
    as eager frees a tensor nobody holds: big arrays then reuse memory instead of faulting
    in fresh pages)."""
    last: dict[int, int] = {}
    for k, instr in enumerate(instrs):
        for s in (*instr.ins, *instr.param_slots.values()):
            last[s] = k
    out: dict[int, list[int]] = {}
    for instr in instrs:
        s = instr.out
        if s in kept or s not in last or trace.values[s]._data.nbytes < _FREE_BYTES:
            continue
        out.setdefault(last[s], []).append(s)
    return out


ALIGN = True  # large internal GEMM results in cache-line-aligned arrays (bench/NOTES.md)
IN_PLACE = True  # the in-place pass below (bench/NOTES.md, stop 18, measured it alone)


def _last_uses(instrs: list[Instr]) -> dict[int, int]:
    """slot -> the index of the last instruction that reads it."""
    last: dict[int, int] = {}
    for k, instr in enumerate(instrs):
        for s in (*instr.ins, *instr.param_slots.values()):
            last[s] = k
    return last


def _shared(instrs: list[Instr]) -> set[int]:
    """Slots whose buffer something else may still hold after reading them: an input of
    an op that can return a view or its input (reshape, detach, ...), an array parameter."""
    shared: set[int] = set()
    for instr in instrs:
        shared.update(instr.param_slots.values())
        if instr.op.name not in inline.FRESH:
            shared.update(instr.ins)
    return shared


def _reusable(
    trace: Trace,
    instr: Instr,
    k: int,
    last: dict[int, int],
    owned: set[int],
    blocked: set[int],
) -> list[int]:
    """Inputs of instruction `k` whose buffer its result may be written into: a large
    intermediate the program itself allocated (`owned`), read by nothing after `k` and
    only by ops with fresh results, not an output or saved for the backward (`blocked`),
    passed once. (On a small array `out=` costs more than the allocation it saves.)"""
    ins = instr.ins
    return [
        j
        for j, s in enumerate(ins)
        if s in owned
        and last.get(s) == k
        and s not in blocked
        and ins.count(s) == 1
        and trace.values[s]._data.nbytes >= _FREE_BYTES
    ]


def build_forward(
    trace: Trace,
    boundary: list[int],
    outputs: list[int],
    saved: list[int],
    producers: dict[int, fusion.Producer] | None = None,
) -> tuple[Generated, str]:
    """The forward program. Large intermediates are dropped after their last use; with
    `IN_PLACE`, an elementwise op whose input is such an intermediate, dead after it, of
    the result's shape and dtype, writes its result into that input (`z = x @ w; z += b`,
    as hand-written NumPy does): one allocation less, and the bytes just written by the
    op before are the ones read and written again. `producers` (by output slot): forwards
    that also fill an extra slot the backward reads (`fusion.windows_kept`)."""
    env = _Env()
    body: list[str] = []
    kept = set(outputs) | set(saved)
    instrs = _live_instrs(trace, kept)
    drops = _drops(trace, instrs, kept)
    last = _last_uses(instrs)
    blocked = kept | _shared(instrs)
    owned: set[int] = set()  # slots holding an array this program allocated (see inline.FRESH)
    for k, instr in enumerate(instrs):
        if k - 1 in drops:
            body.append(f"    del {', '.join(f'v{s}' for s in drops[k - 1])}")
        var = f"v{instr.out}"
        if getattr(instr.op, "effect", False):
            body.append(f"    {env.bind('E', instr.op.forward)}(None)")
            continue
        args = [_slot_name(trace, env, s) for s in instr.ins]
        if producers and instr.out in producers:
            fn, extra = producers[instr.out]
            call = _call(env, fn, env.bind("X", instr.xp), args, instr.params)
            body.append(f"    {var}, v{extra} = {call}")
            continue
        arrays = _arrays_of(trace, instr.ins)
        final = trace.values[instr.out]._data
        inlined = None
        if IN_PLACE:
            for j in _reusable(trace, instr, k, last, owned, blocked):
                inlined = inline.in_place(instr, j, args, arrays, final, env.bind)
                if inlined is not None:
                    break
        if inlined is None and ALIGN and instr.out not in outputs and final.nbytes >= _FREE_BYTES:
            inlined = inline.aligned_matmul(instr, args, arrays, final, env.bind)
        if inlined is None:
            inlined = inline.expression(instr, args, arrays, final, env.bind)
        if inlined is not None:
            body.append(f"    {var} = {inlined}")
            if instr.op.name in inline.FRESH:
                owned.add(instr.out)
            continue
        call = _call(
            env, instr.op.forward, env.bind("X", instr.xp), args, instr.params, instr.param_slots
        )
        body.append(f"    {var} = {call}")
        if not getattr(instr.op, "exact", False):
            body.extend(_conversion(trace, instr, env, var))
    outs = "".join(f"v{s}, " for s in outputs)
    keep = "".join(f"v{s}, " for s in saved)
    body.append(f"    return ({outs}), ({keep})")
    return _define("forward", [f"v{s}" for s in boundary], body, env)


def _aligned_gradient(
    trace: Trace,
    instr: Instr,
    exprs: dict[int, str] | None,
    wanted: list[int],
    ns: Any,
    params: dict[str, Any],
) -> AlignedGradient | None:
    """(template, (shape, dtype)) of matmul's first-input gradient into an aligned array
    (`inline.aligned_gradient`) when that input is a large intermediate of the program (a
    leaf's gradient stays a plain array: the engine would copy a view); or None."""
    if not ALIGN or exprs is None or instr.op.name != "matmul" or 0 not in exprs:
        return None
    slot = instr.ins[0]
    data = trace.values[slot]._data
    if trace.kinds[slot] != OP or slot in wanted or data.nbytes < _FREE_BYTES:
        return None
    arrays = _arrays_of(trace, op_saved(instr))
    out = trace.values[instr.out]._data
    meta = (data.shape, data.dtype)
    found = inline.aligned_gradient(instr, arrays, out, ns, params, ("SHAPE", "DTYPE"), meta)
    return None if found is None else (found, meta)


_Build = TypeVar("_Build", bound=Callable[..., Any])


def _forgets_probe(build: _Build) -> _Build:
    """`build`, with the inlining checks' cached probe gradient (`inline._probe`) dropped
    when it returns, so no layer-sized array outlives a program build."""

    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        finally:
            inline.forget_probe()

    return cast(_Build, wrapper)


@_forgets_probe
def build_backward(
    trace: Trace,
    order: list[Instr],
    diff_outputs: list[int],
    wanted: list[int],
    ns: Any,
    keep: set[int] | None = None,
    fired: set[int] | None = None,
    inlined: InlinedRules | None = None,
    overrides: dict[int, fusion.Override] | None = None,
) -> tuple[Generated, list[int], str]:
    """The backward program: grads of `diff_outputs` in, grads of `wanted` boundary slots out,
    calling the rules of `order` (from `tracing.backward_order`, taken while the eager graph
    of the trace is intact: a GradManager's backward releases it).

    The engine's two fix-ups of a rule's gradient (sum a broadcast gradient back to the
    input's shape, cast it to the input's dtype) are checks numbered in program order. With
    `fired` (a set), every check is kept and notes in `fired` when it fixes something; with
    `keep`, only the checks in `keep` are emitted: for a fixed signature the rules return
    the same shapes and dtypes every call, so the others never fire.

    `inlined` (a dict, filled on the first build, which has the traced arrays): per rule,
    the NumPy expressions of `inline.gradients` that replace its call, or None (and the
    in-place and aligned variants: see `InlinedRules`).

    `overrides` (by index into `order`): rules that replace the op's (`fusion.py`; whole
    steps only), each with the saved slots it reads and its parameters.

    Returns (function, the slots whose forward values it reads, source)."""
    env = _Env()
    xp = env.bind("X", ns)
    note = env.bind("FIRED", fired) if fired is not None else None
    body: list[str] = []
    deposits: dict[int, int] = {}
    for instr in order:
        for s, e in zip(instr.ins, instr.edges, strict=True):
            if e:
                deposits[s] = deposits.get(s, 0) + 1
    items = {s for i in order for s in getattr(i.op, "items", ()) if s is not None}
    receives = (set(deposits) | set(wanted) | items) - set(diff_outputs)
    body.extend(f"    g{s} = None" for s in sorted(receives))
    for k, s in enumerate(diff_outputs):
        body.append(f"    g{s} = o{k}")  # output slots are distinct
        deposits[s] = deposits.get(s, 0) + 1
    reads: list[int] = []
    check = 0
    owned: set[int] = set()  # slots whose gradient is an array this program made, unshared
    # gradients certainly set here: a single output's, and what inlined rules deposit
    sure = set(diff_outputs) if len(diff_outputs) == 1 else set()
    overrides = overrides or {}
    for k, instr in enumerate(order):
        op = instr.op
        override = overrides.get(k)
        rule_fn = op.rule if override is None else override[0]
        args = []
        for slot in op_saved(instr) if override is None else override[1]:
            name = _slot_name(trace, env, slot)
            if trace.kinds[slot] != CONST and slot not in reads:
                reads.append(slot)
            args.append(name)
        for slot in instr.param_slots.values():
            if slot not in reads:
                reads.append(slot)
        params = dict(instr.params) if override is None else dict(override[2])
        if op.wants_needs:
            params["needs"] = instr.edges
        outs = getattr(op, "items", None)  # a custom Function: its outputs' slots
        exprs: dict[int, str] | None = None
        if outs is None and inlined is not None and override is None:
            if k not in inlined:  # decided once, on the traced arrays (a lean rebuild has none)
                arrays = _arrays_of(trace, op_saved(instr))
                out = trace.values[instr.out]._data
                found = inline.gradients(instr, arrays, out, ns, params)
                inlined[k] = found
                inlined[k, "in place"] = (
                    inline.gradient_in_place(instr, arrays, out, ns, params)
                    if IN_PLACE and found is not None
                    else None
                )
            # each key holds what its comment on `InlinedRules` says (the checks narrow)
            rule = inlined[k]
            exprs = rule if isinstance(rule, dict) else None
            in_place = inlined[k, "in place"]
            if (
                exprs is not None
                and instr.out in owned
                and isinstance(in_place, str)
                and trace.values[instr.out]._data.nbytes >= _FREE_BYTES
            ):
                # the incoming gradient is this program's own array, read here last
                exprs = {0: in_place}
            if (k, "aligned") not in inlined:
                inlined[k, "aligned"] = _aligned_gradient(trace, instr, exprs, wanted, ns, params)
            aligned = inlined[k, "aligned"]
            if isinstance(aligned, tuple) and exprs is not None:  # (it has exprs[0])
                template, meta = aligned
                shape, dtype = env.bind("S", meta[0]), env.bind("D", meta[1])
                exprs = {**exprs, 0: template.replace("SHAPE", shape).replace("DTYPE", dtype)}
        ind = "        "
        if outs is not None:  # the engine's buffer of a node with several outputs: a list
            grads = [f"g{s}" if s is not None else "None" for s in outs]
            head = grads[0] if len(outs) == 1 else f"[{', '.join(grads)}]"
            live = " or ".join(f"{n} is not None" for n in grads if n != "None") or "False"
            body.append(f"    if {live}:")
        elif exprs is not None and instr.out in sure:  # no test: it is set, and stays set
            head, ind = f"g{instr.out}", "    "
        else:
            head = f"g{instr.out}"
            body.append(f"    if {head} is not None:")
        if exprs is None:
            call = _call(env, rule_fn, f"{xp}, {head}", args, params, instr.param_slots)
            body.append(f"{ind}r = {call}")
        for j, (slot, edge) in enumerate(zip(instr.ins, instr.edges, strict=True)):
            if not edge:
                continue
            data = trace.values[slot]._data
            if exprs is None:
                body += [f"{ind}t = r[{j}]", f"{ind}if t is not None:"]
                inner = ind + "    "
            else:  # an inlined gradient is never None
                body.append(f"{ind}t = {inline.gradient_line(exprs[j], head, args, env.bind)}")
                inner = ind
                if ind == "    ":
                    sure.add(slot)
            for test, fix in (
                ("t.shape != {S}", "{X}.sum_to(t, {S})"),
                ("t.dtype != {D}", "t.astype({D})"),
            ):
                if keep is None or check in keep:
                    names = {
                        "S": env.bind("S", data.shape),
                        "D": env.bind("D", data.dtype),
                        "X": xp,
                    }
                    mark = f"{note}.add({check}); " if note else ""
                    body.append(
                        f"{inner}if {test.format(**names)}: {mark}t = {fix.format(**names)}"
                    )
                check += 1
            if deposits[slot] == 1:  # its only gradient: nothing to add it to
                body.append(f"{inner}g{slot} = t")
                if exprs is not None and inline.fresh(exprs[j]):
                    owned.add(slot)  # a new array (a fix-up would make another new one)
            else:
                body.append(f"{inner}g{slot} = t if g{slot} is None else g{slot} + t")
        if trace.values[instr.out]._data.nbytes >= _FREE_BYTES and instr.out not in wanted:
            body.append(f"{ind}g{instr.out} = r = t = None  # used: free it, as eager does")
            sure.discard(instr.out)
    body.append(f"    return ({''.join(f'g{s}, ' for s in wanted)})")
    signature = [f"o{k}" for k in range(len(diff_outputs))] + [f"v{s}" for s in reads]
    fn, source = _define("backward", signature, body, env)
    return fn, reads, source
