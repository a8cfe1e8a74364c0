"""`torch.amp`: `GradScaler` (dynamic loss scaling, as PyTorch's) and `autocast`.

tapegrad has no lower-precision autocast: `autocast(...)` is accepted as a context manager
and a decorator, and an enabled one warns once per block that it runs in the tensors' own
dtypes, the way PyTorch disables autocast on a device it cannot use (its "CUDA is not
available... Disabling autocast" warning). Scripts with an `--amp` switch therefore run, in
full precision. `GradScaler` is the real algorithm: the loss is multiplied by the scale,
`unscale_` divides the gradients back and looks for infinities and NaNs, `step` skips the
optimizer's step when it found one, `update` halves the scale after a skipped step and
doubles it after `growth_interval` clean ones. On "cuda" without a GPU it disables itself
with PyTorch's warning; on "cpu" it is on.

>>> from tapegrad.compat import torch
>>> p = torch.nn.Parameter(torch.ones(2))
>>> opt = torch.optim.SGD([p], lr=0.1)
>>> scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
>>> scaler.scale((3 * p).sum()).backward()
>>> p.grad
tensor([12., 12.])
>>> scaler.step(opt); scaler.update()
>>> p.grad, scaler.get_scale()
(tensor([3., 3.]), 4.0)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import creation
from ...autograd import no_grad
from ...tensor import Tensor

__all__ = ["GradScaler", "autocast", "is_autocast_available", "is_autocast_enabled"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2  # an optimizer's stage since the last update()


def _cuda_available() -> bool:
    from .cuda import is_available

    return is_available()


def is_autocast_available(device_type: str) -> bool:
    """Whether lower-precision autocast exists for `device_type`: never in tapegrad."""
    return False


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on: never, as no block runs in lower precision here."""
    return False


class autocast:  # noqa: N801  (PyTorch's name)
    """`torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`.

    The block runs in the tensors' own dtypes (see the module docstring); an enabled one
    warns, as PyTorch warns where it disables autocast.

    >>> from tapegrad.compat import torch
    >>> with torch.autocast("cpu", enabled=False):
    ...     y = torch.ones(2) * 2
    >>> y
    tensor([2., 2.])
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)

    def __enter__(self) -> autocast:
        if self._enabled:
            if self.device == "cuda" and not _cuda_available():
                why = "CUDA is not available or torch_xla is imported. Disabling autocast."
            else:
                why = (
                    f"autocast({self.device!r}): tapegrad has no lower-precision autocast; "
                    "the block runs in the tensors' own dtypes (as with enabled=False)"
                )
            warnings.warn(why, UserWarning, stacklevel=2)
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return run


class GradScaler:
    """Dynamic loss scaling (`torch.amp.GradScaler`): see the module docstring.

    Args: device ("cuda" disables itself without a GPU, with PyTorch's warning; "cpu"),
    init_scale (2**16), growth_factor (2.0), backoff_factor (0.5), growth_interval (2000
    clean steps before growing), enabled.
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not _cuda_available():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._scale: np.ndarray | None = None  # float32, made by the first scale()
        self._growth_tracker = 0
        self._stages: dict[int, int] = {}  # id(optimizer) -> stage
        self._found_inf: dict[int, bool] = {}  # id(optimizer) -> a non-finite gradient seen

    # ------------------------------------------------------------------ the algorithm
    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor, or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = np.array(self._init_scale, dtype=np.float32)
        if isinstance(outputs, Tensor):
            return outputs * self._scale_tensor()
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_tensor(self) -> Tensor:
        assert self._scale is not None
        return creation.tensor(self._scale)  # a 0-d float32 constant, as PyTorch's scale

    def _check_scaled(self, what: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {what} but _scale is None.  This may indicate your script did not "
                "use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale, in place, and note
        whether any is infinite or NaN (then `step` skips this step)."""
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        stage = self._stages.get(id(optimizer), _READY)
        if stage == _UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if stage == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None
        inv_scale = np.float32(np.float64(1.0) / np.float64(self._scale))
        grads = [
            p.grad
            for group in optimizer.param_groups
            for p in group["params"]
            if p.grad is not None
        ]
        for g in grads:
            if g.dtype == np.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
        found = False
        with no_grad():
            for g in grads:
                if not bool(g.isfinite().all()):
                    found = True
                g.mul_(float(inv_scale))  # in place, as PyTorch's (a version bump)
        self._found_inf[id(optimizer)] = found
        self._stages[id(optimizer)] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """`optimizer.step(*args, **kwargs)` on unscaled gradients, skipped (returning None)
        when one of them is infinite or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scaled("step")
        stage = self._stages.get(id(optimizer), _READY)
        if stage == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if stage == _READY:
            self.unscale_(optimizer)
        result = None
        if not self._found_inf[id(optimizer)]:
            result = optimizer.step(*args, **kwargs)
        self._stages[id(optimizer)] = _STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adjust the scale for the next iteration: `new_scale` if given; else halve it
        (backoff) after a non-finite gradient, grow it after `growth_interval` clean steps."""
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else float(new_scale)
            self._scale = np.array(value, dtype=np.float32)
        else:
            if not self._found_inf:
                raise AssertionError("No inf checks were recorded prior to update.")
            assert self._scale is not None
            if any(self._found_inf.values()):
                self._scale = (self._scale * np.float32(self._backoff_factor)).astype(np.float32)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale = (self._scale * np.float32(self._growth_factor)).astype(np.float32)
                    self._growth_tracker = 0
        self._stages.clear()
        self._found_inf.clear()

    # ------------------------------------------------------------------ accessors
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale and its settings ({} when disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = np.array(self._init_scale, dtype=np.float32)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
