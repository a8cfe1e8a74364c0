"""Version counters: how backward notices that a value it saved was changed in place.

Every tensor has a counter, a list `[n]` in `Tensor._vc`. Views of a tensor and its
`detach()` share the list, so writing through any of them is seen by all. After the count
the list holds a weak reference to each view taken of the storage (`register_view`): an
in-place write through one of them changes what its siblings are views *of*, so their
`grad_fn` must be taken again from the new graph (ops/view_writes.py, `regenerate_views`).
A node keeps `(counter, n_when_saved, index)` for each tensor it saved (`Node.checks`);
backward compares.
`Tensor._version` reads the count as an int, as PyTorch code expects.

A list rather than a small class: a counter is made for every tensor, on the dispatcher's
hot path, and `[0]` is the cheapest object Python builds.

    >>> t = tg.zeros(2); v = t._version
    >>> t.add_(1.0)._version == v + 1
    True
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tensor import Tensor

# [count, weakref(view), ...]; shared by a tensor, its views and detach()
VersionCounter = list[Any]

_PRUNE_FROM = 32  # dead views are dropped when the list reaches a power of two from here on


def bump_version(t: Tensor) -> None:
    """Record that `t`'s storage was changed in place (call it after every such write).

    The one way code outside the dispatcher marks an in-place write: optimizers, `nn.init`,
    `load_state_dict`, gradient clipping and the facades all call it.
    """
    t._vc[0] += 1


def register_view(view: Tensor) -> None:
    """Note `view` (which already shares its base's counter) among the counter's views.

    Dead references are dropped when the list's length reaches a power of two (from
    `_PRUNE_FROM` on): amortized O(1) per view, and a parameter viewed once per step (a
    transpose in a linear layer) does not grow its counter without bound.
    """
    counter: VersionCounter = view._vc
    counter.append(weakref.ref(view))
    n = len(counter)
    if n >= _PRUNE_FROM and not n & (n - 1):
        counter[1:] = [ref for ref in counter[1:] if ref() is not None]


def live_views(counter: VersionCounter) -> list[Any]:
    """The views registered on `counter` that are still alive, oldest first (a view of a
    view comes after the view it was taken from)."""
    views = [ref() for ref in counter[1:]]
    return [v for v in views if v is not None]
