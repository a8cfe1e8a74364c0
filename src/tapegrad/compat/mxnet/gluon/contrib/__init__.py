"""`mx.gluon.contrib`: the contrib layers MXNet 1.x code uses (`contrib.nn`, `contrib.rnn`,
`contrib.data`)."""

from __future__ import annotations

from ...._facade import facade_getattr
from . import data, nn, rnn  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.contrib)",
    {},
    {
        "estimator": "not provided; write the training loop",
        "cnn": "deformable convolutions are not provided",
    },
)
