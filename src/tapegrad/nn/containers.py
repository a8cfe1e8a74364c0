"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

from ..tensor import Tensor
from .module import Module
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


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
        name = type(self).__name__  # a subclass prints its own name (ParametrizationList)
        if not reprs:
            return f"{name}()"
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
        return name + "(\n  " + "\n  ".join(lines) + "\n)"


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


def _as_parameter(value):
    """A Tensor becomes a Parameter sharing its storage (PyTorch's containers do the same);
    a Parameter, or anything else, is kept as it is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _parameter_line(value) -> str:
    if isinstance(value, Tensor):
        size = "x".join(str(n) for n in value.shape)
        return f"Parameter containing: [{value.dtype} of size {size}]"
    return repr(value)


class ParameterList(Module):
    """A list of parameters, registered as "0", "1", ... (a Tensor is wrapped as a
    Parameter sharing its storage).

    >>> params = tg.nn.ParameterList([tg.zeros(2), tg.ones(3)])
    >>> params.append(tg.nn.Parameter(tg.zeros(1)))
    ParameterList(
        (0): Parameter containing: [float32 of size 2]
        (1): Parameter containing: [float32 of size 3]
        (2): Parameter containing: [float32 of size 1]
    )
    >>> [tuple(p.shape) for p in params], len(list(params.parameters()))
    ([(2,), (3,), (1,)], 3)
    """

    def __init__(self, values=None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _index(self, idx: int) -> str:
        if not isinstance(idx, int):
            kind = type(idx).__name__
            raise TypeError(f"ParameterList indices must be integers or slices, not {kind}")
        n = self._size
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for ParameterList of length {n}")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, self._index(idx))

    def __setitem__(self, idx: int, value) -> None:
        setattr(self, self._index(idx), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        """Add `value` at the end; returns self."""
        self._size += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values):
        """Add each of `values` at the end; returns self."""
        for v in values:
            self.append(v)
        return self

    def forward(self, *args, **kwargs):
        """Not callable: use the parameters in your own `forward`."""
        raise NotImplementedError("ParameterList has no forward; use it in your own forward")

    def __repr__(self) -> str:
        lines = [f"    ({i}): {_parameter_line(v)}" for i, v in enumerate(self)]
        return "ParameterList(\n" + "\n".join(lines) + "\n)" if lines else "ParameterList()"


class ParameterDict(Module):
    """A dict of parameters, in insertion order (a Tensor is wrapped as a Parameter
    sharing its storage); `named_parameters()` names them by their keys.

    >>> params = tg.nn.ParameterDict({"scale": tg.ones(2)})
    >>> params["shift"] = tg.zeros(2)
    >>> list(params.keys()), [name for name, _ in params.named_parameters()]
    (['scale', 'shift'], ['scale', 'shift'])
    """

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, not {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        """The names, in insertion order."""
        return self._keys.keys()

    def values(self):
        """The parameters, in insertion order."""
        return [self[k] for k in self._keys]

    def items(self):
        """(name, parameter) pairs, in insertion order."""
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        """The parameter named `key`, or `default`."""
        return self[key] if key in self._keys else default

    def pop(self, key: str):
        """Remove the parameter named `key` and return it."""
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        """Remove every parameter."""
        for key in list(self._keys):
            del self[key]

    def update(self, parameters) -> None:
        """Add (or replace) parameters from a mapping or from (name, value) pairs."""
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in items:
            self[key] = value

    def forward(self, *args, **kwargs):
        """Not callable: index the dict in your own `forward`."""
        raise NotImplementedError("ParameterDict has no forward; index it in your own forward")

    def __repr__(self) -> str:
        lines = [f"    ({k}): {_parameter_line(v)}" for k, v in self.items()]
        return "ParameterDict(\n" + "\n".join(lines) + "\n)" if lines else "ParameterDict()"
