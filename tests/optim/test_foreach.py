"""The multi-tensor (foreach) path of SGD, Adam and AdamW: the same parameters, bit for bit, as
one parameter at a time, and PyTorch's (foreach=True) to 1e-12 in float64, over steps with
mixed shapes and dtypes, parameters without gradients, chunks, and state_dict round trips."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import optim
from tapegrad.optim import flat

# mixed shapes: scalars, vectors, a conv kernel, and one above FLAT_MAX_NUMEL (updated alone)
SHAPES = [(4, 3), (3,), (), (2, 2, 2), (5,), (2, 3, 1, 2), (1,), (200, 200), (7, 1)]

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, maximize=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True, maximize=True)),
]
# tapegrad's own options (MXNet's forms), not in torch: foreach against per-parameter only
OWN_CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9, lr_in_momentum=True, grad_scale=0.5, clip_value=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, lr_in_momentum=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, clip_value=0.2, weight_decay=0.1, clip_after_decay=True)),
    ("Adam", dict(lr=0.05, eps_before_correction=True, grad_scale=2.0, clip_value=0.5)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, clip_value=0.5, clip_after_decay=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _grad(p, k, step):
    """A gradient every framework gets the same way: a function of the parameter."""
    t = np.linspace(-1.0, 1.0, p.size).reshape(p.shape) * (k + 1)
    g = (p - t) * (1 + t * t) + 0.3 * np.cos(3 * p + step)
    return g if k == 8 else g.astype(p.dtype)  # (the last: a float64 gradient, updated alone)


def _set_grad(p, g):
    """p.grad = g. The setter refuses a gradient of another dtype (as PyTorch's does, unless
    its grad_dtype is None), so the float64 gradient of a float32 parameter goes straight into
    the slot: the update must still handle it."""
    if g.dtype == p._data.dtype:
        p.grad = tg.tensor(g)
    else:
        p._grad = tg.tensor(g)


def _init(rng, dtypes=(np.float64,)):
    return [rng.standard_normal(s).astype(dtypes[i % len(dtypes)]) for i, s in enumerate(SHAPES)]


def _skips(step, k):
    """Parameters without a gradient at some steps (chunks change members)."""
    return (step in (3, 4) and k in (1, 4)) or (step == 6 and k == 0)


def _run(cls, kwargs, init, steps=8, foreach=None, skip=True):
    params = [tg.tensor(a.copy(), requires_grad=True) for a in init]
    opt = cls(params, foreach=foreach, **kwargs)
    for step in range(steps):
        opt.zero_grad()
        for k, p in enumerate(params):
            if not (skip and _skips(step, k)):
                _set_grad(p, _grad(p.detach().numpy(), k, step))
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


def _run_torch(torch, cls, kwargs, init, steps=8):
    params = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    opt = cls(params, foreach=True, **kwargs)
    for step in range(steps):
        opt.zero_grad()
        for k, p in enumerate(params):
            if not _skips(step, k):
                p.grad = torch.tensor(_grad(p.detach().numpy(), k, step))
        opt.step()
    return [p.detach().numpy() for p in params]


@pytest.mark.parametrize(("name", "kwargs"), CASES + OWN_CASES, ids=IDS + ["own"] * len(OWN_CASES))
@pytest.mark.parametrize("dtypes", [(np.float64,), (np.float32, np.float64)], ids=["f64", "mixed"])
def test_foreach_equals_one_parameter_at_a_time_bitwise(name, kwargs, dtypes, rng):
    init = _init(rng, dtypes)
    per_param, _ = _run(getattr(optim, name), kwargs, init, foreach=False)
    together, opt = _run(getattr(optim, name), kwargs, init, foreach=None)
    for a, b, a0 in zip(together, per_param, init, strict=True):
        assert a.dtype == a0.dtype
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, a0)  # it moved
    if opt._flat_pays(opt.param_groups[0]):
        assert opt._flat_cache  # the flat path really ran


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_foreach_matches_torch_foreach_in_float64(name, kwargs, rng):
    torch = pytest.importorskip("torch")
    init = _init(rng)
    ours, _ = _run(getattr(optim, name), kwargs, init, foreach=True)
    theirs = _run_torch(torch, getattr(torch.optim, name), kwargs, init)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_many_chunks_and_the_large_parameter_path(rng, monkeypatch):
    """Chunks of a few parameters, and parameters above the size limit updated alone."""
    monkeypatch.setattr(flat, "CHUNK_NUMEL", 10)
    monkeypatch.setattr(flat, "FLAT_MAX_NUMEL", 12)
    init = _init(rng, (np.float32, np.float64))
    for name, kwargs in [CASES[4], CASES[7], CASES[10]]:
        for skip in (False, True):
            cls = getattr(optim, name)
            per_param, _ = _run(cls, kwargs, init, foreach=False, skip=skip)
            together, opt = _run(cls, kwargs, init, skip=skip)
            for a, b in zip(together, per_param, strict=True):
                np.testing.assert_array_equal(a, b)
            if not skip:  # float32 sizes 12 | 1 5 1, float64 3 | 8 | 12 (7, 8: not gathered)
                sizes = sorted(sum(s.size for s in c.work_views) for c in opt._flat_cache.values())
                assert sizes == [3, 7, 8, 12, 12]


def test_state_is_per_parameter_views_updated_in_place(rng):
    init = _init(rng)
    params = [tg.tensor(a.copy(), requires_grad=True) for a in init]
    opt = optim.Adam(params, lr=0.01)
    for p in params:
        p.grad = tg.ones_like(p)
    opt.step()
    st = opt.state[params[0]]
    m = st["exp_avg"]
    assert m.shape == params[0].shape and st["step"] == 1
    before = m.copy()
    opt.step()
    assert opt.state[params[0]]["exp_avg"] is m and not np.array_equal(m, before)
    sd = opt.state_dict()
    assert sd["state"][0]["exp_avg"].shape == (4, 3)
    opt.step()  # the state_dict shares memory with the state, as PyTorch's does
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"].numpy(), m)
    assert opt.state[params[7]]["exp_avg"].shape == (200, 200)  # the large one: its own array


def test_replaced_state_and_parameter_storage_are_respected(rng):
    init = _init(rng)

    def run(replace):
        params = [tg.tensor(a.copy(), requires_grad=True) for a in init]
        opt = optim.SGD(params, lr=0.1, momentum=0.9, foreach=replace is not None)
        for step in range(4):
            for k, p in enumerate(params):
                _set_grad(p, _grad(p.detach().numpy(), k, step))
            opt.step()
            if step == 1 and replace is not None:
                replace(params, opt)
            elif step == 1:  # the same changes, one parameter at a time
                opt.state[params[0]]["momentum_buffer"] = np.full((4, 3), 0.5)
                params[3].data = tg.tensor(params[3].detach().numpy() * 2)
        return [p.detach().numpy() for p in params], params

    def replace(params, opt):
        opt.state[params[0]]["momentum_buffer"] = np.full((4, 3), 0.5)  # a user's edit
        params[3].data = tg.tensor(params[3].detach().numpy() * 2)  # new storage

    ours, params = run(replace)
    theirs, _ = run(None)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    storage = params[3]._data
    params[3].grad = tg.ones_like(params[3])
    params[0].grad = tg.ones_like(params[0])
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    opt.step()
    assert params[3]._data is storage  # updated in place, never rebound


def test_parameter_shared_with_numpy_keeps_its_storage(rng):
    arrays = [rng.standard_normal(3), rng.standard_normal((2, 2))]
    params = [tg.from_numpy(a).requires_grad_() for a in arrays]
    opt = optim.AdamW(params, lr=0.1)
    for p in params:
        p.grad = tg.ones_like(p)
    opt.step()
    for a, p in zip(arrays, params, strict=True):
        np.testing.assert_array_equal(a, p.detach().numpy())  # the user's array moved too


@pytest.mark.parametrize(("name", "kwargs"), [CASES[3], CASES[7], CASES[10]])
@pytest.mark.parametrize(("first", "second"), [(None, None), (None, False), (False, None)])
def test_state_dict_round_trip_between_paths(name, kwargs, first, second, rng, tmp_path):
    """Checkpoint after 4 steps (through a file), rebuild, 4 more: the same as 8 straight."""
    cls = getattr(optim, name)
    init = _init(rng)
    straight, _ = _run(cls, kwargs, init, steps=8, foreach=first, skip=False)
    mid, opt = _run(cls, kwargs, init, steps=4, foreach=first, skip=False)
    tg.save(opt.state_dict(), tmp_path / "opt.safetensors")
    params = [tg.tensor(a, requires_grad=True) for a in mid]
    opt2 = cls(params, foreach=second, **kwargs)
    opt2.load_state_dict(tg.load(tmp_path / "opt.safetensors"))
    assert opt2.param_groups[0]["foreach"] is first  # a group option, saved like the others
    opt2.param_groups[0]["foreach"] = second
    for step in range(4, 8):
        for k, p in enumerate(params):
            _set_grad(p, _grad(p.detach().numpy(), k, step))
        opt2.step()
    for a, p in zip(straight, params, strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), a)


def test_param_groups_each_get_their_own_chunks(rng):
    init = _init(rng)
    groups = [(0, 1, 2, 3), (4, 5, 6, 7, 8)]

    def run(foreach):
        params = [tg.tensor(a.copy(), requires_grad=True) for a in init]
        opt = optim.Adam(
            [
                {"params": [params[i] for i in groups[0]], "lr": 0.1},
                {"params": [params[i] for i in groups[1]]},
            ],
            lr=0.01,
            foreach=foreach,
        )
        for step in range(3):
            for k, p in enumerate(params):
                _set_grad(p, _grad(p.detach().numpy(), k, step))
            opt.step()
        return [p.detach().numpy() for p in params]

    for a, b in zip(run(None), run(False), strict=True):
        np.testing.assert_array_equal(a, b)


def test_bad_foreach_value_raises():
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Invalid foreach value: 'yes'"):
        optim.Adam([w], foreach="yes")
