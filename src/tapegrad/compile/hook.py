"""The dispatcher's hook for `tg.compile`: one tape bit, set only on tensors being traced.

A tensor that `tg.compile` is tracing carries the `TRACING` bit in `Tensor._tapes`. The bit is
never in `state.active`, so nothing records on it; it only makes the dispatcher's existing
`if mask:` branch (taken anyway for tensors that require grad) call `traced_call`, which runs
the op as usual and appends it to the trace. Eager code that traces nothing pays nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..engine.state import TRACING, state

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["TRACING", "local", "traced_call"]  # TRACING: a fixed bit of its own (engine.state)
_FLOAT_KINDS = "fc"


class _Local(threading.local):
    trace: Any = None  # the Trace being built in this thread, or None


local = _Local()


def traced_call(
    op: Any,
    args: tuple[Any, ...],
    params: dict[str, Any],
    out: Any,
    mask: int,
    xp: Any,
    cls: type[Tensor],
) -> Tensor:
    """Finish the op call the dispatcher started (`out` is its forward's result): record it
    on the tapes that are active as eager would, then append it to this thread's trace."""
    from ..ops import registry  # the hook sits below the op table; import it when first used
    from ..tensor import _wrap

    eager = mask & ~TRACING & state.active
    if eager and op.differentiable and out.dtype.kind in _FLOAT_KINDS:
        result = registry._record(op, args, params, out, eager, xp, cls)
    else:
        result = _wrap(out, 0, cls)
    if op.view:
        registry.mark_view(result, op, args, params)
    trace = local.trace
    if trace is not None:  # a stale bit left on a tensor outside any trace records nothing
        result._tapes |= TRACING
        trace.append(op, args, params, result)
    return result
