"""`mx.optimizer.optimizer`: the module MXNet 1.9 defines every optimizer in (the same
names as `mx.optimizer`).

    >>> mx.optimizer.optimizer.SGD is mx.optimizer.SGD
    True
"""

from __future__ import annotations

from ._adaptive import FTML, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp
from ._base import Optimizer, Updater, create, get_updater, register
from ._sgd import NAG, SGD, Signum

__all__ = [
    "Optimizer",
    "register",
    "create",
    "Updater",
    "get_updater",
    "SGD",
    "NAG",
    "Signum",
    "Adam",
    "AdaGrad",
    "RMSProp",
    "AdaDelta",
    "Adamax",
    "Nadam",
    "FTML",
    "Ftrl",
]
