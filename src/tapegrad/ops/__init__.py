"""Floor 3: the op table. Importing it registers every op, then installs Tensor's methods.

Each family module registers its ops with `@defop` (registry.py) as it is imported; this
file owns the order. A family's rules may call the ops of the families before it by name
(`xp.<name>` resolves when a rule runs), and a module imports only what it uses, from
modules that never import it back (tests/test_import_graph.py checks there is no circle).

    registry.py     Op, defop, the dispatcher, apply_inplace      xp.py  the rule namespaces
    promotion.py    the dtype and tensor class of an op's result
    arguments.py    dim= / axis= parsing of the public functions
    arith.py        + - * / ** neg      tensor_methods.py  Tensor's methods: one table
    unary.py        exp log sin ... sigmoid erf abs relu rounding
    activation.py   leaky_relu elu gelu silu softplus             casting.py  clone astype to
    elementwise.py  clamp maximum minimum where (and the family's names)
    compare.py      == < ... logical, bitwise, // %
    reduce.py       sum mean prod amax amin max min argmax all any
    statistics.py   var std logsumexp norm cumsum cumprod
    views.py        reshape broadcast_to sum_to expand_dims squeeze transpose ...
    view_writes.py  an in-place write into a view rebases its base's graph
    tiling.py       flip tile repeat     joins.py  cat stack pad split chunk unbind
    shape.py        the shape family's names
    index.py        t[key], t[key] = v, index_select, index_put ...
    gather_scatter.py  gather scatter take_along_dim masked_fill masked_select
    einsum.py       einsum tensordot     matfuncs.py  inv det slogdet solve
    svd.py          the SVD (U, S, Vh packed in one op): linalg.svd, svdvals, svd
    linalg.py       matmul mm bmm mv dot inner outer (and the family's names)
    nn_ops.py       softmax log_softmax linear dropout embedding one_hot
    nn_losses.py    cross_entropy nll_loss bce kl_div     nn_norm.py  layer/batch/group norm
    conv.py         conv conv_transpose      pool.py  max/avg/adaptive pooling
    sorting.py      sort argsort topk ...    matrix.py  diagonal tril triu trace ...
    pointwise.py    atan2 hypot log10 logaddexp xlogy addcmul nan_to_num logit erfinv ...
    random_fills.py t.uniform_() normal_() bernoulli_() ...: in-place draws
    pairwise.py     lerp dist cdist cosine_similarity
    structure.py    roll diff take cross kron block_diag addmm ...
    order_stats.py  median mode cummax quantile nansum unique bincount ...
"""

# ruff: noqa: I001  (the family imports are in registration order, not alphabetical)
from __future__ import annotations

from ..engine import backward as _engine
from ..tensor import Tensor, _wrap
from .registry import OPS, NumpyStyleOp, Op, apply_inplace, defop, dispatch
from .xp import T, array_ns

# registration order (see the docstring)
from . import arith  # noqa: F401
from . import unary, activation, casting, elementwise, compare  # noqa: F401
from . import reduce, statistics  # noqa: F401
from . import views, view_writes, tiling, joins, shape  # noqa: F401
from . import index, gather_scatter  # noqa: F401
from . import einsum, matfuncs, svd, linalg  # noqa: F401
from . import nn_ops, nn_losses, nn_norm, conv, pool  # noqa: F401
from . import sorting, matrix, pairwise, pointwise, random_fills  # noqa: F401
from . import structure, order_stats  # noqa: F401
from .tensor_methods import install as _install_tensor_methods

_engine.configure(T, _wrap, Tensor)
_install_tensor_methods(Tensor)  # after every op module: the one place Tensor gets its methods

__all__ = ["OPS", "NumpyStyleOp", "Op", "T", "apply_inplace", "array_ns", "defop", "dispatch"]
