"""Stand-in torchvision.utils: save_image writes nothing; make_grid concatenates along width."""

import torch


def make_grid(tensor, nrow=8, padding=2, normalize=False, **kwargs):
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack(list(tensor))
    if tensor.dim() == 3:
        return tensor
    return torch.cat(list(tensor), dim=2)


def save_image(tensor, fp, **kwargs):
    make_grid(tensor)  # touch the tensor as the real one would, write nothing
