"""tg.optim: optimizers and learning-rate schedulers (PyTorch's updates, NumPy in place)."""

from __future__ import annotations

from . import lr_scheduler, swa_utils

# the optimizers added in 0.2.0 (one parameter at a time)
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS", "lr_scheduler"]
__all__ += ["Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop", "swa_utils"]
