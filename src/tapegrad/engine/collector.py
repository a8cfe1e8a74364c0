"""Keeping CPython's cyclic garbage collector off a graph under construction.

Every recorded op adds a few GC-tracked objects (its Node, its edge tuples, its saved-values
tuple, and the tensors it saves) to a graph that stays alive until backward. CPython's full
collections rescan everything alive, so without this a 10^5-op forward spent most of its
time in the collector (W4: 36 us/op at 10^5 against 7.5 with no full collections).

The graph needs no collector: it is acyclic by design (a Node never holds its output, see
node.py), so reference counting frees it. So every `FREEZE_EVERY` recorded nodes the
recorder calls `gc.freeze()` (O(1): it moves the tracked objects to the permanent
generation, which collections skip), and `thaw()` undoes it with `gc.unfreeze()`:

- at the end of every backward (run_backward), so cyclic garbage the user made meanwhile is
  collectable again;
- and, since the next forward may freeze such garbage again before a full collection ran,
  every `_cap` recorded nodes the recorder thaws and runs one full collection itself. The
  cap is twice the live objects found by the last one (at least `_FIRST_CAP` nodes' worth),
  so those collections cost a constant per recorded op and cyclic garbage stays bounded
  by a constant factor of what is alive, backward or not.

`gc.freeze()` also restarts the young generation's allocation count, so freezing more often
than every ~700 tracked allocations (CPython's default gen-0 threshold; W4's chain makes
about 4.5 per node) means no gen-0 or gen-1 pass scans the graph being recorded: those
passes were ~10 % of W4's forward with a freeze every 4096 nodes (bench/NOTES.md, stop 21).
So a recording that goes on past a freeze with no backward in between (a long graph) is
frozen again every `_AGAIN` nodes. Where backwards come often (a training loop of small
graphs) the freezes stay `FREEZE_EVERY` nodes apart, and the young-generation passes in
between collect the loop's young cyclic garbage as usual: freezing that often there would
leave it to the capped full collections.

It stands aside entirely when the process froze objects itself (`gc.freeze()` before a
fork): `unfreeze` would release those too. Nothing here changes what is freed, only when
the collector may look at it.
"""

from __future__ import annotations

import gc

FREEZE_EVERY = 1024  # recorded nodes between two freezes
_AGAIN = 64  # ... while no backward thawed since the last one (well under 700 / 4.5)
_FIRST_CAP = 1 << 17  # recorded nodes between two full collections, at least
# GC-tracked objects a recorded op adds: 2.5 on W4's chain (stop 19; 3.5 with an edge tuple
# per input, 10 before nodes stopped keeping intermediate tensors alive), more where ops save
# tensors
_OBJECTS_PER_NODE = 3

_since_collect = 0  # nodes recorded since the last full collection we ran
_cap = _FIRST_CAP
_ours = False  # the permanent generation holds only what we froze
_foreign = False  # someone else froze objects: leave the collector alone
_since_freeze = 0  # nodes recorded since our last freeze
_asked = FREEZE_EVERY  # the count the recorder was given last


def recorded_many() -> int:
    """Called by the recorder when the count it was given runs out; returns the next count
    (nodes to record before the next call)."""
    global _since_collect, _cap, _ours, _foreign, _since_freeze, _asked
    # the nodes since the last call (min: a test may set FREEZE_EVERY and the count lower)
    elapsed = min(_asked, FREEZE_EVERY)
    _asked = FREEZE_EVERY
    if _foreign or not gc.isenabled():
        return _asked
    _since_freeze += elapsed
    _since_collect += elapsed
    if not _ours:  # a backward thawed since our last freeze (or none yet)
        if gc.get_freeze_count():  # O(frozen): 0 here unless the process froze objects
            _foreign = True
            return _asked
        if _since_freeze < FREEZE_EVERY:  # keep the usual spacing
            _asked = FREEZE_EVERY - _since_freeze
            return _asked
        _ours = True
    if _since_collect >= _cap:
        thaw()
        gc.collect()
        _since_collect = 0
        _cap = max(_FIRST_CAP, 2 * len(gc.get_objects()) // _OBJECTS_PER_NODE)
        return _asked
    gc.freeze()
    _since_freeze = 0
    # if no backward comes within _AGAIN nodes, the recording is long: freeze it again then
    _asked = min(_AGAIN, FREEZE_EVERY)
    return _asked


def thaw() -> None:
    """Give everything we froze back to the collector (after a backward)."""
    global _ours
    if _ours:
        _ours = False
        gc.unfreeze()
