"""`mge.module` (import as M): MegEngine's modules on tapegrad.nn.

Parameters of these modules are tracked by no tape until a GradManager attaches them (as
in MegEngine: `gm.attach(model.parameters())`), so `.numpy()` works on them and nothing is
recorded outside `with gm:`. Layer arguments are MegEngine's (`Dropout(drop_prob)`,
`BatchNorm2d(momentum=0.9)` keeping 90% of the running statistics).

    >>> import tapegrad.compat.megengine.module as M
    >>> class Net(M.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = M.Linear(4, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
"""

from __future__ import annotations

from ..._facade import facade_getattr
from . import init, layers, rnn  # noqa: F401
from .module import Module  # noqa: F401

# the layer names come from layers.__all__, so the two lists cannot drift apart (importing
# layers costs little: the core nn and mge.functional it builds on are loaded already)
_ALIASES = {name: f"{__name__}.layers:{name}" for name in layers.__all__}
_ALIASES.update({name: f"{__name__}.rnn:{name}" for name in rnn.__all__})
__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.module)",
    _ALIASES,
    {
        "ConvTranspose2d": "not provided; use tapegrad.nn.ConvTranspose2d in core code",
        "Conv1d": "not provided by the facade; use Conv2d on (N, C, 1, W) inputs",
        "QuantStub": "quantization is not supported",
        "DeQuantStub": "quantization is not supported",
        "Concat": "use F.concat in forward()",
    },
)
