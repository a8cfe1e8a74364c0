"""`megengine.core`: MegEngine's runtime internals, importable so scripts load.

The facade has no imperative runtime of its own to expose: `megengine.core._imperative_rt`,
`Grad`, `apply(op)` and the option switches are out of scope. Importing this module (and
`megengine.core.tensor.dtype`) works; using a name raises an error that says what to use.

    >>> import tapegrad.compat.megengine.core as core
    >>> try:
    ...     core.set_option("enable_drop", 1)
    ... except NotImplementedError as e:
    ...     print(str(e).split(";")[0])
    megengine.core.set_option('enable_drop') is not supported by the tapegrad facade
"""

from __future__ import annotations

from ..._facade import facade_getattr
from . import tensor  # noqa: F401

__all__ = ["set_option", "get_option"]


def set_option(name: str, value) -> None:
    """Not supported: the facade has none of MegEngine's runtime options."""
    raise NotImplementedError(
        f"megengine.core.set_option({name!r}) is not supported by the tapegrad facade; "
        "it has no runtime options (tapegrad runs eagerly on NumPy/CuPy)"
    )


def get_option(name: str):
    """Not supported: the facade has none of MegEngine's runtime options."""
    raise NotImplementedError(
        f"megengine.core.get_option({name!r}) is not supported by the tapegrad facade; "
        "it has no runtime options"
    )


_INTERNAL = (
    "MegEngine's imperative runtime internals are out of scope; use the public API "
    "(megengine.autodiff.GradManager, megengine.functional)"
)
__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (megengine.core)",
    {},
    {
        "_imperative_rt": _INTERNAL,
        "autodiff": _INTERNAL,
        "ops": _INTERNAL,
        "_config": _INTERNAL,
        "_trace_option": _INTERNAL,
    },
)
