"""`torch.utils.tensorboard`: `SummaryWriter` is tapegrad's (tapegrad.utils.tensorboard), on
the tensorboard package's own event writer (no TensorFlow). Importing this module needs the
tensorboard package; `import torch.utils` does not import it."""

from __future__ import annotations

from ....utils.tensorboard import SummaryWriter

__all__ = ["SummaryWriter"]
