"""tg.save / tg.load: checkpoints in the safetensors format (no pickle: loading never runs code).

A checkpoint is a (nested) dict: tensors are stored as safetensors tensors under dotted keys
(`model.0.weight`, `optim.state.0.exp_avg`), everything else (ints, floats, bools, strings,
None, lists/tuples/dicts of them) lives in the file's metadata as JSON, together with the
shape of the nesting, so `tg.load` gives back the same structure. A flat dict of tensors (a
model's state_dict) is an ordinary safetensors file that any safetensors reader opens.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import warnings

import numpy as np

from . import backend
from .tensor import Tensor, _wrap

__all__ = ["save", "load"]  # PickleNameWarning: as tg.io.PickleNameWarning

_META_KEY = "tapegrad"  # metadata entry holding the JSON skeleton of the saved object
_FORMAT = 1
_TORCH_SUFFIXES = (".pt", ".pth")


class PickleNameWarning(UserWarning):
    """tg.save was given a `.pt`/`.pth` name, which promises a pickle that torch.load reads."""


def save(obj, path) -> None:
    """Write `obj` (a tensor, or a dict of tensors, numbers, strings, lists and dicts) to
    `path` (a file name or a binary file object) in the safetensors format. A named file is
    replaced atomically: an error (or a crash) while saving leaves an old checkpoint intact.
    A new file gets the usual permissions (0666 less the umask, as `open()` gives); a
    replaced one keeps its own.

    Naming the file `.pt`/`.pth` warns (`tg.io.PickleNameWarning`): it is still safetensors,
    which `torch.load` before 2.13 rejects; PyTorch reads its tensors (a flat dict, dotted
    keys) with `safetensors.torch.load_file`.

    >>> net = tg.nn.Linear(3, 1); opt = tg.optim.SGD(net.parameters(), lr=0.1)
    >>> ck = {"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 3}
    >>> tg.save(ck, "ck.safetensors")
    """
    from safetensors.numpy import save as st_save

    arrays: dict[str, np.ndarray] = {}
    skeleton = _encode(obj, (), arrays)
    metadata = {_META_KEY: json.dumps({"format": _FORMAT, "object": skeleton})}
    blob = st_save(arrays, metadata=metadata)
    write_file(blob, path, "tg.save")


def write_file(blob: bytes, path, who: str) -> None:
    """Write a safetensors `blob` to `path` (a name, replaced atomically, or a binary file
    object), warning for a .pt/.pth name; `who` names the caller in the warning."""
    if hasattr(path, "write"):  # a binary file object (io.BytesIO, an open file)
        path.write(blob)
        return
    path = os.fsdecode(os.fspath(path))  # str, bytes or os.PathLike
    if str(path).lower().endswith(_TORCH_SUFFIXES):
        warnings.warn(
            f"{who}: '{path}' is a safetensors file (not a PyTorch pickle), not the pickle "
            "a .pt/.pth name promises: torch.load before 2.13 rejects it, and PyTorch reads "
            "only its tensors, as one flat dict with dotted keys "
            "(safetensors.torch.load_file(path)). Name it .safetensors; tapegrad reads it "
            "whole.",
            PickleNameWarning,
            stacklevel=_caller_level(),
        )
    folder = os.path.dirname(os.path.abspath(path))
    mode = _file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=".tg-save-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            os.fchmod(f.fileno(), mode)  # mkstemp's 0600 would hide the checkpoint
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _file_mode(path: str) -> int:
    """The permissions `open(path, "w")` would leave: the old file's, or 0666 less umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask has no read-only form)
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _caller_level() -> int:
    """Point the warning at the user's line, through facade wrappers (torch.save ...)."""
    import sys
    import types

    frame: types.FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tapegrad"):
        frame, level = frame.f_back, level + 1
    return level


def load(path, map_location=None, *, weights_only=True):
    """Read a file written by `tg.save` (or any safetensors file; a name or a binary file
    object) and return its object.

    Tensors come back as `tg.Tensor`s (NumPy arrays saved as arrays), nested dicts, lists
    and tuples as they were. A file that is not valid safetensors, or is truncated, raises
    a ValueError naming the file; nothing is executed while reading.

    `map_location` ("cpu", "cuda") puts the tensors on that device; `weights_only` is
    accepted for PyTorch code (tapegrad files hold nothing else).

    >>> net = tg.nn.Linear(3, 1); tg.save({"model": net.state_dict()}, "ck.safetensors")
    >>> ck = tg.load("ck.safetensors"); net.load_state_dict(ck["model"])
    <All keys matched successfully>
    """
    arrays, meta, path = read_file(path, "tg.load")
    if map_location is not None:
        device = backend.normalize_device(map_location)
        arrays = {k: backend.to_device(a, device) for k, a in arrays.items()}
    if _META_KEY not in meta:  # a plain safetensors file from elsewhere: a flat dict
        return {k: _tensor(a) for k, a in arrays.items()}
    try:
        info = json.loads(meta[_META_KEY])
        version = info.get("format") if isinstance(info, dict) else None
        if type(version) is not int or version != _FORMAT:  # a newer or unknown layout
            raise _FormatError(version)
        return _decode(info["object"], arrays)
    except _FormatError as e:
        raise ValueError(
            f"tg.load: '{path}' has tapegrad checkpoint format {e.version!r}, but this version "
            f"of tapegrad reads format {_FORMAT} only; load it with the tapegrad that wrote "
            "it (or read the bare tensors with safetensors.numpy.load_file)"
        ) from None
    except (ValueError, KeyError, TypeError, RecursionError) as e:  # deep nesting: Recursion
        raise ValueError(
            f"tg.load: '{path}' has damaged tapegrad metadata ({type(e).__name__}: {e}); the "
            "tensors themselves can still be read with safetensors.numpy.load_file"
        ) from None


def read_file(path, who: str) -> tuple[dict, dict, str]:
    """(arrays, metadata, name) of a safetensors file (a name or a binary file object);
    a ValueError naming `who` and the file for anything that is not one."""
    from safetensors.numpy import load as st_load

    if hasattr(path, "read"):  # a binary file object
        data, path = path.read(), getattr(path, "name", "<file object>")
    else:
        path = os.fspath(path)
        with open(path, "rb") as f:
            data = f.read()
    try:
        arrays = st_load(data)
        header = json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])
    except Exception as e:  # safetensors raises its own error type for every malformed file
        raise ValueError(
            f"{who}: '{path}' is not a valid safetensors file ({e}).{_hint(data)}"
        ) from None
    return arrays, header.get("__metadata__") or {}, path


class _FormatError(Exception):
    def __init__(self, version):
        super().__init__(version)
        self.version = version


def _hint(data: bytes) -> str:
    if data[:2] == b"PK" or data[:1] == b"\x80":
        return (
            " It looks like a pickle/zip file (torch.save); tapegrad never unpickles. "
            "Convert it with safetensors.torch.save_file(state_dict, path)."
        )
    if len(data) < 8:
        return f" The file has only {len(data)} bytes; was it written completely?"
    return " Was it written completely by tg.save or safetensors?"


def _writable(arr):
    return arr if getattr(arr.flags, "writeable", True) else arr.copy()


def _tensor(arr) -> Tensor:
    return _wrap(_writable(arr))


def _key(path: tuple) -> str:
    return ".".join(str(p) for p in path) if path else "tensor"


def _encode(obj, path: tuple, arrays: dict):
    """The JSON skeleton of `obj`; tensors go into `arrays` under their dotted key."""
    if isinstance(obj, (Tensor, np.ndarray)):
        arr = obj._data if isinstance(obj, Tensor) else obj
        if backend.device_of(arr) != "cpu":
            arr = backend.to_device(arr, "cpu")
        key = _key(path)
        if key in arrays:
            raise ValueError(
                f"tg.save: two entries map to the same key {key!r} (a key containing '.' "
                "clashes with a nested one); rename one of them"
            )
        arrays[key] = arr if arr.flags.c_contiguous else np.array(arr, order="C")
        return {"$t" if isinstance(obj, Tensor) else "$a": key}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(
                    f"tg.save: dict keys must be strings or ints, got {type(k).__name__} "
                    f"{k!r} at '{_key(path)}'"
                )
            items.append([k, _encode(v, path + (k,), arrays)])
        return {"$d": items}
    if isinstance(obj, (list, tuple)):
        enc = [_encode(v, path + (i,), arrays) for i, v in enumerate(obj)]
        return {"$tu": enc} if isinstance(obj, tuple) else enc
    hint = " (save its .state_dict() instead)" if hasattr(obj, "state_dict") else ""
    raise TypeError(
        f"tg.save: can't save a {type(obj).__name__} at '{_key(path)}'{hint}; only tensors, "
        "arrays, numbers, strings, None, and lists/tuples/dicts of them are saved (no pickle)"
    )


def _decode(node, arrays: dict):
    if isinstance(node, list):
        return [_decode(v, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    if "$t" in node:
        return _tensor(_lookup(arrays, node["$t"]))
    if "$a" in node:
        return _writable(_lookup(arrays, node["$a"]))
    if "$tu" in node:
        return tuple(_decode(v, arrays) for v in node["$tu"])
    if "$d" in node:
        return {k: _decode(v, arrays) for k, v in node["$d"]}
    raise ValueError(f"unknown entry {sorted(node)}")


def _lookup(arrays: dict, key: str):
    if key not in arrays:
        raise KeyError(f"the metadata names tensor {key!r}, which the file does not hold")
    return arrays[key]
