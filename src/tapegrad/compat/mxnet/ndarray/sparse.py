"""`mx.nd.sparse`: sparse storage does not exist in tapegrad; every name says so."""

from __future__ import annotations

from ..._facade import unsupported

_HINT = "sparse storage (row_sparse, csr) does not exist in tapegrad; use dense arrays"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported("the MXNet facade (mx.nd.sparse)", name, _HINT)
