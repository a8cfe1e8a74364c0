"""MegEngine's default collator: stack each field of the samples into a NumPy array."""

from __future__ import annotations

import numpy as np

__all__ = ["Collator"]


class Collator:
    """`apply(samples)`: a list of samples (tuples of fields) -> a tuple of stacked arrays."""

    def apply(self, inputs):
        first = inputs[0]
        if isinstance(first, (tuple, list)):
            return tuple(self.apply([s[i] for s in inputs]) for i in range(len(first)))
        if isinstance(first, dict):
            return {k: self.apply([s[k] for s in inputs]) for k in first}
        return np.stack([np.asarray(s) for s in inputs])
