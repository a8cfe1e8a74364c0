"""`mx.gluon.contrib`: the contrib layers MXNet 1.x code uses (`contrib.nn`, `contrib.rnn`)."""

from __future__ import annotations

from ...._facade import facade_getattr
from . import nn, rnn  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.contrib)",
    {},
    {
        "estimator": "not provided; write the training loop",
        "data": "use mx.gluon.data",
        "cnn": "deformable convolutions are not provided",
    },
)
