"""Version counters: how backward notices that a value it saved was changed in place.

Every tensor has a counter, a one-element list `[n]` in `Tensor._vc`. Views of a tensor and
its `detach()` share the list, so writing through any of them is seen by all. A node keeps
`(counter, n_when_saved, index)` for each tensor it saved (`Node.checks`); backward compares.
`Tensor._version` reads the count as an int, as PyTorch code expects.

A list rather than a small class: a counter is made for every tensor, on the dispatcher's
hot path, and `[0]` is the cheapest object Python builds.

    >>> t = tg.zeros(2); v = t._version
    >>> t.add_(1.0)._version == v + 1
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tensor import Tensor

VersionCounter = list  # list[int] of length one; shared by a tensor, its views and detach()


def bump_version(t: Tensor) -> None:
    """Record that `t`'s storage was changed in place (call it after every such write).

    The one way code outside the dispatcher marks an in-place write: optimizers, `nn.init`,
    `load_state_dict`, gradient clipping and the facades all call it.
    """
    t._vc[0] += 1
