"""torch.save / torch.load of the PyTorch facade, and `torch.serialization`'s allowlist.

PyTorch pickles whatever it is given and, since 2.6, `torch.load` unpickles only tensors,
containers and an allowlist of types unless `weights_only=False`. The facade keeps that
contract on tapegrad's container, a safetensors file:

- tensors (every one met, inside containers or inside pickled objects) are the file's
  tensors: one that owns its storage under its dotted key (a saved state_dict is a plain
  safetensors file with the names PyTorch gives), and storages that several saved tensors
  share (views, tied weights) once, as bytes, so that they are shared again after loading;
  the same tensor saved twice comes back as one object. `requires_grad`, `nn.Parameter`
  and the device go along.
- dicts, OrderedDicts, lists, tuples, numbers, strings and None are JSON in the metadata;
  anything else (sets, dtypes, devices, a whole Module, a class of the script) is pickled
  there, its tensors still stored as tensors.
- `load(weights_only=True)`, the default as in torch 2.13, unpickles only the types
  `torch.load` accepts by default (set, complex, bytes, bytearray, OrderedDict, dtypes,
  devices) and those given to `add_safe_globals`; any other class raises
  `pickle.UnpicklingError` naming it, before any of its code runs.

>>> import io, tapegrad.compat.torch as torch
>>> buf = io.BytesIO()
>>> w = torch.arange(4.0)
>>> torch.save({"w": w, "head": w[2:], "epoch": 3}, buf); _ = buf.seek(0)
>>> ck = torch.load(buf)
>>> ck["w"][3] = 9.0; ck["head"]  # still a view of "w"
tensor([2., 9.])
"""

from __future__ import annotations

import base64
import collections
import contextlib
import io
import json
import os
import pickle
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ... import backend
from ... import io as tg_io
from ...creation import from_numpy
from ...tensor import Tensor

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
]

_META_KEY = "tapegrad.torch"  # (tg.load reads such a file as its flat dict of tensors)
_FORMAT = 1
_STORAGE = "__storage__."  # the key prefix of a storage that several tensors share
_DEFAULT_SAFE = {  # what torch.load(weights_only=True) accepts without add_safe_globals
    ("builtins", "set"),
    ("builtins", "complex"),
    ("builtins", "bytes"),
    ("builtins", "bytearray"),
    ("collections", "OrderedDict"),
    ("numpy", "dtype"),  # tapegrad's dtypes are NumPy's
    ("tapegrad.compat.torch", "device"),
}
_user_safe: dict[tuple[str, str], Any] = {}


# ------------------------------------------------------------------ the allowlist
def _global_key(obj) -> tuple[str, str]:
    if isinstance(obj, tuple):  # (obj, "module.name"), as torch accepts
        module, _, name = obj[1].rpartition(".")
        return module, name
    return obj.__module__, obj.__qualname__


def add_safe_globals(safe_globals: list) -> None:
    """Allow `load(weights_only=True)` to unpickle these classes or functions (or
    `(obj, "module.name")` pairs), as `torch.serialization.add_safe_globals`.

    >>> import collections, tapegrad.compat.torch as torch
    >>> torch.serialization.add_safe_globals([collections.defaultdict])
    >>> collections.defaultdict in torch.serialization.get_safe_globals()
    True
    >>> torch.serialization.clear_safe_globals()
    """
    for obj in safe_globals:
        _user_safe[_global_key(obj)] = obj


def get_safe_globals() -> list:
    """The classes and functions `add_safe_globals` allowed.

    >>> import tapegrad.compat.torch as torch
    >>> torch.serialization.get_safe_globals()
    []
    """
    return list(_user_safe.values())


def clear_safe_globals() -> None:
    """Forget what `add_safe_globals` allowed.

    >>> import tapegrad.compat.torch as torch
    >>> torch.serialization.clear_safe_globals()
    """
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Allow these globals for `load(weights_only=True)` inside the `with` block only.

    >>> import collections, io, tapegrad.compat.torch as torch
    >>> buf = io.BytesIO(); torch.save(collections.defaultdict(int), buf); _ = buf.seek(0)
    >>> with torch.serialization.safe_globals([collections.defaultdict, int]):  # (its factory)
    ...     torch.load(buf)
    defaultdict(<class 'int'>, {})
    """
    before = dict(_user_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe.clear()
        _user_safe.update(before)


# ------------------------------------------------------------------ saving
class _Saver:
    """Walks the object: the JSON skeleton, and the table of the tensors met."""

    def __init__(self, protocol: int) -> None:
        # (protocol 2 names builtins `__builtin__`, a Python 2 spelling: 4 at least)
        self.protocol = max(4, protocol)
        self.tensors: list[tuple[Tensor, str]] = []  # (tensor, dotted key)
        self.index: dict[int, int] = {}  # id(tensor) -> its place in `tensors`

    def tensor(self, t: Tensor, key: str) -> int:
        i = self.index.get(id(t))
        if i is None:
            i = self.index[id(t)] = len(self.tensors)
            self.tensors.append((t, key))
        return i

    def encode(self, obj, path: tuple):
        if isinstance(obj, Tensor):
            return {"$T": self.tensor(obj, ".".join(map(str, path)) or "tensor")}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if type(obj) in (dict, collections.OrderedDict):
            items = [[self._key(k, path), self.encode(v, path + (k,))] for k, v in obj.items()]
            return {"$od" if type(obj) is collections.OrderedDict else "$d": items}
        if type(obj) is list:
            return [self.encode(v, path + (i,)) for i, v in enumerate(obj)]
        if type(obj) is tuple:
            return {"$tu": [self.encode(v, path + (i,)) for i, v in enumerate(obj)]}
        return {"$p": self._pickle(obj)}

    def _key(self, k, path):
        return k if isinstance(k, (str, int)) and not isinstance(k, bool) else self.encode(k, path)

    def _pickle(self, obj) -> str:
        buf = io.BytesIO()
        saver = self

        class _Pickler(pickle.Pickler):
            def persistent_id(self, o):
                if isinstance(o, Tensor):
                    return ("T", saver.tensor(o, f"__tensor__.{len(saver.tensors)}"))
                return None

        _Pickler(buf, protocol=self.protocol).dump(obj)
        return base64.b64encode(buf.getvalue()).decode("ascii")

    def table(self) -> tuple[list[dict], dict[str, np.ndarray]]:
        """Each tensor's entry, and the arrays to store: a storage that two or more saved
        tensors share is stored once, as bytes, each tensor as its place in it."""
        from ...nn.parameter import Parameter

        cpu = [_cpu(t) for t, _ in self.tensors]
        roots: dict[int, list[int]] = {}
        for i, a in enumerate(cpu):
            root = _root(a)
            if root is not None:
                roots.setdefault(id(root), []).append(i)
        arrays: dict[str, np.ndarray] = {}
        entries: list[dict] = []
        shared = {
            i: n for n, group in enumerate(g for g in roots.values() if len(g) > 1) for i in group
        }
        storages: dict[int, str] = {}
        for i, ((t, key), a) in enumerate(zip(self.tensors, cpu)):
            entry: dict[str, Any] = {"rg": bool(t.requires_grad), "dev": _location(t)}
            if isinstance(t, Parameter):
                entry["param"] = True
            if i in shared:
                root = _root(a)
                assert root is not None
                skey = storages.get(shared[i])
                if skey is None:
                    skey = storages[shared[i]] = f"{_STORAGE}{shared[i]}"
                    arrays[skey] = root.reshape(-1).view(np.uint8)
                offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
                entry.update(
                    s=skey,
                    o=int(offset),
                    shape=list(a.shape),
                    strides=list(a.strides),
                    dtype=a.dtype.str,
                )
            else:
                while key in arrays:  # (a dotted key that clashes with a nested one)
                    key += "'"
                arrays[key] = a if a.flags.c_contiguous else np.ascontiguousarray(a)
                entry["k"] = key
            entries.append(entry)
        return entries, arrays


def _cpu(t: Tensor) -> np.ndarray:
    return t.detach().numpy()  # (a CPU tensor's own array: its .base shows what it shares)


def _location(t: Tensor) -> str:
    return "cpu" if t.device == "cpu" else "cuda:0"


def _root(a: np.ndarray) -> np.ndarray | None:
    """The array that owns `a`'s memory, when its bytes can be stored and viewed again."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.base is not None or not root.flags.c_contiguous or root.dtype.hasobject:
        return None  # (memory of a foreign buffer, or an array NumPy cannot rebuild)
    if np.dtype(a.dtype.str) != a.dtype or np.dtype(root.dtype.str) != root.dtype:
        return None  # a dtype without a string form (bfloat16): stored on its own
    return root


def save(obj: Any, f, pickle_module: Any = None, pickle_protocol: int = 2, **_ignored: Any) -> None:
    """torch.save: write `obj` (tensors, state_dicts, optimizer state, any picklable object)
    to `f`, a file name or a binary file object.

    The file is a safetensors file (see the module's description): the tensors of a saved
    state_dict are readable with `safetensors.torch.load_file`; a `.pt`/`.pth` name warns
    that PyTorch's own `torch.load` does not read it whole. `pickle_module` and PyTorch's
    zip-format options are accepted and ignored.

    >>> import io, tapegrad.compat.torch as torch
    >>> net = torch.nn.Linear(2, 1); buf = io.BytesIO()
    >>> torch.save({"model": net.state_dict(), "step": 10}, buf)
    """
    saver = _Saver(pickle_protocol)
    skeleton = saver.encode(obj, ())
    entries, arrays = saver.table()
    meta = {_META_KEY: json.dumps({"format": _FORMAT, "tensors": entries, "object": skeleton})}
    from safetensors.numpy import save as st_save

    tg_io.write_file(st_save(arrays, metadata=meta), f, "torch.save")


# ------------------------------------------------------------------ loading
def _refused(module: str, name: str) -> pickle.UnpicklingError:
    full = f"{module}.{name}" if module != "builtins" else name
    return pickle.UnpicklingError(
        f"torch.load: Weights only load failed: Unsupported global: GLOBAL {full} was not an "
        f"allowed global by default. Load with weights_only=False if you trust the file (it "
        f"can run arbitrary code), or allow it with "
        f"torch.serialization.add_safe_globals([{full}]) or the "
        f"torch.serialization.safe_globals([{full}]) context manager."
    )


class _Loader:
    def __init__(self, entries, arrays, map_location, weights_only: bool) -> None:
        self.entries, self.arrays = entries, arrays
        self.map_location, self.weights_only = map_location, weights_only
        self.made: dict[int, Tensor] = {}
        self.storages: dict[str, np.ndarray] = {}

    def tensor(self, i: int) -> Tensor:
        t = self.made.get(i)
        if t is None:
            t = self.made[i] = self._make(self.entries[i])
        return t

    def _make(self, e: dict) -> Tensor:
        if "s" in e:
            storage = self.storages.get(e["s"])
            if storage is None:
                storage = self.storages[e["s"]] = np.array(self.arrays[e["s"]])  # writable
            dtype = np.dtype(e["dtype"])
            if dtype.kind not in "biufc":
                raise ValueError(f"tensor dtype {dtype} is not a number type")
            # (NumPy checks that the shape, strides and offset stay inside the storage)
            arr = np.ndarray(tuple(e["shape"]), dtype, storage, e["o"], tuple(e["strides"]))
        else:
            arr = self.arrays[e["k"]]
            if not arr.flags.writeable:
                arr = arr.copy()
        t = self._placed(from_numpy(arr), e["dev"])
        if e.get("param"):
            from ...nn.parameter import Parameter

            return Parameter(t, requires_grad=e["rg"])
        if e["rg"]:
            t.requires_grad_(True)
        return t

    def _placed(self, t: Tensor, location: str) -> Tensor:
        where = self.map_location
        if callable(where) and not isinstance(where, str) and not hasattr(where, "type"):
            moved = where(t, location)  # PyTorch's (storage, location) -> storage or None
            return t if moved is None else moved
        if isinstance(where, dict):
            where = where.get(location, where.get(location.partition(":")[0], location))
        device = backend.normalize_device(location if where is None else where)
        return t if t.device == device else t.to(device)

    def decode(self, node):
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$T" in node:
            return self.tensor(node["$T"])
        if "$d" in node:
            return {self.decode(k): self.decode(v) for k, v in node["$d"]}
        if "$od" in node:
            return collections.OrderedDict((self.decode(k), self.decode(v)) for k, v in node["$od"])
        if "$tu" in node:
            return tuple(self.decode(v) for v in node["$tu"])
        if "$p" in node:
            return self._unpickle(base64.b64decode(node["$p"]))
        raise ValueError(f"unknown entry {sorted(node)}")

    def _unpickle(self, data: bytes):
        loader = self

        class _Unpickler(pickle.Unpickler):
            def find_class(self, module, name):
                module = "builtins" if module == "__builtin__" else module
                allowed = (module, name) in _DEFAULT_SAFE or (module, name) in _user_safe
                if loader.weights_only and not allowed:
                    raise _refused(module, name)
                return super().find_class(module, name)

            def persistent_load(self, pid):
                if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "T"):
                    raise pickle.UnpicklingError(f"torch.load: unknown persistent id {pid!r}")
                return loader.tensor(pid[1])

        return _Unpickler(io.BytesIO(data)).load()


def load(
    f,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **_ignored: Any,
) -> Any:
    """torch.load: the object `save` wrote to `f` (a file name or a binary file object);
    also reads `tg.save` checkpoints, plain safetensors files, and the tensors, state dicts
    and containers in a checkpoint PyTorch's own torch.save wrote (its zip format).

    Args:
        map_location: where the tensors go: None (where they were saved), 'cpu', 'cuda', a
            `torch.device`, a dict from saved to new locations (`{'cuda:0': 'cpu'}`), or a
            function `(tensor, location) -> tensor or None` (None: as without it).
        weights_only: True (the default, as torch 2.13's None) unpickles only tensors,
            containers, numbers, strings and the types `torch.load` allows by default (see
            `add_safe_globals`); any other class raises `pickle.UnpicklingError` naming it.
            False unpickles everything: only for files you trust.
        pickle_module: a module other than None makes the default weights_only False,
            as in torch (the facade's own unpickler still reads the file).
        mmap: accepted and ignored.

    The environment variables torch reads override weights_only as in torch:
    TORCH_FORCE_WEIGHTS_ONLY_LOAD=1 forces True; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 makes it
    False when the call did not pass it (with torch's UserWarning); both set is an error.

    >>> import io, tapegrad.compat.torch as torch
    >>> buf = io.BytesIO(); torch.save([torch.ones(2), {"lr": 0.1}], buf); _ = buf.seek(0)
    >>> torch.load(buf, map_location="cpu")
    [tensor([1., 1.]), {'lr': 0.1}]
    """
    weights_only = _weights_only(weights_only, pickle_module)
    data = _Bytes(f)
    from . import _torch_zip

    if _torch_zip.is_torch_zip(data.getvalue()):  # written by PyTorch itself
        placer = _Loader([], {}, map_location, weights_only)
        return _torch_zip.load_zip(
            data.getvalue(),
            data.name,
            placer._placed,
            weights_only,
            lambda module, name: (module, name) in _DEFAULT_SAFE or (module, name) in _user_safe,
            _refused,
        )
    arrays, meta, name = tg_io.read_file(data, "torch.load")
    if _META_KEY not in meta:  # tg.save's checkpoint, or a plain safetensors file
        data.seek(0)
        return tg_io.load(data, map_location=_device_only(map_location))
    try:
        info = json.loads(meta[_META_KEY])
        if info.get("format") != _FORMAT:
            raise ValueError(f"format {info.get('format')!r}, this tapegrad reads {_FORMAT}")
        loader = _Loader(info["tensors"], arrays, map_location, weights_only)
        return loader.decode(info["object"])
    except pickle.UnpicklingError:
        raise
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise ValueError(
            f"torch.load: '{name}' has damaged metadata ({type(e).__name__}: {e})"
        ) from None


_TRUE = ("1", "y", "yes", "true")  # the spellings torch accepts for its switches


def _weights_only(weights_only: bool | None, pickle_module: Any) -> bool:
    """torch.load's weights_only after the default and the two environment overrides."""
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError(
            "torch.load: only one of TORCH_FORCE_WEIGHTS_ONLY_LOAD or "
            "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD should be set, but both were set; unset one"
        )
    if force:
        return True
    if weights_only is None and force_no:
        warnings.warn(
            "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the "
            "`weights_only` argument was not explicitly passed to `torch.load`, forcing "
            "weights_only=False.",
            UserWarning,
            stacklevel=3,
        )
        return False
    if weights_only is None:
        return pickle_module is None  # torch: an explicit pickle_module loads everything
    return bool(weights_only)


class _Bytes(io.BytesIO):
    """A file's bytes, read once, under the file's name (for the error messages)."""

    def __init__(self, f) -> None:
        if hasattr(f, "read"):
            super().__init__(f.read())
            self.name = getattr(f, "name", "<file object>")
        else:
            with open(f, "rb") as src:
                super().__init__(src.read())
            self.name = str(f)


def _device_only(map_location: Any) -> Any:
    """What tg.load takes of a map_location: a device (a dict or function: their 'cpu')."""
    if map_location is None or isinstance(map_location, str) or hasattr(map_location, "type"):
        return None if map_location is None else str(map_location)
    if isinstance(map_location, dict):
        return map_location.get("cpu")
    return None
