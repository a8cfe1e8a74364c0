"""tg.func: function transforms in the style of torch.func / JAX.

`grad value_and_grad grad_and_value vjp` (reverse mode), `jvp` (forward mode),
`jacrev jacfwd hessian`, `vmap`, `functional_call`. They compose: `vmap(grad(f))` gives
per-sample gradients, `jacfwd(jacrev(f))` (= `hessian`) is forward-over-reverse.

    >>> tg.func.grad(lambda x: (x ** 3).sum())(tg.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> tg.func.grad(tg.func.grad(lambda x: x ** 3))(tg.tensor(2.0))
    tensor(12.)
"""

from __future__ import annotations

from .functional_call import functional_call
from .grad import grad, grad_and_value, value_and_grad, vjp
from .transforms import hessian, jacfwd, jacrev, jvp
from .vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "value_and_grad",
    "vjp",
    "vmap",
]
