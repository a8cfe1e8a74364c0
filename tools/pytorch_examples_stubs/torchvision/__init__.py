"""A minimal torchvision stand-in for tools/pytorch_examples.py (synthetic data, no downloads)."""

from . import datasets, models, transforms, utils

__version__ = "0.0-stand-in"
__all__ = ["datasets", "models", "transforms", "utils"]
