"""L-BFGS: a quasi-Newton method that needs a closure, with PyTorch's iterates.

Each `step(closure)` runs up to `max_iter` iterations. An iteration builds a search direction
from the last `history_size` (step, gradient change) pairs with the two-loop recursion
(Nocedal & Wright, Numerical Optimization, algorithm 7.4), then moves along it by a fixed
step (`lr`) or by a step that satisfies the strong Wolfe conditions (algorithms 3.5 and 3.6:
bracketing, then zooming with cubic interpolation). The vectors are flat NumPy arrays of the
parameters' dtype; the parameters change in place, as in the other optimizers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.modes import enable_grad
from ..engine.versions import bump_version
from .optimizer import Array, Optimizer, Params

# phi(x, t, d): (loss, flat gradient) at x + t * d
LineFunction = Callable[[Any, float, Array], tuple[float, Array]]

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS, the algorithm of `torch.optim.LBFGS` (same options, same iterates).

    Args:
        params: the parameters (one group only: the method treats them as one vector).
        lr: the step length (the first iteration scales it by min(1, 1 / |g|_1)), or the
            initial step of the line search. max_iter: iterations per `step()`.
        max_eval: closure evaluations per `step()` (default max_iter * 5 // 4).
        tolerance_grad: stop when the largest gradient entry is at most this.
        tolerance_change: stop when the step or the loss changes by less than this.
        history_size: how many update pairs approximate the inverse Hessian.
        line_search_fn: None (fixed step) or "strong_wolfe".

    >>> x = tg.tensor([-1.5, 2.0], dtype=tg.float64, requires_grad=True)
    >>> opt = tg.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> loss = opt.step(closure)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1.0,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(
                f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}"
            )
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError(
                "LBFGS doesn't support per-parameter options (parameter groups); "
                "pass one list of parameters"
            )
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------------ the flat vector
    def _flat_grad(self) -> np.ndarray:
        parts = [
            np.zeros(p._data.size, p._data.dtype)
            if p._grad is None
            else np.asarray(p._grad._data).reshape(-1)
            for p in self._params
        ]
        return np.concatenate(parts) if len(parts) > 1 else parts[0].copy()

    def _flat_params(self) -> list[np.ndarray]:
        return [p._data.copy() for p in self._params]

    def _set_params(self, values: list[np.ndarray]) -> None:
        for p, v in zip(self._params, values, strict=True):
            p._data[...] = v
            bump_version(p)

    def _add_step(self, t: float, d: np.ndarray) -> None:
        """params += t * d."""
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += (t * d[offset : offset + n]).reshape(p._data.shape).astype(p._data.dtype)
            offset += n
            bump_version(p)

    def _evaluate(
        self, closure: Callable[[], Any], x: list[Array], t: float, d: Array
    ) -> tuple[float, Array]:
        """Loss and flat gradient at x + t * d; the parameters are left at x."""
        self._add_step(t, d)
        with enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        self._set_params(x)
        return loss, g

    # ------------------------------------------------------------------ step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run up to `max_iter` iterations; returns the loss `closure()` gave at the start.
        The closure is required (L-BFGS evaluates the loss several times per step)."""
        if closure is None:
            raise RuntimeError(
                "LBFGS.step needs a closure that re-evaluates the model and "
                "returns the loss: opt.step(closure)"
            )
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        state = self.state.setdefault(self._params[0], {"func_evals": 0, "n_iter": 0})

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if np.abs(g).max() <= tol_grad:
            return orig_loss

        # the previous step's iterates (None before the first iteration, which sets them)
        d: Any = state.get("d")
        t: Any = state.get("t")
        old_dirs: Any = state.get("old_dirs")
        old_stps: Any = state.get("old_stps")
        ro: Any = state.get("ro")
        h_diag: Any = state.get("H_diag")
        prev_g: Any = state.get("prev_flat_grad")
        prev_loss: Any = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -g
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                y = g - prev_g
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:  # keep the pair only where the curvature condition holds
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y @ y)
                d = _two_loop(g, old_dirs, old_stps, ro, h_diag)
            prev_g = g.copy()
            prev_loss = loss

            t = min(1.0, 1.0 / float(np.abs(g).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(g @ d)
            if gtd > -tol_change:  # not a descent direction
                break

            if line_search == "strong_wolfe":
                x0 = self._flat_params()

                def phi(x: list[Array], step: float, direction: Array) -> tuple[float, Array]:
                    return self._evaluate(closure, x, step, direction)

                loss, g, t, ls_evals = strong_wolfe(
                    phi, x0, t, d, loss, g, gtd, tolerance_change=tol_change
                )
                self._add_step(t, d)
            else:
                self._add_step(t, d)
                ls_evals = 0
                if n_iter != max_iter:  # re-evaluate, except after the last iteration
                    with enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or current_evals >= max_eval:
                break
            if np.abs(g).max() <= tol_grad:
                break
            if np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=h_diag,
            prev_flat_grad=prev_g,
            prev_loss=prev_loss,
        )
        return orig_loss


def _two_loop(
    g: Array, dirs: list[Array], steps: list[Array], ro: list[float], h_diag: float
) -> Array:
    """The L-BFGS direction -H g, H the inverse-Hessian estimate from the stored pairs."""
    q = -g
    alphas = [0.0] * len(dirs)
    for i in range(len(dirs) - 1, -1, -1):
        alphas[i] = float(steps[i] @ q) * ro[i]
        q = q - alphas[i] * dirs[i]
    r = q * h_diag
    for i in range(len(dirs)):
        beta = float(dirs[i] @ r) * ro[i]
        r = r + (alphas[i] - beta) * steps[i]
    return r


def cubic_minimizer(
    x1: float,
    f1: float,
    g1: float,
    x2: float,
    f2: float,
    g2: float,
    bounds: tuple[float, float] | None = None,
) -> float:
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to `bounds`
    (default: the interval between the points); the midpoint when the cubic has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        m = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        m = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(m, lo), hi)


def strong_wolfe(
    phi: LineFunction,
    x: Any,
    t: float,
    d: Array,
    f: float,
    g: Array,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Array, float, int]:
    """A step t along d meeting the strong Wolfe conditions, starting from the guess t.

    `phi(x, t, d)` returns (loss, flat gradient) at x + t d. Returns (loss, gradient, t,
    evaluations)."""
    d_norm = float(np.abs(d).max())
    f_new, g_new = phi(x, t, d)
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing: grow the step until an interval must contain an acceptable one
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, cubic_minimizer(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, (lo, hi))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = phi(x, t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg, bgtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]

    # zoom: shrink the bracket with cubic interpolation until a step is acceptable
    insufficient = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_minimizer(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:  # too close to an end: move away from it
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = phi(x, t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = (
                    bracket[low],
                    bf[low],
                    bg[low],
                    bgtd[low],
                )
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals
