"""Tensor's installed methods, typed, for editors and type checkers. GENERATED: do not edit.

Made by tools/gen_tensor_surface.py from `tapegrad.ops.tensor_methods.TENSOR_METHODS` (the
one table of methods `Tensor` gets at import time); tests/test_tensor_surface.py fails when
it is stale. `tensor.py` makes this class Tensor's base only under TYPE_CHECKING, so it costs
nothing at run time. Each stub names the function that implements it.
"""
# ruff: noqa: E501
# mypy: disable-error-code="empty-body"
from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tensor import Tensor


class TensorSurface:
    # ops.tensor_methods._all_dims_reversed
    @property
    def T(self) -> Tensor:
        """All dimensions reversed."""

    # ops.unary.abs
    def __abs__(self) -> Tensor:
        """|input|, elementwise; the gradient at 0 is 0."""

    # ops.tensor_methods.__add__
    def __add__(self, other) -> Tensor:
        """self + other (broadcasting)."""

    # ops.compare._bitwise.<locals>.method
    def __and__(self, other) -> Tensor:
        ...

    # ops.compare._comparison.<locals>.method
    def __eq__(self, other) -> Tensor:  # type: ignore[override]
        ...

    # ops.tensor_methods.__floordiv__
    def __floordiv__(self, other) -> Tensor:
        """self // other (not differentiable)."""

    # ops.tensor_methods.__format__
    def __format__(self, format_spec) -> builtins.str:
        """`f"{loss:.4f}"`: a 0-d tensor formats as its Python number (as in PyTorch); any other"""

    # ops.compare._comparison.<locals>.method
    def __ge__(self, other) -> Tensor:
        ...

    # ops.index.getitem
    def __getitem__(self, key) -> Tensor:
        """`input[key]`: basic indexing gives a view, integer arrays and boolean masks a copy"""

    # ops.compare._comparison.<locals>.method
    def __gt__(self, other) -> Tensor:
        ...

    # ops.tensor_methods.__iadd__
    def __iadd__(self, other) -> Tensor:
        """self += other, in place (bumps the version)."""

    # ops.tensor_methods.__imul__
    def __imul__(self, other) -> Tensor:
        """self *= other, in place (bumps the version)."""

    # ops.compare._invert_method
    def __invert__(self) -> Tensor:
        ...

    # ops.tensor_methods.__isub__
    def __isub__(self, other) -> Tensor:
        """self -= other, in place (bumps the version)."""

    # ops.index._iter
    def __iter__(self) -> Iterator[Tensor]:
        ...

    # ops.tensor_methods.__itruediv__
    def __itruediv__(self, other) -> Tensor:
        """self /= other, in place (bumps the version)."""

    # ops.compare._comparison.<locals>.method
    def __le__(self, other) -> Tensor:
        ...

    # ops.compare._comparison.<locals>.method
    def __lt__(self, other) -> Tensor:
        ...

    # ops.linalg._matmul_op
    def __matmul__(self, other) -> Tensor:
        ...

    # ops.tensor_methods.__mod__
    def __mod__(self, other) -> Tensor:
        """self % other (the sign of the divisor, as in Python)."""

    # ops.tensor_methods.__mul__
    def __mul__(self, other) -> Tensor:
        """self * other (broadcasting)."""

    # ops.compare._comparison.<locals>.method
    def __ne__(self, other) -> Tensor:  # type: ignore[override]
        ...

    # ops.tensor_methods.__neg__
    def __neg__(self) -> Tensor:
        """-self."""

    # ops.compare._bitwise.<locals>.method
    def __or__(self, other) -> Tensor:
        ...

    # ops.tensor_methods.__pos__
    def __pos__(self) -> Tensor:
        """+self: the tensor itself."""

    # ops.tensor_methods.__pow__
    def __pow__(self, other) -> Tensor:
        """self ** other."""

    # ops.tensor_methods.__radd__
    def __radd__(self, other) -> Tensor:
        """other + self."""

    # ops.compare._bitwise.<locals>.method
    def __rand__(self, other) -> Tensor:
        ...

    # ops.tensor_methods.__rfloordiv__
    def __rfloordiv__(self, other) -> Tensor:
        """other // self."""

    # ops.linalg._rmatmul
    def __rmatmul__(self, other) -> Tensor:
        ...

    # ops.tensor_methods.__rmod__
    def __rmod__(self, other) -> Tensor:
        """other % self."""

    # ops.tensor_methods.__rmul__
    def __rmul__(self, other) -> Tensor:
        """other * self."""

    # ops.compare._bitwise.<locals>.method
    def __ror__(self, other) -> Tensor:
        ...

    # ops.tensor_methods.__rpow__
    def __rpow__(self, other) -> Tensor:
        """other ** self."""

    # ops.tensor_methods.__rsub__
    def __rsub__(self, other) -> Tensor:
        """other - self."""

    # ops.tensor_methods.__rtruediv__
    def __rtruediv__(self, other) -> Tensor:
        """other / self."""

    # ops.compare._bitwise.<locals>.method
    def __rxor__(self, other) -> Tensor:
        ...

    # ops.index.setitem
    def __setitem__(self, key, value) -> None:
        """`input[key] = value` in place (recorded when input or value is tracked)."""

    # ops.tensor_methods.__sub__
    def __sub__(self, other) -> Tensor:
        """self - other (broadcasting)."""

    # ops.tensor_methods.__truediv__
    def __truediv__(self, other) -> Tensor:
        """self / other (true division; integers give floats)."""

    # ops.compare._bitwise.<locals>.method
    def __xor__(self, other) -> Tensor:
        ...

    # ops.unary.abs
    def abs(self) -> Tensor:
        """|input|, elementwise; the gradient at 0 is 0."""

    # in place: op 'abs' (registry.apply_inplace)
    def abs_(self) -> Tensor:
        """In-place abs: writes the result into this tensor and returns it."""

    # ops.unary.abs
    def absolute(self) -> Tensor:
        """|input|, elementwise; the gradient at 0 is 0."""

    # ops.unary.acos
    def acos(self) -> Tensor:
        """Elementwise arccosine of `input` (differentiable inside (-1, 1))."""

    # ops.unary.acosh
    def acosh(self) -> Tensor:
        """Elementwise inverse hyperbolic cosine of `input` (differentiable for input > 1)."""

    # ops.arith.add
    def add(self, other, *, alpha=1) -> Tensor:
        """input + alpha * other, broadcasting."""

    # ops.tensor_methods.add_
    def add_(self, other, *, alpha=1) -> Tensor:
        """In-place self + alpha * other (PyTorch's `p.add_(g, alpha=-lr)`)."""

    # ops.pointwise.addcdiv
    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        """input + value * tensor1 / tensor2, with broadcasting (Adam's update)."""

    # ops.pointwise._addcdiv_
    def addcdiv_(self, tensor1, tensor2, *, value=1) -> Tensor:
        """addcdiv in place: self += value * tensor1 / tensor2 (Adam's step)."""

    # ops.pointwise.addcmul
    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        """input + value * tensor1 * tensor2, with broadcasting."""

    # ops.pointwise._addcmul_
    def addcmul_(self, tensor1, tensor2, *, value=1) -> Tensor:
        """addcmul in place: self += value * tensor1 * tensor2 (optimizers' second moments)."""

    # ops.structure.addmm
    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        """beta * input + alpha * (mat1 @ mat2), mat1 and mat2 2-D (input broadcasts)."""

    # ops.structure.addmv
    def addmv(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        """beta * input + alpha * (mat @ vec), mat 2-D and vec 1-D (input broadcasts)."""

    # ops.reduce.all
    def all(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """True where every element along `dim` is non-zero (a bool tensor)."""

    # ops.compare.allclose
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> builtins.bool:
        """True when every element of `input` is close to `other` (see isclose)."""

    # ops.reduce.amax
    def amax(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """Maximum over `dim` (all when omitted); tied maxima share the gradient equally."""

    # ops.reduce.amin
    def amin(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """Minimum over `dim` (all when omitted); tied minima share the gradient equally."""

    # ops.reduce.any
    def any(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """True where some element along `dim` is non-zero (a bool tensor)."""

    # ops.unary.acos
    def arccos(self) -> Tensor:
        """Elementwise arccosine of `input` (differentiable inside (-1, 1))."""

    # ops.unary.acosh
    def arccosh(self) -> Tensor:
        """Elementwise inverse hyperbolic cosine of `input` (differentiable for input > 1)."""

    # ops.unary.asin
    def arcsin(self) -> Tensor:
        """Elementwise arcsine of `input` (differentiable inside (-1, 1))."""

    # ops.unary.asinh
    def arcsinh(self) -> Tensor:
        """Elementwise inverse hyperbolic sine of `input` (differentiable)."""

    # ops.unary.atan
    def arctan(self) -> Tensor:
        """Elementwise arctangent of `input` (differentiable)."""

    # ops.pointwise.atan2
    def arctan2(self, other: Tensor) -> Tensor:
        """The angle of the point (other, input), in (-pi, pi]; `atan2(y, x)` with broadcasting."""

    # ops.pointwise._atan2_
    def arctan2_(self, other) -> Tensor:
        """atan2 in place: self becomes atan2(self, other)."""

    # ops.unary.atanh
    def arctanh(self) -> Tensor:
        """Elementwise inverse hyperbolic tangent of `input` (differentiable inside (-1, 1))."""

    # ops.reduce.argmax
    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """Index of the (first) maximum, over the flattened tensor when `dim` is None."""

    # ops.reduce.argmin
    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """Index of the (first) minimum, over the flattened tensor when `dim` is None."""

    # ops.sorting.argsort
    def argsort(self, dim=-1, descending=False, stable=False, *, axis=None) -> Tensor:
        """The indices that sort `input` along `dim` (int64; the sort is stable)."""

    # ops.index.argwhere
    def argwhere(self) -> Tensor:
        """The (n, ndim) indices of the nonzero entries (= nonzero(input))."""

    # ops.unary.asin
    def asin(self) -> Tensor:
        """Elementwise arcsine of `input` (differentiable inside (-1, 1))."""

    # ops.unary.asinh
    def asinh(self) -> Tensor:
        """Elementwise inverse hyperbolic sine of `input` (differentiable)."""

    # ops.casting.astype
    def astype(self, dtype, copy=True) -> Tensor:
        """`input` converted to `dtype` (differentiable between floating dtypes). With copy=False"""

    # ops.unary.atan
    def atan(self) -> Tensor:
        """Elementwise arctangent of `input` (differentiable)."""

    # ops.pointwise.atan2
    def atan2(self, other: Tensor) -> Tensor:
        """The angle of the point (other, input), in (-pi, pi]; `atan2(y, x)` with broadcasting."""

    # ops.pointwise._atan2_
    def atan2_(self, other) -> Tensor:
        """atan2 in place: self becomes atan2(self, other)."""

    # ops.unary.atanh
    def atanh(self) -> Tensor:
        """Elementwise inverse hyperbolic tangent of `input` (differentiable inside (-1, 1))."""

    # ops.tensor_methods.attach_grad
    def attach_grad(self, grad_req: builtins.str = 'write', stype=None) -> None:
        """Give this tensor a zero `.grad` now and make it a variable of `autograd.record()`."""

    # ops.tensor_methods.backward
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None, *, out_grad=None, train_mode=True) -> None:
        """Backpropagate from this tensor (PyTorch and MXNet signatures)."""

    # ops.structure.baddbmm
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        """beta * input + alpha * bmm(batch1, batch2), both 3-D (input broadcasts)."""

    # ops.random_fills.bernoulli_
    def bernoulli_(self, p: Any = 0.5, *, generator=None) -> Tensor:
        """Fill with 1 with probability `p` and 0 otherwise, in place; `p` is a number or a"""

    # ops.order_stats.bincount
    def bincount(self, weights=None, minlength=0) -> Tensor:
        """How often each non-negative integer occurs in the 1-D `input` (or the sum of its"""

    # ops.linalg.bmm
    def bmm(self, mat2) -> Tensor:
        """Batched product of two 3-D tensors (b, n, m) @ (b, m, p)."""

    # ops.casting._caster.<locals>.method
    def bool(self) -> Tensor:
        """This tensor as bool (itself when it already is)."""

    # ops.views.broadcast_to
    def broadcast_to(self, *shape) -> Tensor:
        """A read-only broadcast view of `input` with `shape`."""

    # ops.casting._caster.<locals>.method
    def byte(self) -> Tensor:
        """This tensor as uint8 (itself when it already is)."""

    # ops.random_fills.cauchy_
    def cauchy_(self, median: builtins.float = 0.0, sigma: builtins.float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of the Cauchy distribution (location `median`, scale `sigma`)."""

    # ops.unary.ceil
    def ceil(self) -> Tensor:
        """The smallest integer >= input, elementwise; the gradient is zero."""

    # in place: op 'ceil' (registry.apply_inplace)
    def ceil_(self) -> Tensor:
        """In-place ceil: writes the result into this tensor and returns it."""

    # ops.joins.chunk
    def chunk(self, chunks, dim=0, *, axis=None) -> builtins.tuple[Tensor, ...]:
        """Split into `chunks` pieces of size ceil(n / chunks) (fewer when they run out)."""

    # ops.elementwise.clamp
    def clamp(self, min=None, max=None) -> Tensor:
        """Limit `input` to [min, max]; either bound may be None, a number or a tensor."""

    # ops.elementwise._clamp_
    def clamp_(self, min=None, max=None) -> Tensor:
        """clamp in place."""

    # ops.elementwise.clamp_max
    def clamp_max(self, max) -> Tensor:
        """Elementwise `min(input, max)`: values above `max` become `max`."""

    # ops.elementwise.clamp_min
    def clamp_min(self, min) -> Tensor:
        """Elementwise `max(input, min)`: values below `min` become `min`."""

    # ops.elementwise.clip
    def clip(self, min=None, max=None) -> Tensor:
        """Alias of clamp."""

    # ops.elementwise._clamp_
    def clip_(self, min=None, max=None) -> Tensor:
        """clamp in place."""

    # ops.casting.clone
    def clone(self) -> Tensor:
        """A copy that owns its storage; gradients flow back to `input`."""

    # ops.views.contiguous
    def contiguous(self, memory_format=None) -> Tensor:
        """The tensor itself when its storage is in row-major order, else a row-major copy (what"""

    # ops.casting._copy_
    def copy_(self, src, non_blocking=False) -> Tensor:
        """Copy `src` (broadcast to this tensor's shape, cast to its dtype) into this tensor."""

    # ops.pointwise.copysign
    def copysign(self, other) -> Tensor:
        """|input| with the sign of `other` (a tensor or number; -0.0 counts as negative)."""

    # ops.pointwise._copysign_
    def copysign_(self, other) -> Tensor:
        """copysign in place."""

    # ops.unary.cos
    def cos(self) -> Tensor:
        """The cosine, elementwise (radians)."""

    # in place: op 'cos' (registry.apply_inplace)
    def cos_(self) -> Tensor:
        """In-place cos: writes the result into this tensor and returns it."""

    # ops.unary.cosh
    def cosh(self) -> Tensor:
        """Elementwise hyperbolic cosine of `input` (differentiable)."""

    # ops.structure.cross
    def cross(self, other, dim=None) -> Tensor:
        """The cross product of 3-vectors along `dim` (inputs broadcast). Without `dim`, the"""

    # ops.order_stats.cummax
    def cummax(self, dim) -> Any:
        """Running maximum along `dim` and the index it came from (the latest on a tie):"""

    # ops.order_stats.cummin
    def cummin(self, dim) -> Any:
        """Running minimum along `dim` and the index it came from: (values, indices)."""

    # ops.statistics.cumprod
    def cumprod(self, dim=None, *, dtype=None, axis=None) -> Tensor:
        """Cumulative product along `dim` (required); the gradient is exact where elements are 0."""

    # ops.statistics.cumsum
    def cumsum(self, dim=None, *, dtype=None, axis=None) -> Tensor:
        """Cumulative sum along `dim` (required)."""

    # ops.structure.data_ptr
    def data_ptr(self) -> builtins.int:
        """The address of this tensor's first element."""

    # ops.pointwise.deg2rad
    def deg2rad(self) -> Tensor:
        """Degrees to radians, elementwise."""

    # in place: op 'deg2rad' (registry.apply_inplace)
    def deg2rad_(self) -> Tensor:
        """In-place deg2rad: writes the result into this tensor and returns it."""

    # ops.matrix.diag
    def diag(self, diagonal=0) -> Tensor:
        """A 1-D tensor -> the square matrix with it on diagonal `diagonal`; a 2-D tensor -> its"""

    # ops.matrix.diagonal
    def diagonal(self, offset=0, dim1=0, dim2=1) -> Tensor:
        """Diagonal `offset` of the matrices in dimensions (dim1, dim2), as the last dimension:"""

    # ops.structure.diff
    def diff(self, n=1, dim=-1, prepend=None, append=None) -> Tensor:
        """The n-th forward difference along `dim`: out[i] = x[i + 1] - x[i], `n` times;"""

    # ops.pairwise.dist
    def dist(self, other, p=2) -> Tensor:
        """The p-norm of input - other (broadcast), over all elements: p = 2 (default), 1, inf,"""

    # ops.arith.div
    def div(self, other, *, rounding_mode=None) -> Tensor:
        """input / other; rounding_mode 'floor' or 'trunc' gives a non-differentiable integer-like"""

    # in place: op 'div' (registry.apply_inplace)
    def div_(self, y) -> Tensor:
        """In-place div: writes the result into this tensor and returns it."""

    # ops.arith.div
    def divide(self, other, *, rounding_mode=None) -> Tensor:
        """input / other; rounding_mode 'floor' or 'trunc' gives a non-differentiable integer-like"""

    # ops.linalg.dot
    def dot(self, other) -> Tensor:
        """Inner product of two 1-D tensors (PyTorch's dot; use matmul or tensordot otherwise)."""

    # ops.casting._caster.<locals>.method
    def double(self) -> Tensor:
        """This tensor as float64 (itself when it already is)."""

    # ops.activation.elu
    def elu(self, alpha=1.0) -> Tensor:
        """x where x > 0, else alpha * (exp(x) - 1)."""

    # ops.compare.eq
    def eq(self, other) -> Tensor:
        """Elementwise input == other (a bool tensor)."""

    # ops.compare.equal
    def equal(self, other) -> builtins.bool:
        """True when both tensors have the same shape and the same elements (PyTorch's"""

    # ops.unary.erf
    def erf(self) -> Tensor:
        """The error function (no SciPy needed; relative error < 1e-14 in float64)."""

    # in place: op 'erf' (registry.apply_inplace)
    def erf_(self) -> Tensor:
        """In-place erf: writes the result into this tensor and returns it."""

    # ops.pointwise.erfinv
    def erfinv(self) -> Tensor:
        """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside), no SciPy needed."""

    # in place: op 'erfinv' (registry.apply_inplace)
    def erfinv_(self) -> Tensor:
        """In-place erfinv: writes the result into this tensor and returns it."""

    # ops.unary.exp
    def exp(self) -> Tensor:
        """e ** input, elementwise."""

    # in place: op 'exp' (registry.apply_inplace)
    def exp_(self) -> Tensor:
        """In-place exp: writes the result into this tensor and returns it."""

    # ops.views.expand
    def expand(self, *sizes) -> Tensor:
        """Broadcast to `sizes` without copying; -1 keeps a dimension, new ones go in front."""

    # ops.views.expand_as
    def expand_as(self, other) -> Tensor:
        """`input` broadcast (without copying) to `other`'s shape."""

    # ops.unary.expm1
    def expm1(self) -> Tensor:
        """exp(input) - 1, accurate near 0."""

    # in place: op 'expm1' (registry.apply_inplace)
    def expm1_(self) -> Tensor:
        """In-place expm1: writes the result into this tensor and returns it."""

    # ops.random_fills.exponential_
    def exponential_(self, lambd: builtins.float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of the exponential distribution of rate `lambd`, in place."""

    # ops.casting._fill_
    def fill_(self, value) -> Tensor:
        """Fill this tensor with `value` (a number or a one-element tensor), in place."""

    # ops.views.flatten
    def flatten(self, start_dim=0, end_dim=-1) -> Tensor:
        """Merge dimensions start_dim..end_dim into one: `x.flatten(1)` keeps the batch axis."""

    # ops.tiling.flip
    def flip(self, dims=None, *more_dims, axis=None) -> Tensor:
        """Reverse the order of elements along `dims` (int or tuple; `t.flip(0, 2)` as in"""

    # ops.tiling.fliplr
    def fliplr(self) -> Tensor:
        """Reverse the columns (dimension 1)."""

    # ops.tiling.flipud
    def flipud(self) -> Tensor:
        """Reverse the rows (dimension 0)."""

    # ops.casting._caster.<locals>.method
    def float(self) -> Tensor:
        """This tensor as float32 (itself when it already is)."""

    # ops.pointwise.float_power
    def float_power(self, exponent) -> Tensor:
        """input ** exponent computed in float64 (the result is float64, as in PyTorch); either"""

    # ops.pointwise._float_power_
    def float_power_(self, exponent) -> Tensor:
        """float_power in place: only a float64 tensor can hold the result (as in PyTorch)."""

    # ops.unary.floor
    def floor(self) -> Tensor:
        """The largest integer <= input, elementwise; the gradient is zero."""

    # in place: op 'floor' (registry.apply_inplace)
    def floor_(self) -> Tensor:
        """In-place floor: writes the result into this tensor and returns it."""

    # ops.compare.floor_divide
    def floor_divide(self, other) -> Tensor:
        """floor(input / other), elementwise (`//`); not differentiable."""

    # ops.compare.fmod
    def fmod(self, other) -> Tensor:
        """input - trunc(input / other) * other, with the sign of `input` (C's fmod); an int"""

    # ops.pointwise.frac
    def frac(self) -> Tensor:
        """The fractional part, input - trunc(input) (the sign follows input); float only."""

    # ops.pointwise._frac_
    def frac_(self) -> Tensor:
        """frac in place."""

    # ops.gather_scatter.gather
    def gather(self, dim=None, index=None, *, axis=None) -> Tensor:
        """`out[i][j] = input[index[i][j]][j]` (dim=0): pick along `dim` at `index`, which has the"""

    # ops.compare.ge
    def ge(self, other) -> Tensor:
        """Elementwise input >= other."""

    # ops.activation.gelu
    def gelu(self, approximate='none') -> Tensor:
        """x * Phi(x) with the exact erf form (approximate='none', PyTorch's default) or the tanh"""

    # ops.random_fills.geometric_
    def geometric_(self, p: builtins.float, *, generator=None) -> Tensor:
        """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""

    # ops.linalg.outer
    def ger(self, vec2) -> Tensor:
        """Outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j]."""

    # ops.compare.gt
    def greater(self, other) -> Tensor:
        """Elementwise input > other."""

    # ops.compare.ge
    def greater_equal(self, other) -> Tensor:
        """Elementwise input >= other."""

    # ops.compare.gt
    def gt(self, other) -> Tensor:
        """Elementwise input > other."""

    # ops.casting._caster.<locals>.method
    def half(self) -> Tensor:
        """This tensor as float16 (itself when it already is)."""

    # ops.pointwise.heaviside
    def heaviside(self, values) -> Tensor:
        """The step function: 0 where input < 0, `values` where input == 0, 1 where input > 0."""

    # ops.pointwise._heaviside_
    def heaviside_(self, values) -> Tensor:
        """heaviside in place."""

    # ops.pointwise.hypot
    def hypot(self, other: Tensor) -> Tensor:
        """sqrt(input**2 + other**2) without overflow, elementwise with broadcasting."""

    # ops.pointwise._hypot_
    def hypot_(self, other) -> Tensor:
        """hypot in place."""

    # ops.index.index_add
    def index_add(self, dim, index, source, *, alpha=1) -> Tensor:
        """out = input with alpha * source added at `index` along `dim` (repeats add up)."""

    # ops.index._index_add_
    def index_add_(self, dim, index, source, *, alpha=1) -> Tensor:
        """Add `alpha * source` into the rows `index` along `dim`, in place; repeats add up."""

    # ops.index.index_put
    def index_put(self, indices, values, accumulate=False) -> Tensor:
        """out = input with values written (or added, accumulate=True) at the index tuple."""

    # ops.index._index_put_
    def index_put_(self, indices, values, accumulate=False) -> Tensor:
        """Write `values` at `indices` (a tuple of index tensors), in place; with"""

    # ops.index.index_select
    def index_select(self, dim=None, index=None, *, axis=None) -> Tensor:
        """The entries of `input` at the 1-D integer `index` along `dim` (or `axis`)."""

    # ops.linalg.inner
    def inner(self, other) -> Tensor:
        """Sum over the last dimension of both (NumPy's inner)."""

    # ops.casting._caster.<locals>.method
    def int(self) -> Tensor:
        """This tensor as int32 (itself when it already is)."""

    # ops.views.is_contiguous
    def is_contiguous(self, memory_format=None) -> builtins.bool:
        """True when the storage is in row-major order (so `view` can reshape it freely)."""

    # ops.structure.is_floating_point
    def is_floating_point(self) -> builtins.bool:
        """Whether `input`'s dtype is a floating point type."""

    # ops.compare.isclose
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
        """Elementwise |input - other| <= atol + rtol * |other| (a bool tensor)."""

    # ops.compare.isfinite
    def isfinite(self) -> Tensor:
        """Where input is neither inf nor NaN."""

    # ops.order_stats.isin
    def isin(self, test_elements, *, assume_unique=False, invert=False) -> Tensor:
        """Whether each of `elements` occurs in `test_elements` (either may be a number)."""

    # ops.compare.isinf
    def isinf(self) -> Tensor:
        """Where input is +inf or -inf."""

    # ops.compare.isnan
    def isnan(self) -> Tensor:
        """Where input is NaN."""

    # ops.structure.kron
    def kron(self, other) -> Tensor:
        """The Kronecker product: every element of `input` times all of `other`, laid out in"""

    # ops.sorting.kthvalue
    def kthvalue(self, k, dim=-1, keepdim=False, *, axis=None, keepdims=None) -> Any:
        """The k-th smallest entry (k counts from 1) along `dim`: (values, indices)."""

    # ops.compare.le
    def le(self, other) -> Tensor:
        """Elementwise input <= other."""

    # ops.activation.leaky_relu
    def leaky_relu(self, negative_slope=0.01) -> Tensor:
        """x where x > 0, else negative_slope * x."""

    # ops.pairwise.lerp
    def lerp(self, end, weight) -> Tensor:
        """input + weight * (end - input); `weight` is a number or a tensor (all broadcast)."""

    # ops.pairwise._lerp_
    def lerp_(self, end, weight) -> Tensor:
        """In place `self + weight * (end - self)`."""

    # ops.compare.lt
    def less(self, other) -> Tensor:
        """Elementwise input < other."""

    # ops.compare.le
    def less_equal(self, other) -> Tensor:
        """Elementwise input <= other."""

    # ops.unary.log
    def log(self) -> Tensor:
        """The natural logarithm, elementwise."""

    # ops.pointwise.log10
    def log10(self) -> Tensor:
        """The base-10 logarithm, elementwise."""

    # in place: op 'log10' (registry.apply_inplace)
    def log10_(self) -> Tensor:
        """In-place log10: writes the result into this tensor and returns it."""

    # ops.unary.log1p
    def log1p(self) -> Tensor:
        """log(1 + input), accurate near 0."""

    # in place: op 'log1p' (registry.apply_inplace)
    def log1p_(self) -> Tensor:
        """In-place log1p: writes the result into this tensor and returns it."""

    # ops.unary.log2
    def log2(self) -> Tensor:
        """The base-2 logarithm, elementwise."""

    # in place: op 'log' (registry.apply_inplace)
    def log_(self) -> Tensor:
        """In-place log: writes the result into this tensor and returns it."""

    # ops.random_fills.log_normal_
    def log_normal_(self, mean: builtins.float = 1.0, std: builtins.float = 2.0, *, generator=None) -> Tensor:
        """Fill with exp(N(mean, std**2)) samples, in place (`mean`, `std` of the logarithm)."""

    # ops.tensor_methods.log_softmax
    def log_softmax(self, dim=None, dtype=None, *, axis=None) -> Tensor:
        """log(softmax(x)) along `dim` (`nn.functional.log_softmax`)."""

    # ops.pointwise.logaddexp
    def logaddexp(self, other: Tensor) -> Tensor:
        """log(exp(input) + exp(other)) without overflow, elementwise with broadcasting."""

    # ops.pointwise.logaddexp2
    def logaddexp2(self, other: Tensor) -> Tensor:
        """log2(2**input + 2**other) without overflow, elementwise with broadcasting."""

    # ops.order_stats.logcumsumexp
    def logcumsumexp(self, dim) -> Tensor:
        """log(cumsum(exp(input))) along `dim`, without overflow."""

    # ops.compare.logical_and
    def logical_and(self, other) -> Tensor:
        """Elementwise logical and of the truth values (any dtype) -> bool."""

    # ops.compare.logical_not
    def logical_not(self) -> Tensor:
        """Elementwise logical not -> bool."""

    # ops.compare.logical_or
    def logical_or(self, other) -> Tensor:
        """Elementwise logical or -> bool."""

    # ops.compare.logical_xor
    def logical_xor(self, other) -> Tensor:
        """Elementwise logical xor -> bool."""

    # ops.pointwise.logit
    def logit(self, eps: builtins.float | None = None) -> Tensor:
        """log(p / (1 - p)), the inverse of sigmoid; with `eps`, input is first clamped to"""

    # ops.pointwise._logit_
    def logit_(self, eps=None) -> Tensor:
        """logit in place."""

    # ops.statistics.logsumexp
    def logsumexp(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
        """log(sum(exp(input))) over `dim`, computed without overflow."""

    # ops.casting._caster.<locals>.method
    def long(self) -> Tensor:
        """This tensor as int64 (itself when it already is)."""

    # ops.compare.lt
    def lt(self, other) -> Tensor:
        """Elementwise input < other."""

    # ops.views._mT
    @property
    def mT(self) -> Tensor:
        """The last two dimensions swapped (batched matrix transpose)."""

    # ops.gather_scatter.masked_fill
    def masked_fill(self, mask, value) -> Tensor:
        """`input` with `value` where the boolean `mask` (broadcast to input) is True."""

    # ops.gather_scatter._masked_fill_
    def masked_fill_(self, mask, value) -> Tensor:
        """Write `value` where `mask` (broadcast to the tensor's shape) is True, in place."""

    # ops.gather_scatter.masked_select
    def masked_select(self, mask) -> Tensor:
        """The entries of `input` where `mask` is True, as a 1-D tensor."""

    # ops.linalg.matmul
    def matmul(self, other) -> Tensor:
        """Matrix product with NumPy/PyTorch semantics: 1-D operands are vectors, leading"""

    # ops.reduce._extreme_public.<locals>.fn
    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Any:
        """max(x) -> the largest value; max(x, dim, keepdim=False) -> (values, indices);"""

    # ops.elementwise.maximum
    def maximum(self, other) -> Tensor:
        """Elementwise maximum with broadcasting; tied elements share the gradient half and half."""

    # ops.reduce.mean
    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        """Arithmetic mean over `dim`. Integer tensors need `dtype=` (as in PyTorch)."""

    # ops.order_stats.median
    def median(self, dim=None, keepdim=False) -> Any:
        """The median; of an even count, the lower of the two middle values (PyTorch's rule)."""

    # ops.reduce._extreme_public.<locals>.fn
    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Any:
        """min(x) -> the smallest value; min(x, dim, keepdim=False) -> (values, indices);"""

    # ops.elementwise.minimum
    def minimum(self, other) -> Tensor:
        """Elementwise minimum with broadcasting; tied elements share the gradient half and half."""

    # ops.linalg.mm
    def mm(self, mat2) -> Tensor:
        """Product of two 2-D matrices."""

    # ops.order_stats.mode
    def mode(self, dim=-1, keepdim=False) -> Any:
        """The most frequent value along `dim` (the smallest on a tie) and the last index where"""

    # ops.views.moveaxis
    def moveaxis(self, source, destination) -> Tensor:
        """Move dimension(s) `source` to position(s) `destination`."""

    # ops.views.moveaxis
    def movedim(self, source, destination) -> Tensor:
        """Move dimension(s) `source` to position(s) `destination`."""

    # ops.arith.mul
    def mul(self, other) -> Tensor:
        """input * other, elementwise with broadcasting (`multiply` is the same function)."""

    # in place: op 'mul' (registry.apply_inplace)
    def mul_(self, y) -> Tensor:
        """In-place mul: writes the result into this tensor and returns it."""

    # ops.tensor_methods.multinomial
    def multinomial(self, num_samples, replacement=False, *, generator=None) -> Tensor:
        """Draw category indices from the weights in each row (`tg.multinomial`)."""

    # ops.arith.mul
    def multiply(self, other) -> Tensor:
        """input * other, elementwise with broadcasting (`multiply` is the same function)."""

    # ops.linalg.mv
    def mv(self, vec) -> Tensor:
        """Matrix-vector product."""

    # ops.pointwise.nan_to_num
    def nan_to_num(self, nan: builtins.float = 0.0, posinf=None, neginf=None) -> Tensor:
        """NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default the largest"""

    # ops.pointwise._nan_to_num_
    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None) -> Tensor:
        """nan_to_num in place."""

    # ops.order_stats.nanmean
    def nanmean(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        """mean over the elements that are not NaN (NaN where a slice is all NaN)."""

    # ops.order_stats.nanmedian
    def nanmedian(self, dim=None, keepdim=False) -> Any:
        """median ignoring NaN (NaN only where a slice is all NaN)."""

    # ops.order_stats.nanquantile
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor:
        """quantile ignoring NaN (NaN only where a slice is all NaN)."""

    # ops.order_stats.nansum
    def nansum(self, dim=None, keepdim=False, *, dtype=None) -> Tensor:
        """sum treating NaN as zero (NaN gets a zero gradient)."""

    # ops.index.narrow
    def narrow(self, dim, start, length) -> Tensor:
        """The view input[..., start:start+length, ...] along `dim`."""

    # ops.structure.ndimension
    def ndimension(self) -> builtins.int:
        """The number of dimensions (PyTorch's alias of dim)."""

    # ops.compare.ne
    def ne(self, other) -> Tensor:
        """Elementwise input != other."""

    # ops.arith.neg
    def neg(self) -> Tensor:
        """-input, elementwise (`negative` is the same function)."""

    # in place: op 'neg' (registry.apply_inplace)
    def neg_(self) -> Tensor:
        """In-place neg: writes the result into this tensor and returns it."""

    # ops.arith.neg
    def negative(self) -> Tensor:
        """-input, elementwise (`negative` is the same function)."""

    # ops.structure.nelement
    def nelement(self) -> builtins.int:
        """The number of elements (PyTorch's alias of numel)."""

    # ops.tensor_methods.new_empty
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """An uninitialized tensor of `size`, with this tensor's dtype and device unless given."""

    # ops.tensor_methods.new_full
    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        """`fill_value` everywhere in `size`, with this tensor's dtype and device unless given."""

    # ops.tensor_methods.new_ones
    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Ones of `size`, with this tensor's dtype and device unless given."""

    # ops.tensor_methods.new_tensor
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A new tensor from `data`, with this tensor's dtype and device unless given."""

    # ops.tensor_methods.new_zeros
    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Zeros of `size`, with this tensor's dtype and device unless given."""

    # ops.index.nonzero
    def nonzero(self, *, as_tuple=False) -> Any:
        """Indices of the nonzero entries: an (n, ndim) int64 tensor, or a tuple of 1-D ones."""

    # ops.statistics.norm
    def norm(self, p='fro', dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None) -> Tensor:
        """Vector p-norm over `dim` (all elements when None): p = 'fro' or 2 (default), 1, inf,"""

    # ops.random_fills.normal_
    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of N(mean, std**2), in place."""

    # ops.compare.ne
    def not_equal(self, other) -> Tensor:
        """Elementwise input != other."""

    # ops.linalg.outer
    def outer(self, vec2) -> Tensor:
        """Outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j]."""

    # ops.views.permute
    def permute(self, *dims) -> Tensor:
        """Reorder the dimensions: `x.permute(2, 0, 1)`."""

    # ops.arith.pow
    def pow(self, exponent) -> Tensor:
        """input ** exponent, elementwise with broadcasting; either may be a Python number."""

    # in place: op 'pow' (registry.apply_inplace)
    def pow_(self, y) -> Tensor:
        """In-place pow: writes the result into this tensor and returns it."""

    # ops.reduce.prod
    def prod(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        """Product over `dim`; the gradient is exact where elements are zero."""

    # ops.order_stats.quantile
    def quantile(self, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor:
        """The q-th quantiles along `dim` (all elements when None); `q` is a number or a 1-D"""

    # ops.pointwise.rad2deg
    def rad2deg(self) -> Tensor:
        """Radians to degrees, elementwise."""

    # in place: op 'rad2deg' (registry.apply_inplace)
    def rad2deg_(self) -> Tensor:
        """In-place rad2deg: writes the result into this tensor and returns it."""

    # ops.random_fills.random_
    def random_(self, from_: builtins.int | None = None, to: builtins.int | None = None, *, generator=None) -> Tensor:
        """Fill with integers drawn uniformly from [from, to), in place. `random_(to)` is"""

    # ops.unary.reciprocal
    def reciprocal(self) -> Tensor:
        """1 / input, elementwise."""

    # in place: op 'reciprocal' (registry.apply_inplace)
    def reciprocal_(self) -> Tensor:
        """In-place reciprocal: writes the result into this tensor and returns it."""

    # ops.unary.relu
    def relu(self) -> Tensor:
        """max(input, 0); the gradient at 0 is 0, as in PyTorch."""

    # in place: op 'relu' (registry.apply_inplace)
    def relu_(self) -> Tensor:
        """In-place relu: writes the result into this tensor and returns it."""

    # ops.compare.remainder
    def remainder(self, other) -> Tensor:
        """input - floor(input / other) * other (`%`), with the sign of `other`. Differentiable."""

    # ops.tiling.repeat
    def repeat(self, *sizes) -> Tensor:
        """PyTorch's repeat: tile the tensor `sizes` times along each dimension (NumPy's tile)."""

    # ops.tiling.repeat_interleave
    def repeat_interleave(self, repeats, dim=None, *, axis=None, output_size=None) -> Tensor:
        """Repeat each element `repeats` times (an int or one count per element) along `dim`;"""

    # ops.views.reshape
    def reshape(self, *shape) -> Tensor:
        """A tensor with the same data in `shape` (a view when possible); one size may be -1."""

    # ops.views.reshape_as
    def reshape_as(self, other) -> Tensor:
        """`input` reshaped to `other`'s shape."""

    # ops.structure.roll
    def roll(self, shifts, dims=None) -> Tensor:
        """Shift elements along `dims` by `shifts`, wrapping around; with dims=None the tensor is"""

    # ops.unary.round
    def round(self, decimals: builtins.int = 0) -> Tensor:
        """Round half to even (as PyTorch and NumPy); `decimals` shifts the rounding position."""

    # in place: op 'round' (registry.apply_inplace)
    def round_(self) -> Tensor:
        """In-place round: writes the result into this tensor and returns it."""

    # ops.unary.rsqrt
    def rsqrt(self) -> Tensor:
        """1 / sqrt(input), elementwise."""

    # in place: op 'rsqrt' (registry.apply_inplace)
    def rsqrt_(self) -> Tensor:
        """In-place rsqrt: writes the result into this tensor and returns it."""

    # ops.gather_scatter.scatter
    def scatter(self, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
        """`out` = `input` with `src[i][j]` (or `value`) written at `[index[i][j]][j]` (dim=0)."""

    # ops.gather_scatter._scatter_
    def scatter_(self, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
        """In place `scatter`: write `src` (or `value`) at `index` along `dim`"""

    # ops.gather_scatter.scatter_add
    def scatter_add(self, dim=None, index=None, src=None, *, axis=None) -> Tensor:
        """`out` = `input` with `src[i][j]` added at `[index[i][j]][j]` (dim=0); repeats add up."""

    # ops.gather_scatter._scatter_add_
    def scatter_add_(self, dim, index, src) -> Tensor:
        """In place `scatter_add`: add `src` at `index` along `dim`; repeats add up."""

    # ops.index.select
    def select(self, dim, index) -> Tensor:
        """input[..., index, ...] along `dim` (that dimension disappears)."""

    # ops.casting._caster.<locals>.method
    def short(self) -> Tensor:
        """This tensor as int16 (itself when it already is)."""

    # ops.unary.sigmoid
    def sigmoid(self) -> Tensor:
        """1 / (1 + exp(-input)), computed without overflow."""

    # in place: op 'sigmoid' (registry.apply_inplace)
    def sigmoid_(self) -> Tensor:
        """In-place sigmoid: writes the result into this tensor and returns it."""

    # ops.unary.sign
    def sign(self) -> Tensor:
        """-1, 0 or 1 by the sign of input; the gradient is zero."""

    # in place: op 'sign' (registry.apply_inplace)
    def sign_(self) -> Tensor:
        """In-place sign: writes the result into this tensor and returns it."""

    # ops.activation.silu
    def silu(self) -> Tensor:
        """x * sigmoid(x) (also called swish)."""

    # ops.unary.sin
    def sin(self) -> Tensor:
        """The sine, elementwise (radians)."""

    # in place: op 'sin' (registry.apply_inplace)
    def sin_(self) -> Tensor:
        """In-place sin: writes the result into this tensor and returns it."""

    # ops.pointwise.sinc
    def sinc(self) -> Tensor:
        """The normalized sinc, sin(pi x) / (pi x), and 1 at 0."""

    # in place: op 'sinc' (registry.apply_inplace)
    def sinc_(self) -> Tensor:
        """In-place sinc: writes the result into this tensor and returns it."""

    # ops.unary.sinh
    def sinh(self) -> Tensor:
        """Elementwise hyperbolic sine of `input` (differentiable)."""

    # ops.tensor_methods.softmax
    def softmax(self, dim=None, dtype=None, *, axis=None) -> Tensor:
        """exp(x) / sum(exp(x)) along `dim` (`nn.functional.softmax`)."""

    # ops.activation.softplus
    def softplus(self, beta=1.0, threshold=20.0) -> Tensor:
        """log(1 + exp(beta * x)) / beta; reverts to x where beta * x > threshold."""

    # ops.sorting.sort
    def sort(self, dim=-1, descending=False, stable=False, *, axis=None) -> Any:
        """Sort along `dim`; returns (values, indices). Values are differentiable."""

    # ops.joins.split
    def split(self, split_size_or_sections, dim=0, *, axis=None) -> builtins.tuple[Tensor, ...]:
        """PyTorch's split: chunks of size `split_size_or_sections` (the last may be smaller), or"""

    # ops.unary.sqrt
    def sqrt(self) -> Tensor:
        """The square root, elementwise."""

    # in place: op 'sqrt' (registry.apply_inplace)
    def sqrt_(self) -> Tensor:
        """In-place sqrt: writes the result into this tensor and returns it."""

    # ops.unary.square
    def square(self) -> Tensor:
        """input * input, elementwise."""

    # in place: op 'square' (registry.apply_inplace)
    def square_(self) -> Tensor:
        """In-place square: writes the result into this tensor and returns it."""

    # ops.views.squeeze
    def squeeze(self, dim=None, *, axis=None) -> Tensor:
        """Drop size-1 dimensions: all of them, or only `dim` (int or tuple) where it is 1."""

    # ops.structure.squeeze_
    def squeeze_(self, dim=None) -> Tensor:
        """In-place squeeze: this tensor loses its dimensions of size 1 (or just `dim`)."""

    # ops.statistics.std
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None) -> Tensor:
        """Standard deviation over `dim` (see var for `correction`)."""

    # ops.structure.stride
    def stride(self, dim=None) -> Any:
        """The step, in elements, between neighbours along each dimension (a tuple), or along"""

    # ops.arith.sub
    def sub(self, other, *, alpha=1) -> Tensor:
        """input - alpha * other, broadcasting."""

    # ops.tensor_methods.sub_
    def sub_(self, other, *, alpha=1) -> Tensor:
        """In-place self - alpha * other."""

    # ops.arith.sub
    def subtract(self, other, *, alpha=1) -> Tensor:
        """input - alpha * other, broadcasting."""

    # ops.reduce.sum
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        """Sum over `dim` (int or tuple; None or () for all), optionally as `dtype` first."""

    # ops.views.sum_to_size
    def sum_to_size(self, *size) -> Tensor:
        """Sum broadcast dimensions so the result has `size` (the inverse of expand)."""

    # ops.views.swapaxes
    def swapaxes(self, axis0, axis1) -> Tensor:
        """Swap two dimensions (= transpose(input, axis0, axis1))."""

    # ops.views.swapaxes
    def swapdims(self, axis0, axis1) -> Tensor:
        """Swap two dimensions (= transpose(input, axis0, axis1))."""

    # ops.views.t
    def t(self) -> Tensor:
        """Transpose a tensor of at most 2 dimensions."""

    # ops.structure.t_
    def t_(self) -> Tensor:
        """In-place t(): a 2-D tensor is transposed (0-d and 1-d stay as they are)."""

    # ops.structure.take
    def take(self, index) -> Tensor:
        """`input` as if flattened, at `index` (an int64 tensor; negative counts from the end);"""

    # ops.gather_scatter.take_along_dim
    def take_along_dim(self, indices, dim=None) -> Tensor:
        """NumPy's take_along_axis (indices broadcast); without `dim` the tensor is flattened."""

    # ops.unary.tan
    def tan(self) -> Tensor:
        """The tangent, elementwise (radians)."""

    # ops.unary.tanh
    def tanh(self) -> Tensor:
        """The hyperbolic tangent, elementwise."""

    # in place: op 'tanh' (registry.apply_inplace)
    def tanh_(self) -> Tensor:
        """In-place tanh: writes the result into this tensor and returns it."""

    # ops.joins.tensor_split
    def tensor_split(self, indices_or_sections, dim=0) -> builtins.tuple[Tensor, ...]:
        """NumPy's array_split: `sections` near-equal pieces, or split before each index."""

    # ops.einsum.tensordot
    def tensordot(self, b, dims=2) -> Tensor:
        """Sum products over the last `dims` axes of a and the first `dims` of b, or over the"""

    # ops.tiling.tile
    def tile(self, dims) -> Tensor:
        """Tile like NumPy: `dims` shorter than ndim is padded with ones in front."""

    # ops.sorting.topk
    def topk(self, k, dim=-1, largest=True, sorted=True) -> Any:
        """The `k` largest (or smallest, `largest=False`) entries along `dim`: (values, indices),"""

    # ops.matrix.trace
    def trace(self) -> Tensor:
        """The sum of the main diagonal of a 2-D tensor."""

    # ops.views.transpose
    def transpose(self, dim0, dim1) -> Tensor:
        """Swap two dimensions (PyTorch's meaning; NumPy's transpose is `permute`)."""

    # ops.structure.transpose_
    def transpose_(self, dim0, dim1) -> Tensor:
        """In-place transpose of dimensions `dim0` and `dim1`."""

    # ops.matrix.tril
    def tril(self, diagonal=0) -> Tensor:
        """The lower triangle (on and below diagonal `diagonal`) of the last two dimensions; the"""

    # ops.matrix._tril_
    def tril_(self, diagonal=0) -> Tensor:
        """Zero the elements above the `diagonal`-th diagonal, in place."""

    # ops.matrix.triu
    def triu(self, diagonal=0) -> Tensor:
        """The upper triangle (on and above diagonal `diagonal`) of the last two dimensions; the"""

    # ops.matrix._triu_
    def triu_(self, diagonal=0) -> Tensor:
        """Zero the elements below the `diagonal`-th diagonal, in place."""

    # ops.arith.div
    def true_divide(self, other, *, rounding_mode=None) -> Tensor:
        """input / other; rounding_mode 'floor' or 'trunc' gives a non-differentiable integer-like"""

    # ops.unary.trunc
    def trunc(self) -> Tensor:
        """input rounded toward zero, elementwise; the gradient is zero."""

    # in place: op 'trunc' (registry.apply_inplace)
    def trunc_(self) -> Tensor:
        """In-place trunc: writes the result into this tensor and returns it."""

    # ops.casting._type
    def type(self, dtype=None) -> Any:
        """With no argument, the type name ('tapegrad.FloatTensor'); else a cast to `dtype`."""

    # ops.structure.type_as
    def type_as(self, other) -> Tensor:
        """This tensor converted to `other`'s dtype."""

    # ops.joins.unbind
    def unbind(self, dim=0) -> builtins.tuple[Tensor, ...]:
        """The slices along `dim`, as a tuple of tensors with that dimension removed."""

    # ops.views.unflatten
    def unflatten(self, dim, sizes) -> Tensor:
        """Split dimension `dim` into `sizes` (one may be -1)."""

    # ops.random_fills.uniform_
    def uniform_(self, from_: builtins.float = 0.0, to: builtins.float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of U[from, to), in place (PyTorch's `from` is `from_` here, or"""

    # ops.order_stats.unique
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None) -> Any:
        """The distinct values (sorted), and optionally the inverse (where each element went)"""

    # ops.order_stats.unique_consecutive
    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None) -> Any:
        """The values (or slices along `dim`) with each run of equal neighbours kept once, and"""

    # ops.views.unsqueeze
    def unsqueeze(self, dim=None, *, axis=None) -> Tensor:
        """Insert a size-1 dimension at `dim` (-1 appends one)."""

    # ops.structure.unsqueeze_
    def unsqueeze_(self, dim) -> Tensor:
        """In-place unsqueeze: this tensor gets a new dimension of size 1 at `dim`."""

    # ops.statistics.var
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None) -> Tensor:
        """Variance over `dim`, dividing by N - correction (correction=1 by default, Bessel's; the"""

    # ops.views.view
    def view(self, *shape) -> Tensor:
        """`input` in `shape` sharing its storage: like reshape, but refused (as in PyTorch) when"""

    # ops.views.view_as
    def view_as(self, other) -> Tensor:
        """`input` reshaped to `other`'s shape."""

    # ops.elementwise._where_method
    def where(self, condition, other) -> Tensor:
        """`self` where `condition`, else `other` (PyTorch's Tensor.where)."""

    # ops.pointwise.xlogy
    def xlogy(self, other: Tensor) -> Tensor:
        """input * log(other), and 0 where input is 0 (unless other is NaN), as PyTorch."""

    # in place: op 'xlogy' (registry.apply_inplace)
    def xlogy_(self, y) -> Tensor:
        """In-place xlogy: writes the result into this tensor and returns it."""

    # ops.casting._zero_
    def zero_(self) -> Tensor:
        """Fill this tensor with zeros, in place."""
