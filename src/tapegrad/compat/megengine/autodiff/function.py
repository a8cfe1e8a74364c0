"""MegEngine's `autodiff.Function`: the core's instance-style Function, with MegEngine's rules.

Where MegEngine differs from the core (`tapegrad.autograd.Function`, PyTorch / MXNet):

* `forward` gets the caller's tensors themselves (not detached copies), with recording off:
  a `Function` may keep `self.inp = x` and call another `Function` on it in `backward`, and
  an outer GradManager then records that (second-order gradients through custom functions).
* an output that does not reach the loss gives `None` to `backward` (not zeros);
* every argument must be a Tensor (`TypeError: op MyFn expect type Tensor as inputs`).

    >>> class Square(Function):
    ...     def forward(self, x):
    ...         self.x = x
    ...         return x * x
    ...     def backward(self, dy):
    ...         return 2 * self.x * dy
    >>> x = mge.tensor([3.0])
    >>> gm = GradManager().attach(x)
    >>> with gm:
    ...     gm.backward(Square()(x))
    >>> x.grad
    Tensor([6.], device=cpu)
"""

from __future__ import annotations

import functools

from ....autograd.function import Function as _CoreFunction
from ....autograd.grad_manager import GradManager  # noqa: F401  (the doctest's)
from ....tensor import Tensor

__all__ = ["Function"]


def _keeping_inputs(forward):
    @functools.wraps(forward)
    def run(self, *detached, **kwargs):
        self._tg_materialize = False  # MegEngine: None for an output that got no gradient
        originals = self.__dict__.pop("_mge_inputs", detached)
        return forward(self, *originals, **kwargs)

    return run


class Function(_CoreFunction):
    """Base of MegEngine custom functions: `forward(self, *tensors)` and
    `backward(self, *grads)` (one gradient per input, None for none); call `MyFn()(x)`."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        fwd = cls.__dict__.get("forward")
        if callable(fwd) and not isinstance(fwd, (staticmethod, classmethod)):
            # replacing the subclass's own forward is the point: it keeps the inputs
            cls.forward = _keeping_inputs(fwd)  # type: ignore[method-assign]

    def __call__(self, *inputs):
        for i, a in enumerate(inputs):
            if not isinstance(a, Tensor):
                raise TypeError(
                    f"op {type(self).__name__} expect type Tensor as inputs, got "
                    f"{type(a).__name__} (argument {i}); wrap it: mge.tensor(value), or keep "
                    "it as an attribute of the Function"
                )
        self._mge_inputs = inputs
        try:
            return super().__call__(*inputs)
        finally:
            self.__dict__.pop("_mge_inputs", None)
