"""MXNet's reshape codes (`x.reshape((0, -1))`, `mx.nd.reshape(x, (-3, -2))`).

0 copies the input dimension at this position, -1 is inferred from the rest, -2 copies
all remaining input dimensions, -3 merges the next two input dimensions, -4 splits the
next input dimension into the two values that follow it (one of them may be -1);
`reverse=True` matches the codes against the input dimensions right to left.

    >>> infer((2, 3, 4), (0, -1))
    (2, 12)
    >>> infer((2, 3, 4), (-4, 1, 2, -2))
    (1, 2, 3, 4)
"""

from __future__ import annotations

import math


def infer(src: tuple, codes: tuple, reverse: bool = False) -> tuple:
    """The output shape of reshaping an array of shape `src` with MXNet's `codes`."""
    if reverse:
        if -4 in codes:
            raise ValueError(
                "reshape: code -4 with reverse=True is not supported by the MXNet "
                "facade; give the split dimensions explicitly"
            )
        return tuple(reversed(infer(tuple(reversed(src)), tuple(reversed(codes)))))
    out: list[int] = []
    infer_at = None
    i = j = 0

    def need(k: int, code: int) -> None:
        if i + k > len(src):
            raise ValueError(
                f"reshape: code {code} at position {j} of {codes} has no input "
                f"dimension left to use (input shape {src})"
            )

    while j < len(codes):
        c = int(codes[j])
        if c > 0:
            out.append(c)
            i += 1
        elif c == 0:
            need(1, c)
            out.append(src[i])
            i += 1
        elif c == -1:
            if infer_at is not None:
                raise ValueError(f"reshape: more than one -1 in {codes}")
            infer_at = len(out)
            out.append(-1)
            i += 1
        elif c == -2:
            out.extend(src[i:])
            i = len(src)
        elif c == -3:
            need(2, c)
            out.append(src[i] * src[i + 1])
            i += 2
        elif c == -4:
            need(1, c)
            if j + 2 >= len(codes):
                raise ValueError(f"reshape: -4 in {codes} must be followed by two values")
            d1, d2, d = int(codes[j + 1]), int(codes[j + 2]), src[i]
            if d1 == -1:
                d1 = d // d2 if d2 else 0
            if d2 == -1:
                d2 = d // d1 if d1 else 0
            if d1 * d2 != d:
                raise ValueError(
                    f"reshape: -4 splits dimension {d} of {src} into {d1} x {d2}, "
                    "which does not multiply back"
                )
            out += [d1, d2]
            i += 1
            j += 2
        else:
            raise ValueError(
                f"reshape: invalid code {c} in {codes}; codes are > 0, 0, -1, -2, -3, -4"
            )
        j += 1
    total = math.prod(src)
    if infer_at is not None:
        known = math.prod(d for k, d in enumerate(out) if k != infer_at)
        if known == 0 or total % known:
            raise ValueError(f"reshape: can't infer the -1 of {codes} for input shape {src}")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise ValueError(
            f"reshape: codes {codes} give shape {tuple(out)} ({math.prod(out)} "
            f"elements) for an input of shape {src} ({total} elements)"
        )
    return tuple(out)
