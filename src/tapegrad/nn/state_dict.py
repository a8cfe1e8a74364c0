"""Saving and loading a Module's state: `state_dict` and `load_state_dict` (all-or-nothing:
every key, shape and dtype is checked before anything is written). A base class of Module;
its names are importable from module.py too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from .. import backend
from ..engine.versions import bump_version
from ..tensor import Tensor

if TYPE_CHECKING:
    from .module import Module


class _StateDictMixin:
    """state_dict / load_state_dict for Module (which provides `named_modules` and the
    `_parameters`, `_buffers`, `_non_persistent` tables)."""

    if TYPE_CHECKING:  # declared for the type checker only: Module defines it

        def named_modules(
            self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
        ) -> Iterator[tuple[str, Module]]: ...

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict name -> tensor of every parameter and persistent buffer.

        The tensors share storage with the module (detached unless keep_vars=True);
        uninitialized (lazy) parameters are left out."""
        out = OrderedDict() if destination is None else destination
        for mod_prefix, mod in self.named_modules(prefix=prefix.rstrip(".")):
            dot = mod_prefix + ("." if mod_prefix else "")
            for name, p in mod._parameters.items():
                if p is not None and not p.is_lazy:
                    out[dot + name] = p if keep_vars else p.detach()
            for name, b in mod._buffers.items():
                if b is not None and name not in mod._non_persistent:
                    out[dot + name] = b if keep_vars else b.detach()
        return out

    def _state_slots(self):
        """name -> (owning module, attribute, kind) for everything state_dict covers."""
        slots = OrderedDict()
        for mod_prefix, mod in self.named_modules():
            dot = mod_prefix + ("." if mod_prefix else "")
            for name, p in mod._parameters.items():
                if p is not None:
                    slots[dot + name] = (mod, name, "parameter")
            for name, b in mod._buffers.items():
                if b is not None and name not in mod._non_persistent:
                    slots[dot + name] = (mod, name, "buffer")
        return slots

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from `state_dict` into this module, in place.

        Everything is validated first (keys when strict, then every shape and dtype); only
        then is anything written, so an error leaves the module unchanged. Returns
        `(missing_keys, unexpected_keys)` (a named tuple, as PyTorch).
        """
        if not hasattr(state_dict, "items"):
            raise TypeError(f"load_state_dict expects a dict, got {type(state_dict).__name__}")
        slots = self._state_slots()
        missing = [k for k in slots if k not in state_dict]
        unexpected = [k for k in state_dict if k not in slots]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing)
                )
            if unexpected:
                parts.append(
                    "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
                )
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + ".\n\t".join(parts)
                + ".\nNothing was loaded; pass strict=False to load the "
                "matching keys only."
            )
        plan = []
        errors = []
        for key, (mod, name, _what) in slots.items():
            if key not in state_dict:
                continue
            target = getattr(mod, name)
            arr = _as_array(state_dict[key])
            if arr is None:
                errors.append(
                    f'"{key}": expected a tensor or array, got {type(state_dict[key]).__name__}'
                )
                continue
            lazy = bool(getattr(target, "is_lazy", False))  # (Uninitialized)Parameter/Buffer
            if not lazy and tuple(arr.shape) != tuple(target.shape):
                errors.append(
                    f'size mismatch for "{key}": copying a param with shape '
                    f"{tuple(arr.shape)} from checkpoint, the shape in current model is "
                    f"{tuple(target.shape)}"
                )
                continue
            if _kind(arr.dtype) != _kind(target.dtype):
                errors.append(
                    f'dtype mismatch for "{key}": checkpoint has {arr.dtype}, the model '
                    f"has {target.dtype}; convert one of them first"
                )
                continue
            plan.append((target, arr, lazy))
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
                + "\nNothing was loaded."
            )
        for target, arr, lazy in plan:
            if lazy:
                target.materialize(arr.shape)
            data = target._data
            data[...] = backend.to_device(arr, target.device)
            bump_version(target)
        return _IncompatibleKeys(missing, unexpected)


class _IncompatibleKeys(tuple):
    """(missing_keys, unexpected_keys), also readable by name."""

    def __new__(cls, missing, unexpected):
        return super().__new__(cls, (missing, unexpected))

    @property
    def missing_keys(self):
        return self[0]

    @property
    def unexpected_keys(self):
        return self[1]

    def __repr__(self) -> str:
        if not self[0] and not self[1]:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})"


def _as_array(value):
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        return value
    if isinstance(value, (int, float, bool, list, tuple, np.generic)):
        return np.asarray(value)
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a PyTorch tensor
        return value.detach().cpu().numpy()
    return None


def _kind(dtype) -> str:
    """Floating, complex, integer (signed or not) or bool: values may move within a kind."""
    k = np.dtype(dtype).kind
    return "i" if k == "u" else k
