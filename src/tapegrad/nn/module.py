"""Module and Parameter: the base of every layer (PyTorch's API, MXNet's train/predict mode).

A Module registers what is assigned to it: a `Parameter` becomes a parameter, a `Module` a
submodule, a tensor given to `register_buffer` a buffer (running statistics). Everything
else is a plain attribute. Saving and loading (`state_dict`, `load_state_dict`) come from
state_dict.py, a base class of Module.

    >>> class Net(tg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = tg.nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
"""

from __future__ import annotations

from collections import OrderedDict

from .. import backend, dtypes
from ..engine.state import state
from ..tensor import Tensor, _wrap
from .parameter import Parameter
from .state_dict import _as_array, _IncompatibleKeys, _kind, _StateDictMixin  # noqa: F401

__all__ = ["Module", "Parameter"]


class Module(_StateDictMixin):
    """Base class of layers and models: subclass it, assign layers and parameters in
    `__init__`, write `forward`, call the module.

    `training`: True (PyTorch's default; `train()` / `eval()` switch it) or None, where the
    module follows `tg.autograd.is_training()` (on inside `record()`, as MXNet's Blocks).
    Layers that act differently while training read `is_training_now`.
    """

    _version_tag = 1  # bumped by nothing yet; reserved for state_dict migrations

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------------ registration
    def _check_init(self, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {what} before Module.__init__() call; call super().__init__() "
                f"first in {type(self).__name__}.__init__"
            )

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init("parameters")
            self._discard(name, keep="_parameters")
            d["_parameters"][name] = value
        elif isinstance(value, Module):
            self._check_init("modules")
            self._discard(name, keep="_modules")
            d["_modules"][name] = value
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as parameter '{name}' of "
                    f"{type(self).__name__}: wrap it as tg.nn.Parameter(...) (or assign None)"
                )
            d["_parameters"][name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as child module '{name}' of "
                    f"{type(self).__name__}: assign a Module (or None)"
                )
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as buffer '{name}' of "
                    f"{type(self).__name__}: assign a Tensor (or None)"
                )
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _discard(self, name: str, keep: str = "") -> None:
        """Forget `name` as an attribute, parameter, child or buffer; a replacement of the
        same kind (`keep`) stays where it was in its dict, as PyTorch's: `named_parameters()`
        and `state_dict()` keep their order when `m.weight = Parameter(...)` replaces one."""
        d = self.__dict__
        d.pop(name, None)
        for key in ("_parameters", "_modules", "_buffers"):
            if key != keep:
                d[key].pop(name, None)
        d["_non_persistent"].discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            table = d.get(key)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if name in d.get(key, ()):
                del d[key][name]
                d["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        extra = list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(super().__dir__()) | set(extra))

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (a Parameter, or None for an absent one such as `bias=False`)."""
        self._check_init("parameters")
        _check_name(self, name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter('{name}'): expected a tg.nn.Parameter or None, got "
                f"{type(param).__name__}"
            )
        self._discard(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer: a tensor that is state but not a parameter (running statistics).

        Persistent buffers are part of `state_dict()`."""
        self._check_init("buffers")
        _check_name(self, name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"register_buffer('{name}'): expected a Tensor or None, got {type(tensor).__name__}"
            )
        self._discard(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module) -> None:
        """Add a child module (or None) under `name`."""
        self._check_init("modules")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module('{name}'): {type(module).__name__} is not a Module")
        _check_name(self, name, "module")
        self._discard(name)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ("encoder.layers.0")."""
        mod = self
        for part in target.split(".") if target else ():
            if part not in mod._modules or mod._modules[part] is None:
                raise AttributeError(
                    f"{type(mod).__name__} has no submodule '{part}' (in '{target}')"
                )
            mod = mod._modules[part]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path (`net.get_parameter("0.weight")`)."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter '{name}'")
        return mod._parameters[name]

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """(name, module) for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            yield from child.named_modules(
                memo, prefix + ("." if prefix else "") + name, remove_duplicate
            )

    def modules(self):
        """This module and every descendant, depth first, each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """(name, module) for each direct child, each once."""
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        """The direct children, each once."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        mods = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, mod in mods:
            for name, value in mod.__dict__[table].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        """(dotted name, Parameter) pairs, in registration order, each parameter once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Every parameter of this module and (recurse=True) its descendants, each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(dotted name, tensor) for every buffer (BatchNorm's running statistics, ...)."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Every buffer of this module and (recurse=True) its descendants, each once."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ------------------------------------------------------------------ modes and utilities
    @property
    def is_training_now(self) -> bool:
        """Whether Dropout/BatchNorm should act as in training right now: `training`, or the
        thread's train mode (`tg.autograd.is_training()`) when `training` is None."""
        t = self.training
        return state.training if t is None else t

    def train(self, mode: bool = True):
        """Training mode for this module and every descendant (returns self)."""
        if not isinstance(mode, bool):
            raise ValueError(f"train(mode): mode must be a bool, got {mode!r}")
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        """Evaluation mode (Dropout off, BatchNorm uses running statistics); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set `requires_grad` on every parameter (False freezes them); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (to None, or to zeros in place)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad._data[...] = 0

    def apply(self, fn):
        """Call fn(module) on every descendant (children first), then on self; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def _convert(self, fn) -> Module:
        for m in self.modules():
            for table in ("_parameters", "_buffers"):
                for t in m.__dict__[table].values():
                    if t is None:
                        continue
                    new = fn(t._data)
                    if new is not t._data:
                        t._data = new
                        if t._grad is not None:
                            t._grad = _wrap(fn(t._grad._data))
        return self

    def to(self, device=None, dtype=None):
        """Move (and/or cast) every parameter and buffer in place; returns self.

        `to("cuda")`, `to(tg.float64)`, `to("cpu", dtype=...)`. Only floating tensors are cast."""
        if dtype is None and device is not None and not _is_device(device):
            device, dtype = None, device
        dev = backend.normalize_device(device) if device is not None else None
        dt = dtypes.as_dtype(dtype) if dtype is not None else None
        if dt is not None and not dtypes.is_floating(dt):
            raise TypeError(f"Module.to: dtype must be floating, got {dt}")

        def convert(arr):
            if dt is not None and arr.dtype.kind == "f" and arr.dtype != dt:
                arr = arr.astype(dt)
            return backend.to_device(arr, dev) if dev is not None else arr

        return self._convert(convert)

    def share_memory(self):
        """Put every parameter and buffer in memory shared between processes
        (`Tensor.share_memory_`), so a copy pickled into another process (a
        `multiprocessing` Process's argument) trains the same weights; returns self.

        >>> m = tg.nn.Linear(2, 1).share_memory(); m.weight.is_shared()
        True
        """
        for t in [*self.parameters(), *self.buffers()]:
            t.share_memory_()
        return self

    def cpu(self):
        """Move every parameter and buffer to the CPU, in place; returns self."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move every parameter and buffer to the GPU (CuPy), in place; returns self."""
        return self.to("cuda")

    def float(self):  # noqa: A003
        """Cast floating parameters and buffers to float32, in place; returns self."""
        return self.to(dtype=dtypes.float32)

    def double(self):
        """Cast floating parameters and buffers to float64, in place; returns self."""
        return self.to(dtype=dtypes.float64)

    def half(self):
        """Cast floating parameters and buffers to float16, in place; returns self."""
        return self.to(dtype=dtypes.float16)

    def type(self, dst_type):  # noqa: A003
        """Cast floating parameters and buffers to `dst_type`, in place; returns self."""
        return self.to(dtype=dst_type)

    # ------------------------------------------------------------------ calling
    def forward(self, *args, **kwargs):
        """The computation: define it in a subclass, then call the module (`net(x)`),
        which runs the hooks around it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function; '
            "define forward(self, ...) in your subclass"
        )

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        d = self.__dict__
        if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            from .backward_hooks import call_with_backward_hooks

            out = call_with_backward_hooks(self, args, kwargs)
        else:
            out = self.forward(*args, **kwargs)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                new = hook(self, args, out)
                if new is not None:
                    out = new
        return out

    def register_forward_pre_hook(self, hook):
        """hook(module, args) -> None or new args, before every forward. Returns a handle."""
        return _HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """hook(module, args, output) -> None or a new output, after every forward."""
        return _HookHandle(self._forward_hooks, hook)

    def register_full_backward_hook(self, hook):
        """hook(module, grad_input, grad_output) -> None or a new grad_input, once the
        gradients of this module's positional tensor inputs are known (nn/backward_hooks.py).
        Returns a handle."""
        return _HookHandle(self._backward_hooks, hook)

    def register_full_backward_pre_hook(self, hook):
        """hook(module, grad_output) -> None or a new grad_output, when the gradients of this
        module's outputs arrive. Returns a handle."""
        return _HookHandle(self._backward_pre_hooks, hook)

    # ------------------------------------------------------------------ repr
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in its repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for name, child in self._modules.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        if not self._modules:
            return f"{type(self).__name__}({extra})"
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"


class _HookHandle:
    _next_id = 0

    def __init__(self, table, hook) -> None:
        _HookHandle._next_id += 1
        self.id = _HookHandle._next_id
        self._table = table
        table[self.id] = hook

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _check_name(module: Module, name: str, what: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name must be a string, got {type(name).__name__}")
    if not name or "." in name:
        raise KeyError(f"{what} name can't be empty or contain '.', got '{name}'")
    if (
        name in module.__dict__
        and name not in module._parameters
        and name not in module._buffers
        and name not in module._modules
    ):
        raise KeyError(f"attribute '{name}' already exists on {type(module).__name__}")


def _is_device(x) -> bool:
    try:
        backend.normalize_device(x)
        return True
    except (ValueError, TypeError):
        return False
