"""PixelShuffle1D/2D/3D (MXNet 1.9.1's gluon.contrib.nn): channels rearranged into space.

(N, C * f1 * ... * fk, S1, ..., Sk) becomes (N, C, S1 * f1, ..., Sk * fk); channel
`c * (f1 * ... * fk) + (i1 * f2 + i2) ...` lands at offset (i1, ..., ik) of each block, as
PyTorch's pixel_shuffle does for equal factors.
"""

from __future__ import annotations

from ...block import HybridBlock

__all__ = ["PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


class _PixelShuffle(HybridBlock):
    _dims = 1

    def __init__(self, factor, **kwargs) -> None:
        from ...block import block_args

        super().__init__(**block_args(kwargs))
        factors = (factor,) * self._dims if isinstance(factor, int) else tuple(factor)
        if len(factors) != self._dims or any(int(f) < 1 for f in factors):
            raise ValueError(
                f"{type(self).__name__}: factor must be a positive int or {self._dims} "
                f"positive ints, got {factor!r}"
            )
        self._factors = tuple(int(f) for f in factors)

    def forward(self, x):
        import tapegrad as tg

        k, f = self._dims, self._factors
        if x.ndim != k + 2:
            raise ValueError(
                f"{type(self).__name__}: expected a {k + 2}-D input (N, C, {k} spatial), got "
                f"shape {tuple(x.shape)}"
            )
        n, channels, *space = x.shape
        block = 1
        for v in f:
            block *= v
        if channels % block:
            raise ValueError(
                f"{type(self).__name__}: the {channels} channels do not divide by the factors' "
                f"product {block} ({f})"
            )
        x = tg.reshape(x, (n, channels // block, *f, *space))
        # (N, C, f1..fk, S1..Sk) -> (N, C, S1, f1, ..., Sk, fk)
        order = [0, 1] + [a for i in range(k) for a in (2 + k + i, 2 + i)]
        x = tg.permute(x, order)
        return tg.reshape(
            x, (n, channels // block, *(s * v for s, v in zip(space, f, strict=True)))
        )

    def _repr_body(self) -> str:
        return str(self._factors if self._dims > 1 else self._factors[0])


class PixelShuffle1D(_PixelShuffle):
    """(N, f * C, W) -> (N, C, W * f)."""

    _dims = 1


class PixelShuffle2D(_PixelShuffle):
    """(N, f1 * f2 * C, H, W) -> (N, C, H * f1, W * f2); `factor` an int or (f1, f2)."""

    _dims = 2


class PixelShuffle3D(_PixelShuffle):
    """(N, f1 * f2 * f3 * C, D, H, W) -> (N, C, D * f1, H * f2, W * f3)."""

    _dims = 3
