"""MultiheadAttention and TransformerEncoderLayer against PyTorch with the same weights:
outputs, attention weights, gradients, masks; init and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg

torch = pytest.importorskip("torch")

E, HEADS, L, S, N = 8, 2, 4, 5, 3


def _pair(cls, *args, **kw):
    ours = getattr(tg.nn, cls)(*args, **kw).double()
    theirs = getattr(torch.nn, cls)(*args, **kw).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def _masks(rng, kind):
    attn = rng.random((L, S)) < 0.3
    attn[:, 0] = False  # keep one key per query, or softmax has no finite entry
    pad = rng.random((N, S)) < 0.3
    pad[:, 1] = False
    return {
        "none": {},
        "attn_bool": {"attn_mask": attn},
        "attn_float_3d": {"attn_mask": rng.standard_normal((N * HEADS, L, S))},
        "padding": {"key_padding_mask": pad},
        "both": {"attn_mask": np.where(attn, -np.inf, 0.0), "key_padding_mask": pad},
    }[kind]


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch: mixed bool/float masks deprecated
@pytest.mark.parametrize("masks", ["none", "attn_bool", "attn_float_3d", "padding", "both"])
@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"kdim": 6, "vdim": 7}, {"bias": False}])
def test_multihead_attention_matches_torch(kw, masks, rng):
    ours, theirs = _pair("MultiheadAttention", E, HEADS, **kw)
    bf = kw.get("batch_first", False)

    def seq(length, dim):
        return rng.standard_normal((N, length, dim) if bf else (length, N, dim))

    q, k, v = seq(L, E), seq(S, kw.get("kdim", E)), seq(S, kw.get("vdim", E))
    m = _masks(rng, masks)
    qo, qt = tg.tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    ko, kt = tg.tensor(k, requires_grad=True), torch.tensor(k, requires_grad=True)
    out, w = ours(qo, ko, tg.tensor(v), **{a: tg.tensor(b) for a, b in m.items()})
    tout, tw = theirs(qt, kt, torch.tensor(v), **{a: torch.tensor(b) for a, b in m.items()})
    _close(out, tout)
    _close(w, tw)
    g = rng.standard_normal(tuple(out.shape))
    ((out * tg.tensor(g)).sum() + (w * w).sum()).backward()
    ((tout * torch.tensor(g)).sum() + (tw * tw).sum()).backward()
    _close(qo.grad, qt.grad)
    _close(ko.grad, kt.grad)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad, tparams[name].grad)


def test_self_attention_unbatched_per_head_weights(rng):
    ours, theirs = _pair("MultiheadAttention", E, HEADS)
    x = rng.standard_normal((L, E))
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, w = ours(xo, xo, xo, average_attn_weights=False)
    tout, tw = theirs(xt, xt, xt, average_attn_weights=False)
    assert w.shape == (HEADS, L, L)
    _close(out, tout)
    _close(w, tw)
    out.sum().backward()
    tout.sum().backward()
    _close(xo.grad, xt.grad)
    assert ours(xo, xo, xo, need_weights=False)[1] is None


def test_causal_mask(rng):
    ours, theirs = _pair("MultiheadAttention", E, HEADS, batch_first=True)
    x = rng.standard_normal((N, L, E))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    out, w = ours(*(tg.tensor(x),) * 3, is_causal=True)
    tout, tw = theirs(*(torch.tensor(x),) * 3, attn_mask=causal, is_causal=True)
    _close(out, tout)
    assert np.all(np.triu(w.detach().numpy()[0], 1) == 0)


def test_multihead_attention_params_and_init():
    mha = tg.nn.MultiheadAttention(E, HEADS)
    tmha = torch.nn.MultiheadAttention(E, HEADS)
    assert [n for n, _ in mha.named_parameters()] == [n for n, _ in tmha.named_parameters()]
    assert mha.in_proj_weight.shape == (3 * E, E)
    assert not np.any(mha.in_proj_bias.detach().numpy())
    assert not np.any(mha.out_proj.bias.detach().numpy())
    bound = np.sqrt(6.0 / (E + 3 * E))  # xavier_uniform on (3E, E)
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= bound
    sep = tg.nn.MultiheadAttention(E, HEADS, kdim=3, vdim=5)
    tsep = torch.nn.MultiheadAttention(E, HEADS, kdim=3, vdim=5)
    assert {k: tuple(v.shape) for k, v in sep.state_dict().items()} == {
        k: tuple(v.shape) for k, v in tsep.state_dict().items()
    }


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"batch_first": True, "norm_first": True, "activation": "gelu"},
        {"activation": "gelu", "dropout": 0.0},
    ],
)
def test_transformer_encoder_layer_eval_matches_torch(kw, rng):
    ours, theirs = _pair("TransformerEncoderLayer", E, HEADS, 16, **kw)
    ours.eval()
    theirs.eval()
    bf = kw.get("batch_first", False)
    x = rng.standard_normal((N, L, E) if bf else (L, N, E))
    pad = np.zeros((N, L), dtype=bool)
    pad[0, -1] = True
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = ours(xo, src_key_padding_mask=tg.tensor(pad))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's fast-path notices
        tout = theirs(xt, src_key_padding_mask=torch.tensor(pad))
    _close(out, tout)
    g = rng.standard_normal(tuple(out.shape))
    (out * tg.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    _close(xo.grad, xt.grad)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad, tparams[name].grad)


def test_transformer_encoder_layer_dropout_only_in_training(rng):
    layer = tg.nn.TransformerEncoderLayer(E, HEADS, 16, dropout=0.5, batch_first=True).double()
    x = tg.tensor(rng.standard_normal((N, L, E)))
    layer.eval()
    a, b = layer(x), layer(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    layer.train()
    assert not np.allclose(layer(x).detach().numpy(), a.detach().numpy())


def test_transformer_encoder_stacks_independent_copies(rng):
    layer = tg.nn.TransformerEncoderLayer(E, HEADS, 16, batch_first=True)
    enc = tg.nn.TransformerEncoder(layer, num_layers=2, norm=tg.nn.LayerNorm(E))
    tenc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(E, HEADS, 16, batch_first=True),
        num_layers=2,
        norm=torch.nn.LayerNorm(E),
        enable_nested_tensor=False,
    )
    assert list(enc.state_dict()) == list(tenc.state_dict())
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    enc = enc.double()
    tenc = tenc.double()
    enc.load_state_dict({k: v.detach().numpy() for k, v in tenc.state_dict().items()})
    enc.eval()
    tenc.eval()
    x = rng.standard_normal((N, L, E))
    _close(enc(tg.tensor(x)), tenc(torch.tensor(x)))


def test_errors_say_what_and_how():
    with pytest.raises(ValueError, match=r"embed_dim \(10\) must be divisible by num_heads \(3\)"):
        tg.nn.MultiheadAttention(10, 3)
    mha = tg.nn.MultiheadAttention(E, HEADS)
    x = tg.randn(L, N, E)
    with pytest.raises(
        ValueError, match=r"expected query of shape \(L, N, E\).*E=8, got \(4, 3, 5\)"
    ):
        mha(tg.randn(L, N, 5), x, x)
    with pytest.raises(
        ValueError, match=r"key_padding_mask must have shape \(3, 4\), got \(4, 3\)"
    ):
        mha(x, x, x, key_padding_mask=tg.zeros(L, N, dtype=tg.bool))
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(4, 4\) or \(6, 4, 4\)"):
        mha(x, x, x, attn_mask=tg.zeros(2, 4))
    with pytest.raises(ValueError, match="activation must be 'relu', 'gelu' or a callable"):
        tg.nn.TransformerEncoderLayer(E, HEADS, activation="tanh")
