"""The torch facade's torch.utils.data and its submodules are tapegrad.data's classes."""

import importlib

import numpy as np
import pytest

import tapegrad.data as tgd


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (
            "tapegrad.compat.torch.utils.data",
            [
                "DataLoader",
                "IterableDataset",
                "Sampler",
                "WeightedRandomSampler",
                "get_worker_info",
            ],
        ),
        (
            "tapegrad.compat.torch.utils.data.dataloader",
            ["DataLoader", "default_collate", "get_worker_info"],
        ),
        (
            "tapegrad.compat.torch.utils.data.dataset",
            ["Dataset", "ConcatDataset", "Subset", "random_split"],
        ),
        (
            "tapegrad.compat.torch.utils.data.sampler",
            ["RandomSampler", "BatchSampler", "SequentialSampler"],
        ),
    ],
)
def test_facade_names_are_the_core_ones(module, names):
    mod = importlib.import_module(module)
    for name in names:
        assert getattr(mod, name) is getattr(tgd, name)


def test_facade_loader_with_workers_in_torch_style():
    import tapegrad.compat.torch as torch
    from tapegrad.compat.torch.utils.data import DataLoader, TensorDataset

    x = torch.arange(12.0).reshape(6, 2)
    got = [
        xb.numpy()
        for xb, _ in DataLoader(TensorDataset(x, torch.arange(6)), batch_size=4, num_workers=2)
    ]
    np.testing.assert_array_equal(np.concatenate(got), np.arange(12.0).reshape(6, 2))
    with pytest.raises(AttributeError, match="ChainDataset"):
        _ = importlib.import_module("tapegrad.compat.torch.utils.data.dataset").ChainDataset
