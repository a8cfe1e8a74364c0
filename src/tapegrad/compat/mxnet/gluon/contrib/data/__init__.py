"""`mx.gluon.contrib.data`: `IntervalSampler` (MXNet 1.x kept it here before gluon.data;
the same class). The text data sets (WikiText2, WikiText103) download their files and are
not provided."""

from __future__ import annotations

from ....._facade import facade_getattr
from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]

__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.contrib.data)",
    {},
    {"text": "the text data sets (WikiText2, WikiText103) download their files: not provided"},
)
