"""The forward-mode side of `tg.autograd.Function`: a tangent reaching `apply` (inside
`forward_ad.dual_level()`, `tg.func.jvp`, `jacfwd`) goes through the user's
`jvp(ctx, *tangents)`, as in PyTorch.

`input_tangents` runs before `forward`: it collects one tangent per argument and refuses a
Function without `jvp` (PyTorch's NotImplementedError, naming the function). After
`forward`, `attach_output_tangents` calls `jvp` with forward mode off (its tangents are
plain tensors; a reverse tape still records it, so the tangents stay differentiable for
forward-over-reverse), checks what it returns and gives each output its tangent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import backend, dtypes
from ..engine.state import FORWARD, not_recording, state
from ..tensor import Tensor, _wrap

if TYPE_CHECKING:
    from ..engine.node import Node
    from .function import Function


def _defines_jvp(cls: type[Function]) -> bool:
    from .function import Function

    return getattr(cls, "jvp", None) is not Function.jvp


def input_tangents(cls: type[Function], args: Sequence[Any]) -> list[Tensor | None] | None:
    """The tangent of each argument (None: none), or None when no argument carries one.
    Raises for a Function without `jvp` that a tangent reaches."""
    level = state.dual_level
    if level is None:
        return None
    tangents = [
        level.get(a) if isinstance(a, Tensor) and a._tapes & FORWARD else None for a in args
    ]
    if all(t is None for t in tangents):
        return None
    if not _defines_jvp(cls):
        which = [i for i, t in enumerate(tangents) if t is not None]
        raise NotImplementedError(
            f"{cls.__name__}: You must implement the jvp function for custom "
            f"autograd.Function to use it with forward mode AD. Argument(s) {which} of "
            f"{cls.__name__}.apply carry a tangent (forward_ad.dual_level, tg.func.jvp, "
            "jacfwd, hessian); define `@staticmethod def jvp(ctx, *tangents)` returning one "
            "tangent per output (keep what it needs with ctx.save_for_forward(...)), or "
            "compute outside forward mode."
        )
    return tangents


def _primal(t: Tensor) -> Tensor:
    """`t` as jvp sees it: the same values and reverse graph, no tangent (forward AD's
    shadow: a leaf's gradients through it reach the leaf's own accumulator)."""
    if not t._tapes & FORWARD:
        return t
    from .forward_ad import _shadow

    return _shadow(t, t._tapes & ~FORWARD)


def _jvp_saved(
    ctx: Any, originals: dict[int, Tensor], fwd_outs: Sequence[Any], result: Sequence[Any]
) -> tuple[Tensor | None, ...]:
    """What `save_for_forward` kept, as the graph outside sees it: an input is the caller's
    tensor, an output the returned one (without their tangents)."""
    out_pos = {id(o): i for i, o in enumerate(fwd_outs) if isinstance(o, Tensor)}
    saved: list[Tensor | None] = []
    for t in ctx.__dict__.get("_tg_to_save_fwd", ()):
        if t is None:
            saved.append(None)
        elif id(t) in out_pos and isinstance(result[out_pos[id(t)]], Tensor):
            saved.append(_primal(result[out_pos[id(t)]]))
        else:
            saved.append(_primal(originals.get(id(t), t)))
    return tuple(saved)


def attach_output_tangents(
    cls: type[Function],
    ctx: Any,
    args: Sequence[Any],
    tangents: list[Tensor | None],
    originals: dict[int, Tensor],
    fwd_outs: Sequence[Any],
    result: Sequence[Any],
    node: Node | None,
    dirty: dict[int, int],
) -> None:
    """Run the user's jvp and give each differentiable output its tangent."""
    name = cls.__name__
    materialize = ctx.__dict__.get("_tg_materialize", True)
    given: list[Tensor | None] = []
    for a, t in zip(args, tangents, strict=True):
        if t is None and isinstance(a, Tensor) and materialize:
            t = _zeros_like(a._data)
        given.append(t)
    ctx._tg_fwd_saved = _jvp_saved(ctx, originals, fwd_outs, result)
    try:
        with not_recording(FORWARD):
            res = ctx.jvp(*given) if cls._tg_instance_style else cls.jvp(ctx, *given)
    finally:
        ctx._tg_fwd_saved = None
        ctx._tg_to_save_fwd = ()
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    if len(res) != len(result):
        raise RuntimeError(
            f"{name}.jvp returned an invalid number of forward gradients (expected "
            f"{len(result)} but got {len(res)}): return one tangent per output of forward"
        )
    level = state.dual_level
    assert level is not None  # input_tangents found tangents: a level is active
    per_output: list[Tensor | None] = []
    for i, (out, tangent) in enumerate(zip(result, res, strict=True)):
        if not isinstance(out, Tensor) or not out._tapes & FORWARD:
            per_output.append(None)  # not differentiable: its tangent is ignored
            continue
        if id(out) in dirty:  # modified in place: jvp must change the input's tangent in place
            k = dirty[id(out)]
            if tangent is not given[k]:
                raise RuntimeError(
                    f"{name}.jvp: an inplace custom Function is not modifying the forward mode "
                    f"gradients inplace. forward modified input {k} in place (mark_dirty), so "
                    f"jvp must modify its tangent in place and return that tensor as output {i}"
                )
        tangent = _checked(name, i, out, tangent)
        level.set(out, tangent)
        per_output.append(tangent)
    if node is not None:
        # a backward inside the level rebuilds saved outputs from the node: they find their
        # tangent by output number
        level.by_node[node] = per_output[0] if len(per_output) == 1 else tuple(per_output)


def _zeros_like(data: Any) -> Tensor:
    return _wrap(backend.array_module(data).zeros_like(data))


def _checked(name: str, i: int, out: Tensor, tangent: Any) -> Tensor:
    """Output i's tangent as a tensor of its shape and dtype (zeros for None)."""
    if tangent is None:
        return _zeros_like(out._data)
    if not isinstance(tangent, Tensor):
        raise TypeError(
            f"{name}.jvp must return Tensors (or None), but output {i}'s tangent is of type "
            f"{type(tangent).__name__}"
        )
    if tuple(tangent.shape) != tuple(out.shape):
        raise RuntimeError(
            f"{name}.jvp: Trying to set a forward gradient that has a different size than that "
            f"of the original Tensor, this is not supported. Output {i} is of size "
            f"{list(out.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    if not dtypes.is_floating(tangent.dtype) and tangent.dtype.kind != "c":
        raise TypeError(
            f"{name}.jvp: output {i}'s tangent has dtype {tangent.dtype}; tangents are floating "
            "point (or complex)"
        )
    if tangent.dtype != out.dtype:
        converted: Tensor = tangent.to(out.dtype)
        return converted
    return tangent
