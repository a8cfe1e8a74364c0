"""`torch.func`: grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call (tapegrad.func).

>>> from tapegrad.compat.torch.func import vmap, grad
"""

from __future__ import annotations

from ...func import (  # noqa: F401
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    vjp,
    vmap,
)

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "vjp",
    "vmap",
]
