"""`mx.gluon.data`: datasets and the DataLoader (tapegrad.data's loader underneath).

>>> X, y = mx.np.ones((100, 3)), mx.np.zeros((100,))
>>> ds = mx.gluon.data.ArrayDataset(X, y)
>>> [xb.shape for xb, yb in mx.gluon.data.DataLoader(ds, batch_size=32, shuffle=True)]
[(32, 3), (32, 3), (32, 3), (4, 3)]
"""

from __future__ import annotations

from .....tensor import Tensor
from ...._facade import facade_getattr
from . import vision  # noqa: F401
from .dataset import ArrayDataset, Dataset, SimpleDataset  # noqa: F401
from .sampler import (  # noqa: F401
    BatchSampler,
    IntervalSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)

__all__ = [
    "Dataset",
    "SimpleDataset",
    "ArrayDataset",
    "DataLoader",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "BatchSampler",
    "IntervalSampler",
]


def DataLoader(
    dataset,
    batch_size=None,
    shuffle=False,
    sampler=None,
    last_batch=None,  # noqa: N802
    batch_sampler=None,
    batchify_fn=None,
    num_workers=0,
    **kwargs,
):
    """Batches of `dataset` (tapegrad.data.DataLoader with MXNet's argument names).

    Args:
        batch_size, shuffle: as MXNet's (the batches come from a BatchSampler over a
            Random- or SequentialSampler).
        sampler: the indices' order (then no `shuffle`).
        last_batch: "keep" (default: a smaller last batch), "discard" (drop it) or
            "rollover" (carry it into the next epoch).
        batch_sampler: the batches' indices themselves (then none of `batch_size`,
            `shuffle`, `sampler`, `last_batch`).
        batchify_fn: how a list of items becomes a batch (default: stacked arrays).
    """
    from .....data import DataLoader as _CoreLoader

    if batch_sampler is None:
        if batch_size is None:
            raise ValueError("DataLoader: batch_size must be given when batch_sampler is not")
        if sampler is None:
            sampler = RandomSampler(len(dataset)) if shuffle else SequentialSampler(len(dataset))
        elif shuffle:
            raise ValueError("DataLoader: shuffle must not be given together with sampler")
        batch_sampler = BatchSampler(sampler, batch_size, last_batch or "keep")
    elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
        raise ValueError(
            "DataLoader: batch_size, shuffle, sampler and last_batch must not be given "
            "together with batch_sampler"
        )
    return _CoreLoader(
        dataset,
        batch_sampler=batch_sampler,
        collate_fn=batchify_fn if batchify_fn is not None else _batchify,
    )


def _batchify(items):
    """The core's stacking, giving the facade's arrays (np.ndarray in NumPy mode)."""
    from .....data import default_collate
    from .....tensor import as_class
    from ...numpy_extension import array_class

    cls = array_class()

    def convert(b):
        if type(b) is Tensor:
            return as_class(b, cls)
        if isinstance(b, (list, tuple)):
            return type(b)(convert(x) for x in b)
        return b

    return convert(default_collate(items))


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.data)",
    {},
    {
        "RecordFileDataset": "RecordIO files are not supported",
    },
)
