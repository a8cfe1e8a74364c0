"""SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's update)."""
from __future__ import annotations

from .optimizer import Optimizer, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, the update PyTorch's `torch.optim.SGD` makes.

    Args:
        params: parameters or parameter groups.
        lr: learning rate. momentum: momentum factor (0 = none). dampening: dampening of the
        momentum. weight_decay: L2 penalty added to the gradient. nesterov: Nesterov momentum
        (needs momentum > 0 and dampening 0). maximize: ascend instead of descend.

    >>> net, loss_fn = tg.nn.Linear(3, 1), tg.nn.MSELoss()
    >>> x, y = tg.randn(8, 3), tg.randn(8, 1)
    >>> opt = tg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss_fn(net(x), y).backward(); opt.step()
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False):
        if lr is required:
            raise ValueError("SGD needs a learning rate: SGD(params, lr=0.01)")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group):
        super()._validate_group(group)
        if group["momentum"] < 0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}; it must be >= 0")
        if group["weight_decay"] < 0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}; must be >= 0")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum > 0 and zero dampening")

    def _update(self, group, params, grads, states):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not momentum and not wd:
                # the hot path: exactly the cost of `p -= lr * g` in NumPy
                if maximize:
                    p += lr * g
                else:
                    p -= lr * g
                continue
            if maximize:
                g = -g
            if wd:
                g = g + wd * p
            if momentum:
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = g.copy()
                else:
                    buf *= momentum
                    if dampening:
                        buf += (1 - dampening) * g
                    else:
                        buf += g
                g = g + momentum * buf if nesterov else buf
            p -= lr * g
