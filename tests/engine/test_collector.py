"""engine/collector.py: the recorder freezes a growing graph for CPython's cyclic GC and
gives it back; nothing it does may keep garbage alive for good or touch a process's own
frozen objects. (Its speed is measured in bench/chain_scaling.py, not here.)"""

from __future__ import annotations

import gc
import weakref

import pytest

import tapegrad as tg
from tapegrad.engine import collector, recorder


class _Cycle:
    """A self-referencing object: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def small_freeze(monkeypatch):
    """Freeze every 8 recorded nodes, collect every 64; a clean state."""
    if not gc.isenabled() or gc.get_freeze_count():
        pytest.skip("needs the collector on and nothing frozen by the process")
    monkeypatch.setattr(collector, "FREEZE_EVERY", 8)
    monkeypatch.setattr(collector, "_FIRST_CAP", 64)
    monkeypatch.setattr(collector, "_cap", 64)
    monkeypatch.setattr(collector, "_since_collect", 0)
    monkeypatch.setattr(collector, "_OBJECTS_PER_NODE", 10**9)  # keep the cap at 64
    monkeypatch.setattr(collector, "_ours", False)
    monkeypatch.setattr(collector, "_foreign", False)
    monkeypatch.setattr(recorder, "_countdown", 8)
    yield
    collector.thaw()


def _chain(x, n):
    h = x
    for _ in range(n):
        h = h * 1.5
    return h


def test_a_long_forward_freezes_and_backward_thaws(small_freeze):
    x = tg.ones(2, requires_grad=True)
    h = _chain(x, 20)
    assert gc.get_freeze_count() > 0  # the graph so far is out of the collector's way
    h.sum().backward()
    assert gc.get_freeze_count() == 0
    assert x.grad.tolist() == pytest.approx([1.5**20] * 2)


def test_cyclic_garbage_made_during_a_long_forward_is_collected_after_backward(small_freeze):
    x = tg.ones(2, requires_grad=True)
    h = _chain(x, 5)
    garbage = _Cycle()
    alive = weakref.ref(garbage)
    del garbage
    h = _chain(h, 20)  # freezes, with the cycle among the frozen objects
    h.sum().backward()
    gc.collect()
    assert alive() is None


def test_without_backward_cyclic_garbage_is_collected_every_cap_nodes(small_freeze):
    x = tg.ones(2, requires_grad=True)
    garbage = _Cycle()
    alive = weakref.ref(garbage)
    del garbage
    with tg.enable_grad():
        h = _chain(x, 70)  # past the 64-node cap: thawed and collected, never backpropagated
    assert alive() is None
    del h


def test_a_process_that_froze_objects_itself_is_left_alone(small_freeze):
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        x = tg.ones(2, requires_grad=True)
        h = _chain(x, 40)
        h.sum().backward()
        # neither frozen further nor unfrozen (frozen objects that die leave the count)
        assert 0 < gc.get_freeze_count() <= frozen
        assert collector._foreign
    finally:
        gc.unfreeze()


def test_nothing_is_frozen_while_the_collector_is_off(small_freeze):
    gc.disable()
    try:
        x = tg.ones(2, requires_grad=True)
        _chain(x, 40)
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


_NO_YOUNG_PASSES = """
import gc
import tapegrad as tg
from tapegrad.engine import collector

def chain(h, n):
    for _ in range(n):
        h = h * 1.5
    return h

collections = []

def count(phase, info):
    if phase == "start" and info["generation"] < 2:  # not a capped full collection
        collections.append(info["generation"])

x = tg.ones(2, requires_grad=True)
h = chain(x, 2 * collector.FREEZE_EVERY)  # past the first freeze
gc.callbacks.append(count)
h = chain(h, 3000)
gc.callbacks.remove(count)
h.sum().backward()
print(collections, gc.get_freeze_count())
"""


def test_a_long_recording_runs_no_collection_over_its_graph():
    """Freezing restarts the young generation's count: a chain of small ops records with
    no gen-0 pass at all (each would rescan the young part of the graph). In a fresh
    interpreter: in the test process another thread's allocations (a loader, a pool left
    by an earlier test) can trigger a gen-0 pass of their own."""
    import subprocess
    import sys

    if gc.get_threshold()[0] < 700:
        pytest.skip("needs the default gen-0 threshold")
    run = subprocess.run(
        [sys.executable, "-c", _NO_YOUNG_PASSES], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["[]", "0"]


def test_small_graphs_with_backwards_between_keep_the_usual_spacing(monkeypatch):
    """Only a recording that goes on past a freeze is frozen every _AGAIN nodes; a loop of
    small graphs, each backpropagated, freezes every FREEZE_EVERY nodes (so the young
    generation's passes between freezes still collect its cyclic garbage)."""
    if not gc.isenabled() or gc.get_freeze_count():
        pytest.skip("needs the collector on and nothing frozen by the process")
    freezes = []
    real_freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (freezes.append(1), real_freeze())[1])
    x = tg.ones(2, requires_grad=True)
    steps = 3 * collector.FREEZE_EVERY // 20
    for _ in range(steps):
        _chain(x, 19).sum().backward()  # 20 nodes a step
    assert 1 <= len(freezes) <= 4
    freezes.clear()
    h = _chain(x, 3 * collector.FREEZE_EVERY)  # one long recording
    assert len(freezes) >= 2 * collector.FREEZE_EVERY // collector._AGAIN
    h.sum().backward()
