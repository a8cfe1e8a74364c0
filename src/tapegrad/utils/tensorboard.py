"""`tg.utils.tensorboard.SummaryWriter`: scalars and histograms for TensorBoard, written with
the `tensorboard` package's own event-file writer (an optional extra: no TensorFlow needed).

    from tapegrad.utils.tensorboard import SummaryWriter
    with SummaryWriter("runs/mlp") as w:
        for step, loss in enumerate(losses):
            w.add_scalar("train/loss", loss, step)
        w.add_histogram("fc1.weight", model[0].weight, step)

Then `tensorboard --logdir runs`. Graphs (`add_graph`) are not written.
"""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

import numpy as np

from .hints import install_hint

try:
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError:
    raise ImportError(f"tg.utils.tensorboard needs the tensorboard package: "
                      f"{install_hint('tensorboard')}") from None

__all__ = ["SummaryWriter"]


def _array(values) -> np.ndarray:
    data = getattr(values, "_data", values)  # a tg.Tensor
    if hasattr(data, "get"):  # a CuPy array
        data = data.get()
    return np.asarray(data, dtype=np.float64)


def _scalar(value, tag: str) -> float:
    arr = _array(value)
    if arr.size != 1:
        raise ValueError(f"SummaryWriter.add_scalar({tag!r}): expected one number, got shape "
                         f"{arr.shape}; log a reduction (.mean()) or use add_histogram")
    return float(arr.reshape(()))


class SummaryWriter:
    """Write TensorBoard event files into `log_dir` (default `runs/<date>_<host><comment>`,
    as PyTorch's SummaryWriter).

    Args:
        log_dir: the run's folder (created).
        comment: appended to the default folder name.
        max_queue: events buffered before a write; flush_secs: seconds between flushes.
        filename_suffix: appended to the event file's name.
    """

    def __init__(self, log_dir: str | None = None, comment: str = "", max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = ""):
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, value, global_step, walltime) -> None:
        event = Event(wall_time=time.time() if walltime is None else walltime,
                      summary=Summary(value=[value]))
        if global_step is not None:
            event.step = int(global_step)
        self._writer.add_event(event)

    def add_scalar(self, tag: str, scalar_value, global_step: int | None = None,
                   walltime: float | None = None) -> None:
        """One number (a float, a 1-element array or tensor) under `tag` at `global_step`."""
        self._add(Summary.Value(tag=tag, simple_value=_scalar(scalar_value, tag)),
                  global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Several numbers at once, as `main_tag/key` (one chart section in TensorBoard)."""
        for key, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{key}", value, global_step, walltime)

    def add_histogram(self, tag: str, values, global_step: int | None = None,
                      bins="tensorflow", walltime: float | None = None) -> None:
        """The distribution of `values` (a tensor or array): `bins` is anything
        `numpy.histogram` takes ("tensorflow", PyTorch's default name, means "auto")."""
        arr = _array(values).ravel()
        if arr.size == 0:
            raise ValueError(f"SummaryWriter.add_histogram({tag!r}): values is empty")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"SummaryWriter.add_histogram({tag!r}): values hold NaN or inf "
                             "(did training diverge?)")
        counts, edges = np.histogram(arr, bins="auto" if bins == "tensorflow" else bins)
        hist = HistogramProto(min=float(arr.min()), max=float(arr.max()), num=int(arr.size),
                              sum=float(arr.sum()), sum_squares=float(np.dot(arr, arr)),
                              bucket_limit=edges[1:].tolist(), bucket=counts.tolist())
        self._add(Summary.Value(tag=tag, histo=hist), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """A note (markdown) under `tag`, shown in TensorBoard's text tab."""
        from tensorboard.plugins.text.summary_v2 import text_pb

        summary = text_pb(tag, text_string)
        self._add(summary.value[0], global_step, walltime)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
