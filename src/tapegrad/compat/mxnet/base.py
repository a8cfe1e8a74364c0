"""`mx.base`: the error type and the small string helpers MXNet code imports from here.

`MXNetError` is the error MXNet raises for an operator given wrong input (a RuntimeError).
Where MXNet raises it the facade does too (a layer given input of the wrong shape); the
core's own errors stay Python's ValueError / TypeError.
"""

from __future__ import annotations

import numbers

__all__ = ["MXNetError", "py_str", "string_types", "numeric_types", "integer_types"]


class MXNetError(RuntimeError):
    """An operator or Gluon call got input it cannot handle (the message says what)."""


def py_str(x) -> str:
    """`bytes` decoded as UTF-8 (a `str` is returned as it is)."""
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


string_types = (str,)
numeric_types = (float, int, numbers.Number)
integer_types = (int,)
