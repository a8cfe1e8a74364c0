"""Import a facade under the framework's own name, so an unchanged script runs on tapegrad.

    >>> from tapegrad.compat import alias
    >>> alias.install("mxnet")          # `import mxnet as mx` now gives the facade
    >>> import mxnet as mx
    >>> alias.uninstall("mxnet")        # and back

`python -m tapegrad.compat.run mxnet train.py` does the same for a whole script. The alias
covers submodules (`from mxnet.gluon.nn import Dense`) and is process-wide: do not install
it next to the real framework in one interpreter.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

FACADES = {
    "mxnet": "tapegrad.compat.mxnet",
    "megengine": "tapegrad.compat.megengine",
    "torch": "tapegrad.compat.torch",
}

__all__ = ["install", "uninstall", "FACADES"]


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `name` and `name.*` to the facade's modules of the same relative path."""

    def __init__(self, name: str, target: str) -> None:
        self.name, self.target = name, target

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.name or fullname.startswith(self.name + "."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        # the facade module itself: one object whatever name it is imported under
        target = self.target + spec.name[len(self.name) :]
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name != target:
                raise
            raise ModuleNotFoundError(_missing(spec.name, target), name=spec.name) from None
        self._own_attrs = (module.__spec__, module.__loader__)
        return module

    def exec_module(self, module) -> None:
        # importlib gave the facade module the alias's spec and loader; put its own back, so
        # that after uninstall() nothing (pickle, inspect, doc tools) sees the framework name
        module.__spec__, module.__loader__ = self._own_attrs
        # the facade's submodules already imported (by its own __init__) are known under the
        # alias too: importing one later then finds it in sys.modules, and importlib does not
        # bind it on its parent again -- which would hide a package attribute of the same
        # name, as `megengine.tensor` (the module) would hide `mge.tensor` (the class)
        head = self.target + "."
        for loaded, mod in list(sys.modules.items()):
            if loaded.startswith(head):
                sys.modules.setdefault(self.name + "." + loaded[len(head) :], mod)


def _missing(name: str, target: str) -> str:
    """`import fw.sub` of a submodule the facade lacks: the facade's own hint for it."""
    parent, _, leaf = target.rpartition(".")
    try:
        getattr(importlib.import_module(parent), leaf)
    except AttributeError as exc:
        return f"No module named {name!r}: {exc}"
    except ImportError:
        pass
    return f"No module named {name!r}: the tapegrad facade does not provide it"


def install(*names: str) -> None:
    """Make `import <name>` give the facade, for each framework name (mxnet, megengine,
    torch). Raises if the real framework was already imported in this process."""
    for name in names:
        if name not in FACADES:
            raise ValueError(f"no facade for {name!r}; known: {sorted(FACADES)}")
        loaded = sys.modules.get(name)
        if loaded is not None and not loaded.__name__.startswith("tapegrad."):
            raise RuntimeError(
                f"the real {name} is already imported in this process; install the alias "
                "before anything imports it (or run the script with python -m "
                "tapegrad.compat.run)"
            )
        if not any(isinstance(f, _AliasFinder) and f.name == name for f in sys.meta_path):
            sys.meta_path.insert(0, _AliasFinder(name, FACADES[name]))


def uninstall(*names: str) -> None:
    """Remove the aliases (and the modules imported under the framework's name)."""
    for name in names:
        sys.meta_path[:] = [
            f for f in sys.meta_path if not (isinstance(f, _AliasFinder) and f.name == name)
        ]
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]
