"""The op table and its dispatcher: the only place in tapegrad that records a graph.

An op is a forward written on backend arrays plus one derivative rule beside it:

    @defop(saves="out")
    def exp(xp, x):
        return xp.exp(x)

    @exp.vjp
    def _(xp, g, out):
        return (g * out,)

Positional arguments of an op are its inputs (tensors or Python scalars); keyword
arguments are parameters (axis, shape, ...). `saves` names the inputs (or "out") that the
rule needs; the rule receives them after `g`, then the parameters as keywords, and returns
one gradient per input (None where there is none). A rule that declares a `needs` keyword
gets a tuple of booleans saying which inputs want a gradient, so it can skip the others.

Rules are written against `xp`: the engine passes the array namespace for a first-order
backward and the tensor namespace (`ops.xp.T`) when the backward itself must be recorded.
Gradients that come back broadcast are summed back to the input's shape by the engine.
"""
from __future__ import annotations

import contextlib
import inspect

import numpy as np

from .. import backend, dtypes
from ..engine.node import ACCUMULATE, OUT
from ..engine.recorder import input_edges, record_node
from ..engine.state import state
from ..tensor import Tensor, _wrap
from .xp import array_ns

OPS: dict[str, Op] = {}  # name -> op: the table tests are generated from
_FLOAT_KINDS = "fc"


class Op:
    """One entry of the op table. Call it with tensors to run (and maybe record) it."""

    def __init__(self, forward, name, saves, differentiable, backward_name, view=False):
        self.forward = forward
        self.view = view  # output shares storage with input 0, so it shares its version counter
        self.name = name
        self.backward_name = backward_name or _camel(name) + "Backward"
        self.rule = None
        self.wants_needs = False
        self.differentiable = differentiable
        self.samples = None  # sample-input generator, for the generated tests
        self.torch_ref = None  # the same computation in PyTorch, for differential tests
        params = list(inspect.signature(forward).parameters)[1:]  # drop xp
        self.save_idx = tuple(-1 if s == "out" else params.index(s) for s in saves)
        self.saves_out = -1 in self.save_idx

    def vjp(self, rule):
        """Register the derivative rule (decorator)."""
        self.rule = rule
        self.wants_needs = "needs" in inspect.signature(rule).parameters
        return rule

    def sample(self, fn):
        """Register a generator of sample inputs `fn(rng) -> [(args, params), ...]` (decorator)."""
        self.samples = fn
        return fn

    def reference(self, fn):
        """Register `fn(torch, *args, **params)` computing this op in PyTorch (decorator);
        the generated tests compare values, gradients and second-order gradients with it."""
        self.torch_ref = fn
        return fn

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    def __call__(self, *args, **params):
        # hot path: keep it a handful of attribute reads when nothing records
        mask = 0
        arrays = []
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
                    xp = _MODULES.get(type(data)) or backend.array_module(data)
                append(data)
            elif type(a) in _PY_NUMBERS:
                append(a)
            else:
                append(_scalar(a))
        if xp is None:
            raise TypeError(f"{self.name}: expected at least one Tensor argument")
        try:  # free unless it raises (zero-cost exceptions)
            out = self.forward(xp, *arrays, **params)
        except _BACKEND_ERRORS as e:
            raise _op_error(self.name, e, arrays) from None
        if type(out) is not np.ndarray and xp is np:
            out = np.asarray(out)
        if out.dtype is _F64:  # one identity test on the float32 path
            out = _unasked_float64(out, arrays, params)
        if mask:
            mask &= state.active
            if mask and self.differentiable and out.dtype.kind in _FLOAT_KINDS:
                result = _record(self, args, params, out, mask, xp, cls)
                if self.view:
                    result._version = args[0]._version
                return result
        result = _wrap(out, 0, cls)
        if self.view:
            result._version = args[0]._version
        return result


_BACKEND_ERRORS = (ValueError, IndexError, ArithmeticError, np.linalg.LinAlgError)


def _op_error(name: str, e: Exception, arrays) -> Exception:
    """A NumPy error raised inside op `name`, with the op and its inputs' shapes and dtypes
    named (tapegrad's own errors already name the op and are passed on as they are)."""
    text = str(e)
    if text.startswith(name) or f"{name}:" in text or f"{name}()" in text:
        return e
    shapes = ", ".join(f"{getattr(a, 'shape', ())} {getattr(a, 'dtype', type(a).__name__)}"
                       for a in arrays)
    text = f"{name}: {text} (inputs: {shapes})"
    if isinstance(e, (ArithmeticError, np.linalg.LinAlgError)):
        return RuntimeError(text)  # ZeroDivisionError, OverflowError, LinAlgError: not contract
    try:
        return type(e)(text)
    except Exception:  # noqa: BLE001  an exception type that takes other arguments
        return (IndexError if isinstance(e, IndexError) else ValueError)(text)


def result_type(cls: type, other: type, what: str) -> type:
    """The most derived of two tensor classes: a facade's array type wins over `Tensor`."""
    if issubclass(other, cls):
        return other
    if issubclass(cls, other):
        return cls
    raise TypeError(
        f"{what}: can't combine a {cls.__module__}.{cls.__qualname__} with a "
        f"{other.__module__}.{other.__qualname__} in one op (arrays of two different "
        "frameworks); convert one of them first, e.g. with tg.tensor(x) or the facade's array()"
    )


_MODULES = {np.ndarray: np}
_PY_NUMBERS = frozenset((float, int, bool))


_F64 = np.dtype(np.float64)


def _unasked_float64(out, arrays, params):
    """Undo NumPy's promotion to float64 that no input asked for, as PyTorch does: int64
    with float32 gives float32, an int tensor with a Python float or int / int gives the
    default dtype. A float64 input or a `dtype=` parameter keeps float64."""
    for a in arrays:  # the float64 graph (gradcheck): leave after one look
        if getattr(a, "dtype", None) is _F64:
            return out
    if "dtype" in params:
        return out
    target = None
    for a in arrays:
        dt = getattr(a, "dtype", None)
        if dt is not None and dt.kind == "f":
            if dt == _F64:
                return out
            if target is None or dt.itemsize > target.itemsize:
                target = dt
    if target is None:
        target = dtypes.get_default_dtype()
    return out if target == _F64 else out.astype(target)


def _scalar(a):
    """NumPy scalars and 0-d arrays act like Python numbers (weak: they never promote a
    float32 tensor to float64)."""
    if isinstance(a, (np.generic, np.ndarray)) and np.ndim(a) == 0:
        return a.item()
    return a


def _record(op: Op, args, params, out, mask: int, xp, cls=Tensor) -> Tensor:
    result = _wrap(out, mask, cls)
    if op.save_idx:
        saved, checks = _save(op.save_idx, args, result)
    else:
        saved = checks = ()
    node = record_node(op, params, saved, checks, input_edges(args, mask, Tensor), mask,
                       _NAMESPACES[xp])
    if op.saves_out:
        node.out_data = out
        node.out_version = result._version
    result.grad_fn = node
    return result


def _save(save_idx, args, result):
    """What a node keeps for its rule, and the version of each kept tensor."""
    saved = []
    checks = []
    for i in save_idx:
        if i == -1:
            saved.append(OUT)
            checks.append((result._version, 0, -1))
        else:
            a = args[i]
            saved.append(a)
            if isinstance(a, Tensor):
                checks.append((a._version, a._version[0], i))
    return tuple(saved), tuple(checks)


class _Namespaces(dict):
    def __missing__(self, module):
        ns = self[module] = array_ns(module)
        return ns


_NAMESPACES = _Namespaces()


def defop(saves=(), differentiable=True, name=None, backward_name=None, view=False):
    """Register the decorated forward as an op (see the module docstring).

    The op's name is the function's name without leading underscores (`_exp` -> "exp"),
    or `name`. `view=True`: the output is a view of input 0 and shares its version counter.
    """
    if isinstance(saves, str):
        saves = (saves,)

    def register(forward):
        op_name = name or forward.__name__.lstrip("_")
        if op_name in OPS:
            raise RuntimeError(f"op {op_name!r} is registered twice")
        op = Op(forward, op_name, saves, differentiable, backward_name, view)
        OPS[op_name] = op
        return op

    return register


def nondifferentiable(name=None):
    """Register an op whose output never joins a graph (comparisons, argmax, ...)."""
    return defop(differentiable=False, name=name)


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
    if node is None:
        if t._tapes & state.active:
            raise _leaf_inplace_error(t)
        return
    while getattr(node.op, "view", False):  # walk back through view ops to a leaf, if any
        edge = node.next[0]
        if edge is None:
            return
        node = edge[0]
        if node.op is ACCUMULATE:
            leaf = node.saved[0]()
            if leaf is not None and leaf._tapes & state.active:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation. Wrap the update in `with tg.no_grad():`, or write into a copy "
                    "(t.clone())."
                )
            return


def apply_inplace(op: Op, t: Tensor, *args, **params) -> Tensor:
    """Run `op(t, *args)` and write the result into `t`'s storage.

    Recorded like any op when it records: the node's input is the tensor as it was (a shadow
    sharing its storage and version counter, or a copy when the rule needs the old value),
    and `t` becomes that node's output. The version counter is bumped either way.
    """
    check_inplace_allowed(t)
    mask = t._tapes
    for a in args:
        if isinstance(a, Tensor):
            mask |= a._tapes
    recording = bool(mask & state.active) and op.differentiable
    if not recording:
        out = op.forward(_MODULES.get(type(t._data)) or backend.array_module(t._data),
                         t._data, *[a._data if isinstance(a, Tensor) else _scalar(a) for a in args],
                         **params)
        _write_into(t, out, op.name)
        return t
    keeps_old_value = 0 in op.save_idx  # the rule reads t's old value: give it a copy
    old = _wrap(t._data.copy() if keeps_old_value else t._data, t._tapes)
    old.grad_fn, old._out_nr = t.grad_fn, t._out_nr
    if not keeps_old_value:
        old._version = t._version
    result = op(old, *args, **params)
    _write_into(t, result._data, op.name)
    node = result.grad_fn
    t.grad_fn, t._out_nr, t._tapes = node, 0, result._tapes
    if node is not None and op.saves_out:  # the saved output now lives in t
        node.out_data = t._data
        node.out_version = t._version
        node.checks = tuple(
            (t._version, t._version[0], -1) if c[2] == -1 else c for c in node.checks
        )
    return t


def _write_into(t: Tensor, out, what: str) -> None:
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
    t._version[0] += 1


def to_device_op(t: Tensor, device: str) -> Tensor:
    return _to_device(t, device=device, source=t.device)


@defop(name="to_device", backward_name="ToCopyBackward")
def _to_device(xp, x, *, device, source):
    return backend.to_device(x, device)


@_to_device.vjp
def _(xp, g, device, source):
    return (xp.to_device(g, device=source, source=device),)


@_to_device.sample
def _(rng):
    return [((rng.standard_normal((2, 3)),), {"device": "cpu", "source": "cpu"})]
