"""tg.utils.tensorboard.SummaryWriter: the event files TensorBoard reads back."""

import glob
import sys

import numpy as np
import pytest

import tapegrad as tg


def _events(log_dir):
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event

    (path,) = glob.glob(f"{log_dir}/events.out.tfevents.*")
    events = [Event.FromString(raw) for raw in RawEventFileLoader(path).Load()]
    return [e for e in events if e.HasField("summary")]


def test_scalars_and_histograms_read_back(tmp_path):
    pytest.importorskip("tensorboard")
    from tapegrad.utils.tensorboard import SummaryWriter

    values = np.random.default_rng(0).standard_normal(1000)
    with SummaryWriter(str(tmp_path)) as w:
        for step, loss in enumerate([2.5, 1.25, 0.5]):
            w.add_scalar("train/loss", tg.tensor(loss), step)
        w.add_scalars("acc", {"train": 0.75, "test": np.float32(0.5)}, 3)
        w.add_histogram("weights", tg.tensor(values), 3, bins=10)
        w.add_text("note", "hello", 0)
        with pytest.raises(ValueError, match="expected one number, got shape"):
            w.add_scalar("bad", tg.ones(3), 0)
    events = _events(tmp_path)
    by_tag = {}
    for e in events:
        for v in e.summary.value:
            by_tag.setdefault(v.tag, []).append((e.step, v))
    assert [(s, v.simple_value) for s, v in by_tag["train/loss"]] == [(0, 2.5), (1, 1.25), (2, 0.5)]
    assert by_tag["acc/train"][0][1].simple_value == 0.75
    assert by_tag["acc/test"][0][1].simple_value == 0.5
    ((step, h),) = by_tag["weights"]
    counts, edges = np.histogram(values, bins=10)
    assert step == 3 and h.histo.num == 1000 and list(h.histo.bucket) == counts.tolist()
    np.testing.assert_allclose(h.histo.bucket_limit, edges[1:])
    assert h.histo.min == values.min() and h.histo.max == values.max()
    np.testing.assert_allclose(h.histo.sum_squares, (values**2).sum())
    assert "note" in by_tag


def test_missing_tensorboard_gives_both_install_commands(monkeypatch):
    for name in list(sys.modules):
        if name == "tapegrad.utils.tensorboard":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto.event_pb2", None)
    with pytest.raises(
        ImportError,
        match=r"needs the tensorboard package: pip install -e "
        r'"\.\[tensorboard\]" \(from a checkout\) or pip '
        r'install "tapegrad\[tensorboard\]"',
    ):
        import tapegrad.utils.tensorboard  # noqa: F401
