"""The Tensor: one backend array plus the slots autograd needs. Floor 2: imports no ops.

This file owns storage, metadata, the leaf/requires-grad rules and hooks. Ops, operators and
the other methods come from one table, `tapegrad.ops.tensor_methods`, installed when the
package is imported; type checkers see them through `_tensor_surface.TensorSurface`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeVar, overload

import numpy as np

from . import backend, dtypes
from .engine.node import (
    Node,
    PostAccumulateHook,
    RemovableHandle,
    TensorHook,
    accumulator,
    hold_leaf,
)
from .engine.state import AMBIENT, NOT_GRAD, RECORD
from .engine.versions import bump_version

if TYPE_CHECKING:  # the installed methods, typed (generated; run-time base is object)
    from collections.abc import Callable

    import numpy.typing as npt  # annotations only: importing it costs ms (bench W7)

    from ._tensor_surface import TensorSurface as _Surface
else:
    _Surface = object

_GRAD_REQS = ("write", "add", "null")
_T = TypeVar("_T", bound="Tensor")
Scalar = int | float | bool  # what item() gives back


class Tensor(_Surface):
    """An n-dimensional array that autograd can track.

    Make one with `tg.tensor(data, requires_grad=...)` (or `Tensor(data)`, the same thing).

    >>> import tapegrad as tg
    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "_data",
        "_tapes",
        "grad_fn",
        "_out_nr",
        "_vc",
        "_grad",
        "_grad_req",
        "_accum",
        "_hooks",
        "_post_hooks",
        "_record_var",
        "_view_of",
        "__weakref__",
    )

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy ufuncs on tensors (`np.exp(t)`, `ndarray * t`): see `tapegrad.interop`."""
        from .interop import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    # the slots, as `_init` sets them (declared for readers and type checkers)
    _data: npt.NDArray[Any]  # the backend array (NumPy, or CuPy's, which has its interface)
    _tapes: int  # mask of the tapes that track this tensor (engine/state.py)
    grad_fn: Node | None  # the node that made it; None for a leaf
    _out_nr: int  # which output of grad_fn it is
    _vc: list[Any]  # [version, weakref to each view...], shared with views and detach()
    _grad: Tensor | None
    _grad_req: str  # "write", "add" or "null"
    # a weak reference to its AccumulateGrad node (engine/node.py); a forward-AD shadow of a
    # leaf holds a function returning that leaf's node instead (called the same way)
    _accum: Callable[[], Node | None] | None
    _hooks: dict[int, TensorHook] | None  # handle id -> hook, from register_hook on a leaf
    _post_hooks: dict[int, PostAccumulateHook] | None
    _record_var: bool  # a record-scope variable switched off by grad_req="null"
    # (input, view op, its parameters) for a view op's result, unset otherwise: an in-place
    # write into the view rebases the input's graph (ops/view_writes.py)
    _view_of: tuple[Tensor, Any, dict[str, Any]]

    def __init__(
        self,
        data: Any = None,
        dtype: Any = None,
        requires_grad: bool = False,
        device: Any = None,
        *,
        ctx: Any = None,
    ) -> None:
        if isinstance(data, Tensor):
            data = data._data
        arr = dtypes.result_array(0.0 if data is None else data, dtype)
        if arr is data:
            arr = arr.copy()  # Tensor(x) copies, like tg.tensor; from_numpy shares
        dev = backend.normalize_device(device if device is not None else ctx)
        _init(self, backend.to_device(arr, dev))
        if requires_grad:
            self.requires_grad_(True)

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, a tuple of ints."""
        return self._data.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type (a NumPy dtype: `tg.float32`, `tg.int64`, ...)."""
        return self._data.dtype

    @property
    def device(self) -> str:
        """Where the data lives: `"cpu"` (NumPy) or `"cuda"` (CuPy)."""
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        """True when the tensor is on the GPU (`device == "cuda"`)."""
        return self.device == "cuda"

    @property
    def is_cpu(self) -> bool:
        """True when the tensor is in host memory (`device == "cpu"`)."""
        return self.device == "cpu"

    # the other device and layout kinds PyTorch scripts test for (`x.is_cuda or x.is_xpu`):
    # tapegrad has none of them
    @property
    def is_xpu(self) -> bool:
        """False: tapegrad has no XPU device (PyTorch's Intel GPU flag)."""
        return False

    @property
    def is_mps(self) -> bool:
        """False: tapegrad has no MPS device (PyTorch's Apple GPU flag)."""
        return False

    @property
    def is_meta(self) -> bool:
        """False: every tapegrad tensor has its data (no meta tensors)."""
        return False

    @property
    def is_sparse(self) -> bool:
        """False: tapegrad tensors are dense (no sparse layouts)."""
        return False

    def to_dense(self) -> Tensor:
        """The dense tensor: itself, as PyTorch's `to_dense` of a strided tensor.

        >>> x = tg.tensor([1.0, 0.0]); x.to_dense() is x
        True
        """
        return self

    def to_sparse(self, sparse_dim: int | None = None, **kwargs: Any) -> Tensor:
        """PyTorch's conversion to a sparse layout: tapegrad has none, so a dense copy (the
        same values, in the graph: `sparse @ dense`, `torch.spmm` and sums then agree with
        PyTorch's values, not its memory use). `is_sparse` stays False.

        >>> tg.eye(2).to_sparse().is_sparse
        False
        """
        if sparse_dim is not None and not 0 < int(sparse_dim) <= self.ndim:
            raise ValueError(
                f"to_sparse: sparse_dim={sparse_dim} must be in 1..{self.ndim} (the tensor's "
                "number of dimensions)"
            )
        return self.clone()  # torch's result is a new tensor, in the graph

    @property
    def _version(self) -> int:
        """How many times the storage was changed in place (PyTorch's `t._version`)."""
        version: int = self._vc[0]
        return version

    def dim(self) -> int:
        """The number of dimensions (the same as `ndim`)."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return int(self._data.size)

    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: SupportsIndex) -> int: ...

    def size(self, dim: SupportsIndex | None = None) -> tuple[int, ...] | int:
        """The shape, or one dimension of it (`size(-1)`)."""
        if dim is None:
            return self._data.shape
        n: int = self._data.shape[_axis(dim, self._data.ndim)]
        return n

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        n: int = self._data.shape[0]
        return n

    def element_size(self) -> int:
        """The size of one element in bytes."""
        return self._data.itemsize

    # ------------------------------------------------------------------ conversion
    def item(self) -> Scalar:
        """The single value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise ValueError(
                f"item(): only one-element tensors can be converted to Python scalars, "
                f"this one has shape {self.shape} ({self._data.size} elements)"
            )
        value: Scalar = self._data.item()
        return value

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers; a 0-d tensor gives a number."""
        return self._data.tolist()

    def numpy(self) -> np.ndarray[Any, Any]:
        """The underlying array (shares memory). Raises for a tensor that requires grad."""
        if self._tapes & AMBIENT:
            raise RuntimeError(
                "Can't call numpy() on a tensor that requires grad: its changes would not be "
                "tracked. Use tensor.detach().numpy() instead."
            )
        if self.device != "cpu":
            cpu: np.ndarray[Any, Any] = backend.to_device(self._data, "cpu")
            return cpu
        return self._data

    def asnumpy(self) -> np.ndarray[Any, Any]:
        """A NumPy copy of the values (MXNet's name); works whatever the tensor tracks."""
        return np.array(backend.to_device(self._data, "cpu"), copy=True)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        arr: np.ndarray[Any, Any] = backend.to_device(self._data, "cpu")
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule of this tensor's memory (zero copy): `np.from_dlpack(t)`,
        `torch.from_dlpack(t)`. Raises for a tensor that requires grad, as PyTorch does."""
        from .interop import export_dlpack

        return export_dlpack(
            self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device index): (1, 0) for the CPU, (2, n) for CUDA device n."""
        device_type, index = self._data.__dlpack_device__()
        return int(device_type), int(index)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of a tensor with {self._data.size} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self._data.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        body = np.array2string(
            np.asarray(self.__array__()), separator=", ", prefix="tensor(", precision=4
        )
        extras = []
        if self.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            extras.append(f"dtype={self.dtype}")
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._tapes & AMBIENT:
            extras.append("requires_grad=True")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    # ------------------------------------------------------------------ devices
    def to(self, device: Any = None, dtype: Any = None, **kwargs: Any) -> Tensor:
        """A copy on `device` and/or as `dtype` (self when nothing changes). Differentiable."""
        names_a_dtype = isinstance(device, str) and (
            device in dtypes._NAMES or device == "bfloat16"
        )  # bfloat16 is registered lazily
        if isinstance(device, (np.dtype, type)) or names_a_dtype:
            device, dtype = None, device
        dtype = kwargs.pop("dtype", dtype)
        if kwargs:
            raise TypeError(f"to(): unexpected arguments {sorted(kwargs)}")
        out = self
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            out = out.astype(dtype)  # declared in the typed surface (ops/tensor_methods.py)
        if device is not None and backend.normalize_device(device) != self.device:
            out = _move(out, backend.normalize_device(device))
        return out

    def cpu(self) -> Tensor:
        """A copy on the CPU (`to("cpu")`; the tensor itself when it is there already)."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Tensor:
        """A copy on the GPU (`to("cuda")`; needs CuPy and a GPU)."""
        return self.to("cuda")

    # ------------------------------------------------------------------ autograd slots
    @property
    def requires_grad(self) -> bool:
        """True when any tape tracks this tensor (set it to join the ambient tape)."""
        return bool(self._tapes & ~NOT_GRAD)  # a dual tensor alone, a traced one, do not

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self: _T, requires_grad: bool = True) -> _T:
        """Join (or leave) the ambient tape. Only floating leaves can require grad."""
        if requires_grad:
            _check_differentiable_dtype(self, "requires_grad")
            self._tapes |= AMBIENT
        else:
            if self.grad_fn is not None:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables; use "
                    "y = x.detach() to get a tensor that requires no grad"
                )
            self._tapes &= ~AMBIENT
        return self

    @property
    def is_leaf(self) -> bool:
        """True for a tensor no recorded op produced (it has no `grad_fn`)."""
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (a Tensor), or None. Reading it on a non-leaf that does
        not retain its gradient warns, as in PyTorch: backward never fills it."""
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during backward(). Call .retain_grad() "
                "on it first if you want it, or read the leaf's .grad instead.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}; wrap it first: x.grad = tg.full_like(x, value)"
                )
            if value.dtype != self.dtype and self.dtype.kind in "fc":  # PyTorch: exact match
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype {value.dtype} to a tensor of "
                    f"dtype {self.dtype}; the gradient's dtype must match the tensor's: convert "
                    f"it first (g.to({self.dtype}))"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size {list(value.shape)} to a tensor of "
                    f"size {list(self.shape)}; the gradient and the tensor must have the same "
                    "size"
                )
        self._grad = value

    @property
    def grad_req(self) -> str:
        """How backward treats `.grad`: "add" (accumulate), "write" (overwrite) or "null" (none).

        On a record-scope variable (`attach_grad`), setting "null" stops recording it, as
        `attach_grad("null")` does, and "write"/"add" start again (with a zero `.grad`).

        >>> x = tg.tensor([1.0]); x.attach_grad(); x.grad_req = "null"
        """
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in _GRAD_REQS:
            raise ValueError(f"grad_req must be one of {_GRAD_REQS}, got {req!r}")
        self._grad_req = req
        if req == "null":
            self._grad = None  # "null" frees the buffer
            if self.grad_fn is None and self._tapes & RECORD:
                # a null variable records nothing, so a backward reaching only it raises
                self._tapes &= ~RECORD
                self._record_var = True
        elif self.grad_fn is None and getattr(self, "_record_var", False):
            self._tapes |= RECORD  # slot unset on tensors never attached: getattr's default
            self._record_var = False
            if self._grad is None:
                zeros = backend.array_module(self._data).zeros_like(self._data)
                self._grad = _wrap(zeros, 0, array_class(self))

    def retain_grad(self) -> None:
        """Keep `.grad` of this non-leaf after backward (leaves keep it anyway)."""
        if not self._tapes & ~NOT_GRAD:
            raise RuntimeError("can't retain_grad on a tensor that doesn't require grad")
        if self.grad_fn is None:
            return
        import weakref

        node = self.grad_fn
        if node.retained is None:
            node.retained = {}
        node.retained[self._out_nr] = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        """True when `retain_grad()` was called on this non-leaf tensor."""
        node = self.grad_fn
        return bool(node is not None and node.retained and self._out_nr in node.retained)

    def register_hook(self, hook: TensorHook) -> RemovableHandle:
        """Call `hook(grad)` when this tensor's gradient is computed; a non-None return value
        replaces the gradient. Returns a handle with `remove()`."""
        if not self._tapes & ~NOT_GRAD:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.add_tensor_hook(self._out_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        hold_leaf(self)  # a graph built before a freeing backward still runs the hook
        return RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: PostAccumulateHook) -> RemovableHandle:
        """On a leaf: call `hook(tensor)` after its `.grad` has been updated."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_hooks is None:
            self._post_hooks = {}
        hold_leaf(self)
        return RemovableHandle(self._post_hooks, hook)

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        """Pickling and `copy.deepcopy`: the values, the class, the device and whether it
        requires grad (the ambient tape), as PyTorch pickles a tensor: the copy is a leaf with
        no gradient, hooks, graph or views; a facade's own fields (`mge.Tensor.name`) are kept,
        its tape attachments (`attach_grad`, `GradManager.attach`) are not."""
        fields = {
            name: getattr(self, name)
            for cls in type(self).__mro__[: type(self).__mro__.index(Tensor)]
            for name in getattr(cls, "__slots__", ())
            if name != "__weakref__" and hasattr(self, name)
        }
        fields.update(getattr(self, "__dict__", {}))
        values = backend.to_device(self._data, "cpu")
        return (_unpickle, (type(self), values, self.device, bool(self._tapes & AMBIENT), fields))

    def share_memory_(self: _T) -> _T:
        """Move the values into memory shared between processes, in place (PyTorch's
        `share_memory_`): sending the tensor to another process through `multiprocessing`
        (a Process's arguments, a Queue) then maps the same memory, so in-place writes there
        show here; plain `pickle` and `copy.deepcopy` still copy the values.
        A no-op when already shared; CPU tensors only. See `tapegrad.shared_memory`.

        >>> t = tg.zeros(2).share_memory_(); t.is_shared()
        True
        """
        if self.device != "cpu":
            raise RuntimeError(
                f"share_memory_: only CPU tensors can be shared, this one is on "
                f"{self.device}; move it with .cpu() first"
            )
        from . import shared_memory

        if shared_memory.shared_file(self._data) is None:
            self._data = shared_memory.shared_copy(np.ascontiguousarray(self._data))
        shared_memory.register_reducer(type(self))
        return self

    def is_shared(self) -> bool:
        """True when the values are in memory shared between processes (`share_memory_`)."""
        from . import shared_memory

        return shared_memory.is_shared_array(self._data)

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, tracked by no tape."""
        return as_class(self, array_class(self))

    def detach_(self: _T) -> _T:
        """Cut this tensor out of every graph, in place."""
        self.grad_fn = None
        self._tapes = 0
        return self

    @property
    def data(self) -> Tensor:
        """Storage shared, not tracked, and in-place changes through it are not detected."""
        return _wrap(self._data, 0, array_class(self))

    @data.setter
    def data(self, value: Any) -> None:
        value = value._data if isinstance(value, Tensor) else dtypes.result_array(value)
        self._data = value

    @property
    def _accumulate_node(self) -> Node:
        return accumulator(self)


def _unpickle(
    cls: type[Tensor], values: Any, device: str, requires_grad: bool, fields: dict[str, Any]
) -> Tensor:
    """The tensor `Tensor.__reduce_ex__` describes."""
    t = _wrap(backend.to_device(values, device), 0, cls)
    if requires_grad:
        t.requires_grad_(True)
    for name, value in fields.items():
        setattr(t, name, value)
    return t


def _unpickle_shared(
    cls: type[Tensor],
    where: tuple[str, str, tuple[int, ...]],
    requires_grad: bool,
    fields: dict[str, Any],
) -> Tensor:
    """The shared tensor `Tensor.__reduce_ex__` describes: the same memory, mapped here."""
    from .shared_memory import rebuild_shared

    return _unpickle(cls, rebuild_shared(*where), "cpu", requires_grad, fields)


def _init(t: Tensor, arr: Any, tapes: int = 0) -> None:
    t._data = arr
    t._tapes = tapes
    t.grad_fn = None
    t._out_nr = 0
    t._vc = [0]  # version counter, shared with views (engine/versions.py)
    t._grad = None
    t._grad_req = "add"
    t._accum = None
    t._hooks = None
    t._post_hooks = None


_new = Tensor.__new__


def _wrap(arr: Any, tapes: int = 0, cls: type[Tensor] = Tensor) -> Tensor:
    """A `cls` (Tensor or a facade's subclass) around `arr`, without copying or checking
    (internal fast path)."""
    t = _new(cls)
    # _init's body, inlined: this runs once per op output (the dispatcher's hot path)
    t._data = arr
    t._tapes = tapes
    t.grad_fn = None
    t._out_nr = 0
    t._vc = [0]
    t._grad = None
    t._grad_req = "add"
    t._accum = None
    t._hooks = None
    t._post_hooks = None
    return t


def array_class(t: Tensor) -> type[Tensor]:
    """The class of `t.detach()`, `t.data` and `t.grad`: a plain `Tensor` (a Parameter's
    gradient is no Parameter, as in PyTorch), or the array type a facade class names in its
    `_array_class` attribute (`mx.nd.NDArray` names itself, `mge.Parameter` names
    `mge.Tensor`)."""
    return getattr(type(t), "_array_class", Tensor)


def as_class(t: Tensor, cls: type[Tensor]) -> Tensor:
    """A `cls` tensor sharing `t`'s storage and version counter, tracked by no tape: what
    `t.detach()` is, under another class. Facades turn core results into their array types
    with it (`as_class(tg.zeros(3), mx.nd.NDArray)`)."""
    out = _wrap(t._data, 0, cls)
    out._vc = t._vc
    return out


def write_data(t: Tensor, values: Any) -> None:
    """Overwrite `t`'s values in place (broadcast to its shape, cast to its dtype, on its
    device) and bump its version: the one in-place write of code outside the ops (optimizer
    -free updates such as running statistics, `set_data`, `copyto`). Never recorded."""
    if isinstance(values, Tensor):
        values = values._data
    arr = backend.to_device(values, t.device) if hasattr(values, "shape") else values
    t._data[...] = arr
    bump_version(t)


def _move(t: Tensor, device: str) -> Tensor:
    # Tensor sits below the op table (ops import this module), so `to()` looks its one op
    # up when called: a call-time import, never an import-time circle.
    from .ops.casting import to_device

    return to_device(t, device)


def _axis(dim: SupportsIndex, ndim: int) -> int:
    d = int(dim)
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
            f"{max(ndim, 1) - 1}], but got {dim})"
        )
    return d % max(ndim, 1)


def _check_differentiable_dtype(t: Tensor, what: str) -> None:
    if not dtypes.is_floating(t.dtype):
        raise RuntimeError(
            f"{what}: only tensors of floating point dtype can require gradients, this one is "
            f"{t.dtype}; convert it first, e.g. t.float() or t.astype('float32')"
        )
