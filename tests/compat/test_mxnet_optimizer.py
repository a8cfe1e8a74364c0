"""mx.optimizer: each rule against a NumPy transcription of MXNet 1.9.1's documented update
(float64 references, a few steps, clip_gradient / rescale_grad / wd variations), the base
class's bookkeeping, create / register / Updater, and gluon.Trainer with optimizer objects."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx

SHAPE = (3, 4)
VARIANTS = [
    {},
    {"clip_gradient": 0.1},
    {"rescale_grad": 0.3, "wd": 0.05},
    {"clip_gradient": 0.05, "rescale_grad": 2.0, "wd": 0.02},
]
DEFAULT_LR = {"adam": 1e-3, "rmsprop": 1e-3, "adamax": 2e-3, "nadam": 1e-3, "ftrl": 0.1}


class Ref:
    """MXNet's update formulas (the optimizer classes' docstrings and the Py* references
    of MXNet's test_optimizer.py), in float64 NumPy, for one parameter."""

    def __init__(self, name: str, opts: dict, shape=SHAPE) -> None:
        self.name, self.o, self.shape = name, dict(opts), shape
        self.lr = opts.get("learning_rate", DEFAULT_LR.get(name, 0.01))
        self.wd = opts.get("wd", 0.0)
        self.rg = opts.get("rescale_grad", 1.0)
        self.c = opts.get("clip_gradient")
        self.t = 0
        self.s: dict[str, np.ndarray] = {}
        self.m_schedule = 1.0

    def clip(self, x):
        return np.clip(x, -self.c, self.c) if self.c else x

    def z(self, *keys):
        for k in keys:
            self.s.setdefault(k, np.zeros(self.shape))

    def step(self, w, g):
        self.t += 1
        t, lr, wd, o, s = self.t, self.lr, self.wd, self.o, self.s
        name = self.name
        if name == "sgd":
            gr = self.clip(self.rg * g)
            m = o.get("momentum", 0.0)
            if not m:
                return (1 - lr * wd) * w - lr * gr
            self.z("mom")
            s["mom"] = m * s["mom"] - lr * wd * w - lr * gr
            return w + s["mom"]
        if name == "nag":
            gr = self.clip(self.rg * g)
            m = o.get("momentum", 0.0)
            if not m:
                return w - lr * (gr + wd * w)
            self.z("mom")
            new = w + m**2 * s["mom"] - lr * (m + 1) * (gr + wd * w)
            s["mom"] = m * s["mom"] - lr * (gr + wd * w)
            return new
        if name == "signum":
            m, wd_lh = o.get("momentum", 0.9), o.get("wd_lh", 0.0)
            if not m:
                return (1 - lr * (wd + wd_lh)) * w - lr * np.sign(g)
            self.z("mom")
            s["mom"] = m * s["mom"] - (1 - m) * (wd * w + self.clip(self.rg * g))
            return (1 - lr * wd_lh) * w + lr * np.sign(s["mom"])
        if name == "adam":
            b1, b2, eps = o.get("beta1", 0.9), o.get("beta2", 0.999), o.get("epsilon", 1e-8)
            gr = self.clip(self.rg * g + wd * w)
            self.z("m", "v")
            s["m"] = b1 * s["m"] + (1 - b1) * gr
            s["v"] = b2 * s["v"] + (1 - b2) * gr**2
            lr_t = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
            return w - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
        if name == "adagrad":
            gr = self.clip(self.rg * g)
            self.z("h")
            s["h"] = s["h"] + gr**2
            return w - lr * (gr / np.sqrt(s["h"] + o.get("eps", 1e-7)) + wd * w)
        if name == "rmsprop":
            g1, g2, eps = o.get("gamma1", 0.9), o.get("gamma2", 0.9), o.get("epsilon", 1e-8)
            gr = self.clip(self.rg * g + wd * w)
            self.z("n", "g", "delta")
            s["n"] = (1 - g1) * gr**2 + g1 * s["n"]
            if o.get("centered"):
                s["g"] = (1 - g1) * gr + g1 * s["g"]
                s["delta"] = g2 * s["delta"] - lr * gr / np.sqrt(s["n"] - s["g"] ** 2 + eps)
                new = w + s["delta"]
            else:
                new = w - lr * gr / np.sqrt(s["n"] + eps)
            cw = o.get("clip_weights")
            return np.clip(new, -cw, cw) if cw else new
        if name == "adadelta":
            rho, eps = o.get("rho", 0.9), o.get("epsilon", 1e-5)
            gr = self.clip(self.rg * g)
            self.z("acc_g", "acc_d")
            s["acc_g"] = rho * s["acc_g"] + (1 - rho) * gr**2
            d = np.sqrt(s["acc_d"] + eps) / np.sqrt(s["acc_g"] + eps) * gr
            s["acc_d"] = rho * s["acc_d"] + (1 - rho) * d**2
            return w - (d + wd * w)
        if name == "adamax":
            b1, b2 = o.get("beta1", 0.9), o.get("beta2", 0.999)
            gr = self.clip(self.rg * g + wd * w)
            self.z("m", "u")
            s["m"] = b1 * s["m"] + (1 - b1) * gr
            s["u"] = np.maximum(b2 * s["u"], np.abs(gr))
            return w - lr / (1 - b1**t) * s["m"] / s["u"]
        if name == "nadam":
            b1, b2, eps = o.get("beta1", 0.9), o.get("beta2", 0.999), o.get("epsilon", 1e-8)
            sd = o.get("schedule_decay", 0.004)
            gr = self.clip(self.rg * g + wd * w)
            mu = b1 * (1 - 0.5 * 0.96 ** (t * sd))
            mu1 = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * sd))
            self.m_schedule *= mu
            self.z("m", "v")
            s["m"] = b1 * s["m"] + (1 - b1) * gr
            s["v"] = b2 * s["v"] + (1 - b2) * gr**2
            m_bar = (1 - mu) * gr / (1 - self.m_schedule) + mu1 * s["m"] / (
                1 - self.m_schedule * mu1
            )
            return w - lr * m_bar / (np.sqrt(s["v"] / (1 - b2**t)) + eps)
        if name == "ftml":
            b1, b2, eps = o.get("beta1", 0.6), o.get("beta2", 0.999), o.get("epsilon", 1e-8)
            gr = self.clip(self.rg * g + wd * w)
            self.z("d", "v", "z")
            s["v"] = b2 * s["v"] + (1 - b2) * gr**2
            d_t = (1 - b1**t) / lr * (np.sqrt(s["v"] / (1 - b2**t)) + eps)
            s["z"] = b1 * s["z"] + (1 - b1) * gr - (d_t - b1 * s["d"]) * w
            s["d"] = d_t
            return -s["z"] / d_t
        if name == "ftrl":
            lam, beta = o.get("lamda1", 0.01), o.get("beta", 1)
            gr = self.clip(self.rg * g)
            self.z("z", "n")
            s["z"] = s["z"] + gr - (np.sqrt(s["n"] + gr**2) - np.sqrt(s["n"])) * w / lr
            s["n"] = s["n"] + gr**2
            return (
                (np.sign(s["z"]) * lam - s["z"])
                / ((beta + np.sqrt(s["n"])) / lr + wd)
                * (np.abs(s["z"]) > lam)
            )
        raise AssertionError(name)


NAMES = ["sgd", "nag", "signum", "adam", "adagrad", "rmsprop", "adadelta", "adamax"]
NAMES += ["nadam", "ftml", "ftrl"]
EXTRA = {
    "sgd": [{"momentum": 0.9}, {"momentum": 0.9, "clip_gradient": 0.1, "wd": 0.03}],
    "nag": [{"momentum": 0.9}, {"momentum": 0.8, "clip_gradient": 0.1, "wd": 0.03}],
    "signum": [{"momentum": 0.0}, {"wd_lh": 0.015, "learning_rate": 0.05}],
    "adam": [{"beta1": 0.8, "epsilon": 1e-6, "learning_rate": 0.05}],
    "adagrad": [{"eps": 1e-8, "learning_rate": 0.1}],
    "rmsprop": [{"centered": True}, {"centered": True, "clip_weights": 0.3, "wd": 0.05}],
    "adadelta": [{"rho": 0.8, "epsilon": 1e-6}],
    "adamax": [{"beta2": 0.9}],
    "nadam": [{"schedule_decay": 0.1, "learning_rate": 0.01}],
    "ftml": [{"beta1": 0.5, "beta2": 0.9}],
    "ftrl": [{"lamda1": 1.0, "beta": 0.5}],
}
CASES = [(n, v) for n in NAMES for v in VARIANTS + EXTRA[n]]


@pytest.mark.parametrize(
    ("name", "opts"), CASES, ids=[f"{n}-{sorted(v.items())}" for n, v in CASES]
)
def test_update_matches_mxnet_formula(name, opts):
    rng = np.random.default_rng(7)
    w0 = rng.uniform(-1, 1, SHAPE)
    opt = mx.optimizer.create(name, **opts)
    ref = Ref(name, opts)
    weight = mx.nd.array(w0, dtype="float32")
    state = opt.create_state_multi_precision(0, weight)
    expect = w0.astype(np.float32).astype(np.float64)
    for _ in range(4):
        g = rng.uniform(-1, 1, SHAPE).astype(np.float32)
        opt.update_multi_precision(0, weight, mx.nd.array(g), state)
        expect = ref.step(expect, g.astype(np.float64))
        np.testing.assert_allclose(weight.asnumpy(), expect, rtol=2e-5, atol=2e-6)
    assert weight.dtype == np.float32
    assert opt.num_update == 4 and opt._index_update_count[0] == 4


@pytest.mark.parametrize("name", NAMES)
def test_update_keeps_float64_and_leaves_grad_alone(name):
    opt = mx.optimizer.create(name, wd=0.01)
    w = mx.nd.array(np.linspace(-1, 1, 6), dtype="float64")
    g = mx.nd.array(np.linspace(0.5, -0.5, 6), dtype="float64")
    g_before = g.asnumpy().copy()
    state = opt.create_state(0, w)
    opt.update(0, w, g, state)
    expect = Ref(name, {"wd": 0.01}, shape=(6,)).step(np.linspace(-1, 1, 6), g_before)
    assert w.dtype == np.float64
    # float32 states (AdaGrad, RMSProp, AdaDelta, Ftrl keep MXNet's float32 history)
    np.testing.assert_allclose(w.asnumpy(), expect, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(g.asnumpy(), g_before)


def test_update_writes_in_place_outside_the_graph():
    p = mx.gluon.Parameter("w", shape=(2, 3))
    p.initialize(init=mx.init.One())
    with mx.autograd.record():
        y = (p.data() * 3).sum()
    y.backward()
    arr = p.data()
    opt = mx.optimizer.Adam(learning_rate=0.1)
    opt.update(0, arr, p.grad(), opt.create_state(0, arr))
    assert p.data() is arr
    np.testing.assert_allclose(arr.asnumpy(), np.full((2, 3), 0.9), rtol=1e-6)
    with mx.autograd.record():  # the weight is still a leaf with a gradient
        y = (p.data() * 2).sum()
    y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), np.full((2, 3), 2.0))


def test_clip_zero_and_negative_follow_mxnet():
    """Update operators (SGD) clip only for a positive bound; Python updates (AdaGrad)
    clip for any bound that is not None, so 0 zeroes the gradient."""
    for clip, expect in ((0, 0.9), (-1.0, 0.9)):
        opt = mx.optimizer.SGD(learning_rate=0.1, clip_gradient=clip)
        w = mx.nd.ones((2,))
        opt.update(0, w, mx.nd.ones((2,)), None)
        np.testing.assert_allclose(w.asnumpy(), expect, rtol=1e-6)
    opt = mx.optimizer.AdaGrad(learning_rate=0.1, clip_gradient=0)
    w = mx.nd.ones((2,))
    opt.update(0, w, mx.nd.ones((2,)), opt.create_state(0, w))
    np.testing.assert_array_equal(w.asnumpy(), [1.0, 1.0])


@pytest.mark.parametrize("name", ["sgd", "adam", "nag", "rmsprop"])
def test_multi_precision_updates_a_float32_master(name):
    opts = {"momentum": 0.9} if name in ("sgd", "nag") else {}
    opt = mx.optimizer.create(name, multi_precision=True, learning_rate=0.01, **opts)
    w16 = mx.nd.array(np.linspace(-1, 1, 8), dtype="float16")
    state = opt.create_state_multi_precision(0, w16)
    master = state[1] if name in ("sgd", "nag") else state[0]
    assert master.dtype == np.float32
    ref_opt = mx.optimizer.create(name, learning_rate=0.01, **opts)
    w32 = mx.nd.array(np.linspace(-1, 1, 8).astype(np.float16), dtype="float32")
    ref_state = ref_opt.create_state(0, w32)
    for k in range(3):
        g = np.linspace(0.3, -0.2 * k, 8).astype(np.float16)
        opt.update_multi_precision(0, w16, mx.nd.array(g, dtype="float16"), state)
        ref_opt.update(0, w32, mx.nd.array(g, dtype="float32"), ref_state)
    np.testing.assert_allclose(master.asnumpy(), w32.asnumpy(), rtol=1e-6)
    assert w16.dtype == np.float16
    np.testing.assert_array_equal(w16.asnumpy(), w32.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns():
    w16 = mx.nd.ones((2,), dtype="float16")
    with pytest.warns(UserWarning, match="multi_precision=True"):
        mx.optimizer.Adam().create_state_multi_precision(0, w16)


# -- the base class -----------------------------------------------------------------


def test_learning_rate_and_scheduler():
    o1 = mx.optimizer.Optimizer(learning_rate=0.01)
    o1.set_learning_rate(0.2)
    assert o1.learning_rate == 0.2
    assert mx.optimizer.Optimizer().learning_rate == 0.01
    sched = mx.lr_scheduler.FactorScheduler(step=1)
    o2 = mx.optimizer.Optimizer(lr_scheduler=sched, learning_rate=0.3)
    assert o2.learning_rate == 0.3  # learning_rate overrides the schedule's base_lr
    o2.lr_scheduler.base_lr = 0.4
    assert o2.learning_rate == 0.4
    o3 = mx.optimizer.Optimizer(lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, base_lr=1024))
    assert o3.learning_rate == 1024
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already"):
        o2.set_learning_rate(0.5)


def test_scheduler_follows_num_update():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)
    opt = mx.optimizer.SGD(learning_rate=1.0, lr_scheduler=sched)
    w = mx.nd.zeros((1,))
    moves = []
    for _ in range(5):
        before = w.asnumpy()[0]
        opt.update(0, w, mx.nd.ones((1,)), None)
        moves.append(before - w.asnumpy()[0])
    # the count is taken before the rate: updates 1, 2 at 1.0; 3, 4 at 0.5; 5 at 0.25
    np.testing.assert_allclose(moves, [1.0, 1.0, 0.5, 0.5, 0.25], rtol=1e-6)


def test_lr_wd_mult_by_index_name_and_param_dict():
    opt = mx.optimizer.Optimizer(
        learning_rate=0.1, wd=0.5, param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"}
    )
    assert opt.wd_mult == {"fc_bias": 0.0}
    assert [opt._get_wd(i) for i in (0, 1, 2, 3)] == [0.5, 0.0, 0.5, 0.5]
    opt.set_lr_mult({0: 2.0, "fc_bias": 3.0})
    assert [opt._get_lr(i) for i in (0, 1, 2)] == [0.2, pytest.approx(0.3), 0.1]
    opt.set_wd_mult({2: 0.1})
    assert opt._get_wd(2) == pytest.approx(0.05) and opt._get_wd(1) == 0.0
    p = mx.gluon.Parameter("w", shape=(1,), lr_mult=4.0, wd_mult=0.0)
    opt.param_dict = {0: p}
    assert opt._get_lr(0) == pytest.approx(0.4) and opt._get_wd(0) == 0.0
    p.lr_mult = 0.5  # read at every call
    assert opt._get_lr(0) == pytest.approx(0.05)


def test_update_count():
    opt = mx.optimizer.Optimizer(begin_num_update=10)
    opt._update_count(0)
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 12, 1: 11} and opt.num_update == 12


def test_base_errors():
    with pytest.raises(NotImplementedError, match="Optimizer.update"):
        mx.optimizer.Optimizer().update(0, mx.nd.ones((1,)), mx.nd.ones((1,)), None)
    with pytest.raises(TypeError, match=r"SGD: unknown options \['momentun'\]"):
        mx.optimizer.SGD(momentun=0.9)
    with pytest.raises(ValueError, match="sym= is not supported"):
        mx.optimizer.Optimizer(sym=object())
    with pytest.raises(ValueError, match=r"SGD.update: weight has shape \(2,\) but grad"):
        mx.optimizer.SGD().update(0, mx.nd.ones((2,)), mx.nd.ones((3,)), None)
    with pytest.raises(TypeError, match="Adam.update: grad must be"):
        opt = mx.optimizer.Adam()
        w = mx.nd.ones((2,))
        opt.update(0, w, np.ones(2), opt.create_state(0, w))


def test_optimizer_pickles_without_param_dict():
    opt = mx.optimizer.Adam(learning_rate=0.5, param_dict={0: "a parameter"})
    back = pickle.loads(pickle.dumps(opt))
    assert back.param_dict == {} and back.lr == 0.5 and type(back) is mx.optimizer.Adam


# -- registry and Updater -----------------------------------------------------------


def test_create_is_case_insensitive_and_passes_options():
    opt = mx.optimizer.create("RMSProp", learning_rate=0.1, centered=True)
    assert type(opt) is mx.optimizer.RMSProp and opt.centered and opt.learning_rate == 0.1
    assert mx.optimizer.Optimizer.create_optimizer("adam").learning_rate == 0.001
    assert type(mx.optimizer.optimizer.create("ftrl")) is mx.optimizer.Ftrl


def test_create_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"Cannot find optimizer lamb.*'adadelta'.*'sgd'"):
        mx.optimizer.create("lamb")


def test_register_a_new_optimizer():
    @mx.optimizer.register
    class HalfStep(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            self._update_count(index)
            weight[:] = weight - 0.5 * self._get_lr(index) * grad

    try:
        opt = mx.optimizer.create("halfstep", learning_rate=1.0)
        assert isinstance(opt, HalfStep)
        w = mx.nd.ones((2,))
        mx.optimizer.get_updater(opt)(0, mx.nd.ones((2,)), w)
        np.testing.assert_allclose(w.asnumpy(), [0.5, 0.5])
        with pytest.warns(UserWarning, match="is overriding existing optimizer"):

            @mx.optimizer.register
            class halfstep(mx.optimizer.Optimizer):  # noqa: N801
                pass

        with pytest.raises(TypeError, match="subclass of mx.optimizer.Optimizer"):
            mx.optimizer.register(int)
    finally:
        mx.optimizer.Optimizer.opt_registry.pop("halfstep", None)


def test_updater_creates_state_once_and_round_trips():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    upd = mx.optimizer.get_updater(opt)
    assert isinstance(upd, mx.optimizer.Updater)
    w = mx.nd.ones((3,))
    upd(0, mx.nd.ones((3,)), w)
    upd([0], [mx.nd.ones((3,))], [w])
    np.testing.assert_allclose(upd.states[0].asnumpy(), -0.1 * 0.9 - 0.1, rtol=1e-6)
    blob = upd.get_states(dump_optimizer=True)
    other = mx.optimizer.Updater(mx.optimizer.SGD())
    other.set_states(blob)
    assert other.optimizer.momentum == 0.9 and other.optimizer.num_update == 2
    np.testing.assert_array_equal(other.states[0].asnumpy(), upd.states[0].asnumpy())
    w2 = w.copy()
    upd(0, mx.nd.ones((3,)), w)
    other(0, mx.nd.ones((3,)), w2)
    np.testing.assert_array_equal(w.asnumpy(), w2.asnumpy())
    with pytest.raises(TypeError, match="Updater: optimizer must be"):
        mx.optimizer.Updater("sgd")


# -- gluon.Trainer with optimizer objects ---------------------------------------------


def _train(optimizer, params=None, steps=3, lr_mult=1.0, batch_size=4, trainer_out=None):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.3))
    net.bias.initialize(mx.init.Constant(-0.1), force_reinit=True)
    net.bias.lr_mult = lr_mult
    trainer = mx.gluon.Trainer(net.collect_params(), optimizer, params)
    x = mx.nd.array(np.arange(12).reshape(4, 3) / 10.0)
    y = mx.nd.array([[1.0, -1.0]] * 4)
    for _ in range(steps):
        with mx.autograd.record():
            loss = ((net(x) - y) ** 2).sum()
        loss.backward()
        trainer.step(batch_size)
    if trainer_out is not None:
        trainer_out.append(trainer)
    return net.weight.data().asnumpy(), net.bias.data().asnumpy()


@pytest.mark.parametrize(
    ("name", "opts"),
    [
        ("sgd", {"learning_rate": 0.1}),
        ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "clip_gradient": 0.3}),
        ("nag", {"learning_rate": 0.05, "momentum": 0.9, "wd": 0.01}),
        ("adam", {"learning_rate": 0.1, "wd": 0.01, "clip_gradient": 0.3}),
        ("adam", {"learning_rate": 0.05, "beta1": 0.8, "rescale_grad": 2.0}),
    ],
)
def test_trainer_object_equals_trainer_by_name(name, opts):
    by_name = _train(name, opts, lr_mult=0.5)
    by_object = _train(mx.optimizer.create(name, **opts), lr_mult=0.5)
    for a, b in zip(by_name, by_object, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
    assert not np.allclose(by_name[0], 0.3)  # it trained


def test_trainer_by_other_name_is_the_updater_loop():
    """Trainer("rmsprop") = MXNet's Trainer: rescale_grad = 1 / batch_size, one Updater
    over the parameters by index."""
    out: list = []
    w, b = _train("rmsprop", {"learning_rate": 0.01, "centered": True}, trainer_out=out)
    trainer = out[0]
    assert type(trainer.optimizer) is mx.optimizer.RMSProp
    assert trainer.optimizer.rescale_grad == 0.25 and trainer.optimizer.num_update == 3
    # the same by hand
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.3))
    net.bias.initialize(mx.init.Constant(-0.1), force_reinit=True)
    upd = mx.optimizer.get_updater(
        mx.optimizer.RMSProp(learning_rate=0.01, centered=True, rescale_grad=0.25)
    )
    x = mx.nd.array(np.arange(12).reshape(4, 3) / 10.0)
    y = mx.nd.array([[1.0, -1.0]] * 4)
    for _ in range(3):
        with mx.autograd.record():
            loss = ((net(x) - y) ** 2).sum()
        loss.backward()
        for i, p in enumerate([net.weight, net.bias]):
            upd(i, p.grad(), p.data())
    np.testing.assert_allclose(w, net.weight.data().asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(b, net.bias.data().asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_trainer_runs_every_registered_name(name):
    out: list = []
    w, _ = _train(name, {"wd": 0.01}, trainer_out=out)
    if name not in ("sgd", "nag", "adam"):  # those by name run on tapegrad.optim
        assert isinstance(out[0].optimizer, mx.optimizer.Optimizer)
        assert out[0].optimizer.num_update == 3
    assert np.isfinite(w).all()
    assert not np.allclose(w, 0.3)


def test_trainer_object_learning_rate_and_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5)
    out: list = []
    _train(mx.optimizer.AdaGrad(learning_rate=0.2, lr_scheduler=sched), trainer_out=out)
    trainer = out[0]
    assert trainer.learning_rate == pytest.approx(0.2 * 0.5**2)  # schedule at update 3
    with pytest.raises(UserWarning, match="LRScheduler"):
        trainer.set_learning_rate(0.1)
    out2: list = []
    _train("adagrad", {"learning_rate": 0.2}, steps=1, trainer_out=out2)
    out2[0].set_learning_rate(0.05)
    assert out2[0].learning_rate == 0.05 and out2[0].optimizer.lr == 0.05


def test_trainer_object_save_and_load_states(tmp_path):
    opts = {"learning_rate": 0.01}
    out: list = []
    _train("adamax", opts, steps=2, trainer_out=out)
    fname = str(tmp_path / "adamax.states")
    out[0].save_states(fname)
    # continue from the saved states: the same as three steps in one go
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.3))
    net.bias.initialize(mx.init.Constant(-0.1), force_reinit=True)
    tr1 = out[0]
    for p_old, p_new in zip(tr1._params, [net.weight, net.bias], strict=True):
        p_new.set_data(p_old.data())
    trainer = mx.gluon.Trainer(net.collect_params(), "adamax", opts)
    trainer.load_states(fname)
    assert trainer.optimizer.num_update == 2
    assert trainer.optimizer.param_dict[0] is trainer._params[0]
    x = mx.nd.array(np.arange(12).reshape(4, 3) / 10.0)
    y = mx.nd.array([[1.0, -1.0]] * 4)
    with mx.autograd.record():
        loss = ((net(x) - y) ** 2).sum()
    loss.backward()
    trainer.step(4)
    w3, b3 = _train("adamax", opts, steps=3)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w3, rtol=1e-6)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b3, rtol=1e-6)


def test_trainer_object_stale_gradient():
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), mx.optimizer.RMSProp())
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(1)
    before = net.weight.data().asnumpy().copy()
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), before)
    assert trainer.optimizer.num_update == 0


def test_trainer_errors():
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize()
    params = net.collect_params()
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        mx.gluon.Trainer(params, mx.optimizer.SGD(), {"learning_rate": 0.1})
    with pytest.raises(ValueError, match=r"unknown optimizer 'lbfgs'; known: \['adadelta'"):
        mx.gluon.Trainer(params, "lbfgs")
    with pytest.raises(TypeError, match="optimizer must be a name"):
        mx.gluon.Trainer(params, 3)
    with pytest.raises(TypeError, match="RMSProp: unknown options"):
        mx.gluon.Trainer(params, "rmsprop", {"gamma": 0.9})


def test_mx_optimizer_is_provided():
    assert mx.optimizer.SGD is mx.optimizer.optimizer.SGD
    assert sorted(mx.optimizer.Optimizer.opt_registry) >= sorted(NAMES)


def test_nd_clip_and_square_write_into_out():
    x = mx.nd.array([[-2.0, 0.5], [3.0, -0.1]])
    out = mx.nd.zeros((2, 2))
    assert mx.nd.clip(x, -1.0, 1.0, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), [[-1.0, 0.5], [1.0, -0.1]], rtol=1e-6)
    row = x[1]
    mx.nd.square(row, out=row)
    np.testing.assert_allclose(x.asnumpy(), [[-2.0, 0.5], [9.0, 0.01]], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.square(x).asnumpy()[0], [4.0, 0.25])


def test_compare_optimizer_checks_states_and_weights():
    from tapegrad.compat.mxnet.test_utils import compare_optimizer

    compare_optimizer(mx.optimizer.Adam(wd=0.1), mx.optimizer.Adam(wd=0.1), (3, 2), "float32")
    with pytest.raises(AssertionError):
        compare_optimizer(
            mx.optimizer.Adam(), mx.optimizer.Adam(learning_rate=0.1), (3, 2), "float32"
        )
    with pytest.raises(ValueError, match="compare_optimizer: w_stype='row_sparse'"):
        compare_optimizer(
            mx.optimizer.SGD(), mx.optimizer.SGD(), (3, 2), "float32", w_stype="row_sparse"
        )
