"""How a list of samples becomes a batch (`default_collate`), and how one sample becomes
tensors when automatic batching is off (`default_convert`, `batch_size=None`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..tensor import Tensor, _wrap

__all__ = ["default_collate", "default_convert"]


def default_collate(samples: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch: tensors/arrays/numbers become one tensor with a
    new first dimension; tuples, lists and dicts are collated field by field; strings are
    kept as a list.

    >>> default_collate([(tg.ones(2), 0), (tg.zeros(2), 1)])
    [tensor([[1., 1.], [0., 0.]]), tensor([0, 1])]
    """
    first = samples[0]
    if isinstance(first, Tensor):
        return _wrap(np.stack([s._data for s in samples]))
    if isinstance(first, np.ndarray):
        return _wrap(np.stack(samples))
    if isinstance(first, (bool, int, float, np.generic)):
        return _wrap(dtypes.result_array(list(samples)))
    if isinstance(first, str):
        return list(samples)
    if isinstance(first, dict):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, (tuple, list)):
        size = len(first)
        if any(len(s) != size for s in samples):
            raise RuntimeError("default_collate: each sample in a batch must have the same size")
        return [default_collate(list(field)) for field in zip(*samples, strict=True)]
    raise TypeError(
        f"default_collate: don't know how to batch samples of type {type(first).__name__}; "
        "pass collate_fn=..."
    )


def default_convert(sample: Any) -> Any:
    """One sample as it comes out of a loader without batching: NumPy arrays become tensors
    (inside tuples, lists and dicts too); everything else is left as it is.

    >>> default_convert((np.zeros(2, dtype=np.float32), 3))
    (tensor([0., 0.]), 3)
    """
    if isinstance(sample, np.ndarray) and sample.dtype.kind in "biufc":
        return _wrap(sample)
    if isinstance(sample, dict):
        return {k: default_convert(v) for k, v in sample.items()}
    if isinstance(sample, tuple):
        return tuple(default_convert(v) for v in sample)
    if isinstance(sample, list):
        return [default_convert(v) for v in sample]
    return sample
