"""`tg.compile`: trace a function once per signature, then replay it as array code.

>>> import tapegrad as tg
>>> @tg.compile
... def f(x):
...     return (x * 2.0).tanh().sum()
>>> x = tg.tensor([0.5, 1.0], requires_grad=True)
>>> f(x).backward()   # first call: traced (eager); later calls replay
>>> f.cache_info().misses
1
"""

from __future__ import annotations

import enum
import functools
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .. import dtypes
from ..engine.state import state
from ..tensor import Tensor
from . import hook, random_draws, step
from .discovery import discover
from .replay import Program
from .tracing import CONST, HOOKS_REASON, Trace, value_read_guard

if TYPE_CHECKING:
    from ..nn.module import Module

Key = tuple[Any, ...]  # a call's signature (hashable)
# per watched tensor before the call: it, its version, its .grad and a copy of its values
Snapshot = list[tuple[Tensor, int, Tensor | None, Any]]
# the thread generator's state (None before its first use), the global NumPy stream's
RngState = tuple[Mapping[str, Any] | None, Any, Any, int]  # + draws from tg.Generator objects


class CompileWarning(UserWarning):
    """`tg.compile` could not replay a function and runs it eagerly instead."""


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    size: int


class _Unsupported(Exception):
    pass


class _Eager(enum.Enum):
    EAGER = "eager"  # a cache entry: this signature runs eagerly (its trace had side effects)


_EAGER = _Eager.EAGER
_Entry = Program | step.StepProgram | _Eager


def _key_of(obj: Any, leaves: list[Tensor]) -> Any:
    """The hashable signature of one argument (tensors collected into `leaves`)."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        d = obj._data
        return (type(obj), d.shape, d.dtype, type(d), obj._tapes)
    t = type(obj)
    if t is tuple or t is list:
        return (t, *[_key_of(o, leaves) for o in obj])
    if t is dict:
        return (dict, *[(k, _key_of(v, leaves)) for k, v in obj.items()])
    try:
        hash(obj)
    except TypeError:
        raise _Unsupported(f"an argument of type {t.__name__} is not hashable") from None
    return (t, obj)


class CompiledFunction:
    """`fn` compiled by `tg.compile`: call it like `fn`. See `tg.compile`."""

    def __init__(self, fn: Callable[..., Any], maxsize: int = 64, fullgraph: bool = False) -> None:
        if not callable(fn):
            raise TypeError(f"tg.compile: expected a function or Module, got {type(fn).__name__}")
        if maxsize < 1:
            raise ValueError(f"tg.compile: maxsize must be at least 1, got {maxsize}")
        self._fn = fn
        self._maxsize = maxsize
        self._fullgraph = fullgraph
        self._cache: OrderedDict[Key, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = 0
        self._eager_reason: str | None = None
        self._warned: set[str] = set()  # reasons already warned about
        # (modules, tensors) the function reads, found at the first trace
        self._found: tuple[list[Module], list[Tensor]] | None = None
        functools.update_wrapper(self, fn, updated=())

    # ------------------------------------------------------------------ public
    def cache_info(self) -> CacheInfo:
        """Hits (replays), misses (traces), the cache's bound and its current size."""
        return CacheInfo(self._hits, self._misses, self._maxsize, len(self._cache))

    def cache_clear(self) -> None:
        with self._lock:
            self._cache.clear()
            self._hits = self._misses = 0

    @property
    def eager_reason(self) -> str | None:
        """Why this function now always runs eagerly (None while it is compiled)."""
        return self._eager_reason

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._eager_reason is not None or hook.local.trace is not None:
            return self._fn(*args, **kwargs)  # eager, or inside an outer trace (inlined)
        leaves: list[Tensor] = []
        try:
            key = self._key(args, kwargs, leaves)
        except _Unsupported as e:
            self._go_eager(str(e))
            return self._fn(*args, **kwargs)
        program = self._cache.get(key)
        if program is _EAGER:
            return self._fn(*args, **kwargs)
        if program is not None:
            self._hits += 1
            if len(self._cache) > 1:
                with self._lock:
                    self._cache.move_to_end(key)
            if not program.verified:
                if isinstance(program, step.StepProgram):
                    return self._second_step_trace(program, key, leaves, args, kwargs)
                return self._first_replay(program, key, leaves, args, kwargs)
            return program.run(leaves, args, kwargs)
        self._misses += 1
        return self._trace(key, leaves, args, kwargs)

    # ------------------------------------------------------------------ internals
    def _first_replay(
        self,
        program: Program | step.StepProgram,
        key: Key,
        leaves: list[Tensor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """The first replay of a trace is checked against an eager run (no gradients) on the
        same arguments: a value the trace took for a constant but that depends on the
        inputs (an array computed outside the op table) shows up here, and that signature
        then runs eagerly. `fn` is free of side effects, or it would not have compiled."""
        from ..autograd.modes import no_grad
        from ..random import generator

        rng = generator() if program.draws else None
        start = end = None if rng is None else rng.bit_generator.state
        result = program.run(leaves, args, kwargs)
        if rng is not None and start is not None:  # the eager run draws the same masks
            end, rng.bit_generator.state = rng.bit_generator.state, start  # from the same state
        with no_grad():
            expected = self._fn(*args, **kwargs)
        if _same_values(result, expected) and (rng is None or rng.bit_generator.state == end):
            program.verified = True
            return result
        if rng is not None and start is not None:
            rng.bit_generator.state = start
        self._hits -= 1
        self._go_eager(
            "its replay differs from eager on new inputs (a value it computes "
            "outside tapegrad's ops, from raw arrays, was taken for a constant)",
            key,
        )
        return self._fn(*args, **kwargs)

    def _second_step_trace(
        self,
        program: step.StepProgram,
        key: Key,
        leaves: list[Tensor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """A step's first replay traces it again instead (eager, so it steps once, as eager
        does): the two traces, on different inputs, must have taken the same constants, or
        the step read values outside the op table (sort's indices) and runs eagerly."""
        result = self._trace(key, leaves, args, kwargs)
        again = self._cache.get(key)
        if isinstance(again, step.StepProgram):
            if again.constants == program.constants:
                again.verified = True
            else:
                self._go_eager(
                    "two traces on different inputs took different constants (values it "
                    "computes outside tapegrad's ops, from raw arrays, such as sort's or "
                    "topk's indices)",
                    key,
                )
        return result

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any], leaves: list[Tensor]) -> Key:
        key = [_key_of(a, leaves) for a in args]
        if kwargs:
            key.append(tuple((k, _key_of(v, leaves)) for k, v in kwargs.items()))
        key.append(
            (
                state.active,
                state.training,
                state.inference,
                state.anomaly,
                dtypes.get_default_dtype(),
            )
        )
        if self._found is not None:  # the modules' modes, the found tensors' tapes
            key.append(tuple(m.training for m in self._found[0]))
            key.append(tuple(t._tapes for t in self._found[1]))
        if len(leaves) > 1 and len({id(t) for t in leaves}) != len(leaves):
            first: dict[int, int] = {}
            key.append(tuple(first.setdefault(id(t), i) for i, t in enumerate(leaves)))
        return tuple(key)

    def _go_eager(self, reason: str, key: Key | None = None) -> None:
        """Run eagerly from now on (key None), or for this signature only (key given)."""
        name = getattr(self._fn, "__qualname__", None) or type(self._fn).__name__
        if self._fullgraph:
            raise RuntimeError(
                f"tg.compile(fullgraph=True): {name} can't be replayed: {reason}. "
                "Pass fullgraph=False to run it eagerly instead."
            )
        with self._lock:
            if key is None:
                self._eager_reason = reason
                self._cache.clear()
            else:
                self._store(key, _EAGER)
        if reason in self._warned:
            return
        self._warned.add(reason)
        scope = "from now on" if key is None else "for these argument types and modes"
        warnings.warn(
            f"tg.compile: {name} runs eagerly {scope}: {reason}", CompileWarning, stacklevel=4
        )

    def _store(self, key: Key, entry: _Entry) -> None:
        self._cache[key] = entry
        while len(self._cache) > self._maxsize:
            self._cache.popitem(last=False)

    def _trace(
        self, key: Key, leaves: list[Tensor], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if self._found is None:
            self._found = discover(self._fn, list(args) + list(kwargs.values()))
            key = self._key(args, kwargs, [])  # now with the modules' training flags
        modules, tensors = self._found
        trace = Trace()
        for pos, t in enumerate(leaves):
            trace.add_arg(t, pos)
        for t in tensors:
            trace.mark(t)
        watched = {id(t): t for t in leaves}
        watched.update((id(t), t) for t in tensors)
        before = _snapshot(watched.values())
        trace.watched = list(watched.values())
        trace.last_print = step.fingerprint(trace)
        rng_before = _rng_state()
        hook.local.trace = trace
        try:
            with value_read_guard(), step.step_guard():
                result = self._fn(*args, **kwargs)
        finally:
            hook.local.trace = None
            trace.unmark_all()
        if trace.value_read is not None:  # control flow may hang on it: never replayable
            self._go_eager(trace.value_read)
            return result
        is_step = trace.backward is not None or bool(trace.calls)
        if not is_step:
            step.check_untouched(trace)
        reason = trace.problem or (step.step_problem(trace) if is_step else None)
        if reason is None and any(
            i.node is not None and (i.node.hooks or i.node.retained) for i in trace.instrs
        ):
            reason = HOOKS_REASON
        if reason is None:
            reason = _side_effects(before, trace, rng_before, *step.explained(trace))
        if reason is None:
            reason = _unreplayable_outputs(trace, result)
        if reason is not None:  # another signature (eval mode, no dropout) may replay
            self._go_eager(reason, key)
            return result
        from ..ops.registry import _NAMESPACES

        program: Program | step.StepProgram
        if is_step:
            program = step.StepProgram(trace, result, _NAMESPACES[np])
        else:
            program = Program(self._fn, trace, result, _NAMESPACES[np])
            if trace.effects:  # an eager rerun to compare with would count the batch twice
                program.verified = True
        with self._lock:
            self._store(key, program)
        return result


def _same_values(a: Any, b: Any) -> bool:
    from .replay import split

    left: list[Tensor] = []
    right: list[Tensor] = []
    if type(split(a, left)) is not type(split(b, right)) or len(left) != len(right):
        return False
    for x, y in zip(left, right, strict=True):
        u, v = x._data, y._data
        if u.shape != v.shape or u.dtype != v.dtype:
            return False
        if not np.array_equal(u, v, equal_nan=u.dtype.kind in "fc"):
            return False
    return True


def _snapshot(tensors: Iterable[Tensor]) -> Snapshot:
    """Version and gradient of each tensor, to see whether `fn` changed them."""
    out: Snapshot = []
    for t in tensors:
        g = t._grad
        out.append((t, t._version, g, None if g is None else g._data.copy()))
    return out


def _rng_state() -> RngState:
    from .. import random

    rng = getattr(random._local, "rng", None)
    legacy = np.random.get_state(legacy=False)["state"]  # NumPy's global stream (MT19937)
    state = None if rng is None else rng.bit_generator.state
    return (state, legacy["key"].sum(), legacy["pos"], random.object_draws())


_IN_PLACE = (
    "it changes a tensor in place other than through an optimizer's step() or a "
    "BatchNorm layer (an in-place op, a write into .data), which a replay would not "
    "repeat"
)
_GRADIENTS = (
    "it writes gradients other than through backward() on a result it computed and zero_grad()"
)


def _side_effects(
    before: Snapshot, trace: Trace, rng_before: RngState, stepped: set[int], graded: set[int]
) -> str | None:
    """Why `fn` is not free of side effects, or None. `stepped`, `graded`: ids of tensors
    whose version (an optimizer step) or `.grad` (zero_grad, backward) the step may change."""
    for t, version, g, g_data in before:
        if t._version != version and id(t) not in stepped:
            return _IN_PLACE
        if id(t) not in graded and (
            t._grad is not g or (g is not None and not np.array_equal(g._data, g_data))
        ):
            return _GRADIENTS
    for kind, value, first in zip(trace.kinds, trace.values, trace.versions, strict=True):
        if kind != CONST and value._version != first and id(value) not in stepped:
            return _IN_PLACE
    for t, g, g_data in trace.external_grads:
        if id(t) not in graded and (
            t._grad is not g or (g is not None and not np.array_equal(g._data, g_data))
        ):
            return _GRADIENTS
    now = _rng_state()
    if now[1:] != rng_before[1:] or not random_draws.explained_draws(trace, rng_before[0], now[0]):
        return (
            "it draws random numbers other than dropout's masks (tg.randn, tg.rand, a "
            "tg.Generator, ...)"
        )
    return None


def _unreplayable_outputs(trace: Trace, result: Any) -> str | None:
    from .replay import split

    tensors: list[Tensor] = []
    split(result, tensors)
    for t in tensors:
        if id(t) not in trace._slot_of:
            return (
                "it returns a tensor made outside tapegrad's op table (from raw arrays), "
                "which a replay could not recompute"
            )
    return None


def compile(  # noqa: A001 - tg.compile, as torch.compile
    fn: Callable[..., Any] | None = None, *, maxsize: int = 64, fullgraph: bool = False
) -> Any:
    """Compile `fn` (a function or Module): trace it at its first call for each signature,
    then replay later calls as straight-line array code, without per-op dispatch.

    The signature is every tensor argument's shape, dtype, device and requires-grad tapes,
    the other arguments' values, the recording and training modes, the default dtype, the
    training flags of the modules `fn` uses and the tapes of the tensors it reads.

    `fn` may be a forward: the compiled call is differentiable, its outputs share one graph
    node whose backward replays the traced rules (the same floating-point operations eager
    runs; a backward that must itself be recorded, create_graph, runs `fn` eagerly again).
    Or a whole training step, `zero_grad()`, forward, `loss.backward()`, `opt.step()`: the
    replay writes the same gradients, parameters, optimizer state and BatchNorm statistics
    as eager (it returns the loss without a graph). Python side effects of `fn` (counters,
    lists, an LR scheduler's step) happen when it traces only, as in every tracing compiler.

    A value read (`.item()`, `bool(t)`, `.numpy()`, `.tolist()`) makes `fn` run eagerly
    from then on; random numbers (dropout in training), in-place changes outside the
    optimizer and BatchNorm, and other unreplayable steps make that signature run eagerly;
    each reason is told once by a `CompileWarning` (a value read with its file and line).
    See docs/guides/compile.md.

    Args:
        fn: the function; omit it to use `@tg.compile(maxsize=...)` as a decorator.
        maxsize: how many signatures stay compiled (least recently used dropped first).
        fullgraph: raise a RuntimeError instead of falling back to eager.

    Returns:
        a `CompiledFunction` (call it like `fn`; `.cache_info()` -> hits, misses, maxsize, size).

    >>> net = tg.nn.Linear(3, 2)
    >>> fast = tg.compile(net)
    >>> y = fast(tg.ones(4, 3))
    """
    if fn is None:
        return lambda f: CompiledFunction(f, maxsize, fullgraph)
    return CompiledFunction(fn, maxsize, fullgraph)
