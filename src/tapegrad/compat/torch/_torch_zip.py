"""Reading files that PyTorch's own torch.save wrote (its zip format, 1.6 and later): a
`data.pkl` pickle whose tensors are persistent ids naming raw storages in `data/<key>`.

Only the globals of such a file's tensors and containers are given meaning here
(`torch._utils._rebuild_tensor_v2`, `_rebuild_parameter`, the typed storages, dtypes,
`torch.device`, `torch.Size`, and what `weights_only` allows); anything else is refused
under `weights_only=True`, as by torch.load, and a pickled PyTorch object other than a
tensor (an `nn.Module`, an optimizer) is refused always, since its pickled state is
PyTorch's internals. Tensors that shared a storage share one array again.
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import dtypes
from ...creation import from_numpy
from ...tensor import Tensor

_STORAGE_DTYPES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "BFloat16Storage": "bfloat16",
}
_TORCH_DTYPES = {
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int": "int32",
    "int16": "int16",
    "short": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}


def is_torch_zip(data: bytes) -> bool:
    """Whether `data` looks like PyTorch's zip checkpoint (a zip holding a data.pkl)."""
    if data[:4] != b"PK\x03\x04":
        return False
    try:
        return any(n.endswith("data.pkl") for n in zipfile.ZipFile(io.BytesIO(data)).namelist())
    except zipfile.BadZipFile:
        return False


class _StorageType:
    def __init__(self, dtype: str) -> None:
        self.dtype = dtype


def _dtype(name: str) -> np.dtype:
    return dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def load_zip(
    data: bytes,
    name: str,
    placed: Callable[[Tensor, str], Tensor],
    weights_only: bool,
    allowed: Callable[[str, str], bool],
    refused: Callable[[str, str], Exception],
) -> Any:
    """The object in PyTorch's checkpoint `data`; `placed(tensor, location)` applies the
    map_location, `allowed(module, name)` is weights_only's allowlist."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    prefix = pkl[: -len("data.pkl")]
    order = "little"
    if prefix + "byteorder" in archive.namelist():
        order = archive.read(prefix + "byteorder").decode().strip()
    storages: dict[str, tuple[np.ndarray, str]] = {}

    def storage(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"torch.load: '{name}': unknown persistent id {pid!r}")
        _, kind, key, location, _numel = pid
        if key not in storages:
            if not isinstance(kind, _StorageType):
                raise pickle.UnpicklingError(
                    f"torch.load: '{name}': storage {key!r} has no known element type"
                )
            dt = _dtype(kind.dtype)
            if dt.itemsize > 1:
                dt = dt.newbyteorder("<" if order == "little" else ">")
            raw = np.frombuffer(archive.read(f"{prefix}data/{key}"), dtype=dt)
            storages[key] = (raw.astype(raw.dtype.newbyteorder("="), copy=True), str(location))
        return storages[key]

    def rebuild_tensor(stored, offset, size, stride, requires_grad, hooks=None, *extra):
        arr, location = stored
        item = arr.dtype.itemsize
        # (NumPy checks that the view stays inside the storage)
        view = np.ndarray(
            tuple(size), arr.dtype, arr, int(offset) * item, tuple(s * item for s in stride)
        )
        t = placed(from_numpy(view), location)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def rebuild_parameter(t, requires_grad, hooks=None, *extra):
        from ...nn.parameter import Parameter

        return Parameter(t.detach(), requires_grad=requires_grad)

    def torch_global(module: str, attr: str):
        if module == "torch._utils" and attr == "_rebuild_tensor_v2":
            return rebuild_tensor
        if module == "torch._utils" and attr in (
            "_rebuild_parameter",
            "_rebuild_parameter_with_state",
        ):
            return rebuild_parameter
        if module == "torch" and attr in _STORAGE_DTYPES:
            return _StorageType(_STORAGE_DTYPES[attr])
        if module == "torch" and attr in _TORCH_DTYPES:
            return _dtype(_TORCH_DTYPES[attr])
        if module == "torch" and attr == "device":
            from . import device

            return device
        if module == "torch" and attr == "Size":
            return tuple
        return None

    class _Unpickler(pickle.Unpickler):
        def find_class(self, module, attr):
            module = "builtins" if module == "__builtin__" else module
            found = torch_global(module, attr)
            if found is not None:
                return found
            if module == "torch" or module.startswith("torch."):
                raise pickle.UnpicklingError(
                    f"torch.load: '{name}' holds a pickled PyTorch {module}.{attr}, whose "
                    "state is PyTorch's own; tapegrad reads tensors, containers and plain "
                    "Python objects from PyTorch's files. Save its state_dict() instead."
                )
            if weights_only and not allowed(module, attr):
                raise refused(module, attr)
            if module == "collections" and attr == "OrderedDict":
                return collections.OrderedDict
            return super().find_class(module, attr)

        def persistent_load(self, pid):
            return storage(pid)

    return _Unpickler(io.BytesIO(archive.read(pkl))).load()
