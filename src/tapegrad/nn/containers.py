"""Containers: Sequential, ModuleList, ModuleDict."""

from __future__ import annotations

from collections import OrderedDict

from .module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


class Sequential(Module):
    """Modules applied one after another. Indexable (`net[0].weight`), sliceable, len().

    >>> net = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 2))
    >>> net(tg.randn(3, 4)).shape
    (3, 2)
    """

    def __init__(self, *modules) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], (dict, OrderedDict)):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def _index(self, idx: int) -> str:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for {type(self).__name__} of length {n}")
        return list(self._modules)[idx % n]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module) -> None:
        self.add_module(self._index(idx), module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._index(idx)]
        for k in keys:
            del self._modules[k]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Add each of `modules` at the end; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module):
        """Put `module` at position `index`, shifting the later ones; returns self."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)
        return self

    def forward(self, x):
        """Feed `x` through each module in turn and return the last output."""
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of modules whose parameters are registered (no forward of its own)."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, idx: int) -> str:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for ModuleList of length {n}")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module) -> None:
        self.add_module(self._index(idx), module)

    def __delitem__(self, idx) -> None:
        mods = list(self._modules.values())
        del mods[idx]
        self._modules.clear()
        self.extend(mods)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Add each of `modules` at the end; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module) -> None:
        """Put `module` at position `index`, shifting the later ones."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self.extend(mods)

    def forward(self, *args, **kwargs):
        """Not callable: iterate over the list in your own `forward`."""
        raise NotImplementedError("ModuleList has no forward; iterate over it in your own forward")

    def __repr__(self) -> str:
        """Runs of identical children are folded, as PyTorch prints them: (0-2): 3 x Linear(...)."""
        reprs = [repr(m) for m in self._modules.values()]
        if not reprs:
            return "ModuleList()"
        lines = []
        start = 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                body = reprs[start].replace("\n", "\n  ")
                if i - start == 1:
                    lines.append(f"({start}): {body}")
                else:
                    lines.append(f"({start}-{i - 1}): {i - start} x {body}")
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules whose parameters are registered, in insertion order."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        """The names, in insertion order."""
        return self._modules.keys()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self):
        """(name, module) pairs, in insertion order."""
        return self._modules.items()

    def pop(self, key: str) -> Module:
        """Remove the module named `key` and return it."""
        return self._modules.pop(key)

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def update(self, modules) -> None:
        """Add (or replace) modules from a mapping or from (name, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self.add_module(k, m)

    def forward(self, *args, **kwargs):
        """Not callable: index the dict in your own `forward`."""
        raise NotImplementedError("ModuleDict has no forward; index it in your own forward")
