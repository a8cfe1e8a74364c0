"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder, as PyTorch's: same
arguments, parameter names (in_proj_weight, in_proj_bias, out_proj.weight, ...), mask
conventions and initialisation, so PyTorch state dicts load.

    >>> import tapegrad as tg
    >>> mha = tg.nn.MultiheadAttention(16, 4, batch_first=True)
    >>> x = tg.randn(2, 5, 16)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    ((2, 5, 16), (2, 5, 5))
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .. import backend
from ..creation import zeros
from ..tensor import Tensor, _wrap
from . import functional_core as F
from . import init
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module, Parameter

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder"]


def _mask_bias(mask, what, shape, dtype, cls):
    """A float additive mask from a bool mask (True = masked out, PyTorch's MHA convention)
    or a float one (added to the scores); `shape` is what it must broadcast to."""
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype == bool:
        m = np.where(backend.to_device(m, "cpu"), -np.inf, 0.0)
    elif m.dtype.kind != "f":
        raise TypeError(f"{cls}: {what} must be a bool or floating tensor, got dtype {m.dtype}")
    m = backend.to_device(m, "cpu").astype(dtype, copy=False)
    if tuple(m.shape) not in shape:
        raise ValueError(
            f"{cls}: {what} must have shape {' or '.join(map(str, shape))}, got {tuple(m.shape)}"
        )
    return m


class MultiheadAttention(Module):
    """Multi-head attention: softmax(Q K^T / sqrt(d)) V over num_heads heads, then out_proj.

    Args: embed_dim, num_heads, dropout=0.0 (on the attention weights, in training),
    bias=True, kdim=None, vdim=None (key/value feature sizes; default embed_dim),
    batch_first=False ((N, L, E) instead of (L, N, E)).
    `forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None)`.
    Bool masks: True marks a position that may NOT be attended (PyTorch's convention);
    float masks are added to the scores. attn_mask (L, S) or (N*num_heads, L, S);
    key_padding_mask (N, S).
    """

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        cls = "MultiheadAttention"
        if not isinstance(embed_dim, int) or embed_dim <= 0:
            raise ValueError(f"{cls}: embed_dim must be a positive int, got {embed_dim!r}")
        if not isinstance(num_heads, int) or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(
                f"{cls}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
            )
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(f"{cls}: add_bias_kv / add_zero_attn are not supported")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = float(dropout), batch_first
        self.head_dim = embed_dim // num_heads
        kw = {"dtype": dtype, "device": device or "cpu"}
        e = embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(zeros(3 * e, e, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(zeros(e, e, **kw))
            self.k_proj_weight = Parameter(zeros(e, self.kdim, **kw))
            self.v_proj_weight = Parameter(zeros(e, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(zeros(3 * e, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, device=device, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"

    def _project(self, query, key, value):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            if query is key and key is value:  # self-attention: one GEMM for q, k and v
                qkv = F.linear(query, w, b)
                return qkv[..., :e], qkv[..., e : 2 * e], qkv[..., 2 * e :]
            wq, wk, wv = w[:e], w[e : 2 * e], w[2 * e :]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        cls = "MultiheadAttention"
        for name, t, feat in (
            ("query", query, self.embed_dim),
            ("key", key, self.kdim),
            ("value", value, self.vdim),
        ):
            if not isinstance(t, Tensor):
                raise TypeError(f"{cls}: {name} must be a Tensor, got {type(t).__name__}")
            if t.ndim not in (2, 3) or t.shape[-1] != feat:
                layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
                raise ValueError(
                    f"{cls}: expected {name} of shape {layout} or (L, E) with "
                    f"E={feat}, got {tuple(t.shape)}"
                )
        unbatched = query.ndim == 2
        if key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(
                f"{cls}: query, key and value must all be batched or all unbatched, "
                f"got shapes {tuple(query.shape)}, {tuple(key.shape)}, "
                f"{tuple(value.shape)}"
            )
        same = query is key and key is value

        def batch_major(t):
            if unbatched:
                return t.unsqueeze(0)
            return t if self.batch_first else t.swapaxes(0, 1)

        q_in = batch_major(query)
        k_in, v_in = (q_in, q_in) if same else (batch_major(key), batch_major(value))
        n, tgt, src = q_in.shape[0], q_in.shape[1], k_in.shape[1]
        if k_in.shape[:2] != v_in.shape[:2] or k_in.shape[0] != n:
            raise ValueError(
                f"{cls}: key {tuple(key.shape)} and value {tuple(value.shape)} must "
                f"share batch and length, and match query's batch {n}"
            )
        q, k, v = self._project(q_in, k_in, v_in)
        h, d = self.num_heads, self.head_dim
        q = q.reshape(n, tgt, h, d).swapaxes(1, 2)
        k = k.reshape(n, src, h, d).swapaxes(1, 2)
        v = v.reshape(n, src, h, d).swapaxes(1, 2)
        scores = (q * (1.0 / math.sqrt(d))) @ k.swapaxes(-2, -1)  # (N, h, L, S)
        # PyTorch 2.13: a query that may attend nothing gets zero weights when the weights
        # are not returned (its SDPA path) and NaN when they are
        scores, alive = self._apply_masks(
            scores,
            attn_mask,
            key_padding_mask,
            is_causal,
            n,
            tgt,
            src,
            zero_dead_rows=not need_weights,
        )
        attn = F.softmax(scores, dim=-1)
        if alive is not None:
            attn = attn * _wrap(backend.to_device(alive, scores.device))
        if self.dropout > 0.0 and self.is_training_now:
            attn = F.dropout(attn, self.dropout, training=True)
        out = (attn @ v).swapaxes(1, 2).reshape(n, tgt, self.embed_dim)
        out = self.out_proj(out)
        if unbatched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.swapaxes(0, 1)
        if not need_weights:
            return out, None
        weights = attn.mean(dim=1) if average_attn_weights else attn
        return out, (weights.squeeze(0) if unbatched else weights)

    def _apply_masks(
        self, scores, attn_mask, key_padding_mask, is_causal, n, tgt, src, zero_dead_rows=False
    ):
        cls = "MultiheadAttention"
        h = self.num_heads
        dt = scores.dtype
        bias = None
        if attn_mask is None and is_causal:
            bias = np.triu(np.full((tgt, src), -np.inf, dtype=dt), 1)
        elif attn_mask is not None:
            if isinstance(attn_mask, Tensor) and attn_mask.requires_grad:
                if attn_mask.ndim == 3:
                    attn_mask = attn_mask.reshape(n, h, tgt, src)
                scores = scores + attn_mask
            else:
                m = _mask_bias(attn_mask, "attn_mask", [(tgt, src), (n * h, tgt, src)], dt, cls)
                bias = m.reshape(n, h, tgt, src) if m.ndim == 3 else m
        if key_padding_mask is not None:
            kp = _mask_bias(key_padding_mask, "key_padding_mask", [(n, src)], dt, cls)
            kp = kp.reshape(n, 1, 1, src)
            bias = kp if bias is None else bias + kp
        alive = None
        if bias is not None:
            if zero_dead_rows:
                bias, alive = F.masked_rows(bias, scores.shape)
            scores = scores + _wrap(backend.to_device(bias, scores.device))
        return scores, alive


def _activation(name, cls):
    if callable(name):
        return name
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise ValueError(f"{cls}: activation must be 'relu', 'gelu' or a callable, got {name!r}")


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: the feed-forward block, one LayerNorm and
    one Dropout per residual sublayer, and the self-attention sublayer. One copy keeps the
    two layers' submodule names and registration order (PyTorch's, so state dicts load)
    in step."""

    def _add_feedforward(self, n, d_model, dim_feedforward, dropout, norm_eps, bias, kw):
        """Register linear1, dropout, linear2, norm1..norm{n}, dropout1..dropout{n}, in
        PyTorch's order, after the attention modules the layer registered itself."""
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        for i in range(1, n + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=norm_eps, **kw))
        for i in range(1, n + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)


def _clones(layer, num_layers, cls, arg):
    """`num_layers` independent deep copies of `layer` (the encoder and decoder stacks)."""
    if not isinstance(layer, Module):
        raise TypeError(f"{cls}: {arg} must be a Module, got {type(layer).__name__}")
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with a residual and LayerNorm (PyTorch's).

    Args: d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu' ('gelu' or a
    callable), layer_norm_eps=1e-5, batch_first=False, norm_first=False (pre-norm), bias=True.
    `forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)`.
    `tg.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)(tg.randn(2, 7, 32))`."""

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
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.norm_first = norm_first
        self._add_feedforward(2, d_model, dim_feedforward, dropout, layer_norm_eps, bias, kw)
        self.activation = _activation(activation, "TransformerEncoderLayer")

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerEncoder(Module):
    """A stack of `num_layers` copies of `encoder_layer` (independent weights), then `norm`.

    `tg.nn.TransformerEncoder(tg.nn.TransformerEncoderLayer(32, 4, 64), num_layers=2)`."""

    def __init__(
        self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True
    ):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers, "TransformerEncoder", "encoder_layer")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(
                x,
                src_mask=mask,
                src_key_padding_mask=src_key_padding_mask,
                is_causal=bool(is_causal),
            )
        return self.norm(x) if self.norm is not None else x
