"""The MegEngine facade: run MegEngine GradManager code and simple models on tapegrad.

Change the import lines only:

    import tapegrad.compat.megengine as mge                    # was: import megengine as mge
    import tapegrad.compat.megengine.functional as F
    import tapegrad.compat.megengine.module as M
    from tapegrad.compat.megengine.autodiff import GradManager

`mge.Tensor` / `mge.Parameter` are the facade's array types, subclasses of
`tapegrad.Tensor` whose methods follow MegEngine (`mge.tensor` makes one: float32 / int32
by default; importing the facade changes nothing in `tapegrad.Tensor`); `GradManager`
is tapegrad's (docs/recording.md); modules keep their parameters
untracked until a GradManager attaches them. A name the facade lacks raises an
AttributeError that says so; see docs/migrating-from-megengine.md.
"""

from __future__ import annotations

from .._facade import facade_getattr
from . import (  # noqa: F401
    autodiff,
    core,
    data,
    distributed,
    functional,
    hub,
    jit,
    module,
    optimizer,
    random,
)
from . import tensor as _tensor_module  # noqa: F401  (the module megengine.tensor)
from ._tensor import Parameter, Tensor, tensor  # noqa: F401, E402  (mge.tensor: the function)

__version__ = "1.13.0"  # the MegEngine API this facade follows


def is_cuda_available() -> bool:
    """True when CuPy and a GPU are there (`device="cuda"` works)."""
    from ... import backend

    try:
        backend.cupy()
    except RuntimeError:
        return False
    return True


_default_device = ["xpux"]


def set_default_device(device="xpux") -> None:
    """Accepted: record the name (tapegrad puts tensors on the CPU unless told)."""
    _default_device[0] = device


def get_default_device() -> str:
    """The device new tensors go to (`set_default_device`)."""
    return _default_device[0]


def save(obj, f, pickle_module=None, pickle_protocol=None) -> None:
    """Write a state dict (tapegrad's safetensors format: no pickle)."""
    from ... import io

    io.save(obj, f)


def load(f, map_location=None, pickle_module=None):
    """Read a file written by `mge.save` / `tg.save` (safetensors; nothing is executed)."""
    from ... import io

    return io.load(f)


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade",
    {},
    {
        "quantization": "quantization is not supported",
        "amp": "mixed precision is not supported",
        "traced_module": "not supported",
        "dtr": "dynamic tensor rematerialization is not supported",
    },
)
