"""`megengine.hub`: build models the MegEngine way; weights come from local files only.

`@hub.pretrained(url)` on a model builder works as in MegEngine: `builder()` builds the
model, `builder(pretrained=True)` also loads its weights, from the file named like the
URL's last part in `hub.get_dir()` (`$MGE_HUB_DIR`, default `~/.cache/megengine/hub`):
tapegrad runs offline, so download the file there first. `hub.load(repo, entry)` takes a
local directory holding a `hubconf.py`.

    >>> from tapegrad.compat.megengine import hub
    >>> @hub.pretrained("https://example.com/weights/tiny_linear.pkl")
    ... def tiny(**kwargs):
    ...     return mge.module.Linear(2, 1)
    >>> type(tiny()).__name__
    'Linear'
"""

from __future__ import annotations

import functools
import importlib.util
import os
import pathlib
import pickle

import numpy as np

from ..._facade import facade_getattr

__all__ = [
    "pretrained",
    "load",
    "list",
    "help",
    "get_dir",
    "set_dir",
    "load_serialized_obj_from_url",
    "import_module",
]

_dir: list[str | None] = [None]


def get_dir() -> str:
    """Where weight files are looked up."""
    return (
        _dir[0]
        or os.environ.get("MGE_HUB_DIR")
        or str(pathlib.Path.home() / ".cache" / "megengine" / "hub")
    )


def set_dir(path) -> None:
    """Look weight files up in `path` from now on."""
    _dir[0] = str(path)


def _local_file(url: str) -> pathlib.Path:
    path = pathlib.Path(url)
    if path.is_file():
        return path
    cached = pathlib.Path(get_dir()) / url.rstrip("/").rsplit("/", 1)[-1]
    if cached.is_file():
        return cached
    raise FileNotFoundError(
        f"megengine.hub: the weights {url} are not available offline; download the file to "
        f"{cached} (or hub.set_dir(<folder holding it>)), then try again"
    )


def load_serialized_obj_from_url(url: str, model_dir=None):
    """The object saved in the (local copy of the) file at `url`: a state dict."""
    if model_dir is not None:
        set_dir(model_dir)
    path = _local_file(url)
    if path.suffix == ".safetensors":
        from ... import io

        return io.load(str(path))
    with open(path, "rb") as f:  # MegEngine's model zoo files are pickled state dicts
        return pickle.load(f)


def _as_arrays(state):
    return {k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v)) for k, v in state.items()}


def pretrained(url: str):
    """Decorator of a model builder: `builder(pretrained=True)` loads the weights at `url`."""

    def decorate(builder):
        @functools.wraps(builder)
        def build(*args, pretrained: bool = False, **kwargs):
            model = builder(*args, **kwargs)
            if pretrained:
                state = load_serialized_obj_from_url(url)
                if isinstance(state, dict) and "state_dict" in state:
                    state = state["state_dict"]
                model.load_state_dict(_as_arrays(state))
            return model

        build.url = url
        return build

    return decorate


def import_module(repo_dir, *args, **kwargs):
    """The `hubconf.py` module of a local directory."""
    path = pathlib.Path(repo_dir) / "hubconf.py"
    if not path.is_file():
        raise FileNotFoundError(
            f"megengine.hub: {repo_dir!r} is not a local directory with a hubconf.py; "
            "tapegrad's hub works offline: clone the repository and pass its path"
        )
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(repo_info, entry: str, *args, pretrained: bool = False, **kwargs):
    """Build `entry` from the hubconf.py of the local directory `repo_info`."""
    for key in ("git_host", "use_cache", "commit", "protocol"):
        kwargs.pop(key, None)
    fn = getattr(import_module(repo_info), entry)
    return fn(*args, pretrained=pretrained, **kwargs) if pretrained else fn(*args, **kwargs)


def list(repo_info, *args, **kwargs):  # noqa: A001 - MegEngine's name
    """The public callables of a local hubconf.py."""
    module = import_module(repo_info)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(repo_info, entry: str, *args, **kwargs) -> str:  # noqa: A001 - MegEngine's name
    """The docstring of `entry` in a local hubconf.py."""
    return getattr(import_module(repo_info), entry).__doc__ or ""


__getattr__ = facade_getattr(__name__, "the MegEngine facade (megengine.hub)", {}, {})
