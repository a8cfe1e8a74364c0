"""A griffe extension for the API reference: hide the interpreter's plumbing attributes.

The reference inspects the live package (see mkdocs.yml), and inspection gives a class
attribute such as `__module__` or `__slots__` the docstring of its value's type (`str`,
`tuple`), so the "public" filter would show them. Special *methods* (`__add__`, ...) stay.
"""
from __future__ import annotations

import griffe


class HidePlumbing(griffe.Extension):
    """Drop special attributes (not methods) from every inspected class and module."""

    def _prune(self, obj: griffe.Object) -> None:
        for name in [n for n, m in obj.members.items()
                     if n.startswith("__") and n.endswith("__") and not m.is_alias
                     and m.is_attribute]:
            obj.del_member(name)

    def on_class_members(self, *, cls: griffe.Class, **kwargs) -> None:
        self._prune(cls)

    def on_module_members(self, *, mod: griffe.Module, **kwargs) -> None:
        self._prune(mod)
