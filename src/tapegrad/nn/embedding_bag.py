"""EmbeddingBag: an embedding table whose lookups are reduced per bag (sum, mean or max).

>>> bag = tg.nn.EmbeddingBag(10, 3, mode="sum")
>>> bag(tg.tensor([1, 2, 4, 5, 4, 3]), tg.tensor([0, 3])).shape
(2, 3)
"""

from __future__ import annotations

from ..creation import zeros
from ..tensor import Tensor
from . import functional_embedding_bag as F
from . import init
from .layers import _factory
from .module import Module, Parameter

__all__ = ["EmbeddingBag"]


class EmbeddingBag(Module):
    """`num_embeddings` vectors of size `embedding_dim` (N(0, 1); the padding row zero),
    looked up in bags and reduced with `mode` ("sum", "mean" or "max").

    `forward(input, offsets=None, per_sample_weights=None)` as `F.embedding_bag`.
    `max_norm`, `scale_grad_by_freq` and `sparse` are not supported (refused)."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight=None,
        include_last_offset: bool = False,
        padding_idx=None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError(
                "EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not supported"
            )
        if mode not in F._MODES:
            raise ValueError("mode has to be one of sum, mean or max")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"EmbeddingBag: padding_idx {padding_idx} must be within num_embeddings "
                    f"[-{num_embeddings}, {num_embeddings})"
                )
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, False
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = padding_idx
        if _weight is not None:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"EmbeddingBag: _weight has shape {tuple(_weight.shape)}, expected "
                    f"({num_embeddings}, {embedding_dim})"
                )
            self.weight = Parameter(_weight)
        else:
            kw = _factory(dtype, device)
            self.weight = Parameter(zeros(num_embeddings, embedding_dim, **kw))
            self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh standard normal embeddings (the `padding_idx` row zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx=None,
    ) -> EmbeddingBag:
        """An EmbeddingBag holding `embeddings` (2-D) as its weight; frozen by default."""
        if embeddings.ndim != 2:
            raise ValueError(
                f"EmbeddingBag.from_pretrained: embeddings must be 2-D, got shape "
                f"{tuple(embeddings.shape)}"
            )
        rows, dim = embeddings.shape
        bag = cls(
            rows,
            dim,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            embeddings,
            include_last_offset,
            padding_idx,
        )
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            mode=self.mode,
            per_sample_weights=per_sample_weights,
            include_last_offset=self.include_last_offset,
            padding_idx=self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
