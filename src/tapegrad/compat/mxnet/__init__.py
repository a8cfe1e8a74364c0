"""The MXNet facade: run Apache MXNet (1.x and 2.x) autograd and Gluon code on tapegrad.

Change the import line only:

    from tapegrad.compat import mxnet as mx          # was: import mxnet as mx
    from tapegrad.compat.mxnet import autograd, gluon, np, nd

What maps where: `mx.nd.NDArray` and `mx.np.ndarray` are the facade's array types,
subclasses of `tapegrad.Tensor` whose methods follow MXNet (float32 by default, `ctx=`
accepted; importing the facade changes nothing in `tapegrad.Tensor`); `mx.autograd` is
tapegrad's record scope (docs/recording.md); `mx.gluon` Blocks
hold record-scope Parameters (`grad_req="write"`) and follow `autograd.is_training()`.
A name this facade does not provide raises an AttributeError that says so (and what to
use instead); see docs/migrating-from-mxnet.md.
"""

from __future__ import annotations

from .._facade import facade_getattr
from . import (  # noqa: F401
    autograd,
    base,
    context,
    contrib,
    gluon,
    initializer,
    lr_scheduler,
    ndarray,
    numpy,
    numpy_extension,
    optimizer,
    random,  # noqa: F401
    symbol,
    util,
)
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401

np = numpy
nd = ndarray
npx = numpy_extension
sym = symbol  # placeholders only (symbol.py)
init = initializer
from .numpy_extension import np_array, np_shape, set_np_shape  # noqa: E402,F401

__version__ = "1.9.1"  # the MXNet API this facade follows (plus Gluon 2's mx.np style)

_HINTS = {
    "mod": "the Module API is not provided; use mx.gluon",
    "module": "the Module API is not provided; use mx.gluon",
    "kv": "kvstores are not provided; see tapegrad.distributed",
    "kvstore": "kvstores are not provided; see tapegrad.distributed",
    "metric": "not provided; compute metrics with mx.np operations",
    "io": "not provided; use mx.gluon.data",
    "recordio": "RecordIO is not supported",
    "profiler": "not provided",
}
_hinted = facade_getattr(__name__, "the MXNet facade", {}, _HINTS)


def __getattr__(name: str):
    if name in ("test_utils", "image"):  # imported on first use
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return _hinted(name)
