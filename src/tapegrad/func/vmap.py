"""`vmap`: map a function over a batch dimension (torch.func's signature and results).

Two ways to run, the same results:

- **Batched** (the fast path): `func` runs once on the first sample under `tg.compile`'s
  tracer (every op it dispatches is written down, its backward too when it takes a `grad`),
  then the trace is replayed once on the whole batch, each op by its batching rule
  (`func/batching.py`). Taken when every traced op has a rule, nothing read a tensor's
  value (Python control flow could then differ per sample), no random numbers were drawn
  (unless `randomness="same"`) and no input or captured tensor is tracked by a tape
  outside that may want its graph (the replay records none; a graph to the fresh inputs
  of returned transform calls, as a `vjp_fn` holds, is nobody's).
- **Per sample** (the fallback, always correct): `func` runs once per sample and the
  results are stacked.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from .. import random as _random
from ..tensor import Tensor
from ._tree import Spec, flatten, unflatten
from .batched_replay import Fallback, nested_transforms, run_traced_batched

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


# an input's or output's batch dimension per leaf (None: not mapped); nested like the tree
Dims = int | tuple[Any, ...] | None


def _name(func: object) -> str:
    return getattr(func, "__name__", type(func).__name__)


def vmap(
    func: Callable[..., Any],
    in_dims: Dims = 0,
    out_dims: Dims = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`func` mapped over dimension `in_dims` of its inputs, results stacked at `out_dims`.

    Args:
        func: a function of tensors returning a tensor or a tuple/list/dict of tensors.
        in_dims: per input, the dimension to map over (None: the same value for every
            sample); an int applies to every input, a tuple gives one entry per argument
            (nested like the argument).
        out_dims: where the batch dimension goes in each output (an int or one per output).
        randomness: "error" (random ops inside raise), "different" (each sample draws its
            own numbers) or "same" (every sample draws the same numbers).

    >>> tg.func.vmap(lambda x: x.sum())(tg.ones(3, 2))
    tensor([2., 2., 2.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and (
        not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1
    ):
        raise ValueError(
            f"vmap({_name(func)}, ..., chunk_size={chunk_size!r}): chunk_size should be None or "
            "an int greater than 0"
        )
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
        leaves, spec = flatten(list(args))
        dims = _leaf_dims(in_dims, args, where)
        size = None
        for leaf, d in zip(leaves, dims, strict=True):
            if d is None:
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(
                    f"{where}: Got in_dim={d} for an input but the input is of type "
                    f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please use None "
                    "as the respective in_dim"
                )
            if not -leaf.ndim <= d < max(leaf.ndim, 0) or leaf.ndim == 0:
                raise ValueError(
                    f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                    f"dimensionality {leaf.ndim} so expected in_dim to satisfy "
                    f"-{leaf.ndim} <= in_dim < {leaf.ndim}."
                )
        sizes = [leaf.shape[d] for leaf, d in zip(leaves, dims, strict=True) if d is not None]
        if not sizes:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input "
                "must be a Tensor with a mapped dimension (in_dims must not be all None)"
            )
        if len(set(sizes)) > 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sizes} for the mapped dimension"
            )
        size = sizes[0]
        batched = run_traced_batched(func, leaves, dims, spec, size, out_dims, randomness, kwargs)
        if not isinstance(batched, Fallback):
            return batched
        with nested_transforms() if batched.nested else contextlib.nullcontext():
            return _run(
                func,
                leaves,
                dims,
                spec,
                size,
                out_dims,
                randomness,
                kwargs,
                batched.first,
                batched.rng_start,
            )

    return mapped


def _leaf_dims(in_dims: Dims, args: Sequence[Any], where: str) -> list[int | None]:
    """One in_dim per leaf of the arguments."""
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(flatten(list(args))[0])
    if len(in_dims) != len(args):
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`: in_dims has "
            f"{len(in_dims)} entries but the function got {len(args)} positional arguments."
        )
    dims: list[int | None] = []
    for d, a in zip(in_dims, args, strict=True):
        n = len(flatten(a)[0])
        if isinstance(d, int) or d is None:
            dims.extend([d] * n)
        else:
            sub, _ = flatten(d)
            if len(sub) != n:
                raise ValueError(
                    f"{where}: in_dims is not compatible with the structure of `inputs`."
                )
            dims.extend(sub)
    for d in dims:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(
                f"{where}: Got in_dim={d!r} for an input but in_dim must be either an integer "
                "dimension or None."
            )
    return dims


def _select(leaf: Tensor, d: int, i: int) -> Tensor:
    return leaf[(slice(None),) * (d % leaf.ndim) + (i,)]


def _run(
    func: Callable[..., Any],
    leaves: list[Any],
    dims: list[int | None],
    spec: Spec,
    size: int,
    out_dims: Dims,
    randomness: str,
    kwargs: dict[str, Any],
    first: Any = None,
    rng_start: Any = None,
) -> Any:
    """func once per sample, stacked; `first` is sample 0's result when the batched
    attempt already ran it (from generator state `rng_start`)."""
    rng = _random.generator().bit_generator
    start = rng.state if rng_start is None else rng_start
    results: list[Any] = []
    if first is not None:
        if randomness == "error" and rng.state != start:
            _random_error()
        results.append(first)
    for i in range(len(results), size):
        if randomness == "same":
            rng.state = start
        sample = [
            leaf if d is None else _select(leaf, d, i) for leaf, d in zip(leaves, dims, strict=True)
        ]
        out = func(*unflatten(sample, spec), **kwargs)
        if randomness == "error" and rng.state != start:
            _random_error()
        results.append(out)
    return _stack_outputs(func, results, out_dims)


def _random_error() -> NoReturn:
    raise RuntimeError(
        "vmap: called random operation while in randomness error mode. Please either "
        "use the 'same' or 'different' randomness flags on vmap or perform the "
        "randomness operation out of vmap"
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a.shape == b.shape and bool(np.array_equal(a._data, b._data, equal_nan=True))
    return a is b or bool(a == b)


def _batched_out_dim_none(func: Callable[..., Any], k: int) -> NoReturn:
    raise ValueError(
        f"vmap({_name(func)}, ..., out_dims=...): output {k} depends on the mapped inputs "
        "(it differs per sample) but its out_dim is None; give it an out_dim (e.g. 0), or "
        "return a value that is the same for every sample"
    )


def _stack_outputs(func: Callable[..., Any], results: list[Any], out_dims: Dims) -> Any:
    from ..ops.joins import stack

    flat = [flatten(r) for r in results]
    spec = flat[0][1]
    n = len(flat[0][0])
    odims: list[Any] | None
    if isinstance(out_dims, int) or out_dims is None:
        odims = [out_dims] * n
    else:
        odims = flatten(out_dims)[0] if len(flatten(out_dims)[0]) == n else None
        if odims is None:
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): out_dims is not compatible "
                f"with the structure of `outputs` ({n} outputs)"
            )
    stacked: list[Any] = []
    for k in range(n):
        items = [f[0][k] for f in flat]
        d = odims[k]
        if d is None:
            # out_dims=None promises one value for all samples: refuse one that differs
            # (torch.func refuses any output that depends on a mapped input)
            if any(not _same(items[0], item) for item in items[1:]):
                _batched_out_dim_none(func, k)
            stacked.append(items[0])
            continue
        for item in items:
            if not isinstance(item, Tensor):
                raise ValueError(
                    f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got "
                    f"type {type(item)}. Did you mean to set out_dims= to None for output?"
                )
        ndim = items[0].ndim + 1
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): an out_dim must be an int or "
                f"None, got {d!r}"
            )
        if not -ndim <= d < ndim:
            raise IndexError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): Dimension out of range "
                f"(expected to be in range of [{-ndim}, {ndim - 1}], but got {d}) for output "
                f"{k}, which has {ndim - 1} dimensions per sample"
            )
        stacked.append(stack(items, dim=d))
    return unflatten(stacked, spec)
