"""`torch.utils.benchmark`: `Timer` and the `Measurement` it returns, for Python statements.

`Timer(stmt, setup, globals=...)` compiles `stmt` and `setup` like `timeit.Timer` does, with
`globals` as the namespace; `timeit(number)` runs `setup` once then `stmt` `number` times and
returns a `Measurement` whose `times` holds the seconds per run. `blocked_autorange` and
`adaptive_autorange` repeat blocks of runs until `min_run_time` seconds have passed. What is
measured is tapegrad's time, of course, not PyTorch's. Only Python statements are timed
(`language="python"`); `num_threads` is accepted and ignored (NumPy's thread pool is set
when the process starts).
"""

from __future__ import annotations

import statistics
import timeit as _timeit
from collections.abc import Callable
from typing import Any

__all__ = ["Measurement", "Timer"]


class Measurement:
    """The times of one `Timer` run: `raw_times` (seconds per block of `number_per_run`
    executions), `times` (seconds per execution), `mean`, `median`, `iqr`."""

    def __init__(
        self,
        number_per_run: int,
        raw_times: list[float],
        stmt: str,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
    ) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.stmt = stmt
        self.label = label
        self.sub_label = sub_label
        self.description = description

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        times = self.times
        if len(times) < 2:
            return 0.0
        q = statistics.quantiles(times, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def title(self) -> str:
        return self.label or self.stmt

    def __repr__(self) -> str:
        unit, scale = _unit(self.median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {id(self):#x}>"]
        lines.append(self.title)
        if self.description:
            lines.append(f"  {self.description}")
        lines.append(f"  Median: {self.median * scale:.2f} {unit}")
        if len(self.times) > 1:
            lines.append(f"  IQR:    {self.iqr * scale:.2f} {unit}")
        lines.append(
            f"  {len(self.raw_times)} measurement(s), {self.number_per_run} runs per measurement"
        )
        return "\n".join(lines)


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e3), ("us", 1e6)):
        if seconds >= 1 / scale:
            return unit, scale
    return "ns", 1e9


class Timer:
    """Time a Python statement: `Timer(stmt, setup="pass", globals=None).timeit(number)`."""

    def __init__(
        self,
        stmt: str | Callable[[], Any] = "pass",
        setup: str | Callable[[], Any] = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = _timeit.default_timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: str = "python",
    ) -> None:
        if str(getattr(language, "name", language)).lower() not in ("python", "py"):
            raise ValueError(
                f"Timer: language={language!r} is not supported by the PyTorch facade; only "
                "Python statements can be timed"
            )
        if global_setup:
            setup = f"{global_setup}\n{setup}" if isinstance(setup, str) else setup
        self._stmt = stmt if isinstance(stmt, str) else getattr(stmt, "__name__", repr(stmt))
        self._timer = _timeit.Timer(stmt, setup, timer=timer, globals=dict(globals or {}))
        self._label, self._sub_label, self._description = label, sub_label, description

    def _measurement(self, number: int, raw: list[float]) -> Measurement:
        return Measurement(number, raw, self._stmt, self._label, self._sub_label, self._description)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times (after `setup` once): one measurement."""
        if number < 1:
            raise ValueError(f"Timer.timeit: number must be at least 1, got {number}")
        self._timer.timeit(number=1)  # warm-up, as PyTorch does
        return self._measurement(number, [self._timer.timeit(number=number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError(
            "Timer.repeat is not implemented (nor is it in PyTorch); use timeit or "
            "blocked_autorange"
        )

    def _block_size(self, min_run_time: float) -> int:
        number = 1
        while True:  # grow the block until one takes at least a tenth of min_run_time
            if self._timer.timeit(number=number) >= min_run_time / 10 or number >= 1 << 20:
                return number
            number *= 10

    def blocked_autorange(
        self, callback: Callable[[int, float], None] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of runs until `min_run_time` seconds have been spent timing."""
        number = self._block_size(min_run_time)
        raw: list[float] = []
        while sum(raw) < min_run_time or not raw:
            t = self._timer.timeit(number=number)
            if callback is not None:
                callback(number, t)
            raw.append(t)
        return self._measurement(number, raw)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], None] | None = None,
    ) -> Measurement:
        """Blocks of runs until the IQR/median falls below `threshold` (at least
        `min_run_time`, at most `max_run_time` seconds)."""
        number = self._block_size(min_run_time)
        raw: list[float] = []
        while True:
            t = self._timer.timeit(number=number)
            if callback is not None:
                callback(number, t)
            raw.append(t)
            m = self._measurement(number, raw)
            spent = sum(raw)
            if spent >= max_run_time:
                return m
            if spent >= min_run_time and len(raw) >= 3 and m.iqr / m.median < threshold:
                return m
