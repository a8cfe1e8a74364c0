"""The multi-tensor (foreach) update: many small parameters in a handful of NumPy calls.

A per-parameter update costs about ten NumPy calls per parameter, and on small parameters
(biases, norms, small layers) those calls are the whole cost. Here the parameters of one
group that share a dtype (and what the optimizer's `_bucket_key` says must match, e.g.
Adam's step count) are updated together, in chunks:

- each chunk keeps its parameters' state (`exp_avg`, `momentum_buffer`, ...) in one flat
  buffer per state name; `optimizer.state[p][name]` is the parameter-shaped view of its
  slice, so `state_dict`, checkpoints and user code still see one array per parameter;
- a step gathers the gradients into the chunk's flat work buffer (one `np.concatenate`),
  computes the update there with the same NumPy calls, in the same order, as the
  per-parameter update (so the two agree bitwise), and writes each parameter through a
  view of the work buffer: one call per parameter instead of ten.

The parameters keep their own storage (views, `from_numpy` buffers and `.data` stay what
they were). Large parameters are not gathered: one call's overhead is nothing against
their size, and copying them would cost time and memory. A chunk is rebuilt (its state
copied into new flat buffers) when its members change, e.g. a parameter got no gradient
this step, or when something replaced a state array (`load_state_dict`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .optimizer import Array, Group, Optimizer, ParamState

# a chunk's cache key: (the state names it keeps flat, the ids of its parameters)
ChunkKey = tuple[tuple[str, ...], tuple[int, ...]]

__all__ = ["FLAT_MAX_NUMEL", "CHUNK_NUMEL", "FlatChunk", "foreach_step"]

# Parameters up to this many elements are gathered; a larger one is updated on its own.
# About where a gather copy costs as much as the ~10 NumPy calls it saves.
FLAT_MAX_NUMEL = 1 << 15
# A chunk's flat buffers hold at most about this many elements (bounds the transient
# scratch arrays an update allocates to this size, not the whole model's).
CHUNK_NUMEL = 1 << 20


class FlatChunk:
    """Flat state buffers and a flat work buffer for a fixed list of parameters."""

    __slots__ = ("shapes", "work", "work_views", "buffers", "state_views", "_scratch")

    def __init__(
        self,
        arrays: list[Array],
        states: list[ParamState],
        names: tuple[str, ...],
        dtype: np.dtype[Any],
        scratch: dict[np.dtype[Any], Array],
    ) -> None:
        self.shapes = tuple(a.shape for a in arrays)
        numel = sum(a.size for a in arrays)
        self.work = np.empty(numel, dtype)
        self._scratch = scratch  # dtype -> the optimizer's scratch array, shared by its chunks
        held = scratch.get(dtype)
        if held is None or held.size < numel:
            scratch[dtype] = np.empty(numel, dtype)
        self.work_views = _views(self.work, self.shapes)
        self.buffers: dict[str, Array] = {}
        self.state_views: dict[str, list[Array]] = {}
        for name in names:
            olds = [st.get(name) for st in states]
            if all(o is None for o in olds):
                flat = np.zeros(numel, dtype)
            else:  # state made before (per-parameter, loaded, or another chunk's): copy it in
                parts = [np.zeros(s, dtype) if o is None else o for o, s in zip(olds, self.shapes)]
                flat = np.concatenate(parts, axis=None).astype(dtype, copy=False)
            views = _views(flat, self.shapes)
            for st, v in zip(states, views):
                st[name] = v
            self.buffers[name] = flat
            self.state_views[name] = views

    def is_current(self, arrays: list[Array], states: list[ParamState]) -> bool:
        """Whether the parameters still have these shapes and their state is still ours."""
        if tuple(a.shape for a in arrays) != self.shapes:
            return False
        for name, views in self.state_views.items():
            for st, v in zip(states, views):
                if st.get(name) is not v:
                    return False
        return True

    def scratch(self) -> Array:
        """A flat array of this chunk's size to compute in (its values are garbage): shared
        by the optimizer's chunks, as a transient array of up to a chunk's size would be
        allocated (and page-faulted) anew at every step."""
        return self._scratch[self.work.dtype][: self.work.size]

    def gather_grads(self, grads: list[Array]) -> Array:
        """The gradients, flat, in the work buffer."""
        return np.concatenate(grads, axis=None, out=self.work)

    def subtract_work(self, params: list[Array]) -> None:
        """p -= its slice of the work buffer, for every parameter."""
        for p, d in zip(params, self.work_views):
            p -= d

    def copy_work(self, params: list[Array]) -> None:
        """p[...] = its slice of the work buffer, for every parameter."""
        for p, d in zip(params, self.work_views):
            np.copyto(p, d)


def _views(flat: Array, shapes: tuple[tuple[int, ...], ...]) -> list[Array]:
    out: list[Array] = []
    start = 0
    for shape in shapes:
        n = 1
        for d in shape:
            n *= d
        out.append(flat[start : start + n].reshape(shape))
        start += n
    return out


def foreach_step(
    opt: Optimizer,
    group: Group,
    params: list[Any],
    arrays: list[Array],
    grads: list[Array],
    states: list[ParamState],
) -> list[int]:
    """Update, chunk by chunk, the parameters that can be gathered; return the indexes of
    the others (for the per-parameter update).

    `opt` provides `_bucket_key(group, state)` (what members of a chunk must share),
    `_flat_names(group)` (the state arrays a chunk keeps flat),
    `_update_flat(group, chunk, params, grads, states, key)`, and holds `_flat_cache` and
    `_flat_scratch` (dicts).
    """
    buckets: dict[tuple[np.dtype[Any], Any], list[int]] = {}
    rest: list[int] = []
    key_of = opt._bucket_key
    for i, a in enumerate(arrays):
        g = grads[i]
        if (
            type(a) is np.ndarray
            and type(g) is np.ndarray
            and a.size <= FLAT_MAX_NUMEL
            and g.dtype == a.dtype
        ):
            buckets.setdefault((a.dtype, key_of(group, states[i])), []).append(i)
        else:
            rest.append(i)
    names = opt._flat_names(group)
    cache = opt._flat_cache
    update_flat = opt._update_flat
    assert update_flat is not None  # Optimizer.step takes this path only when there is one
    for (dtype, key), members in buckets.items():
        if len(members) < 2:
            rest.extend(members)
            continue
        for idx in _chunks(members, arrays):
            c_params = [arrays[i] for i in idx]
            c_states = [states[i] for i in idx]
            cache_key: ChunkKey = (names, tuple(id(params[i]) for i in idx))
            chunk = cache.get(cache_key)
            if chunk is None or not chunk.is_current(c_params, c_states):
                _evict(cache, set(cache_key[1]))
                chunk = FlatChunk(c_params, c_states, names, dtype, opt._flat_scratch)
                cache[cache_key] = chunk
            update_flat(group, chunk, c_params, [grads[i] for i in idx], c_states, key)
    rest.sort()
    return rest


def _chunks(members: list[int], arrays: list[Array]) -> Iterator[list[int]]:
    chunk: list[int] = []
    numel = 0
    for i in members:
        n = arrays[i].size
        if chunk and numel + n > CHUNK_NUMEL:
            yield chunk
            chunk, numel = [], 0
        chunk.append(i)
        numel += n
    if chunk:
        yield chunk


def _evict(cache: dict[ChunkKey, FlatChunk], ids: set[int]) -> None:
    """Drop the chunks that hold any of these parameters (their state moves to a new one)."""
    for k in [k for k in cache if not ids.isdisjoint(k[1])]:
        del cache[k]
