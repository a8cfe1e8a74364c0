"""vmap, generated from the op table: for every op and sample input, mapping the op over a
batch of its first floating input (the other inputs shared) must equal the per-sample results
stacked, and torch.func.vmap of the op's PyTorch reference where PyTorch is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import OPS

BATCH = 3


def _samples(op):
    return op.samples(np.random.default_rng(0)) if op.samples else []


CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, op in sorted(OPS.items())
    for i in range(len(_samples(op)))
]


def _prepare(name, index):
    op = OPS[name]
    args, params = _samples(op)[index]
    args = [
        a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
        for a in args
    ]
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not pos:
        pytest.skip("sample has no floating input")
    k = pos[0]
    rng = np.random.default_rng(3)
    # small perturbations keep each sample inside the op's domain (log, sqrt, acos...)
    batch = np.stack(
        [args[k] * (1.0 + 0.01 * rng.standard_normal(args[k].shape)) for _ in range(BATCH)]
    )
    return op, args, params, k, batch


def _as_inputs(args):
    return [tg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]


def _outputs(res):
    return list(res) if isinstance(res, (tuple, list)) else [res]


@pytest.mark.parametrize("name,index", CASES)
def test_vmap_equals_the_stacked_per_sample_results(name, index):
    op, args, params, k, batch = _prepare(name, index)
    shared = _as_inputs(args)

    def f(x):
        inputs = list(shared)
        inputs[k] = x
        return op(*inputs, **params)

    try:
        expected = [_outputs(f(tg.tensor(batch[b]))) for b in range(BATCH)]
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        pytest.skip(f"the op refuses this sample's shapes once perturbed: {exc}")
    got = _outputs(tg.func.vmap(f)(tg.tensor(batch)))
    assert len(got) == len(expected[0])
    for j, g in enumerate(got):
        want = np.stack([e[j].detach().numpy() for e in expected])
        np.testing.assert_allclose(
            g.detach().numpy(), want, rtol=1e-12, atol=1e-12, err_msg=f"{name}: output {j}"
        )


@pytest.mark.parametrize("name,index", CASES)
def test_vmap_matches_torch_func_vmap(name, index):
    torch = pytest.importorskip("torch")
    op, args, params, k, batch = _prepare(name, index)
    if op.torch_ref is None:
        pytest.skip("no PyTorch reference")
    t_shared = [torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in args]

    def f_torch(x):
        inputs = list(t_shared)
        inputs[k] = x
        return op.torch_ref(torch, *inputs, **params)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = _outputs(torch.func.vmap(f_torch)(torch.as_tensor(batch)))
    except Exception as exc:  # the reference is not vmap-able in torch (data-dependent ops)
        pytest.skip(f"torch.func.vmap cannot map this reference: {type(exc).__name__}")
    shared = _as_inputs(args)

    def f(x):
        inputs = list(shared)
        inputs[k] = x
        return op(*inputs, **params)

    got = _outputs(tg.func.vmap(f)(tg.tensor(batch)))
    assert len(got) == len(want)
    for j, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(
            g.detach().numpy(),
            w.detach().numpy(),
            rtol=1e-7,
            atol=1e-9,
            err_msg=f"{name}: output {j}",
        )
