"""Finite-difference checks of derivative rules: `gradcheck` and `gradgradcheck`.

Analytical Jacobians come from the engine (one vector-Jacobian product per output element);
numerical ones from central differences. Run them in float64: float32 rounding swamps the
differences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor, _wrap
from .engine_api import grad
from .modes import no_grad


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical derivatives disagree."""


Fn = Callable[..., Any]
Jacobians = list[list[np.ndarray[Any, np.dtype[Any]]]]  # per input, per output


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(outputs: Sequence[Any]) -> list[Tensor]:
    return [o for o in outputs if isinstance(o, Tensor) and o.dtype.kind == "f"]


def _evaluate(fn: Fn, inputs: Sequence[Any]) -> list[np.ndarray[Any, np.dtype[Any]]]:
    """fn(*inputs) with recording off, as flat float64 arrays of each floating output."""
    with no_grad():
        outs = _differentiable_outputs(_as_tuple(fn(*inputs)))
    return [np.array(o._data, dtype=np.float64).ravel() for o in outs]


def _numerical_jacobians(fn: Fn, inputs: Sequence[Any], wrt: list[Tensor], eps: float) -> Jacobians:
    """For each input in wrt: a list (per output) of (out_size, in_size) arrays."""
    base = _evaluate(fn, inputs)
    jacs: Jacobians = []
    for t in wrt:
        flat = t._data.reshape(-1)  # a view: perturb in place, restore after
        per_out = [np.zeros((b.size, flat.size)) for b in base]
        for j in range(flat.size):
            orig = flat[j].item()
            flat[j] = orig + eps
            plus = _evaluate(fn, inputs)
            flat[j] = orig - eps
            minus = _evaluate(fn, inputs)
            flat[j] = orig
            for k, (p, m) in enumerate(zip(plus, minus)):
                per_out[k][:, j] = (p - m) / (2 * eps)
        jacs.append(per_out)
    return jacs


def _analytical_jacobians(fn: Fn, inputs: Sequence[Any], wrt: list[Tensor]) -> Jacobians:
    outputs = _differentiable_outputs(_as_tuple(fn(*inputs)))
    jacs = [[np.zeros((o._data.size, t._data.size)) for o in outputs] for t in wrt]
    for k, out in enumerate(outputs):
        if not out.requires_grad:
            continue  # constant output: its Jacobian is zero
        for row in range(out._data.size):
            onehot = np.zeros(out._data.size, dtype=out.dtype)
            onehot[row] = 1
            grads = grad(
                [out], wrt, [_wrap(onehot.reshape(out.shape))], retain_graph=True, allow_unused=True
            )
            for i, g in enumerate(grads):
                if g is not None:
                    jacs[i][k][row, :] = np.asarray(g._data, dtype=np.float64).ravel()
    return jacs


def _forward_jacobians(fn: Fn, inputs: Sequence[Any], wrt: list[Tensor]) -> Jacobians:
    """The same Jacobians from forward mode: one JVP per input element (one-hot tangent)."""
    from ..func.transforms import jvp  # func builds on autograd: import at call time

    positions = [next(i for i, x in enumerate(inputs) if x is t) for t in wrt]
    jacs: Jacobians = []
    for t, pos in zip(wrt, positions):

        def at(x: Tensor, pos: int = pos) -> tuple[Tensor, ...]:
            args = list(inputs)
            args[pos] = x
            return tuple(_differentiable_outputs(_as_tuple(fn(*args))))

        per_out: list[np.ndarray[Any, np.dtype[Any]]] = []
        for j in range(t._data.size):
            onehot = np.zeros(t._data.size, dtype=t.dtype)
            onehot[j] = 1
            _, tangents = jvp(at, (t.detach(),), (_wrap(onehot.reshape(t.shape)),))
            if not per_out:
                per_out = [np.zeros((o._data.size, t._data.size)) for o in tangents]
            for k, tan in enumerate(tangents):
                per_out[k][:, j] = np.asarray(tan._data, dtype=np.float64).ravel()
        jacs.append(per_out)
    return jacs


def _compare(
    numerical: Jacobians, analytical: Jacobians, atol: float, rtol: float, mode: str
) -> GradcheckError | None:
    """None when every Jacobian agrees, else the GradcheckError to raise."""
    for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
        for k, (n, a) in enumerate(zip(num_i, ana_i)):
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                worst = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
                return GradcheckError(
                    f"Jacobian mismatch ({mode}) for output {k} with respect to input {i}: at "
                    f"(output element, input element) {tuple(int(w) for w in worst)} numerical "
                    f"{n[worst]:.6g} vs analytical {a[worst]:.6g}\nnumerical:\n{n}\n"
                    f"analytical:\n{a}"
                )
    return None


def gradcheck(
    fn: Fn,
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    check_backward_ad: bool = True,
    check_forward_ad: bool = False,
    **_ignored: Any,
) -> bool:
    """Check the gradients of `fn` at `inputs` against central finite differences.

    Args:
        fn: function of tensors returning a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of tensors (and other values); the floating tensors that
            require grad are checked. Use float64.
        eps, atol, rtol: step and tolerances; entries must satisfy |a - n| <= atol + rtol*|n|.
        check_backward_ad: check reverse mode (vector-Jacobian products; the default).
        check_forward_ad: check forward mode too (Jacobian-vector products: `jvp` rules and
            custom Functions' `jvp`). At least one of the two must be True.
    Returns True, or raises GradcheckError (returns False when raise_exception=False).

    >>> x = tg.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    >>> tg.autograd.gradcheck(lambda t: (t ** 3).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    wrt = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad; pass tensors with requires_grad=True")
    if not (check_backward_ad or check_forward_ad):
        raise ValueError(
            "gradcheck: check_backward_ad and check_forward_ad are both False; set at least "
            "one of them to True"
        )
    numerical = _numerical_jacobians(fn, inputs, wrt, eps)
    checks = []
    if check_backward_ad:
        checks.append(("backward mode", _analytical_jacobians))
    if check_forward_ad:
        checks.append(("forward mode", _forward_jacobians))
    for mode, jacobians in checks:
        error = _compare(numerical, jacobians(fn, inputs, wrt), atol, rtol, mode)
        if error is not None:
            if not raise_exception:
                return False
            raise error
    return True


def gradgradcheck(
    fn: Fn,
    inputs: Any,
    grad_outputs: Any = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
    **_ignored: Any,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> vjp(fn, inputs, v).

    `grad_outputs` (v) default to random float64 tensors that require grad, so the check
    also covers the derivative with respect to the incoming gradient.
    """
    inputs = _as_tuple(inputs)
    wrt_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outputs = _differentiable_outputs(_as_tuple(fn(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(
            _wrap(rng.standard_normal(o.shape).astype(o.dtype)).requires_grad_() for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        ins, vs = args[:n_in], args[n_in:]
        pairs = [
            (o, v)
            for o, v in zip(_differentiable_outputs(_as_tuple(fn(*ins))), vs)
            if o.requires_grad
        ]
        if not pairs:
            return ()
        grads = grad(
            [o for o, _ in pairs],
            [ins[i] for i in wrt_idx],
            [v for _, v in pairs],
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
