"""`mx.optimizer`: MXNet 1.9.1's Optimizer API on dense arrays.

`Optimizer` (learning rate or schedule, wd, rescale_grad, clip_gradient, lr_mult / wd_mult,
per-index update counts), `register` / `create`, `Updater` / `get_updater`, and the rules
SGD, NAG, Signum, Adam, AdaGrad, RMSProp, AdaDelta, Adamax, Nadam, FTML and Ftrl with
MXNet's update formulas. `gluon.Trainer` takes an optimizer object or any registered name.
Sparse storage is not provided, so `lazy_update` changes nothing.

    >>> opt = mx.optimizer.create("rmsprop", learning_rate=0.01)
    >>> type(opt).__name__, opt.learning_rate
    ('RMSProp', 0.01)
"""

from __future__ import annotations

from .optimizer import (  # noqa: F401
    FTML,
    NAG,
    SGD,
    AdaDelta,
    AdaGrad,
    Adam,
    Adamax,
    Ftrl,
    Nadam,
    Optimizer,
    RMSProp,
    Signum,
    Updater,
    create,
    get_updater,
    register,
)
from .optimizer import __all__ as __all__
