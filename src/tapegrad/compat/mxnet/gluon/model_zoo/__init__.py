"""`mx.gluon.model_zoo`: the model architectures (`vision`); pretrained weights are not
provided (tapegrad downloads nothing): `pretrained=True` raises and says so."""

from __future__ import annotations

from . import vision  # noqa: F401
