"""The module-level in-place forms PyTorch has: `torch.sin_(x)` is `x.sin_()`.

Each is the Tensor's in-place method of the same name, so it writes into `x`, bumps its
version and returns `x` (autograd's rules for in-place writes apply: a leaf that requires
grad is refused). The names are those both PyTorch's `torch` module and tapegrad's Tensor
have (tests/compat/test_torch_inplace_and_creation_out.py holds the list to that).

>>> import tapegrad.compat.torch as torch
>>> x = torch.tensor([-1.0, 0.5])
>>> torch.relu_(x) is x, x
(True, tensor([0. , 0.5]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tensor import Tensor

_NAMES = [
    "abs_",
    "ceil_",
    "clamp_",
    "clip_",
    "cos_",
    "deg2rad_",
    "detach_",
    "erf_",
    "exp_",
    "expm1_",
    "fill_",
    "floor_",
    "frac_",
    "index_put_",
    "log10_",
    "log1p_",
    "log_",
    "logit_",
    "nan_to_num_",
    "neg_",
    "rad2deg_",
    "reciprocal_",
    "relu_",
    "round_",
    "rsqrt_",
    "sigmoid_",
    "sin_",
    "sinc_",
    "sqrt_",
    "square_",
    "tanh_",
    "trunc_",
    "xlogy_",
    "zero_",
]

# the arguments after the tensor in each docstring's example (most take none)
_EXAMPLE_ARGS = {
    "clamp_": ", 0.0, 0.3",
    "clip_": ", 0.0, 0.3",
    "fill_": ", 2.0",
    "index_put_": ", (torch.tensor([0]),), torch.tensor(1.0)",
    "xlogy_": ", torch.tensor([2.0, 3.0])",
}


def _inplace(name: str) -> Callable[..., Any]:
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(
                f"torch.{name}(): argument 'input' must be a Tensor, not {type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"`torch.{name}(input, ...)`: `input.{name}(...)`, written into `input`, which it "
        f"returns.\n\n"
        f">>> import tapegrad.compat.torch as torch\n"
        f">>> x = torch.tensor([0.5, 0.25])\n"
        f">>> torch.{name}(x{_EXAMPLE_ARGS.get(name, '')}) is x\n"
        f"True\n"
    )
    return function


for _name in _NAMES:
    globals()[_name] = _inplace(_name)

__all__ = list(_NAMES)
