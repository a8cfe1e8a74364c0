"""SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's update)."""

from __future__ import annotations

from .optimizer import GRAD_OPTIONS, Optimizer, prepare_grad, required, validate_grad_options

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, the update PyTorch's `torch.optim.SGD` makes.

    Args:
        params: parameters or parameter groups.
        lr: learning rate.
        momentum: momentum factor (0 = none).
        dampening: dampening of the momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend instead of descend.
        lr_in_momentum: the momentum buffer accumulates `lr * gradient` and the step is the
            buffer (MXNet's and Caffe's form: a learning-rate change affects only new
            gradients); PyTorch's buffer accumulates gradients and the step is `lr * buffer`.
            The two are the same while the learning rate is constant.
        grad_scale, clip_value, clip_after_decay: what the update does to the gradient first
            (see `tapegrad.optim.optimizer.prepare_grad`); the defaults change nothing.

    >>> net, loss_fn = tg.nn.Linear(3, 1), tg.nn.MSELoss()
    >>> x, y = tg.randn(8, 3), tg.randn(8, 1)
    >>> opt = tg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss_fn(net(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0.0,
        dampening=0.0,
        weight_decay=0.0,
        nesterov=False,
        *,
        maximize=False,
        lr_in_momentum=False,
        **grad_options,
    ):
        if lr is required:
            raise ValueError("SGD needs a learning rate: SGD(params, lr=0.01)")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            lr_in_momentum=lr_in_momentum,
            **_grad_options("SGD", grad_options),
        )
        super().__init__(params, defaults)

    def _validate_group(self, group):
        super()._validate_group(group)
        if group["momentum"] < 0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}; it must be >= 0")
        if group["weight_decay"] < 0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}; must be >= 0")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum > 0 and zero dampening")
        validate_grad_options(group)

    def _update(self, group, params, grads, states):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov = group["weight_decay"], group["nesterov"]
        lr_inside = group.get("lr_in_momentum", False)
        plain = (
            not momentum
            and not wd
            and group.get("grad_scale", 1.0) == 1.0
            and group.get("clip_value") is None
        )
        for p, g, st in zip(params, grads, states, strict=False):
            if plain:
                # the hot path: exactly the cost of `p -= lr * g` in NumPy
                if group["maximize"]:
                    p += lr * g
                else:
                    p -= lr * g
                continue
            g = prepare_grad(g, p, group, wd)
            if not momentum:
                p -= lr * g
                continue
            step_g = lr * g if lr_inside else g  # what the buffer accumulates
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = st["momentum_buffer"] = step_g.copy()
            else:
                buf *= momentum
                buf += (1 - dampening) * step_g if dampening else step_g
            step = step_g + momentum * buf if nesterov else buf
            p -= step if lr_inside else lr * step


def _grad_options(who: str, given: dict) -> dict:
    """The `prepare_grad` options, defaults filled in; a TypeError for an unknown keyword."""
    unknown = sorted(set(given) - set(GRAD_OPTIONS))
    if unknown:
        raise TypeError(
            f"{who}: unexpected keyword arguments {unknown}; the gradient options "
            f"are {sorted(GRAD_OPTIONS)}"
        )
    return {**GRAD_OPTIONS, **given}
