"""tapegrad: reverse-mode autograd on NumPy with PyTorch, MXNet and MegEngine recording.

    >>> import tapegrad as tg
    >>> x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x ** 2).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""
from __future__ import annotations

# every subpackage imports `ops` (the op table, which attaches Tensor's methods) itself
from . import (  # noqa: F401  (tg.utils.tensorboard is imported on use)
    autodiff,
    autograd,
    compat,
    data,
    distributed,
    func,
    linalg,
    nn,
    onnx,
    ops,
    optim,
    threads,
    utils,
    viz,
)
from .autograd.modes import *  # noqa: F403
from .compile import compile  # noqa: F401
from .creation import *  # noqa: F403
from .dtypes import (  # noqa: F401
    bfloat16,
    bool_,
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from .interop import from_dlpack  # noqa: F401
from .io import *  # noqa: F403
from .ops.arith import *  # noqa: F403
from .ops.compare import *  # noqa: F403
from .ops.elementwise import *  # noqa: F403
from .ops.gather_scatter import *  # noqa: F403
from .ops.index import *  # noqa: F403
from .ops.linalg import *  # noqa: F403
from .ops.matrix import *  # noqa: F403
from .ops.pairwise import *  # noqa: F403
from .ops.reduce import *  # noqa: F403
from .ops.shape import *  # noqa: F403
from .ops.sorting import *  # noqa: F403
from .ops.statistics import *  # noqa: F403
from .random import manual_seed, seed  # noqa: F401
from .sampling import multinomial  # noqa: F401
from .tensor import Tensor  # noqa: F401  (tg.Tensor)
from .threads import get_num_threads, set_num_threads  # noqa: F401

bool = bool_  # noqa: A001  (tg.bool, as in PyTorch; the builtin is untouched elsewhere)
float = float32  # noqa: A001
int = int32  # noqa: A001
__version__ = "0.1.0"
