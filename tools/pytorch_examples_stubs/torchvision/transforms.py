"""Stand-in torchvision transforms on NumPy images (HxW or HxWxC uint8) and tensors."""

from __future__ import annotations

import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    """uint8 HxW[xC] -> float CxHxW in [0, 1], as torchvision's."""

    def __call__(self, pic):
        a = np.asarray(pic)
        if a.ndim == 2:
            a = a[:, :, None]
        return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))).float().div(255)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = list(mean), list(std)

    def __call__(self, t):
        mean = torch.tensor(self.mean, dtype=t.dtype).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=t.dtype).view(-1, 1, 1)
        return (t - mean) / std


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)


def _size(size):
    return (size, size) if isinstance(size, int) else tuple(size)


class Resize:
    """Nearest-neighbour resize of a NumPy image (an int size is the square's side here)."""

    def __init__(self, size, *args, **kwargs):
        self.size = _size(size)

    def __call__(self, pic):
        a = np.asarray(pic)
        h, w = self.size
        rows = (np.arange(h) * a.shape[0] // h).clip(0, a.shape[0] - 1)
        cols = (np.arange(w) * a.shape[1] // w).clip(0, a.shape[1] - 1)
        return a[rows][:, cols]


class CenterCrop:
    def __init__(self, size):
        self.size = _size(size)

    def __call__(self, pic):
        a = np.asarray(pic)
        h, w = self.size
        top, left = (a.shape[0] - h) // 2, (a.shape[1] - w) // 2
        return a[top : top + h, left : left + w]
