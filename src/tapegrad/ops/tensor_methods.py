"""Tensor's methods, operators and properties: one table, installed in one place.

`tensor.py` defines storage, metadata, conversions and the autograd slots. Everything else a
`Tensor` can do is named here, in `TENSOR_METHODS` (attribute name -> function or property),
and `install()` puts it on the class once: `tapegrad.ops` calls it after every op module has
registered. Most entries are the op functions themselves (`t.sum(1)` is `ops.reduce.sum(t, 1)`);
the function's module holds its forward and derivative rule. Editors and type checkers see the
table through `tapegrad/_tensor_surface.py`, generated from it by `tools/gen_tensor_surface.py`
(a test fails when that file is stale).

    >>> TENSOR_METHODS["sum"] is tg.ops.reduce.sum
    True
"""

from __future__ import annotations

from typing import Any

from .. import creation, dtypes
from . import (
    activation,
    arith,
    casting,
    compare,
    einsum,
    elementwise,
    gather_scatter,
    index,
    joins,
    linalg,
    matrix,
    order_stats,
    pairwise,
    pointwise,
    random_fills,
    reduce,
    sorting,
    statistics,
    structure,
    tiling,
    unary,
    views,
)
from .registry import OPS, Op, apply_inplace, dispatch, dispatch_binary, dispatch_unary

# ------------------------------------------------------------------ methods named as functions
# module -> names: `Tensor.<name>` is `<module>.<name>` (aliases such as `multiply` included).
_SAME_NAME = (
    (arith, "add sub mul div neg pow multiply divide subtract negative true_divide"),
    (
        unary,
        "exp expm1 log log1p log2 sqrt rsqrt square reciprocal sin cos tan tanh sigmoid"
        " sinh cosh asin acos atan asinh acosh atanh arcsin arccos arctan arcsinh"
        " arccosh arctanh erf abs relu sign floor ceil trunc round",
    ),
    (elementwise, "absolute clamp clip clamp_min clamp_max maximum minimum"),
    (activation, "leaky_relu elu gelu silu softplus"),
    (casting, "clone astype"),
    (
        compare,
        "eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and"
        " logical_or logical_xor logical_not isnan isinf isfinite isclose allclose equal"
        " floor_divide remainder fmod",
    ),
    (reduce, "sum mean prod amax amin max min argmax argmin all any"),
    (statistics, "var std logsumexp norm cumsum cumprod"),
    (
        views,
        "reshape view view_as reshape_as flatten unflatten squeeze unsqueeze transpose"
        " swapaxes swapdims t permute moveaxis movedim broadcast_to expand expand_as"
        " sum_to_size contiguous is_contiguous",
    ),
    (joins, "split tensor_split chunk unbind"),
    (tiling, "repeat tile repeat_interleave flip fliplr flipud"),
    (index, "narrow select index_select index_add index_put nonzero argwhere"),
    (gather_scatter, "gather take_along_dim scatter_add scatter masked_fill masked_select"),
    (linalg, "matmul mm bmm mv dot inner outer ger"),
    (einsum, "tensordot"),
    (matrix, "diag diagonal trace tril triu"),
    (sorting, "sort argsort topk kthvalue"),
    (pairwise, "lerp dist"),
    (
        pointwise,
        "atan2 arctan2 hypot log10 logaddexp logaddexp2 xlogy addcmul addcdiv nan_to_num"
        " logit deg2rad rad2deg copysign frac heaviside erfinv sinc float_power",
    ),
    (
        structure,
        "roll diff take cross kron addmm baddbmm addmv is_floating_point type_as nelement"
        " ndimension stride data_ptr unsqueeze_ squeeze_ t_ transpose_",
    ),
    (
        order_stats,
        "median nanmedian mode cummax cummin quantile nanquantile nansum nanmean"
        " logcumsumexp unique unique_consecutive bincount isin",
    ),
)

# ------------------------------------------------------------------ in-place variants
# `t.exp_()`: the op applied to t's storage (registry.apply_inplace bumps the version).
_INPLACE_OF_OP = (
    "mul div neg pow abs exp log sqrt sin cos tanh sigmoid relu floor ceil round trunc"
    " reciprocal square expm1 log1p rsqrt erf sign"
    " log10 xlogy deg2rad rad2deg sinc erfinv"
)


def inplace_method(op_name: str):
    """`t.<op>_(...)`: the op applied in place (see registry.apply_inplace)."""
    op: Op = OPS[op_name]

    def method(self, *args, **params):
        return apply_inplace(op, self, *args, **params)

    method.__name__ = method.__qualname__ = op_name + "_"
    method.__doc__ = f"In-place {op_name}: writes the result into this tensor and returns it."
    method.inplace_of = op  # type: ignore[attr-defined]  # its signature, for the surface
    return method


def add_(self, other, *, alpha=1):
    """In-place self + alpha * other (PyTorch's `p.add_(g, alpha=-lr)`)."""
    return apply_inplace(arith._add, self, other if alpha == 1 else other * alpha)


def sub_(self, other, *, alpha=1):
    """In-place self - alpha * other."""
    return apply_inplace(arith._sub, self, other if alpha == 1 else other * alpha)


# ------------------------------------------------------------------ tensors like this one
def _like_self(self, dtype, device):
    return {
        "dtype": self.dtype if dtype is None else dtype,
        "device": self.device if device is None else device,
    }


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new tensor from `data`, with this tensor's dtype and device unless given."""
    return creation.tensor(data, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """Zeros of `size`, with this tensor's dtype and device unless given."""
    return creation.zeros(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """Ones of `size`, with this tensor's dtype and device unless given."""
    return creation.ones(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """An uninitialized tensor of `size`, with this tensor's dtype and device unless given."""
    return creation.empty(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    """`fill_value` everywhere in `size`, with this tensor's dtype and device unless given."""
    return creation.full(
        size, fill_value, requires_grad=requires_grad, **_like_self(self, dtype, device)
    )


# ------------------------------------------------------------------ Python operators
def __add__(self, other):
    """self + other (broadcasting)."""
    return dispatch_binary(arith._add, self, other)


def __radd__(self, other):
    """other + self."""
    return dispatch_binary(arith._add, other, self)


def __sub__(self, other):
    """self - other (broadcasting)."""
    return dispatch_binary(arith._sub, self, other)


def __rsub__(self, other):
    """other - self."""
    return dispatch_binary(arith._sub, other, self)


def __mul__(self, other):
    """self * other (broadcasting)."""
    return dispatch_binary(arith._mul, self, other)


def __rmul__(self, other):
    """other * self."""
    return dispatch_binary(arith._mul, other, self)


def __truediv__(self, other):
    """self / other (true division; integers give floats)."""
    return dispatch_binary(arith._div, self, other)


def __rtruediv__(self, other):
    """other / self."""
    return dispatch_binary(arith._div, other, self)


def __pow__(self, other):
    """self ** other."""
    return dispatch_binary(arith._pow, self, other)


def __rpow__(self, other):
    """other ** self."""
    return dispatch_binary(arith._pow, other, self)


def __neg__(self):
    """-self."""
    return dispatch_unary(arith._neg, self)


def __pos__(self):
    """+self: the tensor itself."""
    return self


def __iadd__(self, other):
    """self += other, in place (bumps the version)."""
    return apply_inplace(arith._add, self, other)


def __isub__(self, other):
    """self -= other, in place (bumps the version)."""
    return apply_inplace(arith._sub, self, other)


def __imul__(self, other):
    """self *= other, in place (bumps the version)."""
    return apply_inplace(arith._mul, self, other)


def __itruediv__(self, other):
    """self /= other, in place (bumps the version)."""
    return apply_inplace(arith._div, self, other)


def __floordiv__(self, other):
    """self // other (not differentiable)."""
    return compare._floor_divide(self, other)


def __rfloordiv__(self, other):
    """other // self."""
    return compare._floor_divide(other, self)


def __mod__(self, other):
    """self % other (the sign of the divisor, as in Python)."""
    return compare._remainder(self, other)


def __rmod__(self, other):
    """other % self."""
    return compare._remainder(other, self)


def __format__(self, format_spec):
    """`f"{loss:.4f}"`: a 0-d tensor formats as its Python number (as in PyTorch); any other
    tensor takes only the empty spec (its str)."""
    if self.ndim == 0:
        return format(self.item(), format_spec)
    return object.__format__(self, format_spec)


# ------------------------------------------------------------------ properties
def _all_dims_reversed(self):
    """All dimensions reversed (`t.T`; a 0-d or 1-d tensor is itself)."""
    return dispatch(views._transpose, self, axes=None) if self.ndim > 1 else self


# ------------------------------------------------------------------ methods defined elsewhere
# Their modules import the op table, so importing them here would be an import circle; the
# import runs on the first call instead (a dictionary lookup after that).
def backward(
    self,
    gradient=None,
    retain_graph=None,
    create_graph=False,
    inputs=None,
    *,
    out_grad=None,
    train_mode=True,
):
    """Backpropagate from this tensor (PyTorch and MXNet signatures)."""
    from ..autograd.engine_api import tensor_backward

    return tensor_backward(
        self, gradient, retain_graph, create_graph, inputs, out_grad=out_grad, train_mode=train_mode
    )


def attach_grad(self, grad_req: str = "write", stype=None):
    """Give this tensor a zero `.grad` now and make it a variable of `autograd.record()`."""
    from ..autograd.record import attach_grad

    return attach_grad(self, grad_req, stype)


def multinomial(self, num_samples, replacement=False, *, generator=None):
    """Draw category indices from the weights in each row (`tg.multinomial`)."""
    from ..sampling import multinomial

    return multinomial(self, num_samples, replacement, generator=generator)


def softmax(self, dim=None, dtype=None, *, axis=None):
    """exp(x) / sum(exp(x)) along `dim` (`nn.functional.softmax`)."""
    from ..nn.functional_core import softmax

    return softmax(self, dim, dtype, axis=axis)


def log_softmax(self, dim=None, dtype=None, *, axis=None):
    """log(softmax(x)) along `dim` (`nn.functional.log_softmax`)."""
    from ..nn.functional_core import log_softmax

    return log_softmax(self, dim, dtype, axis=axis)


#: where each forwarder above forwards to, "module:function" (a test checks the signatures)
FORWARDS_TO = {
    "backward": "tapegrad.autograd.engine_api:tensor_backward",
    "attach_grad": "tapegrad.autograd.record:attach_grad",
    "multinomial": "tapegrad.sampling:multinomial",
    "softmax": "tapegrad.nn.functional_core:softmax",
    "log_softmax": "tapegrad.nn.functional_core:log_softmax",
}


def _build_table() -> dict[str, Any]:
    table: dict[str, Any] = {}
    for module, names in _SAME_NAME:
        for name in names.split():
            table[name] = getattr(module, name)
    table.update(
        {
            "__abs__": elementwise.abs,
            "where": elementwise._where_method,
            "clamp_": elementwise._clamp_,
            "clip_": elementwise._clamp_,
            "float": casting._caster(dtypes.float32, "float"),
            "double": casting._caster(dtypes.float64, "double"),
            "half": casting._caster(dtypes.float16, "half"),
            "int": casting._caster(dtypes.int32, "int"),
            "long": casting._caster(dtypes.int64, "long"),
            "bool": casting._caster(dtypes.bool_, "bool"),
            "short": casting._caster(dtypes.int16, "short"),
            "byte": casting._caster(dtypes.uint8, "byte"),
            "type": casting._type,
            "fill_": casting._fill_,
            "zero_": casting._zero_,
            "copy_": casting._copy_,
            "masked_fill_": gather_scatter._masked_fill_,
            "scatter_": gather_scatter._scatter_,
            "scatter_add_": gather_scatter._scatter_add_,
            "index_add_": index._index_add_,
            "index_put_": index._index_put_,
            "tril_": matrix._tril_,
            "triu_": matrix._triu_,
            "lerp_": pairwise._lerp_,
            "add_": add_,
            "sub_": sub_,
            # indexing and iteration
            "__getitem__": index.getitem,
            "__setitem__": index.setitem,
            "__iter__": index._iter,
            # comparisons: `t == None` is False, `t == "a"` NotImplemented; `==` keeps identity hash
            "__eq__": compare._comparison(compare._equal, "__eq__"),
            "__ne__": compare._comparison(compare._not_equal, "__ne__"),
            "__lt__": compare._comparison(compare._less, "__lt__"),
            "__le__": compare._comparison(compare._less_equal, "__le__"),
            "__gt__": compare._comparison(compare._greater, "__gt__"),
            "__ge__": compare._comparison(compare._greater_equal, "__ge__"),
            # bitwise operators check for bool/integer operands first
            "__and__": compare._bitwise(compare._bitwise_and, "&"),
            "__rand__": compare._bitwise(compare._bitwise_and, "&", reverse=True),
            "__or__": compare._bitwise(compare._bitwise_or, "|"),
            "__ror__": compare._bitwise(compare._bitwise_or, "|", reverse=True),
            "__xor__": compare._bitwise(compare._bitwise_xor, "^"),
            "__rxor__": compare._bitwise(compare._bitwise_xor, "^", reverse=True),
            "__invert__": compare._invert_method,
            "__matmul__": linalg._matmul_op,
            "__rmatmul__": linalg._rmatmul,
            "T": property(_all_dims_reversed, doc="All dimensions reversed."),
            "mT": property(
                views._mT, doc="The last two dimensions swapped (batched matrix transpose)."
            ),
        }
    )
    for fn in (
        __add__,
        __radd__,
        __sub__,
        __rsub__,
        __mul__,
        __rmul__,
        __truediv__,
        __rtruediv__,
        __pow__,
        __rpow__,
        __neg__,
        __pos__,
        __iadd__,
        __isub__,
        __imul__,
        __itruediv__,
        __floordiv__,
        __rfloordiv__,
        __mod__,
        __rmod__,
        __format__,
        backward,
        attach_grad,
        multinomial,
        softmax,
        log_softmax,
        new_tensor,
        new_zeros,
        new_ones,
        new_empty,
        new_full,
    ):
        table[fn.__name__] = fn
    for name in _INPLACE_OF_OP.split():
        table[name + "_"] = inplace_method(name)
    table.update(pointwise.INPLACE_METHODS)
    table.update(random_fills.METHODS)
    return table


TENSOR_METHODS: dict[str, Any] = _build_table()

#: what the methods that don't return one Tensor return (for the typed surface; the rest
#: return a Tensor). Annotations on the functions themselves win over this.
RETURNS = {
    "allclose": "bool",
    "equal": "bool",
    "is_contiguous": "bool",
    "backward": "None",
    "attach_grad": "None",
    "__setitem__": "None",
    "__format__": "str",
    "__iter__": "Iterator[Tensor]",
    "__eq__": "Tensor",
    "__ne__": "Tensor",
    "split": "tuple[Tensor, ...]",
    "tensor_split": "tuple[Tensor, ...]",
    "chunk": "tuple[Tensor, ...]",
    "unbind": "tuple[Tensor, ...]",
    # (values, indices) named tuples, or a Tensor, depending on the arguments
    "sort": "Any",
    "topk": "Any",
    "kthvalue": "Any",
    "median": "Any",
    "nanmedian": "Any",
    "mode": "Any",
    "cummax": "Any",
    "cummin": "Any",
    "unique": "Any",
    "unique_consecutive": "Any",
    "stride": "Any",
    "is_floating_point": "bool",
    "nelement": "int",
    "ndimension": "int",
    "data_ptr": "int",
    "max": "Any",
    "min": "Any",
    "nonzero": "Any",
    "type": "Any",
}


def install(cls: type) -> None:
    """Put every entry of `TENSOR_METHODS` on `cls` (Tensor); called once, by `tapegrad.ops`."""
    for name, value in TENSOR_METHODS.items():
        setattr(cls, name, value)
