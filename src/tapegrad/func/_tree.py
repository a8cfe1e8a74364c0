"""Nested tuples, lists and dicts of tensors (torch.func's "pytrees"), flattened and rebuilt."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# how `unflatten` rebuilds a tree: None for a leaf, (container type, children) otherwise
Spec = Any


def flatten(tree: Any) -> tuple[list[Any], Spec]:
    """The leaves of `tree` in order, and a spec to rebuild it with `unflatten`."""
    leaves: list[Any] = []

    def walk(node: Any) -> Spec:
        if isinstance(node, (tuple, list)):
            return (type(node), [walk(n) for n in node])
        if isinstance(node, dict):
            return (dict, [(k, walk(v)) for k, v in node.items()])
        leaves.append(node)
        return None

    return leaves, walk(tree)


def unflatten(leaves: Iterable[Any], spec: Spec) -> Any:
    """Rebuild the tree described by `spec` with `leaves` in order."""
    it = iter(leaves)

    def build(s: Spec) -> Any:
        if s is None:
            return next(it)
        kind, children = s
        if kind is dict:
            return {k: build(c) for k, c in children}
        items = [build(c) for c in children]
        if kind is tuple or kind is list:
            return kind(items)
        return kind(*items)  # a named tuple

    return build(spec)
