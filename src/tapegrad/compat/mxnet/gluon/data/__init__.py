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

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "DataLoader"]


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
        last_batch: "keep" (default: a smaller last batch), "discard" (drop it).
        batchify_fn: how a list of items becomes a batch (default: stacked arrays).
    """
    from .....data import DataLoader as _CoreLoader

    if sampler is not None or batch_sampler is not None:
        raise ValueError(
            "DataLoader(sampler=/batch_sampler=) is not supported by the MXNet "
            "facade; use shuffle=True or tapegrad.data directly"
        )
    last_batch = last_batch or "keep"
    if last_batch not in ("keep", "discard"):
        raise ValueError(
            f"DataLoader: last_batch must be 'keep' or 'discard' (got "
            f"{last_batch!r}; 'rollover' is not supported)"
        )
    return _CoreLoader(
        dataset,
        batch_size=batch_size or 1,
        shuffle=shuffle,
        drop_last=last_batch == "discard",
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
        "Sampler": "samplers are not supported; use DataLoader(shuffle=True)",
    },
)
