"""TransformerDecoderLayer, TransformerDecoder and the full encoder-decoder Transformer, as
PyTorch's: same arguments, submodule and parameter names (so state dicts load both ways),
mask conventions and initialisation (Xavier-uniform for every matrix of a `Transformer`).

    >>> model = tg.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=32, batch_first=True)
    >>> src, tgt = tg.randn(2, 5, 16), tg.randn(2, 4, 16)
    >>> mask = tg.nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(src, tgt, tgt_mask=mask).shape
    (2, 4, 16)
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..creation import tensor
from . import init
from .attention import (
    MultiheadAttention,
    TransformerEncoder,
    TransformerEncoderLayer,
    _activation,
    _clones,
    _TransformerLayer,
)
from .layers import LayerNorm
from .module import Module

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


class TransformerDecoderLayer(_TransformerLayer):
    """Masked self-attention, attention over the encoder's `memory`, then a feed-forward
    block; each with a residual and LayerNorm (after it, or before with norm_first=True).

    Args: d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu' ('gelu' or a
    callable), layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True.
    `forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)`.
    `tg.nn.TransformerDecoderLayer(32, 4, 64, batch_first=True)(tgt, memory)`."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        attn = dict(dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.self_attn = MultiheadAttention(d_model, nhead, **attn)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **attn)
        self.norm_first = norm_first
        self._add_feedforward(3, d_model, dim_feedforward, dropout, layer_norm_eps, bias, kw)
        self.activation = _activation(activation, "TransformerDecoderLayer")

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(
            x,
            memory,
            memory,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=False,
        memory_is_causal=False,
    ):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x


class TransformerDecoder(Module):
    """A stack of `num_layers` copies of `decoder_layer` (independent weights), then `norm`.

    `tg.nn.TransformerDecoder(tg.nn.TransformerDecoderLayer(32, 4, 64), num_layers=2)`."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers, "TransformerDecoder", "decoder_layer")
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal,
            )
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", as `torch.nn.Transformer`.

    Args: d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
    dim_feedforward=2048, dropout=0.1, activation='relu', custom_encoder=None,
    custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True.
    `forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)` returns the decoder
    output, shaped like `tgt`.
    """

    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        custom_encoder=None,
        custom_decoder=None,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer = dict(
            dim_feedforward=dim_feedforward,
            dropout=dropout,
            activation=activation,
            layer_norm_eps=layer_norm_eps,
            batch_first=batch_first,
            norm_first=norm_first,
            bias=bias,
            **kw,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, **kw),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, **kw),
            )
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError(
                f"Transformer: the batch number of src ({src.shape[batch]}) and "
                f"tgt ({tgt.shape[batch]}) must be equal (batch_first="
                f"{self.batch_first})"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(
                f"Transformer: the feature number of src ({src.shape[-1]}) and "
                f"tgt ({tgt.shape[-1]}) must be equal to d_model ({self.d_model})"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The (sz, sz) causal mask: -inf above the diagonal (future positions), 0 elsewhere."""
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
        mask = np.triu(np.full((sz, sz), -np.inf, dtype=dt), k=1)
        return tensor(mask, dtype=dt, device=device or "cpu")
