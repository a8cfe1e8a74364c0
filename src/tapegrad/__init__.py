"""tapegrad: reverse-mode autograd on NumPy with PyTorch, MXNet and MegEngine recording.

>>> import tapegrad as tg
>>> x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""

from __future__ import annotations

import typing as _typing  # private: `tg.` lists only the library's names

# every subpackage imports `ops` (the op table, which attaches Tensor's methods) itself.
# The subpackages a script may never touch (`nn`, `data`, `distributed`, `func`, `utils`,
# `viz`, `compat`, ...) load on first use through `__getattr__` below: `import tapegrad`
# then costs about what `import numpy` costs (bench W7).
# `x as x`: each name is re-exported, also for type checkers that require it explicitly
# (mypy --strict: `tg.Tensor` was "not defined" without it)
from . import autograd as autograd
from . import ops as ops
from .autograd.modes import *  # noqa: F403
from .creation import *  # noqa: F403
from .dtypes import bool_ as bool_
from .dtypes import double as double
from .dtypes import float16 as float16
from .dtypes import float32 as float32
from .dtypes import float64 as float64
from .dtypes import get_default_dtype as get_default_dtype
from .dtypes import half as half
from .dtypes import int8 as int8
from .dtypes import int16 as int16
from .dtypes import int32 as int32
from .dtypes import int64 as int64
from .dtypes import long as long
from .dtypes import set_default_dtype as set_default_dtype
from .dtypes import short as short
from .dtypes import uint8 as uint8
from .ops.arith import *  # noqa: F403
from .ops.compare import *  # noqa: F403
from .ops.dims import *  # noqa: F403
from .ops.elementwise import *  # noqa: F403
from .ops.gather_scatter import *  # noqa: F403
from .ops.index import *  # noqa: F403
from .ops.linalg import *  # noqa: F403
from .ops.matrix import *  # noqa: F403
from .ops.order_stats import *  # noqa: F403
from .ops.pairwise import *  # noqa: F403
from .ops.pointwise import *  # noqa: F403
from .ops.reduce import *  # noqa: F403
from .ops.shape import *  # noqa: F403
from .ops.sorting import *  # noqa: F403
from .ops.statistics import *  # noqa: F403
from .ops.structure import *  # noqa: F403
from .ops.svd import *  # noqa: F403
from .random import Generator as Generator
from .random import default_generator as default_generator
from .random import get_rng_state as get_rng_state
from .random import initial_seed as initial_seed
from .random import manual_seed as manual_seed
from .random import seed as seed
from .random import set_rng_state as set_rng_state
from .tensor import Tensor as Tensor

# what `__getattr__` below loads on first use, declared for editors and type checkers (at
# run time `tg.nn` must stay lazy; without this, checkers see every one of them as `object`)
if _typing.TYPE_CHECKING:
    from . import autodiff as autodiff
    from . import compat as compat
    from . import data as data
    from . import distributed as distributed
    from . import distributions as distributions
    from . import func as func
    from . import interop as interop
    from . import io as io
    from . import linalg as linalg
    from . import nn as nn
    from . import onnx as onnx
    from . import optim as optim
    from . import sampling as sampling
    from . import threads as threads
    from . import utils as utils
    from . import viz as viz
    from .compile.api import compile as compile
    from .dtypes import bfloat16 as bfloat16
    from .interop import from_dlpack as from_dlpack
    from .io import load as load
    from .io import save as save
    from .sampling import bernoulli as bernoulli
    from .sampling import multinomial as multinomial
    from .sampling import poisson as poisson
    from .threads import get_num_threads as get_num_threads
    from .threads import set_num_threads as set_num_threads

# `tapegrad.compile` here is the subpackage (the dispatcher imports its hook); `tg.compile`
# is the function, bound on first use by `__getattr__`
globals().pop("compile", None)
bool = bool_  # noqa: A001  (tg.bool, as in PyTorch; the builtin is untouched elsewhere)
float = float32  # noqa: A001
int = int32  # noqa: A001
__version__ = "0.2.0"

# attribute -> module that holds it, imported the first time the attribute is read
_LAZY_SUBPACKAGES = frozenset(
    (
        "autodiff",
        "compat",
        "data",
        "distributed",
        "distributions",
        "func",
        "interop",
        "io",
        "linalg",
        "nn",
        "onnx",
        "optim",
        "sampling",
        "threads",
        "utils",
        "viz",
    )
)
# function -> the module that holds it, imported on first use (checkpoints, DLPack, ...)
_LAZY_FUNCTIONS = {
    "from_dlpack": "interop",
    "get_num_threads": "threads",
    "load": "io",
    "bernoulli": "sampling",
    "multinomial": "sampling",
    "poisson": "sampling",
    "save": "io",
    "set_num_threads": "threads",
}


def __getattr__(name: str) -> object:
    """`tg.nn`, `tg.data`, `tg.save`, ... and `tg.bfloat16`, loaded on first use (see the top)."""
    import importlib

    if name in _LAZY_SUBPACKAGES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    if name in _LAZY_FUNCTIONS:
        module = importlib.import_module(f".{_LAZY_FUNCTIONS[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name == "compile":  # tg.compile, the function (tapegrad.compile.api)
        from .compile.api import compile

        globals()["compile"] = compile
        return compile
    if name == "bfloat16":
        from . import dtypes

        return dtypes.bfloat16
    raise AttributeError(f"module 'tapegrad' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(
        set(globals()) | _LAZY_SUBPACKAGES | _LAZY_FUNCTIONS.keys() | {"bfloat16", "compile"}
    )
