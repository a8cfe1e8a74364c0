"""Power-average pooling and max unpooling layers: LPPool1d/2d/3d, MaxUnpool1d/2d/3d
(nn/functional_pool_extra.py), with PyTorch's arguments and reprs.

    >>> pool, unpool = tg.nn.MaxPool2d(2, return_indices=True), tg.nn.MaxUnpool2d(2)
    >>> out, idx = pool(tg.randn(1, 1, 4, 4))
    >>> unpool(out, idx).shape
    (1, 1, 4, 4)
"""

from __future__ import annotations

from . import functional_conv as _conv
from . import functional_pool_extra as _fp
from .module import Module

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _LPPoolNd(Module):
    _fn = staticmethod(_fp.lp_pool2d)

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling over (N, C, L) (`F.lp_pool1d`).

    >>> tg.nn.LPPool1d(2, 2)(tg.tensor([[3.0, 4.0]])).numpy()
    array([[5.]], dtype=float32)
    """

    _fn = staticmethod(_fp.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W), as torch.nn.LPPool2d.

    >>> tg.nn.LPPool2d(2, 3, stride=2)(tg.ones(1, 2, 7, 7)).shape
    (1, 2, 3, 3)
    """

    _fn = staticmethod(_fp.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (N, C, D, H, W), as torch.nn.LPPool3d.

    >>> tg.nn.LPPool3d(1, 2)(tg.ones(1, 1, 2, 2, 2)).numpy().ravel()
    array([8.], dtype=float32)
    """

    _fn = staticmethod(_fp.lp_pool3d)


class _MaxUnpoolNd(Module):
    _nd = 2
    _fn = staticmethod(_fp.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        cls, nd = type(self).__name__, self._nd
        self.kernel_size = _conv._tuple(kernel_size, nd, "kernel_size", cls)
        self.stride = _conv._tuple(stride if stride is not None else kernel_size, nd, "stride", cls)
        self.padding = _conv._tuple(padding, nd, "padding", cls)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d: `forward(input, indices, output_size=None)`.

    >>> tg.nn.MaxUnpool1d(2)(tg.tensor([[[5.0]]]), tg.tensor([[[1]]])).numpy()
    array([[[0., 5.]]], dtype=float32)
    """

    _nd = 1
    _fn = staticmethod(_fp.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d, as torch.nn.MaxUnpool2d (zeros where no maximum was).

    >>> tg.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _nd = 2
    _fn = staticmethod(_fp.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d, as torch.nn.MaxUnpool3d.

    >>> tg.nn.MaxUnpool3d(2)(tg.ones(1, 1, 1, 1, 1), tg.tensor([[[[[0]]]]])).shape
    (1, 1, 2, 2, 2)
    """

    _nd = 3
    _fn = staticmethod(_fp.max_unpool3d)
