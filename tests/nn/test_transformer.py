"""TransformerDecoderLayer, TransformerDecoder and Transformer against PyTorch with the same
weights (float64): outputs, input gradients and every parameter gradient."""

import numpy as np
import pytest

import tapegrad as tg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _sync(ours, theirs):
    theirs.double()
    ours.double()
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert sorted(state) == sorted(ours.state_dict())  # same parameter names
    ours.load_state_dict(state)


def _check(torch, ours, theirs, args, kwargs_ours, kwargs_theirs):
    t_args = [torch.tensor(a, requires_grad=True) for a in args]
    o_args = [tg.tensor(a, requires_grad=True) for a in args]
    out_t = theirs(*t_args, **kwargs_theirs)
    out_o = ours(*o_args, **kwargs_ours)
    np.testing.assert_allclose(
        out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-9, atol=1e-11
    )
    head = np.random.default_rng(5).standard_normal(tuple(out_t.shape))
    (out_t * torch.tensor(head)).sum().backward()
    (out_o * tg.tensor(head)).sum().backward()
    for a, b in zip(o_args, t_args, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-10)
    grads_t = {k: p.grad for k, p in theirs.named_parameters()}
    for k, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), grads_t[k].numpy(), rtol=1e-8, atol=1e-10, err_msg=k
        )


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_matches_pytorch(torch, norm_first, batch_first):
    kw = dict(dim_feedforward=12, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, **kw)
    ours = tg.nn.TransformerDecoderLayer(8, 2, **kw)
    _sync(ours, theirs)
    rng = np.random.default_rng(0)
    shape_t, shape_m = ((2, 4, 8), (2, 5, 8)) if batch_first else ((4, 2, 8), (5, 2, 8))
    tgt, memory = rng.standard_normal(shape_t), rng.standard_normal(shape_m)
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    padding = np.array([[False] * 4 + [True], [False] * 5])
    _check(
        torch,
        ours,
        theirs,
        [tgt, memory],
        dict(tgt_mask=tg.tensor(causal), memory_key_padding_mask=tg.tensor(padding)),
        dict(tgt_mask=torch.tensor(causal), memory_key_padding_mask=torch.tensor(padding)),
    )


def test_transformer_matches_pytorch(torch):
    kw = dict(
        d_model=8,
        nhead=2,
        num_encoder_layers=2,
        num_decoder_layers=2,
        dim_feedforward=16,
        dropout=0.0,
        batch_first=True,
        activation="gelu",
    )
    theirs, ours = torch.nn.Transformer(**kw), tg.nn.Transformer(**kw)
    _sync(ours, theirs)
    rng = np.random.default_rng(1)
    src, tgt = rng.standard_normal((3, 6, 8)), rng.standard_normal((3, 4, 8))
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    mask_o = tg.nn.Transformer.generate_square_subsequent_mask(4, dtype=tg.float64)
    np.testing.assert_array_equal(mask_o.numpy(), mask_t.numpy())
    src_pad = np.zeros((3, 6), bool)
    src_pad[0, -2:] = True
    _check(
        torch,
        ours,
        theirs,
        [src, tgt],
        dict(
            tgt_mask=mask_o,
            src_key_padding_mask=tg.tensor(src_pad),
            memory_key_padding_mask=tg.tensor(src_pad),
        ),
        dict(
            tgt_mask=mask_t,
            src_key_padding_mask=torch.tensor(src_pad),
            memory_key_padding_mask=torch.tensor(src_pad),
        ),
    )


def test_transformer_initialises_matrices_xavier_uniform():
    tg.manual_seed(0)
    model = tg.nn.Transformer(
        d_model=32, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=64
    )
    w = model.encoder.layers[0].linear1.weight.detach().numpy()  # (64, 32)
    bound = np.sqrt(6 / (32 + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.isclose(w.std(), bound / np.sqrt(3), rtol=0.1)


def test_transformer_checks_its_inputs():
    model = tg.nn.Transformer(
        d_model=8,
        nhead=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        dim_feedforward=8,
        batch_first=True,
    )
    with pytest.raises(RuntimeError, match="batch number"):
        model(tg.randn(2, 3, 8), tg.randn(3, 3, 8))
    with pytest.raises(RuntimeError, match="d_model"):
        model(tg.randn(2, 3, 6), tg.randn(2, 3, 6))
    with pytest.raises(TypeError, match="decoder_layer must be a Module"):
        tg.nn.TransformerDecoder("layer", 2)


def test_the_torch_facade_has_them():
    import tapegrad.compat.torch as torch

    assert torch.nn.Transformer is tg.nn.Transformer
    assert torch.nn.TransformerDecoderLayer is tg.nn.TransformerDecoderLayer
