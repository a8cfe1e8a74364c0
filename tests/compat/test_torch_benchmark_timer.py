"""`torch.utils.benchmark.Timer` under the facade: what runs and how often, and the shape of
the Measurement (no assertion on how long anything takes)."""

import pytest

from tapegrad.compat.torch.utils.benchmark import Measurement, Timer


def test_timeit_runs_setup_once_and_stmt_number_times_after_a_warm_up():
    calls = {"setup": 0, "stmt": 0}

    def setup():
        calls["setup"] += 1

    def stmt():
        calls["stmt"] += 1

    m = Timer(stmt="stmt()", setup="setup()", globals={"stmt": stmt, "setup": setup}).timeit(7)
    assert calls["stmt"] == 7 + 1  # one warm-up run, as PyTorch does
    assert isinstance(m, Measurement) and m.number_per_run == 7
    assert len(m.raw_times) == 1 and len(m.times) == 1
    assert m.times[0] == pytest.approx(m.raw_times[0] / 7)
    assert m.mean == m.median == m.times[0] and m.iqr == 0.0
    assert "stmt()" in repr(m) and "Median" in repr(m)


def test_globals_are_the_namespace_and_a_label_titles_the_measurement():
    seen = []
    m = Timer("seen.append(x)", globals={"seen": seen, "x": 3}, label="append").timeit(2)
    assert seen == [3, 3, 3] and m.title == "append"


def test_blocked_autorange_reports_every_block():
    blocks = []
    m = Timer("pass").blocked_autorange(callback=lambda n, t: blocks.append(n), min_run_time=0.01)
    assert len(m.raw_times) == len(blocks) >= 1
    assert all(n == m.number_per_run for n in blocks)


def test_measurement_statistics():
    m = Measurement(2, [2.0, 4.0, 6.0, 8.0, 10.0], "f()")
    assert m.times == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert m.mean == 3.0 and m.median == 3.0 and m.iqr == pytest.approx(2.0)


def test_misuse():
    with pytest.raises(ValueError, match="Timer.timeit: number must be at least 1"):
        Timer("pass").timeit(0)
    with pytest.raises(ValueError, match="only Python statements"):
        Timer("x = 1;", language="cpp")


def test_reachable_as_torch_utils_benchmark():
    import tapegrad.compat.torch as torch

    assert torch.utils.benchmark.Timer is Timer
