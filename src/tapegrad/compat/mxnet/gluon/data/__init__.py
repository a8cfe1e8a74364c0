"""`mx.gluon.data`: datasets and the DataLoader (tapegrad.data's loader underneath).

    >>> X, y = mx.np.ones((100, 3)), mx.np.zeros((100,))
    >>> ds = mx.gluon.data.ArrayDataset(X, y)
    >>> [xb.shape for xb, yb in mx.gluon.data.DataLoader(ds, batch_size=32, shuffle=True)]
    [(32, 3), (32, 3), (32, 3), (4, 3)]
"""
from __future__ import annotations

from .....tensor import Tensor
from ...._facade import facade_getattr

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "DataLoader"]


class Dataset:
    """Base class: define `__getitem__` and `__len__`."""

    def __getitem__(self, idx):  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def transform(self, fn, lazy=True):
        """A dataset whose items are `fn(*item)`."""
        return _Transformed(self, fn, unpack=True)

    def transform_first(self, fn, lazy=True):
        """A dataset whose items have `fn` applied to their first element."""
        return _Transformed(self, lambda x, *rest: (fn(x),) + rest, unpack=True)


class _Transformed(Dataset):
    def __init__(self, base, fn, unpack) -> None:
        self._base, self._fn, self._unpack = base, fn, unpack

    def __len__(self) -> int:
        return len(self._base)

    def __getitem__(self, idx):
        item = self._base[idx]
        if self._unpack and isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class SimpleDataset(Dataset):
    """A dataset over any sequence (a list, an array)."""

    def __init__(self, data) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class ArrayDataset(Dataset):
    """Several arrays of the same length, item i being `(a[i], b[i], ...)` (or `a[i]` alone)."""

    def __init__(self, *args) -> None:
        if not args:
            raise ValueError("ArrayDataset needs at least one array")
        n = len(args[0])
        for i, a in enumerate(args):
            if len(a) != n:
                raise ValueError(
                    f"ArrayDataset: all arrays must have the same length; array 0 has {n} items "
                    f"but array {i} has {len(a)}"
                )
        self._data = [a.asnumpy() if isinstance(a, Tensor) else a for a in args]
        self._len = n

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(a[idx] for a in self._data)


def DataLoader(dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,  # noqa: N802
               batch_sampler=None, batchify_fn=None, num_workers=0, **kwargs):
    """Batches of `dataset` (tapegrad.data.DataLoader with MXNet's argument names).

    Args:
        last_batch: "keep" (default: a smaller last batch), "discard" (drop it).
        batchify_fn: how a list of items becomes a batch (default: stacked arrays).
    """
    from .....data import DataLoader as _CoreLoader

    if sampler is not None or batch_sampler is not None:
        raise ValueError("DataLoader(sampler=/batch_sampler=) is not supported by the MXNet "
                         "facade; use shuffle=True or tapegrad.data directly")
    last_batch = last_batch or "keep"
    if last_batch not in ("keep", "discard"):
        raise ValueError(f"DataLoader: last_batch must be 'keep' or 'discard' (got "
                         f"{last_batch!r}; 'rollover' is not supported)")
    return _CoreLoader(dataset, batch_size=batch_size or 1, shuffle=shuffle,
                       drop_last=last_batch == "discard",
                       collate_fn=batchify_fn if batchify_fn is not None else _batchify)


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
    __name__, "the MXNet facade (mx.gluon.data)", {},
    {"RecordFileDataset": "RecordIO files are not supported",
     "Sampler": "samplers are not supported; use DataLoader(shuffle=True)"},
)

from . import vision  # noqa: E402,F401  (after Dataset: its data sets subclass it)
