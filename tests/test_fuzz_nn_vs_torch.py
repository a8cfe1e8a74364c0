"""Differential fuzzing of tapegrad.nn layers against torch.nn, in float64.

Each case builds a torch layer, fills its floating state with seeded random values (running
variances positive), checks that tapegrad's layer has the same state_dict keys and shapes,
loads torch's state into it, and runs a few steps: outputs, input gradients and parameter
gradients (of a random weighting of every float output) must agree to 1e-10 relative, and
the whole state (BatchNorm's running statistics and batch count) after the last step.

`KNOWN` lists the torch.nn options tapegrad deliberately refuses (each must raise
NotImplementedError, never give a silent value). The run is seeded and takes a few seconds.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tapegrad as tg

torch = pytest.importorskip("torch")

RTOL = 1e-10

# torch.nn options tapegrad refuses (NotImplementedError), with why they are left
KNOWN: dict[str, tuple] = {
    "LSTM proj_size": (
        "projected LSTM is not implemented",
        lambda: tg.nn.LSTM(2, 3, proj_size=2),
    ),
    "MultiheadAttention add_bias_kv": (
        "extra key/value bias rows are not implemented",
        lambda: tg.nn.MultiheadAttention(4, 2, add_bias_kv=True),
    ),
    "MultiheadAttention add_zero_attn": (
        "the zero attention row is not implemented",
        lambda: tg.nn.MultiheadAttention(4, 2, add_zero_attn=True),
    ),
    "Embedding max_norm": (
        "renormalising rows in place is not implemented",
        lambda: tg.nn.Embedding(5, 3, max_norm=1.0),
    ),
    "Embedding scale_grad_by_freq": (
        "frequency-scaled gradients are not implemented",
        lambda: tg.nn.Embedding(5, 3, scale_grad_by_freq=True),
    ),
}


def _relerr(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    fin_g, fin_w = np.isfinite(got), np.isfinite(want)
    assert np.array_equal(fin_g, fin_w), "non-finite pattern differs"
    assert np.array_equal(got[~fin_g], want[~fin_w], equal_nan=True)
    if not fin_g.any():
        return 0.0
    return float(np.max(np.abs(got[fin_g] - want[fin_w])) / (np.max(np.abs(want[fin_w])) + 1e-30))


def _close(got, want, what):
    err = _relerr(got, want)
    assert err <= RTOL, f"{what}: relative error {err:.3g}"


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [] if out is None else [out]


def _randomise(tmod, rng):
    with torch.no_grad():
        for key, value in tmod.state_dict().items():
            if value.dtype.is_floating_point:
                r = rng.standard_normal(tuple(value.shape)) * 0.5
                value.copy_(torch.tensor(np.abs(r) + 0.5 if "running_var" in key else r))


def _convert(v, lib):
    if isinstance(v, np.ndarray):
        return torch.tensor(v) if lib == "torch" else tg.tensor(v)
    return v


def _run(tmod, gmod, inputs, kwargs, train, steps, rng):
    _randomise(tmod, rng)
    tsd, gsd = tmod.state_dict(), gmod.state_dict()
    assert {k: tuple(v.shape) for k, v in gsd.items()} == {
        k: tuple(v.shape) for k, v in tsd.items()
    }, "state_dict keys/shapes"
    gmod.load_state_dict({k: v.detach().numpy() for k, v in tsd.items()})
    tmod.train(train)
    gmod.train(train)
    for step in range(steps):
        xs = inputs(rng)
        ti = [torch.tensor(a).requires_grad_(a.dtype.kind == "f") for a in xs]
        gi = [tg.tensor(a, requires_grad=a.dtype.kind == "f") for a in xs]
        tkw = {k: _convert(v, "torch") for k, v in kwargs.items()}
        gkw = {k: _convert(v, "tg") for k, v in kwargs.items()}
        touts, gouts = _flat(tmod(*ti, **tkw)), _flat(gmod(*gi, **gkw))
        assert len(touts) == len(gouts), "number of outputs"
        tloss, gloss = 0, 0
        for j, (t, g) in enumerate(zip(touts, gouts, strict=True)):
            _close(g.detach().numpy(), t.detach().numpy(), f"step {step} output {j}")
            if t.requires_grad:
                w = rng.standard_normal(tuple(t.shape))
                tloss = tloss + (t * torch.tensor(w)).sum()
                gloss = gloss + (g * tg.tensor(w)).sum()
        if isinstance(tloss, int):
            continue
        tmod.zero_grad()
        gmod.zero_grad()
        tloss.backward()
        gloss.backward()
        for j, (t, g) in enumerate(zip(ti, gi, strict=True)):
            if t.grad is not None or g.grad is not None:
                _close(g.grad.numpy(), t.grad.numpy(), f"step {step} input {j} gradient")
        gparams = dict(gmod.named_parameters())
        for key, p in tmod.named_parameters():
            q = gparams[key]
            assert (p.grad is None) == (q.grad is None), f"{key}: gradient presence"
            if p.grad is not None:
                _close(q.grad.numpy(), p.grad.numpy(), f"step {step} {key} gradient")
    gsd = gmod.state_dict()
    for key, value in tmod.state_dict().items():
        _close(gsd[key].numpy(), value.numpy(), f"state {key} after {steps} steps")


CASES: dict[str, tuple] = {}


def case(name, build, inputs, kwargs=None, train=True, steps=1):
    """build(lib) -> the layer from torch.nn or tg.nn; inputs(rng) -> list of arrays."""
    assert name not in CASES
    CASES[name] = (build, inputs, kwargs or {}, train, steps)


def randn(*shape, scale=1.0, shift=0.0):
    return lambda rng: [rng.standard_normal(shape) * scale + shift]


def nn(lib):
    return torch.nn if lib == "torch" else tg.nn


# ---- linear and convolutions
case("Linear", lambda L: nn(L).Linear(4, 3), randn(2, 5, 4))
case("Linear no bias 1-D", lambda L: nn(L).Linear(4, 3, bias=False), randn(4))
for nd in (1, 2, 3):
    for ci, co, k, s, p, d, g, b, pm in [
        (2, 4, 3, 1, 0, 1, 1, True, "zeros"),
        (4, 6, 3, 2, 1, 1, 2, False, "zeros"),
        (2, 2, 2, 1, "same", 2, 1, True, "zeros"),
        (2, 4, 3, 1, 1, 1, 1, True, "circular"),
        (2, 4, 3, 1, 2, 1, 2, True, "replicate"),
    ]:
        kw = dict(stride=s, padding=p, dilation=d, groups=g, bias=b, padding_mode=pm)
        case(
            f"Conv{nd}d {ci},{co},{k} {kw}",
            lambda L, nd=nd, a=(ci, co, k), kw=kw: getattr(nn(L), f"Conv{nd}d")(*a, **kw),
            randn(2, ci, *(5,) * nd),
        )
for nd in (1, 2):
    for ci, co, k, s, p, op, d, g, b in [
        (2, 3, 3, 1, 0, 0, 1, 1, True),
        (4, 2, 3, 2, 1, 1, 1, 2, False),
        (2, 2, 2, 3, 1, 2, 2, 1, True),
    ]:
        kw = dict(stride=s, padding=p, output_padding=op, dilation=d, groups=g, bias=b)
        case(
            f"ConvTranspose{nd}d {ci},{co},{k} {kw}",
            lambda L, nd=nd, a=(ci, co, k), kw=kw: getattr(nn(L), f"ConvTranspose{nd}d")(*a, **kw),
            randn(2, ci, *(4,) * nd),
        )
    case(
        f"ConvTranspose{nd}d output_size",
        lambda L, nd=nd: getattr(nn(L), f"ConvTranspose{nd}d")(2, 2, 3, stride=2),
        randn(1, 2, *(4,) * nd),
        kwargs={"output_size": [10] * nd},
    )

# ---- pooling (ties and -inf windows next to padding included)
for nd in (1, 2):
    for k, s, p, d, cm in [(2, None, 0, 1, False), (3, 2, 1, 1, True), (3, 2, 1, 2, True),
                           (2, 3, 1, 1, True), (4, 3, 2, 1, True)]:  # fmt: skip
        mp = dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=cm)
        case(
            f"MaxPool{nd}d {mp}",
            lambda L, nd=nd, mp=mp: getattr(nn(L), f"MaxPool{nd}d")(**mp, return_indices=True),
            lambda rng, nd=nd: [rng.integers(0, 3, (2, 2) + (7,) * nd).astype(float)],
        )
        for cip, dov in [(True, None), (False, None), (True, 5)]:
            if (nd == 1 and dov) or d != 1:  # AvgPool has no dilation
                continue
            ap = dict(kernel_size=k, stride=s, padding=p, ceil_mode=cm, count_include_pad=cip)
            if dov:
                ap["divisor_override"] = dov
            case(
                f"AvgPool{nd}d {ap}",
                lambda L, nd=nd, ap=ap: getattr(nn(L), f"AvgPool{nd}d")(**ap),
                randn(2, 3, *(7,) * nd),
            )
    for osz in (1, 3, 5):
        case(
            f"AdaptiveAvgPool{nd}d {osz}",
            lambda L, nd=nd, o=osz: getattr(nn(L), f"AdaptiveAvgPool{nd}d")(o),
            randn(2, 3, *(7,) * nd),
        )
case(
    "MaxPool2d -inf windows at padding",
    lambda L: nn(L).MaxPool2d(2, 1, 1, return_indices=True),
    lambda rng: [
        np.where(rng.random((1, 2, 3, 4)) < 0.7, -np.inf, rng.standard_normal((1, 2, 3, 4)))
    ],
)
case("AdaptiveAvgPool2d (None, 3)", lambda L: nn(L).AdaptiveAvgPool2d((None, 3)), randn(2, 3, 5, 7))
case(
    "AvgPool2d unbatched",
    lambda L: nn(L).AvgPool2d((3, 2), (2, 1), (1, 1), True, False),
    randn(2, 5, 5),
)

# ---- normalisation
for nd, shape in [(1, (4, 3)), (1, (4, 3, 5)), (2, (4, 3, 3, 2))]:
    for affine, track, momentum in [(True, True, 0.1), (False, True, None), (True, False, 0.1),
                                    (True, True, None), (False, False, 0.3)]:  # fmt: skip
        for train in (True, False):
            bn = dict(affine=affine, track_running_stats=track, momentum=momentum)
            case(
                f"BatchNorm{nd}d {shape} {bn} train={train}",
                lambda L, nd=nd, bn=bn: getattr(nn(L), f"BatchNorm{nd}d")(3, **bn),
                randn(*shape, scale=2.0, shift=1.0),
                train=train,
                steps=2,
            )
case("BatchNorm2d N=1", lambda L: nn(L).BatchNorm2d(3, momentum=None), randn(1, 3, 2, 3), steps=3)
for affine, bias in [(True, True), (True, False), (False, True)]:
    case(
        f"LayerNorm affine={affine} bias={bias}",
        lambda L, a=affine, b=bias: nn(L).LayerNorm((3, 4), elementwise_affine=a, bias=b),
        randn(2, 3, 4),
    )
for groups, shape, affine in [(2, (2, 6, 5), True), (3, (2, 6, 2, 3), False), (3, (2, 6), True)]:
    case(
        f"GroupNorm {groups} {shape} affine={affine}",
        lambda L, g=groups, a=affine: nn(L).GroupNorm(g, 6, eps=1e-3, affine=a),
        randn(*shape),
    )

# ---- embedding, dropout, activations
for pad in (None, 0, 3, -1):
    case(
        f"Embedding padding_idx={pad}",
        lambda L, pad=pad: nn(L).Embedding(5, 3, padding_idx=pad),
        lambda rng: [np.concatenate([np.arange(5), rng.integers(0, 5, 7)]).reshape(3, 4)],
    )
case("Dropout eval", lambda L: nn(L).Dropout(0.5), randn(3, 4), train=False)
ACTIVATIONS = [
    ("ReLU", (), {}), ("LeakyReLU", (0.2,), {}), ("ELU", (0.7,), {}), ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Sigmoid", (), {}),
    ("Tanh", (), {}), ("Softplus", (), {"beta": 2.0, "threshold": 3.0}), ("Identity", (), {}),
    ("Flatten", (0, -1), {}), ("Unflatten", (1, (2, 2)), {}),
] + [(n, (d,), {}) for n in ("Softmax", "LogSoftmax") for d in (0, 1, -1)]  # fmt: skip
for name, args, kw in ACTIVATIONS:
    case(
        f"{name}{args}{kw}",
        lambda L, n=name, a=args, kw=kw: getattr(nn(L), n)(*a, **kw),
        randn(3, 4, 5, scale=2.0),
    )

# ---- recurrent
for mode in ("RNN", "LSTM", "GRU"):
    for layers, bi, bf, bias, h0, unbatched in [
        (1, False, False, True, False, False),
        (2, True, False, True, True, False),
        (2, False, True, False, True, False),
        (1, True, True, True, True, False),
        (2, True, False, True, True, True),
    ]:
        kw = dict(num_layers=layers, bidirectional=bi, batch_first=bf, bias=bias)
        if mode == "RNN" and layers == 2:
            kw["nonlinearity"] = "relu"
        D, T, N, H, Inp = 2 if bi else 1, 4, 3, 5, 2
        xs = (T, Inp) if unbatched else ((N, T, Inp) if bf else (T, N, Inp))
        hs = (D * layers, H) if unbatched else (D * layers, N, H)
        n_states = (2 if mode == "LSTM" else 1) if h0 else 0

        def build(L, mode=mode, kw=kw, n_states=n_states):
            rnn = getattr(nn(L), mode)(2, 5, **kw)
            base = torch.nn.Module if L == "torch" else tg.nn.Module

            class WithStates(base):  # states as separate inputs, so they get gradients
                def __init__(self):
                    super().__init__()
                    self.rnn = rnn

                def forward(self, x, *states):
                    if not states:
                        return self.rnn(x)
                    return self.rnn(x, states if len(states) == 2 else states[0])

            return WithStates()

        case(
            f"{mode} {kw} h0={h0} unbatched={unbatched}",
            build,
            lambda rng, xs=xs, hs=hs, n=n_states: [rng.standard_normal(s) for s in [xs] + [hs] * n],
        )
for cell in ("RNNCell", "LSTMCell", "GRUCell"):
    case(f"{cell}", lambda L, c=cell: getattr(nn(L), c)(4, 5), randn(3, 4))
    case(
        f"{cell} unbatched no bias", lambda L, c=cell: getattr(nn(L), c)(4, 5, bias=False), randn(4)
    )


# ---- attention and transformers
def _mha_inputs(bf, unbatched, L, S, E, kd, vd, N=2):
    def shape(n, d):
        return (n, d) if unbatched else ((N, n, d) if bf else (n, N, d))

    return lambda rng: [rng.standard_normal(shape(n, d)) for n, d in ((L, E), (S, kd), (S, vd))]


_rng = np.random.default_rng(7)
_bool_mask = _rng.random((3, 4)) < 0.3
_bool_mask[:, 0] = False
_kpm = _rng.random((2, 4)) < 0.3
_kpm[:, 1] = False
_mask3 = _rng.random((4, 3, 4)) < 0.3
_mask3[..., 2] = False
_float_mask, _float_kpm = _rng.standard_normal((3, 4)), _rng.standard_normal((2, 4))
MHA_CASES = [
    # heads, batch_first, kdim/vdim, bias, unbatched, forward kwargs
    (2, False, False, True, False, {}),
    (3, True, False, True, False, {"attn_mask": _bool_mask, "average_attn_weights": False}),
    (2, True, True, False, False, {"attn_mask": _float_mask, "key_padding_mask": _kpm}),
    (2, False, False, True, False, {"attn_mask": _bool_mask, "key_padding_mask": _float_kpm}),
    (2, False, True, True, False, {"attn_mask": _mask3, "need_weights": False}),
    (2, False, False, True, True, {"attn_mask": _bool_mask}),
]  # fmt: skip
for heads, bf, kv, bias, unbatched, fkw in MHA_CASES:
    kd, vd = (4, 5) if kv else (6, 6)
    ckw = dict(batch_first=bf, bias=bias, kdim=kd, vdim=vd, dropout=0.3)
    case(
        f"MultiheadAttention {heads} {ckw} unbatched={unbatched} {sorted(fkw)}",
        lambda L, h=heads, ckw=ckw: nn(L).MultiheadAttention(6, h, **ckw),
        _mha_inputs(bf, unbatched, 3, 4, 6, kd, vd),
        kwargs=fkw,
        train=False,
    )
for norm_first, act, bf in itertools.product((False, True), ("relu", "gelu"), (False, True)):
    kw = dict(dim_feedforward=7, dropout=0.0, activation=act, batch_first=bf, norm_first=norm_first)
    S, N = (3, 2) if bf else (2, 3)
    kpm = _rng.random((N, S)) < 0.4
    kpm[:, 0] = False
    case(
        f"TransformerEncoderLayer {kw}",
        lambda L, kw=kw: nn(L).TransformerEncoderLayer(6, 2, **kw),
        randn(2, 3, 6),
        kwargs={"src_mask": np.triu(np.full((S, S), -np.inf), 1), "src_key_padding_mask": kpm},
    )
    case(
        f"TransformerDecoderLayer {kw}",
        lambda L, kw=kw: nn(L).TransformerDecoderLayer(6, 2, **kw),
        lambda rng: [rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 3, 6))],
        kwargs={"tgt_mask": np.triu(np.ones((S, S), bool), 1), "memory_key_padding_mask": kpm},
    )

# ---- losses
N_, C_ = 4, 3
_w = _rng.random(C_) + 0.5


def _loss_inputs(kind):
    def make(rng):
        logits = rng.standard_normal((N_, C_))
        if kind == "class":
            return [logits, rng.integers(0, C_, N_)]
        if kind == "class2d":
            return [rng.standard_normal((N_, C_, 2)), rng.integers(0, C_, (N_, 2))]
        if kind == "prob":
            return [logits, rng.dirichlet(np.ones(C_), N_)]
        if kind == "bce":
            return [rng.random((N_, C_)) * 0.8 + 0.1, rng.random((N_, C_))]
        if kind == "kl":
            return [np.log(rng.dirichlet(np.ones(C_), N_)), rng.dirichlet(np.ones(C_), N_)]
        return [logits * 3, rng.standard_normal((N_, C_))]

    return make


LOSSES = [
    ("MSELoss", "reg", {}), ("L1Loss", "reg", {}), ("HuberLoss", "reg", {"delta": 0.7}),
    ("SmoothL1Loss", "reg", {"beta": 0.6}), ("BCELoss", "bce", {"weight": _w}),
    ("BCEWithLogitsLoss", "bce", {"pos_weight": _w}),
    ("CrossEntropyLoss", "class", {"weight": _w, "label_smoothing": 0.2}),
    ("CrossEntropyLoss", "class", {"ignore_index": 1, "label_smoothing": 0.1}),
    ("CrossEntropyLoss", "class2d", {"weight": _w}),
    ("CrossEntropyLoss", "prob", {"weight": _w, "label_smoothing": 0.3}),
    ("NLLLoss", "class", {"weight": _w, "ignore_index": 2}), ("NLLLoss", "class2d", {}),
    ("KLDivLoss", "kl", {}),
]  # fmt: skip
for name, kind, lkw in LOSSES:
    for red in ("mean", "sum", "none") + (("batchmean",) if name == "KLDivLoss" else ()):
        kw = dict(lkw, reduction=red)
        case(
            f"{name} {kind} {sorted(lkw)} {red}",
            lambda L, n=name, kw=kw: getattr(nn(L), n)(
                **{k: _convert(v, L) for k, v in kw.items()}
            ),
            _loss_inputs(kind),
        )


@pytest.fixture(autouse=True)
def _float64():
    before_t, before_g = torch.get_default_dtype(), tg.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    tg.set_default_dtype(tg.float64)
    yield
    torch.set_default_dtype(before_t)
    tg.set_default_dtype(before_g)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_torch(name):
    build, inputs, kwargs, train, steps = CASES[name]
    rng = np.random.default_rng(list(CASES).index(name))
    _run(build("torch"), build("tg"), inputs, kwargs, train, steps, rng)


@pytest.mark.parametrize("name", list(KNOWN))
def test_known_differences_refuse_loudly(name):
    _reason, make = KNOWN[name]
    with pytest.raises(NotImplementedError):
        make()
