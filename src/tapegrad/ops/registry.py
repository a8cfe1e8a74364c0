"""The op table and its dispatcher: the only place in tapegrad that records a graph.

Every op is registered one way, with `@defop`, and its derivative rule sits right below it:

    @defop(saves="out")
    def _exp(xp, x):
        return xp.exp(x)

    @_exp.vjp
    def _(xp, g, out):
        return (g * out,)

    _exp.sample(lambda rng: [((rng.standard_normal((3, 4)),), {})])
    _exp.reference(lambda torch, x: torch.exp(x))

`defop` returns the `Op` (the table entry, callable on tensors); public functions call it.

Forward: `forward(xp, *inputs, **params)` runs on backend arrays (`xp` is NumPy or CuPy).
Positional arguments of an op are its inputs (tensors or Python scalars), keyword arguments
its parameters (axis, shape, ...). The op's name is the function's name without leading
underscores (`_exp` -> "exp"), or `name=`; derivative rules call other ops by that name.

Reverse mode, `@op.vjp`: `rule(xp, g, *saved, **params) -> one gradient per input` (None
where an input gets none). `saves` names the inputs the rule needs (or "out" for the result,
"*" for every input); they come after `g`, in the order of `saves`. A rule that declares a
`needs` keyword gets a tuple of booleans saying which inputs want a gradient. Gradients that
come back broadcast are summed back to each input's shape by the engine.

Forward mode, `@op.jvp`: `jvp(xp, *tangents, *saved, **params) -> the tangent of out`, one
tangent per input (None for an input that carries none), then the saved values as for the
vjp. Stored on `op.jvp_rule` (None by default) for the forward-mode transform.

Tests, `@op.sample` and `@op.reference`: `sample(rng) -> [(inputs, params), ...]` feeds the
generated gradcheck tests; `reference(torch, *inputs, **params)` computes the op in PyTorch
for the differential tests.

Rules are written against `xp`: the engine passes the array namespace for a first-order
backward and the tensor namespace (`ops.xp.T`) when the backward itself must be recorded.
Options of `defop` say how a rule may call the op:

- `params=("axis", ...)`, `inputs=N|None`, `in_shape=True`: NumPy-style. Parameters may come
  positionally after the first `inputs` arguments (`xp.swapaxes(g, -1, -2)` on tensors, as on
  arrays); `inputs=None` is variadic and also takes one sequence (`xp.concatenate([a, b], 0)`);
  `in_shape=True` passes the first input's shape as the `in_shape` parameter, so the rule need
  not save the input. Such an op is a `NumpyStyleOp`; public functions, which pass every
  parameter by keyword, call it through `dispatch(op, *inputs, **params)` and skip the mapping.
- `ufunc=np.<ufunc>`: on floating NumPy arrays (and Python floats with them) the forward
  is exactly that ufunc, `np.sin(x)` / `np.multiply(x, y)`; the fast entries below call it
  directly, without the forward's frame (its `_fl`, its `quiet()`: 0.15-0.4 us of a 16-element
  op). The forward stays the definition: every other case (integers, CuPy, tracing) runs it.
- `array_twin=True`: `xp.<name>` also exists on the array namespaces (the forward itself), for
  rules that call an op the array modules lack (`xp.softmax_backward`, `xp.conv`, `xp.inv`).
- `op_class=`: a `NumpyStyleOp` subclass whose `arguments()` maps a call the framework's way
  (einsum's subscripts first, concatenate's per-input sizes).
- `view=True`: the output is a view of input 0 and shares its version counter;
  `differentiable=False`: the output never joins a graph (comparisons, argmax).

Calling an op: `dispatch(op, *inputs, **params)` is the dispatcher. A public function of one
or two inputs and no parameters (the Tensor operators, the elementwise functions) calls
`dispatch_unary(op, x)` / `dispatch_binary(op, a, b)` instead: the same result by a shorter
path for NumPy arrays and Python numbers, handing every other case to `dispatch`
(tests/ops/test_dispatch_fast_paths.py holds the two to the same outcomes).
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from .. import backend
from ..compile.hook import TRACING, traced_call
from ..compile.hook import local as _tracing
from ..engine.node import ACCUMULATE, OUT, OUT_ONLY, leaf_of
from ..engine.recorder import record_op
from ..engine.state import FORWARD, state
from ..engine.versions import bump_version, register_view
from ..tensor import Tensor, _new, _wrap
from .promotion import FLOAT64, drop_unasked_float64, result_type, weak_scalar
from .quiet import ERROR_STATE, IGNORE_ALL, call_quietly, contexts
from .xp import array_ns, register_array_twin

Forward = Callable[..., Any]
Rule = Callable[..., Any]
_F = TypeVar("_F", bound=Callable[..., Any])

OPS: dict[str, Op] = {}  # name -> op: the table tests are generated from
_FLOAT_KINDS = "fc"
_ALL_INPUTS = "*"


class Op:
    """One entry of the op table. Call it with tensors to run (and maybe record) it."""

    def __init__(
        self,
        forward: Forward,
        name: str,
        saves: Sequence[str],
        differentiable: bool,
        backward_name: str | None,
        view: bool = False,
    ) -> None:
        self.forward = forward
        self.view = view  # output shares storage with input 0, so it shares its version counter
        self.name = name
        self.backward_name = backward_name or _camel(name) + "Backward"
        self.rule: Rule | None = None
        self.jvp_rule: Rule | None = None  # forward-mode rule; None: derived from the vjp
        self.wants_needs = False
        self.differentiable = differentiable
        self.ufunc: Any = None  # defop(ufunc=): the forward on floating NumPy arrays
        self.samples: Callable[[np.random.Generator], list[Any]] | None = None
        self.torch_ref: Callable[..., Any] | None = None
        self.__doc__ = forward.__doc__
        params = _parameter_names(forward)[1:]  # drop xp
        # None: the rule gets every input, however many the call has (einsum)
        self.save_idx: tuple[int, ...] | None = (
            None
            if tuple(saves) == (_ALL_INPUTS,)
            else tuple(-1 if s == "out" else params.index(s) for s in saves)
        )
        self.saves_out = self.save_idx is not None and -1 in self.save_idx
        # per saved slot: the inputs whose gradient needs it (None: always kept)
        self.save_for: tuple[tuple[int, ...] | None, ...] | None = None
        self.save_plans: tuple[tuple[int | None, ...], ...] | None = None  # saves_only_for

    def saved_indices(self, n_inputs: int) -> Sequence[int]:
        """Which inputs (-1: the output) the rule gets, for a call with `n_inputs` inputs."""
        return range(n_inputs) if self.save_idx is None else self.save_idx

    def vjp(self, rule: _F) -> _F:
        """Register the reverse-mode rule `rule(xp, g, *saved, **params)` (decorator)."""
        self.rule = rule
        self.wants_needs = "needs" in _parameter_names(rule)
        return rule

    def saves_only_for(self, **slots: tuple[int, ...]) -> Op:
        """Keep a saved value only when one of the given inputs (by position) will get a
        gradient: `div.saves_only_for(out=(1,))` saves (and version-checks) the output only
        when the divisor is tracked, so `y = x / 2; y += 1` stays differentiable, as in
        PyTorch. The rule then receives None for a value it was not given."""
        if self.save_idx is None:
            raise TypeError(f"{self.name}: saves_only_for needs named saves, not saves='*'")
        params = _parameter_names(self.forward)[1:]
        if len(params) > 2:
            raise TypeError(f"{self.name}: saves_only_for is for ops of one or two inputs")
        wanted = {-1 if k == "out" else params.index(k): tuple(v) for k, v in slots.items()}
        self.save_for = tuple(wanted.get(i) for i in self.save_idx)
        # per pattern of edges (bit k: input k has one), what each slot keeps: the input's
        # index, -1 (the output) or None; `_record` looks it up instead of walking save_for
        plans = []
        for pattern in range(1 << len(params)):
            plans.append(
                tuple(
                    i if need is None or any(pattern >> k & 1 for k in need) else None
                    for i, need in zip(self.save_idx, self.save_for)
                )
            )
        self.save_plans = tuple(plans)
        return self

    def jvp(self, rule: _F) -> _F:
        """Register the forward-mode rule (decorator): `rule(xp, tangents, *saved, out=out,
        **params)` returns the output's tangent; `tangents` has one entry per input (None:
        no tangent), `saved` are the inputs named in `saves` (not "out": that comes as `out=`).
        """
        self.jvp_rule = rule
        return rule

    def sample(self, fn: _F) -> _F:
        """Register a generator of sample inputs `fn(rng) -> [(args, params), ...]` (decorator)."""
        self.samples = fn
        return fn

    def reference(self, fn: _F) -> _F:
        """Register `fn(torch, *args, **params)` computing this op in PyTorch (decorator);
        the generated tests compare values, gradients and second-order gradients with it."""
        self.torch_ref = fn
        return fn

    def arguments(
        self, args: tuple[Any, ...], params: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(inputs, parameters) of a call; a plain op takes them as given."""
        return args, params

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    def __call__(self, *args: Any, **params: Any) -> Tensor:
        # hot path: keep it a handful of attribute reads when nothing records
        mask = 0
        arrays: list[Any] = []
        append = arrays.append
        xp = None
        cls = Tensor
        for a in args:
            if isinstance(a, Tensor):
                mask |= a._tapes
                data = a._data
                if type(a) is not cls:
                    cls = result_type(cls, type(a), self.name)
                if xp is None:
                    xp = _MODULES.get(type(data)) or _array_module(data)
                append(data)
            elif type(a) in _PY_NUMBERS:
                append(a)
            else:
                append(weak_scalar(a))
        if xp is None:
            raise TypeError(f"{self.name}: expected at least one Tensor argument")
        try:  # free unless it raises (zero-cost exceptions)
            # with NumPy's warnings off (ops/quiet.py): inf - inf is NaN silently, as PyTorch
            if ERROR_STATE.get(None) is IGNORE_ALL:
                out = self.forward(xp, *arrays, **params)
            else:
                out = contexts.context.run(self.forward, xp, *arrays, **params)
        except _BACKEND_ERRORS as e:
            raise _op_error(self.name, e, arrays) from None
        if type(out) is not np.ndarray and xp is np:
            out = np.asarray(out)
        if out.dtype is FLOAT64:  # one identity test on the float32 path
            out = drop_unasked_float64(out, arrays, params)
        if mask:
            if mask & TRACING:  # tg.compile is tracing this call (compile/hook.py)
                if not mask & FORWARD & state.active:
                    return traced_call(self, args, params, out, mask, xp, cls)
                return _untraced_dual_call(self, args, params, out, mask, xp, cls)
            mask &= state.active
            if mask and self.differentiable and out.dtype.kind in _FLOAT_KINDS:
                if mask & FORWARD:  # a dual tensor (forward AD): forward_ad adds the tangent
                    result = _dual_output(self, args, params, out, mask, xp, cls)
                else:
                    result = _record(self, args, params, out, mask, xp, cls)
                if self.view:
                    mark_view(result, self, args, params)
                return result
        result = _wrap(out, 0, cls)
        if self.view:
            mark_view(result, self, args, params)  # an in-place write may record later
        return result


def _untraced_dual_call(
    op: Op,
    args: tuple[Any, ...],
    params: dict[str, Any],
    out: Any,
    mask: int,
    xp: Any,
    cls: type[Tensor],
) -> Tensor:
    """An op on a dual tensor of forward AD while tg.compile or vmap traces. A trace holds
    no tangents, so it can't be replayed (it fails); the op runs eagerly for its tangent
    (`vmap(jvp(f))`: sample 0's run), and its inputs and result still take slots, so the
    trace tells tensors captured from outside from the ones made inside."""
    mask &= state.active
    if op.differentiable and out.dtype.kind in _FLOAT_KINDS:
        result = _dual_output(op, args, params, out, mask, xp, cls)
    else:
        result = _wrap(out, 0, cls)
    if op.view:
        mark_view(result, op, args, params)
    trace = _tracing.trace
    if trace is not None:
        trace.fail("an op ran on a dual tensor of forward AD")
        for a in args:
            if isinstance(a, Tensor):
                trace.slot_of(a)
        trace.output_slot(result)
    return result


def note_values_read(what: str, *tensors: Any) -> None:
    """`what` (a Python-level function: sort's order, a mask's positions, an index's int,
    allclose) computed something from these tensors' values outside the op table. A trace
    that `vmap` replays on the whole batch (its `per_sample_values` set) would replay sample
    0's result for every sample, so it stops the replay; tg.compile checks its replays
    against eager instead, and is left as it is."""
    trace = _tracing.trace
    if trace is None or not getattr(trace, "per_sample_values", False):
        return
    for t in tensors:
        if isinstance(t, Tensor) and t._tapes & TRACING:
            trace.fail(f"{what} computes from a mapped tensor's values outside the op table")
            return


def mark_view(result: Tensor, op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> None:
    """A view op's result shares its input's version counter and remembers how it was taken
    (an in-place write into it rebases the input's graph: ops/view_writes.py)."""
    result._vc = args[0]._vc
    result._view_of = (args[0], op, params)
    register_view(result)  # a write through a sibling view takes its grad_fn anew


dispatch = Op.__call__
"""`dispatch(op, *inputs, **params)`: run `op` with its inputs positionally and every
parameter by keyword, as public functions do (a NumPy-style op's argument mapping is
skipped; pass `in_shape=` yourself when the op wants it)."""


_BACKEND_ERRORS = (ValueError, IndexError, ArithmeticError, np.linalg.LinAlgError)

# The two fast entries. The Tensor operators and the elementwise functions call them; they
# do what `dispatch` does for the common case (NumPy arrays, plain or one facade class,
# Python numbers, no tracing, no dual tensors, no view ops) with fewer steps, and hand
# everything else to `dispatch` before running anything. About a fifth of a small recorded
# op's time is the generic argument loop (bench/NOTES.md, stop 18).
_SLOW_TAPES = TRACING | FORWARD  # tg.compile tracing, forward AD: the generic path only


class _NoWeakFloat:
    """Stands for `float` below on NumPy 1.x, where a Python float is not weak (value-based
    casting: float32 * 1e300 is float64, which the forward's own path brings back)."""


# A Python float next to a floating array keeps the array's dtype (NEP 50, NumPy 2)
_WEAK_FLOAT: type = float if int(np.__version__.split(".")[0]) >= 2 else _NoWeakFloat


# A Python float handed to a ufunc costs NumPy 2 about 0.45 us to convert (the weak-scalar
# path) on every call: `x * 1.01` on 16 floats is 0.70 us against 0.27 us with the same value
# as a 0-d array of x's dtype. Under NEP 50 the float is cast to the array's dtype first, so
# the 0-d array gives the same bits, in the forward and in the rule that multiplies by the
# saved constant. Cast once per (dtype, value); only finite, nonzero values that the dtype
# can hold (0.0 and -0.0 are one key; an overflowing cast warns in NumPy's own call).
_WEAK_ARRAYS: dict[Any, dict[float, Any]] = {
    np.dtype(t): {} for t in (np.float16, np.float32, np.float64)
}
_WEAK_LIMITS = {dt: float(np.finfo(dt).max) for dt in _WEAK_ARRAYS}
_WEAK_ARRAYS_MAX = 256  # distinct values kept per dtype (a loop over fresh floats clears it)


def _weak_array(value: Any, dtype: Any) -> Any:
    """`value` as the read-only 0-d array of `dtype` that NumPy would cast it to, or the
    float itself where no array is kept for it (see _WEAK_ARRAYS)."""
    table = _WEAK_ARRAYS.get(dtype)
    if table is None:
        return value
    arr = table.get(value)
    if arr is None:
        if not (0.0 < abs(value) <= _WEAK_LIMITS[dtype]):  # 0.0, NaN, inf, overflow
            return value
        if len(table) >= _WEAK_ARRAYS_MAX:
            table.clear()
        arr = np.array(value, dtype)
        arr.flags.writeable = False
        table[value] = arr
    return arr


def _result_class(cls: type[Tensor]) -> type[Tensor]:
    """What `promotion.result_type` makes of one class: its array class (a Parameter's
    result is a plain Tensor, a facade array's is that array type)."""
    return cls if cls is Tensor else getattr(cls, "_array_class", Tensor)


def dispatch_unary(op: Op, x: Any) -> Tensor:
    """`dispatch(op, x)` for a one-input op called without parameters."""
    if not isinstance(x, Tensor) or x._tapes & _SLOW_TAPES or op.view:
        return dispatch(op, x)
    data = x._data
    if type(data) is not np.ndarray:
        return dispatch(op, x)
    ufunc = op.ufunc
    if ufunc is not None and data.dtype.kind == "f":
        # a floating result of the input's own dtype (no float64 to drop), and a ufunc op
        # is differentiable (defop checks): recorded whenever a tape records
        try:
            if ERROR_STATE.get(None) is IGNORE_ALL:
                out = ufunc(data)
            else:
                out = contexts.context.run(ufunc, data)
        except _BACKEND_ERRORS as e:
            raise _op_error(op.name, e, [data]) from None
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        mask = x._tapes & state.active
        cls = type(x)
        if cls is not Tensor:
            cls = _result_class(cls)
        if mask:  # np.sin(x) has x's shape and dtype
            return _record(op, (x,), _NO_PARAMS, out, mask, np, cls, True)
        return _wrap(out, 0, cls)
    try:
        if ERROR_STATE.get(None) is IGNORE_ALL:
            out = op.forward(np, data)
        else:
            out = contexts.context.run(op.forward, np, data)
    except _BACKEND_ERRORS as e:
        raise _op_error(op.name, e, [data]) from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype is FLOAT64:
        out = drop_unasked_float64(out, [data], _NO_PARAMS)
    mask = x._tapes & state.active
    cls = type(x)
    if cls is not Tensor:
        cls = _result_class(cls)
    if mask and op.differentiable and out.dtype.kind in _FLOAT_KINDS:
        return _record(op, (x,), _NO_PARAMS, out, mask, np, cls)
    return _wrap(out, 0, cls)


def dispatch_binary(op: Op, a: Any, b: Any) -> Tensor:
    """`dispatch(op, a, b)` for a two-input op called without parameters."""
    if isinstance(a, Tensor):
        cls = type(a)
        mask = a._tapes
        da = a._data
        if isinstance(b, Tensor):
            if type(b) is not cls:
                return dispatch(op, a, b)  # which class wins: promotion.result_type
            mask |= b._tapes
            db = b._data
            if type(db) is not np.ndarray:
                return dispatch(op, a, b)
        elif type(b) in _PY_NUMBERS:
            db = b
        else:
            return dispatch(op, a, b)
        if type(da) is not np.ndarray:
            return dispatch(op, a, b)
    elif isinstance(b, Tensor) and type(a) in _PY_NUMBERS:
        cls = type(b)
        mask = b._tapes
        da = a
        db = b._data
        if type(db) is not np.ndarray:
            return dispatch(op, a, b)
    else:
        return dispatch(op, a, b)
    if mask & _SLOW_TAPES or op.view:
        return dispatch(op, a, b)
    ufunc = op.ufunc
    if (
        ufunc is not None
        and (da.dtype.kind == "f" if type(da) is np.ndarray else type(da) is _WEAK_FLOAT)
        and (db.dtype.kind == "f" if type(db) is np.ndarray else type(db) is _WEAK_FLOAT)
    ):
        # floating in, floating out; float64 only where an input array is float64 (a
        # Python float is weak), so none to drop; recorded whenever a tape records
        weak = False
        if type(db) is _WEAK_FLOAT:
            weak = True
            db = b = _weak_array(db, da.dtype)
        elif type(da) is _WEAK_FLOAT:
            weak = True
            da = a = _weak_array(da, db.dtype)
        try:
            if ERROR_STATE.get(None) is IGNORE_ALL:
                out = ufunc(da, db)
            else:
                out = contexts.context.run(ufunc, da, db)
        except _BACKEND_ERRORS as e:
            raise _op_error(op.name, e, [da, db]) from None
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        mask &= state.active
        if cls is not Tensor:
            cls = _result_class(cls)
        if mask:  # with a Python float, the other's shape and dtype
            return _record(
                op,
                (a, b),
                _NO_PARAMS,
                out,
                mask,
                np,
                cls,
                weak,
            )
        return _wrap(out, 0, cls)
    try:
        if ERROR_STATE.get(None) is IGNORE_ALL:
            out = op.forward(np, da, db)
        else:
            out = contexts.context.run(op.forward, np, da, db)
    except _BACKEND_ERRORS as e:
        raise _op_error(op.name, e, [da, db]) from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype is FLOAT64:
        out = drop_unasked_float64(out, [da, db], _NO_PARAMS)
    mask &= state.active
    if cls is not Tensor:
        cls = _result_class(cls)
    if mask and op.differentiable and out.dtype.kind in _FLOAT_KINDS:
        return _record(op, (a, b), _NO_PARAMS, out, mask, np, cls)
    return _wrap(out, 0, cls)


def _op_error(name: str, e: Exception, arrays: list[Any]) -> Exception:
    """A NumPy error raised inside op `name`, with the op and its inputs' shapes and dtypes
    named (tapegrad's own errors already name the op and are passed on as they are)."""
    text = str(e)
    if text.startswith(name) or f"{name}:" in text or f"{name}()" in text:
        return e
    shapes = ", ".join(
        f"{getattr(a, 'shape', ())} {getattr(a, 'dtype', type(a).__name__)}" for a in arrays
    )
    text = f"{name}: {text} (inputs: {shapes})"
    if isinstance(e, (ArithmeticError, np.linalg.LinAlgError)):
        return RuntimeError(text)  # ZeroDivisionError, OverflowError, LinAlgError: not contract
    try:
        return type(e)(text)
    except Exception:  # noqa: BLE001  an exception type that takes other arguments
        return (IndexError if isinstance(e, IndexError) else ValueError)(text)


class NumpyStyleOp(Op):
    """An op that a rule can call the NumPy way (see the module docstring): parameters may
    come positionally after the inputs, a variadic op takes one sequence, and `in_shape`
    is filled in from the first input."""

    def __init__(
        self,
        forward: Forward,
        name: str,
        saves: Sequence[str],
        differentiable: bool,
        backward_name: str | None,
        view: bool = False,
        *,
        params: Sequence[str] = (),
        inputs: int | None = 1,
        in_shape: bool = False,
    ) -> None:
        super().__init__(forward, name, saves, differentiable, backward_name, view)
        self.n_inputs = inputs
        self.param_names = tuple(params)
        self.wants_in_shape = in_shape

    def arguments(
        self, args: tuple[Any, ...], params: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        n = self.n_inputs
        if n is None:
            if args and isinstance(args[0], (list, tuple)):
                params.update(zip(self.param_names, args[1:], strict=False))
                args = tuple(args[0])
        elif len(args) > n:
            if len(args) > n + len(self.param_names):
                raise TypeError(
                    f"{self.name}: takes {n} input(s) and the parameters {self.param_names}, "
                    f"got {len(args)} positional arguments"
                )
            params.update(zip(self.param_names, args[n:], strict=False))
            args = args[:n]
        for k, v in params.items():  # an index array saved as a tensor is a constant here
            if isinstance(v, Tensor):
                params[k] = v._data
        if self.wants_in_shape:
            params["in_shape"] = args[0].shape
        return args, params

    def __call__(self, *args: Any, **params: Any) -> Tensor:
        args, params = self.arguments(args, params)
        return Op.__call__(self, *args, **params)


def defop(
    saves: str | Sequence[str] = (),
    *,
    name: str | None = None,
    differentiable: bool = True,
    backward_name: str | None = None,
    view: bool = False,
    params: Sequence[str] | None = None,
    inputs: int | None = 1,
    in_shape: bool = False,
    array_twin: bool = False,
    ufunc: Any = None,
    op_class: type[NumpyStyleOp] | None = None,
) -> Callable[[Forward], Op]:
    """Register the decorated forward as an op and return it (see the module docstring).

    `backward_name` is the node's name in `grad_fn` (default: "<Name>Backward"). Any of
    `params`, `inputs`, `in_shape` or `op_class` makes a `NumpyStyleOp`.
    """
    saves_tuple = (saves,) if isinstance(saves, str) else tuple(saves)
    if ufunc is not None and not differentiable:
        raise TypeError("defop: ufunc= is for differentiable ops (the fast entries record them)")
    numpy_style = params is not None or inputs != 1 or in_shape or op_class is not None

    def register(forward: Forward) -> Op:
        op_name = name or forward.__name__.lstrip("_")
        if op_name in OPS:
            raise RuntimeError(f"op {op_name!r} is registered twice")
        op: Op
        if numpy_style:
            op = (op_class or NumpyStyleOp)(
                forward,
                op_name,
                saves_tuple,
                differentiable,
                backward_name,
                view,
                params=params or (),
                inputs=inputs,
                in_shape=in_shape,
            )
        else:
            op = Op(forward, op_name, saves_tuple, differentiable, backward_name, view)
        OPS[op_name] = op
        op.ufunc = ufunc
        if array_twin:
            register_array_twin(op_name, _twin(op))
        return op

    return register


def _twin(op: Op) -> Callable[..., Any]:
    """`twin(ns, *args, **params)`: the op's forward on arrays, called as a rule calls it."""

    def twin(ns: Any, *args: Any, **params: Any) -> Any:
        args, params = op.arguments(args, params)
        return op.forward(ns, *args, **params)

    twin.__name__ = op.name
    return twin


_MODULES: dict[type, Any] = {np.ndarray: np}
_array_module: Callable[[Any], Any] = backend.array_module  # typed at the boundary
_PY_NUMBERS = frozenset((float, int, bool))
_NO_PARAMS: dict[str, Any] = {}  # shared by every node of an op without parameters (read only)


def _record(
    op: Op,
    args: tuple[Any, ...],
    params: dict[str, Any],
    out: Any,
    mask: int,
    xp: Any,
    cls: type[Tensor] = Tensor,
    same: bool = False,
) -> Tensor:
    """Wrap `out` and record its node (`same`: see record_op)."""
    result = _new(cls)  # _wrap(out, mask, cls), inlined (once per recorded op)
    result._data = out
    result._tapes = mask
    result._out_nr = 0
    result._vc = [0]
    result._grad = None
    result._grad_req = "add"
    result._accum = None
    result._hooks = None
    result._post_hooks = None
    node = record_op(op, params or _NO_PARAMS, args, mask, _NAMESPACES[xp], Tensor, out, same)
    save_idx: Sequence[int] | None = op.save_idx
    if save_idx is None:  # the rule gets every input (op.saved_indices)
        save_idx = range(len(args))
    elif len(save_idx) == 1 and op.save_for is None:  # one value, always kept: most ops
        i = save_idx[0]
        if i == -1:
            node.saved = OUT_ONLY
            node.checks = ((result._vc, 0, -1),)
            node.out_data = out
            node.out_counter = result._vc
        else:
            a = args[i]
            node.saved = (a,)
            if isinstance(a, Tensor):
                node.checks = ((a._vc, a._vc[0], i),)
        result.grad_fn = node
        return result
    plans = op.save_plans
    if plans is not None:  # saves_only_for (ops of one or two inputs): the kept slots
        edges = node.next
        pattern = 1 if edges[0] is not None else 0
        if len(edges) == 2 and edges[1] is not None:
            pattern += 2
        saved: list[Any] = []
        checks: list[Any] = []
        for slot in plans[pattern]:
            if slot is None:
                saved.append(None)
            elif slot == -1:
                saved.append(OUT)
                checks.append((result._vc, 0, -1))
                node.out_data = out
                node.out_counter = result._vc
            else:
                a = args[slot]
                saved.append(a)
                if isinstance(a, Tensor):
                    checks.append((a._vc, a._vc[0], slot))
        node.saved = tuple(saved)
        if checks:
            node.checks = tuple(checks)
    elif save_idx:
        node.saved, node.checks = _save(save_idx, args, result, op.save_for, node.next)
        if op.saves_out and any(s is OUT for s in node.saved):
            node.out_data = out
            node.out_counter = result._vc
    result.grad_fn = node
    return result


def _dual_output(
    op: Op,
    args: tuple[Any, ...],
    params: dict[str, Any],
    out: Any,
    mask: int,
    xp: Any,
    cls: type[Tensor],
) -> Tensor:
    from ..autograd.forward_ad import dual_output

    result: Tensor = dual_output(op, args, params, out, mask, xp, cls)
    return result


def _save(
    save_idx: Sequence[int],
    args: tuple[Any, ...],
    result: Tensor,
    save_for: tuple[tuple[int, ...] | None, ...] | None = None,
    edges: tuple[Any, ...] = (),
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What a node keeps for its rule, and the version of each kept tensor: nothing (None)
    for a value only the gradient of an untracked input would need (`Op.saves_only_for`;
    `edges` are the node's edges per input)."""
    saved: list[Any] = []
    checks: list[Any] = []
    for j, i in enumerate(save_idx):
        if save_for is not None:
            needed_by = save_for[j]
            if needed_by is not None:
                for k in needed_by:
                    if edges[k] is not None:
                        break
                else:  # no input whose gradient needs it has an edge
                    saved.append(None)
                    continue
        if i == -1:
            saved.append(OUT)
            checks.append((result._vc, 0, -1))
        else:
            a = args[i]
            saved.append(a)
            if isinstance(a, Tensor):
                checks.append((a._vc, a._vc[0], i))
    return tuple(saved), tuple(checks)


class _Namespaces(dict[Any, Any]):
    def __missing__(self, module: Any) -> Any:
        ns = self[module] = array_ns(module)
        return ns


_NAMESPACES = _Namespaces()


def _parameter_names(fn: Callable[..., Any]) -> list[str]:
    """`list(inspect.signature(fn).parameters)`, read off the code object for a plain
    function: `inspect.signature` for the ~300 forwards and rules was about a sixth of
    `import tapegrad` (bench W7)."""
    if not isinstance(fn, types.FunctionType):  # a partial, a callable object
        return list(inspect.signature(fn).parameters)
    code = fn.__code__
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    names = list(code.co_varnames[:n_pos])
    star = n_pos + n_kw  # *args and **kwargs names follow the keyword-only ones
    if code.co_flags & inspect.CO_VARARGS:
        names.append(code.co_varnames[star])
        star += 1
    names += code.co_varnames[n_pos : n_pos + n_kw]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        names.append(code.co_varnames[star])
    return names


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.strip("_").split("_"))


# ---------------------------------------------------------------- in-place ops
def _leaf_inplace_error(t: Tensor) -> RuntimeError:
    return RuntimeError(
        "a leaf Variable that requires grad is being used in an in-place operation. "
        "Wrap the update in `with tg.no_grad():`, or work on a copy (t.clone())."
    )


def check_inplace_allowed(t: Tensor) -> None:
    """An in-place change to a tracked leaf, or to a view of one, is refused while its tape
    records (it would change the leaf behind autograd's back)."""
    node = t.grad_fn
    active = state.active & ~FORWARD  # a dual tensor may change in place (forward_ad follows)
    if node is None:
        if t._tapes & active:
            raise _leaf_inplace_error(t)
        return
    while getattr(node.op, "view", False):  # walk back through view ops to a leaf, if any
        child = node.next[0]
        if child is None:
            return
        node = child
        if node.op is ACCUMULATE:
            leaf = leaf_of(node)
            if leaf is not None and leaf._tapes & active:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation. Wrap the update in `with tg.no_grad():`, or write into a copy "
                    "(t.clone())."
                )
            return


def apply_inplace(op: Op, t: Tensor, *args: Any, **params: Any) -> Tensor:
    """Run `op(t, *args)` and write the result into `t`'s storage.

    Recorded like any op when it records: the node's input is the tensor as it was (a shadow
    sharing its storage and version counter, or a copy when the rule needs the old value),
    and `t` becomes that node's output. The version counter is bumped either way.
    """
    check_inplace_allowed(t)
    if not getattr(getattr(t._data, "flags", None), "writeable", True):  # CuPy has no such flag
        what = "t[key] = value" if op.name == "setitem" else f"{op.name}_"
        raise RuntimeError(
            f"{what}: this tensor's memory is read-only (an expand() or broadcast view, "
            "where several elements share one location, or an array NumPy marked read-only); "
            "write into a copy (t.clone()) instead"
        )
    mask = t._tapes
    for a in args:
        if isinstance(a, Tensor):
            mask |= a._tapes
    recording = bool(mask & state.active) and op.differentiable
    if not recording:
        arrays = [a._data if isinstance(a, Tensor) else weak_scalar(a) for a in args]
        xp = _MODULES.get(type(t._data)) or _array_module(t._data)
        try:
            out = call_quietly(op.forward, xp, t._data, *arrays, **params)
        except _BACKEND_ERRORS as e:  # named, as the dispatcher names them
            raise _op_error(op.name, e, [t._data, *arrays]) from None
        _write_into(t, out, op.name)
        return t
    if getattr(t, "_view_of", None) is not None:
        from .view_writes import check_bases

        check_bases(t, state.active & ~FORWARD)
    # the rule reads t's old value: give it a copy
    keeps_old_value = op.save_idx is None or 0 in op.save_idx
    old = _wrap(t._data.copy() if keeps_old_value else t._data, t._tapes)
    old.grad_fn, old._out_nr = t.grad_fn, t._out_nr
    if not keeps_old_value:
        old._vc = t._vc
    if mask & FORWARD & state.active:
        from ..autograd.forward_ad import before_inplace

        before_inplace(t, old)
    result = op(old, *args, **params)
    _write_into(t, result._data, op.name)
    node = result.grad_fn
    t.grad_fn, t._out_nr, t._tapes = node, 0, result._tapes
    move_retained_grad(t, old.grad_fn, old._out_nr)
    if result._tapes & FORWARD:
        from ..autograd.forward_ad import after_inplace

        after_inplace(result, t)
    if node is not None and op.saves_out:  # the saved output now lives in t
        node.out_data = t._data
        node.out_counter = t._vc
        node.checks = tuple((t._vc, t._vc[0], -1) if c[2] == -1 else c for c in node.checks)
    if node is not None:
        if getattr(t, "_view_of", None) is not None:
            from .view_writes import rebase_bases  # the base's graph must see the change too

            rebase_bases(t)
        if len(t._vc) > 1:  # other views of the storage: their grad_fn is out of date
            from .view_writes import regenerate_views

            regenerate_views(t)
    return t


def move_retained_grad(t: Tensor, old_node: Any, old_nr: int) -> None:
    """`t` got a new `grad_fn` (an in-place op, a view's write, a regenerated view): a
    `retain_grad()` on it follows it, so `t.grad` is the gradient of its new value, as in
    PyTorch."""
    retained = None if old_node is None else old_node.retained
    if not retained or old_nr not in retained or retained[old_nr]() is not t:
        return
    ref = retained.pop(old_nr)
    node = t.grad_fn
    if node is not None:
        if node.retained is None:
            node.retained = {}
        node.retained[t._out_nr] = ref


def _write_into(t: Tensor, out: Any, what: str) -> None:
    data = t._data
    if out.shape != data.shape:
        with contextlib.suppress(ValueError):  # not broadcastable: reported just below
            out = np.broadcast_to(out, data.shape) if type(data) is np.ndarray else out
        if out.shape != data.shape:
            raise RuntimeError(
                f"{what}_: the result has shape {out.shape}, which cannot be written into a "
                f"tensor of shape {data.shape} in place; use the out-of-place {what}()"
            )
    if out.dtype != data.dtype and not np.can_cast(out.dtype, data.dtype, casting="same_kind"):
        raise RuntimeError(
            f"{what}_: result type {out.dtype} can't be cast to the tensor's dtype {data.dtype} "
            "in place; use the out-of-place op or convert the tensor first"
        )
    if out is not data:
        data[...] = out
    bump_version(t)
