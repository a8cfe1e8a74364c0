"""Custom differentiable functions on the one engine: `tg.autograd.Function`.

Two styles, one machinery:

* PyTorch: static `forward(ctx, *args)` / `backward(ctx, *grads)`, called as `F.apply(...)`.
* MXNet: instance methods `forward(self, *inputs)` / `backward(self, *grads)`, called as
  `f = F(); y = f(x)`; the instance is its own `ctx`.

`forward` runs with recording off and sees its tensor inputs detached. When some input is
tracked by an active tape, the outputs get one graph `Node` whose `op` is a `_FunctionOp`
adapter: the engine calls its `rule` like any op's derivative rule, and the rule calls the
user's `backward` on tensors, so that backward is itself recorded (differentiable) under
`create_graph=True`. That backward side (running the user's backward, checking what it
returns, `once_differentiable`) lives in function_backward.py; its names are importable from
here too. Forward mode goes through the user's `jvp` (function_forward.py).

    >>> class MultiplyAdd(tg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, w, x, b):
    ...         ctx.save_for_backward(w, x)
    ...         return w * x + b
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         w, x = ctx.saved_tensors
    ...         return grad_output * x, grad_output * w, grad_output
    >>> w, x, b = (tg.tensor(v, requires_grad=True) for v in (2.0, 3.0, 1.0))
    >>> y = MultiplyAdd.apply(w, x, b)
    >>> y.backward(); w.grad, x.grad, b.grad
    (tensor(3.), tensor(2.), tensor(1.))
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .. import backend, dtypes
from ..engine.recorder import record_node
from ..engine.state import FORWARD, state
from ..ops.xp import array_ns
from ..tensor import Tensor, _wrap
from .function_backward import (  # noqa: F401  (re-exported: this module's names before the split)
    _call_backward,
    _check_grads,
    _delay_error,
    _DelayedErrorOp,
    _fn_name,
    _run_backward,
    once_differentiable,
)
from .function_forward import attach_output_tangents, input_tangents
from .modes import no_grad

if TYPE_CHECKING:
    from ..engine.node import Node

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_OUTPUT = "output"
_INPUT = "input"
_OTHER = "other"


class FunctionCtx:
    """What `forward` can leave for `backward`: saved tensors, flags, any attribute.

    `save_for_backward(*tensors)` / `saved_tensors` (checked against in-place changes),
    `needs_input_grad` (one bool per forward argument), `mark_dirty(*tensors)`,
    `mark_non_differentiable(*tensors)`, `set_materialize_grads(bool)`.
    """

    # underscore-prefixed slots of the machinery live in the instance dict (ctx takes any
    # attribute), all prefixed `_tg_` so they don't collide with a user's names
    if TYPE_CHECKING:  # any attribute, for type checkers too (`ctx.scale = s` in forward)

        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep `tensors` (Tensors or None) for `backward`; read them with `saved_tensors`."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save tensors (or None), but argument {i} is of "
                    f"type {type(t).__name__}; keep other values as attributes: ctx.name = value"
                )
        self._tg_to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep `tensors` (Tensors or None) for `jvp` (forward mode); inside `jvp` they are
        `saved_tensors`. Call it from `forward` (or `setup_context`)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_forward expects all arguments to be tensors (or None), but "
                    f"argument {i} is of type {type(t).__name__}; keep other values as "
                    "attributes: ctx.name = value"
                )
        self._tg_to_save_fwd = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The tensors given to `save_for_backward`, as the graph saw them (inside `jvp`:
        those given to `save_for_forward`).

        Raises if one of them was modified in place after it was saved.
        """
        in_jvp: tuple[Any, ...] | None = self.__dict__.get("_tg_fwd_saved")
        if in_jvp is not None:
            return in_jvp
        packed = self.__dict__.get("_tg_saved")
        if packed is None:  # inside forward, or the function was not recorded
            return tuple(self.__dict__.get("_tg_to_save", ()))
        out: list[Any] = []
        for k, (kind, obj, counter, expected, index) in enumerate(packed):
            if counter is not None and counter[0] != expected:
                raise RuntimeError(_version_message(self, kind, index, k, counter[0], expected))
            if kind == _OUTPUT:
                out.append(self._tg_rebuild_output(index, obj, counter))
            else:
                out.append(obj)
        return tuple(out)

    # PyTorch also exposes them as `ctx.saved_variables` (old name)
    saved_variables = saved_tensors

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        """One bool per forward argument: whether a gradient for it is wanted."""
        needs: tuple[bool, ...] = self.__dict__.get("_tg_needs", ())
        return needs

    @needs_input_grad.setter
    def needs_input_grad(self, value: Sequence[bool]) -> None:
        self._tg_needs = tuple(value)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that `forward` modified in place (they must also be returned)."""
        self._tg_dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that get no gradient (their slot in `backward` is zeros or None)."""
        self._tg_nondiff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """True (default): gradients of unused outputs reach `backward` as zeros; False: None."""
        self._tg_materialize = bool(value)

    def _tg_rebuild_output(self, index: int, data: Any, counter: list[int]) -> Tensor:
        # the node does not hold its own output (a reference cycle); rebuild a tensor that
        # has the node as grad_fn so a higher-order backward can flow through it
        ref = self.__dict__.get("_tg_node")
        node = ref() if ref is not None else None
        t = _wrap(data, node.tapes if node is not None else 0)
        if node is not None:
            t.grad_fn = node
            t._out_nr = index
        t._vc = counter
        return t


def _version_message(
    ctx: object, kind: str, index: int | None, k: int, now: int, expected: int
) -> str:
    which = {_INPUT: f"input {index}", _OUTPUT: f"output {index}"}.get(kind, f"saved tensor {k}")
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {which} of {_fn_name(ctx)}Backward is at version {now}; expected version "
        f"{expected} instead. Hint: do the in-place change on a copy (.clone()), or out of "
        "place, or make it after backward."
    )


class _FunctionOp:
    """The engine-facing side of a Function class: what a Node's `op` must provide."""

    wants_needs = False

    def __init__(self, cls: type[Function], instance_style: bool) -> None:
        self.cls = cls
        self.instance_style = instance_style
        self.backward_name = cls.__name__ + "Backward"
        self.name = cls.__name__

    def __repr__(self) -> str:
        return f"<custom function {self.name}>"

    def rule(self, xp: Any, g: Any, ctx: Any) -> tuple[Any, ...]:
        return _run_backward(self, ctx, g)


class _FunctionMeta(type):
    """Gives each Function subclass its own engine adapter."""

    def __init__(cls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> None:
        super().__init__(name, bases, ns)
        fwd = inspect.getattr_static(cls, "forward", None)
        static = isinstance(fwd, (staticmethod, classmethod))
        cls._tg_instance_style = fwd is not None and not static
        # (cls is the Function subclass being made)
        cls._tg_op = _FunctionOp(cls, cls._tg_instance_style)  # type: ignore[arg-type]


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base class of custom differentiable operations.

    PyTorch style: define static `forward(ctx, *args, **kwargs)` and
    `backward(ctx, *grad_outputs)`; call `F.apply(*args, **kwargs)`. `backward` returns one
    gradient per positional `forward` argument (None for those without one).

    MXNet style: define instance methods `forward(self, *inputs)` and `backward(self, *grads)`,
    use `self.save_for_backward` / `self.saved_tensors`; call `f = F(); y = f(x)`.

    `backward` runs on tensors: under `create_graph=True` it is recorded, so its result can be
    differentiated again (unless it is decorated with `@once_differentiable`).

    ONNX export (`tg.onnx.export`): an optional static `symbolic(g, *args)` writes the
    Function as ONNX nodes (`g.op("Clip", x, ...)`, see `tg.onnx.SymbolicContext`), as in
    PyTorch; without it the ops of `forward` are exported one by one.

    Forward mode (`forward_ad`, `tg.func.jvp`, `jacfwd`, `hessian`): define
    `jvp(ctx, *tangents)` too, with `ctx.save_for_forward(...)` for what it reads
    (function_forward.py); without it a tangent reaching `apply` raises.
    """

    # set on every subclass by the metaclass
    _tg_instance_style: ClassVar[bool]
    _tg_op: ClassVar[_FunctionOp]

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """Compute the outputs from the inputs; override it (a staticmethod taking `ctx`
        first, or an instance method in the MXNet style)."""
        raise NotImplementedError("subclasses of Function must define forward()")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Return one gradient per `forward` input (None where there is none), given
        one gradient per output; override it."""
        raise NotImplementedError("subclasses of Function must define backward()")

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> Any:
        """Forward mode (optional): given one tangent per `forward` input (None for an
        argument that is not a tensor; zeros for a tensor without one, or None after
        `ctx.set_materialize_grads(False)`), return one tangent per output, J.t. Read what
        `forward` kept with `ctx.save_for_forward(...)` as `ctx.saved_tensors`. Without it,
        a tangent reaching the function (`forward_ad`, `tg.func.jvp`, `jacfwd`) raises."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        """Optional (PyTorch 2 style): define it, and a `forward(*args)` without `ctx`, to
        fill `ctx` from the inputs and the output after forward ran."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the function on `args` and record it when an input is tracked (PyTorch style)."""
        if cls._tg_instance_style:
            return cls()(*args, **kwargs)
        ctx = FunctionCtx()
        ctx._tg_cls = cls
        return _apply(cls, ctx, args, kwargs)

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run an instance-style (MXNet) function: `y = MyFn()(x)`."""
        cls = type(self)
        if not cls._tg_instance_style:
            raise TypeError(
                f"{cls.__name__} has a static forward(ctx, ...); call it as "
                f"{cls.__name__}.apply(...), not by instantiating it"
            )
        self._tg_saved = None  # a second call starts afresh
        return _apply(cls, self, inputs, kwargs)


def _call_forward(
    cls: type[Function], ctx: Any, args: Sequence[Any], kwargs: dict[str, Any]
) -> Any:
    if cls._tg_instance_style:
        return ctx.forward(*args, **kwargs)
    if cls.setup_context is not Function.setup_context:
        # PyTorch 2 style: forward(*args) without ctx, then setup_context(ctx, inputs, output)
        out = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, tuple(args), out)
        return out
    return cls.forward(ctx, *args, **kwargs)


def _apply(cls: type[Function], ctx: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    active = state.active
    tangents = input_tangents(cls, args) if active & FORWARD else None  # (jvp or raise)
    if tangents is None:
        active &= ~FORWARD
    mask = 0
    needs: list[bool] = []
    for a in args:
        if isinstance(a, Tensor):
            m = a._tapes & active
            mask |= m
            needs.append(bool(m & ~FORWARD))  # a tangent alone wants no gradient
        else:
            needs.append(False)
    ctx._tg_needs = tuple(needs)
    ctx._tg_to_save = ()
    ctx._tg_to_save_fwd = ()
    ctx._tg_dirty = ()
    ctx._tg_nondiff = ()
    ctx._tg_materialize = True
    ctx._tg_higher = False

    # forward sees detached inputs (same storage and version counter, no graph)
    originals: dict[int, Tensor] = {}
    fwd_args: list[Any] = []
    for a in args:
        if isinstance(a, Tensor):
            d = a.detach()
            originals[id(d)] = a
            originals[id(a)] = a
            fwd_args.append(d)
        else:
            fwd_args.append(a)
    with no_grad():
        out = _call_forward(cls, ctx, fwd_args, kwargs)

    is_tuple = isinstance(out, (tuple, list))
    outs = list(out) if is_tuple else [out]
    dirty = [originals.get(id(t), t) for t in ctx._tg_dirty]
    dirty_ids = {id(t) for t in dirty}
    # identify outputs that are (detached) inputs marked dirty: they keep their identity
    out_ids = [id(originals.get(id(o), o)) if isinstance(o, Tensor) else None for o in outs]
    for t in dirty:
        if id(t) not in out_ids:
            raise RuntimeError(
                f"{cls.__name__}.forward: a tensor marked dirty (ctx.mark_dirty) must also be "
                "returned as an output"
            )

    if not mask:
        result = [
            originals[id(o)]
            if isinstance(o, Tensor) and id(originals.get(id(o), o)) in dirty_ids
            else o
            for o in outs
        ]
        return _same_kind(out, result) if is_tuple else result[0]

    for t in dirty:
        if t.grad_fn is None and t._tapes & active & ~FORWARD:
            raise RuntimeError(
                f"{cls.__name__}.forward: a leaf Variable that requires grad has been used in an "
                "in-place operation (marked dirty). Apply the function to a copy (x.clone()) or "
                "use an out-of-place forward."
            )

    xp = next((backend.array_module(a._data) for a in args if isinstance(a, Tensor)), None)
    # edges only to inputs a reverse tape tracks (a tangent is not a gradient edge); the
    # node carries every bit, so its outputs are dual too
    node = record_node(cls._tg_op, {}, args, mask & ~FORWARD, array_ns(xp), Tensor, len(outs))
    node.tapes = mask
    node.saved = (ctx,)

    nondiff_ids = {id(originals.get(id(t), t)) for t in ctx._tg_nondiff}
    result = []
    # per output: (shape, dtype, array module) of a tensor, None for anything else
    out_meta: list[tuple[tuple[int, ...], Any, Any] | None] = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            if o is not None and not np.isscalar(o):
                raise TypeError(
                    f"{cls.__name__}.forward returned a {type(o).__name__} as output {i}; "
                    "return Tensors (or a tuple of them)"
                )
            result.append(o)
            out_meta.append(None)
            continue
        orig = originals.get(id(o), o)
        out_meta.append((o._data.shape, o._data.dtype, xp))
        differentiable = id(orig) not in nondiff_ids and dtypes.is_floating(o.dtype)
        if id(orig) in dirty_ids:
            t = orig  # modified in place: the input itself becomes this output
            if differentiable:
                t.grad_fn, t._out_nr, t._tapes = node, i, mask
            else:
                t.grad_fn, t._out_nr, t._tapes = None, 0, 0
        else:
            t = _wrap(o._data, mask if differentiable else 0)
            t._vc = o._vc
            if differentiable:
                t.grad_fn, t._out_nr = node, i
        result.append(t)

    # what backward will need, with the versions to check against
    # per saved tensor: (kind, what to hold, version counter, version then, its position)
    packed: list[tuple[str, Any, Any, Any, int | None]] = []
    out_pos = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
    in_pos = {id(a): i for i, a in enumerate(fwd_args) if isinstance(a, Tensor)}
    in_pos.update({id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)})
    for t in ctx._tg_to_save:
        if t is None:
            packed.append((_OTHER, None, None, None, None))
        elif id(t) in out_pos and (id(t) not in in_pos or id(originals[id(t)]) in dirty_ids):
            i = out_pos[id(t)]
            r = result[i]
            if r.grad_fn is node:  # rebuilt on demand: holding r would be a reference cycle
                packed.append((_OUTPUT, r._data, r._vc, r._vc[0], i))
            else:  # a non-differentiable output: no graph, safe to hold
                packed.append((_OTHER, r, r._vc, r._vc[0], None))
        elif id(t) in in_pos:
            i = in_pos[id(t)]
            a = args[i]
            packed.append((_INPUT, a, a._vc, a._vc[0], i))
        else:
            packed.append((_OTHER, t, t._vc, t._vc[0], None))
    ctx._tg_saved = packed
    ctx._tg_to_save = ()
    ctx._tg_node = weakref.ref(node)
    ctx._tg_out_meta = out_meta
    ctx._tg_in_meta = node.in_meta
    if tangents is not None:
        owner: Node | None = node  # the node the outputs' tangents are kept for
        if not mask & ~FORWARD:  # forward mode only: the outputs are dual, with no graph
            for t in result:
                if isinstance(t, Tensor) and t.grad_fn is node:
                    t.grad_fn, t._out_nr = None, 0
            owner = None
        dirty_inputs = {
            id(a): i for i, a in enumerate(args) if isinstance(a, Tensor) and id(a) in dirty_ids
        }
        attach_output_tangents(
            cls, ctx, args, tangents, originals, outs, result, owner, dirty_inputs
        )
    ctx._tg_dirty = ctx._tg_nondiff = ()  # only needed during apply
    return _same_kind(out, result) if is_tuple else result[0]


def _same_kind(out: Any, items: list[Any]) -> Any:
    """`items` in the container type forward returned (tuple, list or a namedtuple)."""
    if hasattr(out, "_fields"):
        return type(out)(*items)
    return type(out)(items)
