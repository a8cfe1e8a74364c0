"""einsum (with repeated labels, '...' and implicit output) and tensordot, which is one
einsum. The rule of an einsum is an einsum per operand; a repeated label on an input (a
diagonal) scatters its gradient back with an identity (`eye_like`).
"""

from __future__ import annotations

from .registry import NumpyStyleOp, defop


# ------------------------------------------------------------------ einsum
def _parse_einsum(subscripts, ndims):
    """Per-operand lists of labels ('...' kept as one label) and the output's."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->")
    else:
        lhs, rhs = subscripts, None
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ValueError(
            f"einsum: the subscripts {subscripts!r} name {len(ins)} operands but {len(ndims)} "
            "were given"
        )

    def labels(s):
        out = []
        i = 0
        while i < len(s):
            if s.startswith("...", i):
                out.append("...")
                i += 3
            else:
                out.append(s[i])
                i += 1
        return out

    in_labels = [labels(s) for s in ins]
    if rhs is None:  # implicit mode: labels that appear once, sorted
        counts = {}
        for lab in in_labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        out = (["..."] if "..." in counts else []) + sorted(
            c for c, n in counts.items() if n == 1 and c != "..."
        )
    else:
        out = labels(rhs)
    return in_labels, out


class _EinsumOp(NumpyStyleOp):
    """Variadic, and also callable as NumPy's einsum(subscripts, *operands)."""

    def arguments(self, args, params):
        if args and isinstance(args[0], str):
            params["subscripts"] = args[0]
            args = args[1:]
        elif args and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        return args, params


@defop(saves="*", params=("subscripts",), inputs=None, op_class=_EinsumOp)
def _einsum(xp, *operands, subscripts):
    if "..." in subscripts and "->" in subscripts and "..." not in subscripts.split("->")[1]:
        # PyTorch sums an ellipsis the output leaves out; NumPy refuses: spell it out
        ins, out = _explicit_labels(subscripts, operands, None)
        subscripts = ",".join("".join(lab) for lab in ins) + "->" + "".join(out)
    return xp.einsum(subscripts, *operands, optimize=len(operands) > 2)


@defop(differentiable=False, name="eye_like", array_twin=True)
def _eye_like(xp, g, n):
    return xp.eye(n, dtype=g.dtype)


def _explicit_labels(subscripts, operands, g):
    """Per-operand and output label lists with '...' spelled out as fresh capital letters
    (NumPy can't sum an ellipsis away, and a rule may need to)."""
    ins, out = _parse_einsum(subscripts, [getattr(o, "ndim", 0) for o in operands])
    nds = [o.ndim - (len(lab) - 1) for o, lab in zip(operands, ins, strict=True) if "..." in lab]
    if "..." in out:  # (g is None only when the output has no ellipsis)
        nds.append(g.ndim - (len(out) - 1))
    if not nds:
        return ins, out
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts][: max(nds)]

    def spell(lab, ndim):
        if "..." not in lab:
            return lab
        k = ndim - (len(lab) - 1)
        i = lab.index("...")
        return lab[:i] + fresh[len(fresh) - k :] + lab[i + 1 :]

    return (
        [spell(lab, o.ndim) for o, lab in zip(operands, ins, strict=True)],
        spell(out, g.ndim) if g is not None else out,
    )


def _einsum_rule(xp, g, *operands, subscripts, needs):
    ins, out = _explicit_labels(subscripts, operands, g)
    out_s = "".join(out)
    grads = []
    for i, lab in enumerate(ins):
        if not needs[i]:
            grads.append(None)
            continue
        others = [o for j, o in enumerate(operands) if j != i]
        other_labels = {c for j, lb in enumerate(ins) if j != i for c in lb} | set(out)
        target = []
        for c in lab:
            if c in other_labels and c not in target:
                target.append(c)
        spec = ",".join([out_s] + ["".join(lb) for j, lb in enumerate(ins) if j != i])
        gi = xp.einsum(spec + "->" + "".join(target), g, *others)
        sizes = dict(zip(lab, operands[i].shape, strict=True))
        uniq = list(dict.fromkeys(lab))
        if len(target) != len(uniq):  # labels only this operand has: broadcast back over them
            for c in uniq:
                if c not in target:
                    gi = xp.expand_dims(gi, -1)
                    target.append(c)
            gi = xp.broadcast_to(gi, tuple(sizes[c] for c in target))
        if len(uniq) != len(lab):  # repeated labels (a diagonal): back onto the diagonal
            full = []
            extra = []
            fresh = iter(c for c in "zyxwvutsrqponmlkjihgfedcba" if c not in subscripts)
            for c in lab:
                if c in full:
                    f = next(fresh)
                    extra.append((c, f))
                    full.append(f)
                else:
                    full.append(c)
            spec = "".join(target) + "".join("," + c + f for c, f in extra)
            eyes = [xp.eye_like(gi, sizes[c]) for c, _ in extra]
            gi = xp.einsum(spec + "->" + "".join(full), gi, *eyes)
        elif target != lab:
            gi = xp.einsum("".join(target) + "->" + "".join(lab), gi)
        grads.append(_fit(xp, gi, operands[i].shape))
    return tuple(grads)


def _fit(xp, gi, shape):
    """A label of size 1 here but n in another operand broadcasts (as in PyTorch): its
    gradient is summed back to 1, or spread out to n where this operand has n."""
    if gi.shape == shape:
        return gi
    summed = tuple(
        k for k, (n, m) in enumerate(zip(gi.shape, shape, strict=True)) if m == 1 and n != 1
    )
    if summed:
        gi = xp.sum(gi, axis=summed, keepdims=True)
    return gi if gi.shape == shape else xp.broadcast_to(gi, shape)


_einsum.vjp(_einsum_rule)


@_einsum.sample
def _(rng):
    r = rng.standard_normal
    return [
        ((r((2, 3)), r((3, 4))), {"subscripts": "ij,jk->ik"}),
        ((r((2, 3, 4)), r((2, 4, 5))), {"subscripts": "bij,bjk->bik"}),
        ((r((3, 3)),), {"subscripts": "ii->i"}),
        ((r((3, 4)),), {"subscripts": "ij->"}),
        ((r((3,)), r((4,))), {"subscripts": "i,j->ij"}),
        ((r((2, 3, 4)), r((4,))), {"subscripts": "...j,j->..."}),
        ((r((2, 3, 4)), r((3, 4))), {"subscripts": "...ij,ij->i"}),
        ((r((3, 2, 2)),), {"subscripts": "bii->b"}),
        ((r((3, 4)), r((4, 2)), r((2,))), {"subscripts": "ij,jk,k->i"}),
        ((r((3, 4)),), {"subscripts": "ij"}),  # implicit: the transpose-free identity
        ((r((2, 1)), r((3, 4))), {"subscripts": "ij,jk->ik"}),  # j broadcasts from size 1
        ((r((1, 3)), r((4, 3))), {"subscripts": "ij,ij->"}),
    ]


_einsum.reference(lambda torch, *ops, subscripts: torch.einsum(subscripts, *ops))


# ================================================================== public (PyTorch) API
def einsum(equation, *operands):
    """Einstein summation: `einsum("bij,bjk->bik", a, b)`; operands may also come as a list.
    Repeated labels (diagonals), '...' and implicit output are supported."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    try:
        return _einsum(*operands, subscripts=equation)
    except ValueError as e:
        shapes = ", ".join(str(tuple(o.shape)) for o in operands)
        raise ValueError(f"einsum {equation!r} with operand shapes {shapes}: {e}") from None


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def tensordot(a, b, dims=2):
    """Sum products over the last `dims` axes of a and the first `dims` of b, or over the
    axes listed as `dims=([a axes], [b axes])`."""
    if isinstance(dims, int):
        a_axes = list(range(a.ndim - dims, a.ndim))
        b_axes = list(range(dims))
    else:
        a_axes, b_axes = ([d] if isinstance(d, int) else list(d) for d in dims)
    a_axes = [d % a.ndim for d in a_axes]
    b_axes = [d % b.ndim for d in b_axes]
    if len(a_axes) != len(b_axes):
        raise RuntimeError(
            f"tensordot: both sides must contract the same number of dims, got "
            f"{a_axes} and {b_axes}"
        )
    for i, j in zip(a_axes, b_axes, strict=False):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(
                f"tensordot: contracted dimensions don't match: shapes {tuple(a.shape)} and "
                f"{tuple(b.shape)} (dim {i} has size {a.shape[i]}, dim {j} has {b.shape[j]})"
            )
    la = list(_LETTERS[: a.ndim])
    lb = list(_LETTERS[a.ndim : a.ndim + b.ndim])
    for i, j in zip(a_axes, b_axes, strict=False):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in a_axes] + [
        c for j, c in enumerate(lb) if j not in b_axes
    ]
    return _einsum(a, b, subscripts="".join(la) + "," + "".join(lb) + "->" + "".join(out))


__all__ = ["einsum", "tensordot"]
