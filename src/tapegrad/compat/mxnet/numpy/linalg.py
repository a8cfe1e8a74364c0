"""`mx.np.linalg`: norm, inv, det, slogdet, solve (tapegrad.linalg, NumPy signatures)."""

from __future__ import annotations

from ..._facade import facade_dir, facade_getattr

__all__ = ["norm"]


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """NumPy's norm: the 2-norm of the flattened array by default."""
    import tapegrad as tg

    return tg.norm(x, p="fro" if ord is None else ord, dim=axis, keepdim=keepdims)


ALIASES = {
    "inv": "tapegrad.linalg:inv",
    "det": "tapegrad.linalg:det",
    "slogdet": "tapegrad.linalg:slogdet",
    "solve": "tapegrad.linalg:solve",
}
__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.np.linalg)", ALIASES)
__dir__ = facade_dir(__name__, ALIASES)
