"""`mx.gluon.Parameter`, `Constant` and the dict `collect_params()` returns.

A Gluon Parameter holds one array (an `mx.nd.NDArray`, or an `mx.np.ndarray` after
`npx.set_np()`, as in MXNet 1.x), made when it is initialized (at once, or at
the first forward when its shape is still unknown: deferred initialization). That tensor
is a variable of the record scope (`attach_grad(grad_req)`), so exactly as in MXNet it is
recorded only inside `autograd.record()`, and its gradient is overwritten by each
backward (`grad_req="write"`, the default), accumulated (`"add"`) or not computed
(`"null"`).

    >>> w = mx.gluon.Parameter("w", shape=(2, 3))
    >>> w.initialize(init=mx.init.One())
    >>> with mx.autograd.record():
    ...     y = (w.data() * 2).sum()
    >>> y.backward(); w.grad()
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
"""
from __future__ import annotations

import re
import warnings

import numpy as np

from ....autograd.record import GRAD_REQS
from ....creation import tensor as _core_tensor
from ....tensor import Tensor, as_class, write_data
from ... import _facade  # noqa: F401
from .. import initializer
from ..context import context_of, device_of

__all__ = ["Parameter", "Constant", "ParameterDict", "DeferredInitializationError"]


def _tensor(values, dtype, device) -> Tensor:
    """A parameter's array: an `mx.np.ndarray` after `npx.set_np()`, else an NDArray."""
    from ..numpy_extension import array_class

    return as_class(_core_tensor(values, dtype=dtype, device=device), array_class())


class DeferredInitializationError(RuntimeError):
    """The parameter's shape is not known yet: it is initialized at the first forward."""


def _known(shape) -> bool:
    return shape is not None and all(int(s) > 0 for s in shape)


class Parameter:
    """A trainable array of a Block (MXNet's Gluon Parameter).

    Args:
        name: the parameter's name ("weight", "bias", ...).
        grad_req: "write" (default: each backward overwrites the gradient), "add" or "null".
        shape: the shape; 0 (or -1) marks a dimension inferred at the first forward.
        dtype: float32 by default.
        init: this parameter's own initializer (wins over the one given to `initialize`).
        lr_mult, wd_mult: per-parameter multipliers of the Trainer's learning rate and
            weight decay.
    """

    def __init__(self, name="weight", grad_req="write", shape=None, dtype="float32",
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype="default", grad_stype="default") -> None:
        if stype != "default" or grad_stype != "default":
            raise ValueError(f"Parameter {name!r}: sparse storage is not supported; use dense")
        self.name = name
        self._shape = None if shape is None else (
            (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape))
        self.dtype = np.dtype(dtype)
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self._allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        self._grad_req = self._check_req(grad_req if differentiable else "null")
        self._var: Tensor | None = None
        self._deferred = None  # (init, device) until the shape is known
        self._device = "cpu"

    # ------------------------------------------------------------------ properties
    def _check_req(self, req):
        if req not in GRAD_REQS:
            raise ValueError(
                f"Parameter {self.name!r}: grad_req must be one of {GRAD_REQS}, got {req!r}"
            )
        return req

    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape) -> None:
        new_shape = tuple(int(s) for s in new_shape)
        old = self._shape
        if old is not None:
            ok = len(old) == len(new_shape) and all(
                o <= 0 or o == n for o, n in zip(old, new_shape, strict=False))
            if not ok:
                raise ValueError(
                    f"Parameter {self.name!r}: expected shape {old} is incompatible with given "
                    f"shape {new_shape}"
                )
        self._shape = new_shape

    @property
    def grad_req(self) -> str:
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        req = self._check_req(req)
        if not self._differentiable:
            req = "null"
        self._grad_req = req
        if self._var is not None:
            self._attach()

    def _attach(self) -> None:
        self._var.attach_grad(self._grad_req)  # "null" frees the gradient buffer

    # ------------------------------------------------------------------ initialization
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False) -> None:
        """Make the array (now, or at the first forward when the shape is not known yet).

        Args:
            init: the initializer to use (default: this parameter's own `init`, else
                `default_init`, else `mx.init.Uniform()`).
            ctx: the context (one device; tapegrad has no multi-device copies).
            force_reinit: initialize again when already initialized.
        """
        if self._var is not None and not force_reinit:
            warnings.warn(
                f"Parameter {self.name!r} is already initialized, ignoring. Set "
                "force_reinit=True to re-initialize.", stacklevel=2)
            return
        if init is None:
            init = default_init if self.init is None else self.init
        device = device_of(ctx)
        if not _known(self._shape):
            if self._allow_deferred_init:
                self._deferred = (init, device)
                return
            raise ValueError(
                f"Cannot initialize Parameter {self.name!r} because it has invalid shape "
                f"{self._shape}; give the layer in_units / in_channels, or a full shape"
            )
        self._deferred = (init, device)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        if self._deferred is None:
            return
        if not _known(self._shape):
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has shape {self._shape} with unknown dimensions; "
                "call the block on data first (its shape is inferred then), or pass "
                "in_units / in_channels"
            )
        init, device = self._deferred
        self._deferred = None
        values = initializer.create(init)(self.name, self._shape, self.dtype)
        self._set_var(_tensor(values, dtype=self.dtype, device=device))

    def _set_var(self, var: Tensor) -> None:
        self._var = var
        self._device = var.device
        self._attach()

    def _check_initialized(self) -> Tensor:
        if self._var is not None:
            return self._var
        if self._deferred is not None:
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialized yet because initialization "
                "was deferred; it happens at the first forward pass. Call the block on data "
                "first, or give the layer in_units / in_channels"
            )
        raise RuntimeError(
            f"Parameter {self.name!r} has not been initialized. Call block.initialize() (or "
            "param.initialize()) first"
        )

    # ------------------------------------------------------------------ data and gradient
    def data(self, ctx=None) -> Tensor:
        """The parameter's array (what forward computes with; recorded inside record())."""
        return self._check_initialized()

    def list_data(self) -> list:
        return [self.data()]

    def grad(self, ctx=None) -> Tensor:
        """The gradient buffer (overwritten or accumulated by backward, per grad_req)."""
        var = self._check_initialized()
        if self._grad_req == "null" or var.grad is None:
            raise RuntimeError(
                f"Cannot get gradient array for Parameter {self.name!r} because grad_req is "
                f"{self._grad_req!r}; set grad_req='write' (or 'add') to compute it"
            )
        return var.grad

    def list_grad(self) -> list:
        return [self.grad()]

    def list_ctx(self) -> list:
        return [context_of(self._device)]

    def set_data(self, data) -> None:
        """Overwrite the values (shape and dtype kept), outside any recorded graph."""
        arr = np.asarray(data.asnumpy() if isinstance(data, Tensor) else data)
        if self._var is None:
            if self._deferred is None and not _known(self._shape):
                raise RuntimeError(f"Parameter {self.name!r}: initialize it before set_data")
            self.shape = arr.shape
            init, device = self._deferred or (None, self._device)
            self._deferred = None
            self._set_var(_tensor(arr, dtype=self.dtype, device=device))
            return
        var = self._var
        if arr.shape != var.shape and arr.size != 1:
            raise ValueError(
                f"Parameter {self.name!r}: set_data got shape {arr.shape}, expected {var.shape}"
            )
        write_data(var, arr.astype(var.dtype))

    def zero_grad(self) -> None:
        """Set the gradient buffer to zeros (in place)."""
        var = self._var
        if var is None or var.grad is None:
            return
        write_data(var.grad, 0)

    def reset_ctx(self, ctx) -> None:
        if self._var is not None:
            self._set_var(self._var.to(device_of(ctx)).detach())
        self._device = device_of(ctx)

    def cast(self, dtype) -> None:
        self.dtype = np.dtype(dtype)
        if self._var is not None:
            self._set_var(_tensor(self._var.asnumpy(), dtype=self.dtype, device=self._device))

    def var(self):
        raise _facade.unsupported(
            "the MXNet facade", "Parameter.var", "symbols do not exist in tapegrad; it runs "
            "eagerly, use data()")

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self._shape}, dtype={self.dtype})"


class Constant(Parameter):
    """A parameter that never gets a gradient (grad_req "null"), holding `value`."""

    def __init__(self, name, value=None) -> None:
        if value is None:  # MXNet 2.0 signature: Constant(value)
            name, value = "const", name
        arr = np.asarray(value.asnumpy() if isinstance(value, Tensor) else value,
                         dtype=np.float32)
        super().__init__(name, grad_req="null", shape=arr.shape, dtype=arr.dtype,
                         init=initializer.Constant(arr), differentiable=False)

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req) -> None:
        if req != "null":
            warnings.warn(f"Constant {self.name!r} never has a gradient; grad_req stays 'null'",
                          stacklevel=2)


class ParameterDict(dict):
    """The dict of parameters `collect_params()` returns (structural names, as Gluon 2).

    Setting an attribute sets it on every parameter: `params.setattr("grad_req", "null")`.
    """

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False) -> None:
        for p in self.values():
            p.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        for p in self.values():
            p.zero_grad()

    def setattr(self, name, value) -> None:  # noqa: A003 - Gluon's method name
        for p in self.values():
            setattr(p, name, value)

    def reset_ctx(self, ctx) -> None:
        for p in self.values():
            p.reset_ctx(ctx)

    def select(self, pattern) -> ParameterDict:
        rx = re.compile(pattern)
        return ParameterDict((k, v) for k, v in self.items() if rx.match(k))

    def __repr__(self) -> str:
        body = "\n".join(f"  {v!r}" for v in self.values())
        return f"ParameterDict(\n{body}\n)"
