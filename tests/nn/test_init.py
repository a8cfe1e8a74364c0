"""tg.nn.init (PyTorch's formulas, in place, seeded) and tg.nn.utils (gradient clipping)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import nn
from tapegrad.nn import init


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    "name,param",
    [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("selu", None),
    ],
)
def test_calculate_gain_matches_torch(torch, name, param):
    assert init.calculate_gain(name, param) == pytest.approx(
        torch.nn.init.calculate_gain(name, param)
    )


def test_calculate_gain_error():
    with pytest.raises(ValueError, match="Unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")


def test_fans_match_torch(torch):
    from torch.nn.init import _calculate_fan_in_and_fan_out as torch_fans

    for shape in [(3, 5), (8, 4, 3, 3), (6, 2, 5)]:
        assert init._calculate_fan_in_and_fan_out(tg.zeros(*shape)) == torch_fans(
            torch.zeros(*shape)
        )
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(tg.zeros(5))


def test_writes_in_place_without_recording_and_bumps_version():
    p = nn.Parameter(tg.zeros(20, 30))
    data, v = p._data, p._version
    assert init.xavier_uniform_(p) is p
    assert p._data is data and p._version == v + 1 and p.grad_fn is None
    assert p.dtype == np.float32


@pytest.mark.parametrize(
    "fn,kwargs,expected_bound",
    [
        (init.xavier_uniform_, {}, math.sqrt(6 / (200 + 300))),
        (init.xavier_uniform_, {"gain": 2.0}, 2 * math.sqrt(6 / (200 + 300))),
        (init.kaiming_uniform_, {"a": math.sqrt(5)}, 1 / math.sqrt(300)),
        (init.kaiming_uniform_, {"nonlinearity": "relu"}, math.sqrt(6 / 300)),
        (init.kaiming_uniform_, {"nonlinearity": "relu", "mode": "fan_out"}, math.sqrt(6 / 200)),
        (init.uniform_, {"a": -0.3, "b": 0.3}, 0.3),
    ],
)
def test_uniform_initialisers_bounds(fn, kwargs, expected_bound):
    tg.manual_seed(0)
    w = fn(tg.zeros(200, 300), **kwargs).numpy()
    assert np.abs(w).max() <= expected_bound
    assert np.abs(w).max() > 0.99 * expected_bound
    assert w.std() == pytest.approx(expected_bound / math.sqrt(3), rel=0.02)


@pytest.mark.parametrize(
    "fn,kwargs,expected_std",
    [
        (init.xavier_normal_, {}, math.sqrt(2 / (200 + 300))),
        (init.kaiming_normal_, {"nonlinearity": "relu"}, math.sqrt(2 / 300)),
        (init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2 / 200)),
        (init.normal_, {"mean": 1.0, "std": 0.5}, 0.5),
    ],
)
def test_normal_initialisers_std(fn, kwargs, expected_std):
    tg.manual_seed(0)
    w = fn(tg.zeros(200, 300), **kwargs).numpy()
    assert w.std() == pytest.approx(expected_std, rel=0.02)
    assert w.mean() == pytest.approx(kwargs.get("mean", 0.0), abs=0.02 * max(1, expected_std))


def test_constant_initialisers():
    assert init.zeros_(tg.ones(2, 2)).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert init.ones_(tg.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    assert init.constant_(tg.zeros(2), 0.5).tolist() == [0.5, 0.5]
    assert init.eye_(tg.zeros(2, 3)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_orthogonal_and_trunc_normal():
    tg.manual_seed(0)
    q = init.orthogonal_(tg.zeros(4, 6)).numpy().astype(np.float64)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)
    t = init.trunc_normal_(tg.zeros(1000), std=1.0, a=-0.5, b=0.5).numpy()
    assert t.min() >= -0.5 and t.max() <= 0.5


def test_initialisers_are_seeded():
    tg.manual_seed(7)
    a = init.kaiming_normal_(tg.zeros(5, 5)).numpy()
    tg.manual_seed(7)
    np.testing.assert_array_equal(a, init.kaiming_normal_(tg.zeros(5, 5)).numpy())


# ---------------------------------------------------------------- gradient clipping
def _models(torch):
    ours = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    theirs.double()
    ours.double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 4)) * 3
    (ours(tg.tensor(x)) ** 2).sum().backward()
    (theirs(torch.from_numpy(x)) ** 2).sum().backward()
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    ours, theirs = _models(torch)
    n_o = nn.utils.clip_grad_norm_(ours.parameters(), max_norm, norm_type=norm_type)
    n_t = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type=norm_type)
    assert n_o.item() == pytest.approx(n_t.item(), rel=1e-10)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10)


def test_clip_grad_value_matches_torch(torch):
    ours, theirs = _models(torch)
    nn.utils.clip_grad_value_(ours.parameters(), 0.1)
    torch.nn.utils.clip_grad_value_(theirs.parameters(), 0.1)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy())


def test_clip_grad_norm_edge_cases():
    p = nn.Parameter(tg.zeros(3))
    assert nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0  # no gradients at all
    p.grad = tg.tensor([np.inf, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)


def test_parameters_to_vector_round_trip():
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,)
    nn.utils.vector_to_parameters(v * 0 + 1, m.parameters())
    assert m.weight.detach().numpy().tolist() == [[1.0] * 3] * 2
