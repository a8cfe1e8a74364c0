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
    <BLANKLINE>
    [[2. 2. 2.]
     [2. 2. 2.]]
    <NDArray 2x3 @cpu(0)>
"""

from __future__ import annotations

import re
import warnings
from typing import Any

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


class _GradWritten:
    """A post-accumulate hook on a parameter's array: `fresh` is set when backward writes
    its gradient and cleared by the Trainer's update (MXNet's `_fresh_grad`). The flag lives
    in the hook, so a deep copy of a block copies it with the array it watches."""

    __slots__ = ("fresh",)

    def __init__(self) -> None:
        self.fresh = False

    def __call__(self, tensor) -> None:
        self.fresh = True


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

    def __init__(
        self,
        name="weight",
        grad_req="write",
        shape=None,
        dtype="float32",
        lr_mult=1.0,
        wd_mult=1.0,
        init=None,
        allow_deferred_init=False,
        differentiable=True,
        stype="default",
        grad_stype="default",
    ) -> None:
        if stype != "default" or grad_stype != "default":
            raise ValueError(f"Parameter {name!r}: sparse storage is not supported; use dense")
        self.name = name
        self._shape = (
            None
            if shape is None
            else ((int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape))
        )
        self.dtype = np.dtype(dtype)
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self._allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        self._grad_req = self._check_req(grad_req if differentiable else "null")
        self._var: Tensor | None = None
        self._grad_written = _GradWritten()  # watches the array _set_var installs
        self._deferred: tuple[Any, str] | None = None  # (init, device) until the shape is known
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
                o <= 0 or o == n for o, n in zip(old, new_shape, strict=False)
            )
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
            self._attach(self._var)

    def _attach(self, var: Tensor) -> None:
        var.attach_grad(self._grad_req)  # "null" frees the gradient buffer

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
                "force_reinit=True to re-initialize.",
                stacklevel=2,
            )
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
        self._attach(var)
        # a new array has no gradient from backward yet
        self._grad_written = _GradWritten()
        var.register_post_accumulate_grad_hook(self._grad_written)

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
        if self._var is None:  # (as MXNet's load: the values initialize it)
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
            "the MXNet facade",
            "Parameter.var",
            "symbols do not exist in tapegrad; it runs eagerly, use data()",
        )

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self._shape}, dtype={self.dtype})"


class Constant(Parameter):
    """A parameter that never gets a gradient (grad_req "null"), holding `value`."""

    def __init__(self, name, value=None) -> None:
        if value is None:  # MXNet 2.0 signature: Constant(value)
            name, value = "const", name
        arr = np.asarray(value.asnumpy() if isinstance(value, Tensor) else value, dtype=np.float32)
        super().__init__(
            name,
            grad_req="null",
            shape=arr.shape,
            dtype=arr.dtype,
            init=initializer.Constant(arr),
            differentiable=False,
        )

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req) -> None:
        if req != "null":
            warnings.warn(
                f"Constant {self.name!r} never has a gradient; grad_req stays 'null'", stacklevel=2
            )


class ParameterDict(dict):
    """Parameters by name, as Gluon 1.x's ParameterDict (what `collect_params()` returns).

    Args:
        prefix: prepended to the names `get` makes (`ParameterDict("net_").get("w")` is
            the parameter "net_w").
        shared: another ParameterDict: `get` returns its parameter of the same name, if any,
            instead of making a new one (how `Block(params=...)` shares parameters).

    Setting an attribute sets it on every parameter: `params.setattr("grad_req", "null")`.
    """

    def __init__(self, prefix="", shared=None) -> None:
        super().__init__()
        if not isinstance(prefix, str):  # a mapping or pairs, as dict() takes
            super().update(prefix)
            prefix = ""
        self._prefix = prefix
        self._shared = shared

    @property
    def prefix(self) -> str:
        return self._prefix

    def _put(self, param: Parameter) -> None:
        have = dict.get(self, param.name)
        if have is not None and have is not param:
            raise ValueError(
                f"ParameterDict: two different Parameters are named {param.name!r}; give the "
                "blocks different prefixes"
            )
        self[param.name] = param

    def _get_impl(self, name):
        if name in self:
            return self[name]
        if self._shared is not None and name in self._shared:
            self[name] = self._shared._get_impl(name)
            return self[name]
        return None

    def get(self, name, **kwargs) -> Parameter:  # type: ignore[override]
        """The parameter `prefix + name`: found here (or in `shared`), else made with
        `kwargs` (Parameter's arguments). A found parameter takes the unknown dimensions of
        a given `shape`; other attributes must agree."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self[full] = param
            return param
        for k, v in kwargs.items():
            if k == "shape" and v is not None:
                have = param.shape
                v = (int(v),) if isinstance(v, int) else tuple(v)
                if have is None or len(have) != len(v):
                    param.shape = v if have is None else have
                    continue
                merged = tuple(n if o <= 0 else o for o, n in zip(have, v, strict=True))
                if any(o > 0 and n > 0 and o != n for o, n in zip(have, v, strict=True)):
                    raise ValueError(f"ParameterDict.get: {full!r} has shape {have}, asked for {v}")
                param._shape = merged
            elif k == "dtype" and v is not None:
                if np.dtype(v) != param.dtype:
                    raise ValueError(
                        f"ParameterDict.get: {full!r} is {param.dtype}, asked for {np.dtype(v)}"
                    )
            elif k == "init" and v is not None and param.init is None:
                param.init = v
        return param

    def get_constant(self, name, value=None) -> Constant:
        """The Constant `prefix + name` (made from `value` when new)."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise KeyError(f"ParameterDict.get_constant: no constant {full!r}; pass value=")
            param = Constant(full, value)
            self[full] = param
        return param

    def update(self, other=(), **kwargs) -> None:  # type: ignore[override]
        """Add `other`'s parameters (two different Parameters of one name are refused)."""
        items = other.items() if hasattr(other, "items") else other
        for k, v in items:
            have = dict.get(self, k)
            if have is not None and have is not v:
                raise ValueError(
                    f"ParameterDict.update: a different Parameter named {k!r} is already here"
                )
            self[k] = v

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

    def list_ctx(self) -> list:
        out: list = []
        for p in self.values():
            out.extend(c for c in p.list_ctx() if c not in out)
        return out

    def select(self, pattern) -> ParameterDict:
        rx = re.compile(pattern)
        out = ParameterDict(self._prefix)
        for k, v in self.items():
            if rx.match(k):
                out[k] = v
        return out

    def save(self, filename, strip_prefix="") -> None:
        """Write every parameter to `filename`, named without `strip_prefix`."""
        from .... import io

        arrays = {}
        for name, p in self.items():
            if strip_prefix and not name.startswith(strip_prefix):
                raise ValueError(
                    f"ParameterDict.save: {name!r} does not start with "
                    f"strip_prefix {strip_prefix!r}"
                )
            arrays[name[len(strip_prefix) :]] = p.data()
        io.save(arrays, filename)

    def load(
        self,
        filename,
        ctx=None,
        allow_missing=False,
        ignore_extra=False,
        restore_prefix="",
        cast_dtype=False,
        dtype_source="current",
    ) -> None:
        """Read what `save` wrote (names get `restore_prefix` back).

        Args:
            cast_dtype: convert the loaded values to a dtype (else each keeps the
                parameter's dtype, as they are written into it).
            dtype_source: with cast_dtype, "current" keeps the parameters' dtypes, "saved"
                takes the file's.
        """
        from .... import io

        loaded = {restore_prefix + k: v for k, v in io.load(filename).items()}
        _load_into(
            dict(self),
            loaded,
            filename,
            allow_missing,
            ignore_extra,
            cast_dtype,
            dtype_source,
            "ParameterDict.load",
        )

    def __repr__(self) -> str:
        body = "\n".join(f"  {v!r}" for v in self.values())
        head = f"{self._prefix} " if self._prefix else ""
        return f"{head}(\n{body}\n)"


def _load_into(
    params: dict,
    loaded: dict,
    filename,
    allow_missing,
    ignore_extra,
    cast_dtype,
    dtype_source,
    where: str,
) -> None:
    """Check every name and shape, then write `loaded` into `params` (shared by
    ParameterDict.load and Block.load_parameters)."""
    if dtype_source not in ("current", "saved"):
        raise ValueError(
            f"{where}: dtype_source must be 'current' or 'saved', got {dtype_source!r}"
        )
    # a parameter shared under several names is there when any of its names is
    present = {id(p) for k, p in params.items() if k in loaded}
    missing = [k for k, p in params.items() if id(p) not in present]
    extra = [k for k in loaded if k not in params]
    if missing and not allow_missing:
        raise RuntimeError(
            f"{where}: {filename} lacks parameters {missing} (pass "
            "allow_missing=True to keep them as they are)"
        )
    if extra and not ignore_extra:
        raise RuntimeError(
            f"{where}: {filename} has parameters {extra} the model lacks "
            "(pass ignore_extra=True to skip them)"
        )
    for k, p in params.items():
        if (
            k in loaded
            and p.shape is not None
            and _known(p.shape)
            and tuple(loaded[k].shape) != tuple(p.shape)
        ):
            raise ValueError(
                f"{where}: {k} has shape {tuple(loaded[k].shape)} in the file "
                f"but {tuple(p.shape)} in the model"
            )
    done: set[int] = set()
    for k, p in params.items():
        if k not in loaded or id(p) in done:
            continue
        done.add(id(p))
        value = loaded[k]
        if cast_dtype and dtype_source == "saved":
            p.dtype = np.dtype(value.dtype)
            p._var = None  # remade in the file's dtype below
        p.set_data(value)
