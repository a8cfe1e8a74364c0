"""Lazy layers: the input size is read off the first input, as PyTorch's `nn.LazyLinear`,
`nn.LazyConv2d`, `nn.LazyBatchNorm2d`...

A lazy layer holds `UninitializedParameter`s (and `UninitializedBuffer`s) until its first
call. A forward pre-hook then calls `initialize_parameters(input)`, which gives them their
shapes and initial values exactly as the eager layer's constructor would (the same draws
from the generator, in the same order), and the module becomes that layer in place
(`cls_to_become`: a `LazyLinear` is a `Linear` from then on). `load_state_dict` into a lazy
layer takes the shapes from the checkpoint instead. Build the optimizer after the first
call (a dry run), as with PyTorch's: before it there is nothing to optimize.
"""

from __future__ import annotations

from typing import Any

from .. import random as _random
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import BatchNorm1d, BatchNorm2d, Linear
from .module import Module
from .norm_layers import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import UninitializedBuffer, UninitializedParameter

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LazyModuleMixin",
]


def _is_lazy(t) -> bool:
    return t is not None and bool(getattr(t, "is_lazy", False))


def _infer_parameters(module, args):
    """The pre-hook of a lazy module: initialize from the first input, then become the
    eager layer."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(
            f"module {type(module).__name__} has not been fully initialized by "
            "initialize_parameters(): every UninitializedParameter must be materialized there"
        )
    module._lazy_hook.remove()
    del module._lazy_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin(Module):
    """Put before a Module class to make a lazy one (PyTorch's `LazyModuleMixin`; a Module
    itself here, so that type checkers see what it uses): define
    `initialize_parameters(self, *inputs)` to `materialize` the `UninitializedParameter`s
    from the first inputs, and set `cls_to_become` to the class the module becomes then
    (None: it stays what it is).

    >>> from tapegrad.nn.lazy import LazyModuleMixin
    >>> from tapegrad.nn.parameter import UninitializedParameter
    >>> class LazyScale(LazyModuleMixin, tg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = UninitializedParameter()
    ...     def initialize_parameters(self, x):
    ...         if self.has_uninitialized_params():
    ...             self.scale.materialize(x.shape[-1:])
    ...             tg.nn.init.ones_(self.scale)
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> m = LazyScale()
    >>> m(tg.ones(2, 3)).shape, m.scale.shape
    ((2, 3), (3,))
    """

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._lazy_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) has no shape yet."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(_is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the parameters from the first inputs (each lazy layer defines it)."""
        raise NotImplementedError(
            f"{type(self).__name__}: a lazy module defines initialize_parameters(*inputs)"
        )

    def _become_lazy(self, build, parameters=(), buffers=()) -> None:
        """For the built-in lazy layers: run the eager constructor `build()` without its draws,
        make `parameters` and `buffers` uninitialized, and wait for the first call."""
        state = _random.get_rng_state()
        try:
            build()
        finally:
            # the placeholder values go, and so do their draws: PyTorch's lazy layers draw
            # nothing before their first call
            _random.set_rng_state(state)
        for name in parameters:
            p = getattr(self, name, None)
            if p is not None:
                setattr(self, name, UninitializedParameter(device=p.device, dtype=p.dtype))
        for name in buffers:
            b = getattr(self, name, None)
            if b is not None:
                # in place in the table: the state dict keeps the eager layer's key order
                self._buffers[name] = UninitializedBuffer(device=b.device, dtype=b.dtype)
        self._lazy_hook = self.register_forward_pre_hook(_infer_parameters)


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear layer whose `in_features` is the last dimension of its first input.

    >>> m = tg.nn.LazyLinear(4)
    >>> m
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> m(tg.ones(2, 3)).shape, m
    ((2, 4), Linear(in_features=3, out_features=4, bias=True))
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        self._become_lazy(
            lambda: Linear.__init__(self, 1, out_features, bias, device, dtype),
            parameters=("weight", "bias"),
        )

    @property
    def in_features(self):
        """0 until the first call or a loaded state dict (PyTorch's placeholder)."""
        return 0 if _is_lazy(self.weight) else self.weight.shape[1]

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        self.weight.materialize((self.out_features, input.shape[-1]))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()


class _LazyConv(LazyModuleMixin):
    """What the lazy convolutions share: `in_channels` (0 until then) from dim 1 of a batched
    first input, dim 0 of an unbatched one; the eager layer's initialization."""

    _nd: int
    _transposed: bool

    def __init__(
        self,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ) -> None:
        eager: Any = self.cls_to_become  # the eager constructor, `in_channels=groups` a placeholder
        self._become_lazy(
            lambda: eager.__init__(
                self,
                groups,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation,
                groups,
                bias,
                padding_mode,
                device=device,
                dtype=dtype,
            ),
            parameters=("weight", "bias"),
        )
        self.in_channels = 0

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():  # a state dict was loaded: its shapes
            w = self.weight.shape
            self.in_channels = w[0] if self._transposed else w[1] * self.groups
            return
        unbatched = self._nd + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {tuple(input.shape)}"
            )
        channels = int(input.shape[1] if input.ndim == unbatched + 1 else input.shape[0])
        if channels % self.groups:
            raise ValueError(
                f"{type(self).__name__}: in_channels ({channels}) must be divisible by groups "
                f"({self.groups})"
            )
        self.in_channels = channels
        if self._transposed:
            shape = (channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, channels // self.groups, *self.kernel_size)
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class _LazyConvTranspose(_LazyConv):
    """The lazy transposed convolutions: PyTorch's argument order (output_padding before
    groups, dilation after bias)."""

    def __init__(
        self,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ) -> None:
        eager: Any = self.cls_to_become
        self._become_lazy(
            lambda: eager.__init__(
                self,
                groups,
                out_channels,
                kernel_size,
                stride,
                padding,
                output_padding,
                groups,
                bias,
                dilation,
                padding_mode,
                device=device,
                dtype=dtype,
            ),
            parameters=("weight", "bias"),
        )
        self.in_channels = 0


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose `in_channels` is read off its first input.

    >>> m = tg.nn.LazyConv1d(4, 3)
    >>> m(tg.ones(2, 5, 8)).shape, m
    ((2, 4, 6), Conv1d(5, 4, kernel_size=(3,), stride=(1,)))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose `in_channels` is read off its first input.

    >>> m = tg.nn.LazyConv2d(4, 3)
    >>> m
    LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
    >>> m(tg.ones(2, 5, 8, 8)).shape, m
    ((2, 4, 6, 6), Conv2d(5, 4, kernel_size=(3, 3), stride=(1, 1)))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose `in_channels` is read off its first input.

    >>> m = tg.nn.LazyConv3d(2, 1)
    >>> m(tg.ones(1, 3, 2, 2, 2)).shape, m.in_channels
    ((1, 2, 2, 2, 2), 3)
    """

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose `in_channels` is read off its first input.

    >>> m = tg.nn.LazyConvTranspose1d(4, 2, stride=2)
    >>> m(tg.ones(1, 3, 5)).shape, m.weight.shape
    ((1, 4, 10), (3, 4, 2))
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose `in_channels` is read off its first input.

    >>> m = tg.nn.LazyConvTranspose2d(4, 2, stride=2)
    >>> m(tg.ones(1, 3, 5, 5)).shape, m.weight.shape
    ((1, 4, 10, 10), (3, 4, 2, 2))
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose `in_channels` is read off its first input.

    >>> m = tg.nn.LazyConvTranspose3d(2, 2, stride=2)
    >>> m(tg.ones(1, 3, 2, 2, 2)).shape, m.weight.shape
    ((1, 2, 4, 4, 4), (3, 2, 2, 2, 2))
    """

    cls_to_become = ConvTranspose3d


class _LazyNorm(LazyModuleMixin):
    """What the lazy norms share: `num_features` (0 until then) from the channel dimension
    of the first input; weight 1, bias 0, running mean 0 and variance 1 as the eager layer."""

    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ) -> None:
        eager: Any = self.cls_to_become  # the eager constructor, num_features=1 a placeholder
        self._become_lazy(
            lambda: eager.__init__(
                self, 1, eps, momentum, affine, track_running_stats, device, dtype
            ),
            parameters=("weight", "bias"),
            buffers=("running_mean", "running_var"),
        )
        self.num_features = 0

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():  # a state dict was loaded: its shapes
            for t in (self.weight, self.running_mean):
                if t is not None:
                    self.num_features = t.shape[0]
            return
        # the channel dim: 1 for a batched input, 0 for an unbatched instance-norm input
        no_batch = getattr(self, "_no_batch_dim", None)
        dim = 0 if no_batch is not None and input.ndim == no_batch else 1
        if input.ndim <= dim:
            raise ValueError(
                f"{type(self).__name__}: expected an input with a channel dimension, got shape "
                f"{tuple(input.shape)}"
            )
        n = int(input.shape[dim])
        self.num_features = n
        for t in (self.weight, self.bias, self.running_mean, self.running_var):
            if _is_lazy(t):
                t.materialize((n,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """A BatchNorm1d whose `num_features` is dim 1 of its first input.

    >>> m = tg.nn.LazyBatchNorm1d()
    >>> m(tg.randn(4, 3)).shape, m.running_mean.shape
    ((4, 3), (3,))
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """A BatchNorm2d whose `num_features` is dim 1 of its first input.

    >>> m = tg.nn.LazyBatchNorm2d()
    >>> m
    LazyBatchNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> m(tg.randn(2, 3, 4, 4)).shape, m.weight.shape
    ((2, 3, 4, 4), (3,))
    """

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """A BatchNorm3d whose `num_features` is dim 1 of its first input.

    >>> m = tg.nn.LazyBatchNorm3d()
    >>> m(tg.randn(2, 3, 2, 2, 2)).shape, m.num_features
    ((2, 3, 2, 2, 2), 3)
    """

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """An InstanceNorm1d whose `num_features` is the channel dimension of its first input
    (affine and running statistics on by default, as PyTorch's lazy instance norms).

    >>> m = tg.nn.LazyInstanceNorm1d()
    >>> m(tg.randn(2, 3, 5)).shape, m.num_features
    ((2, 3, 5), 3)
    """

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """An InstanceNorm2d whose `num_features` is the channel dimension of its first input.

    >>> m = tg.nn.LazyInstanceNorm2d()
    >>> m(tg.randn(2, 3, 4, 4)).shape, m.num_features
    ((2, 3, 4, 4), 3)
    """

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """An InstanceNorm3d whose `num_features` is the channel dimension of its first input.

    >>> m = tg.nn.LazyInstanceNorm3d()
    >>> m(tg.randn(1, 2, 3, 3, 3)).shape, m.num_features
    ((1, 2, 3, 3, 3), 2)
    """

    cls_to_become = InstanceNorm3d
