"""Synthetic stand-ins for torchvision datasets: seeded random images, never a download.

The sizes come from PYEX_TRAIN_N / PYEX_TEST_N (defaults 128 / 64) so an example finishes in
seconds. Images are NumPy uint8 arrays, the stand-in for PIL images (ToTensor accepts both).
"""

from __future__ import annotations

import os

import numpy as np
import torch


def _count(train: bool) -> int:
    return int(os.environ.get("PYEX_TRAIN_N" if train else "PYEX_TEST_N", 128 if train else 64))


class MNIST:
    """28x28 grey images with labels 0..9; the digit's class sets a bright block's position."""

    classes = [str(i) for i in range(10)]

    def __init__(
        self, root=None, train=True, download=False, transform=None, target_transform=None
    ):
        n = _count(train)
        rng = np.random.default_rng(0 if train else 1)
        # balanced classes: siamese_network redraws until it finds a second image of a class
        labels = rng.permutation(np.arange(n) % 10)
        images = rng.integers(0, 60, size=(n, 28, 28)).astype(np.uint8)
        for i, k in enumerate(labels):  # learnable: the label moves a bright patch
            r, c = 2 + 2 * (k // 5) * 5, 2 + (k % 5) * 5
            images[i, r : r + 6, c : c + 4] = 255
        self.data = torch.from_numpy(images)
        self.targets = torch.from_numpy(labels.astype(np.int64))
        self.transform, self.target_transform = transform, target_transform
        self.train = train

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def __getitem__(self, index):
        img = self.data[index].numpy()
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class FashionMNIST(MNIST):
    """Same synthetic images as MNIST."""


class FakeData:
    """Random HxWxC uint8 images of `image_size` (C, H, W) and random labels."""

    def __init__(
        self,
        size=64,
        image_size=(3, 224, 224),
        num_classes=10,
        transform=None,
        target_transform=None,
        random_offset=0,
    ):
        self.size, self.image_size, self.num_classes = (
            int(os.environ.get("PYEX_TRAIN_N", size)),
            image_size,
            num_classes,
        )
        self.transform, self.target_transform = transform, target_transform
        self.offset = random_offset

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index):
        rng = np.random.default_rng(index + self.offset)
        c, h, w = self.image_size
        img = rng.integers(0, 256, size=(h, w, c)).astype(np.uint8)
        target = int(rng.integers(0, self.num_classes))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
