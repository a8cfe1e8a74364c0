"""An exported LSTM in onnxruntime: ONNX's own `LSTM` node per layer vs the time loop unrolled.

    PYTHONPATH=src python bench/onnx_recurrent.py [--seq 50] [--batch 8] [--repeats 30]

`nn.LSTM(32, 64, num_layers=2, bidirectional=True)` on a (seq, batch, 32) input, exported
twice by `tg.onnx.export`: as it is (one `LSTM` node per layer) and with the layer traced op
by op (the export before issue 14: every step's GEMM, gates and slices). Prints the node
count, the model's bytes and onnxruntime's CPU time per run (`time.thread_time`, one intra-op
thread, minimum over the repeats, the two sessions alternated run by run), and checks both
against eager to 1e-5. Needs onnx and onnxruntime.
"""

from __future__ import annotations

import argparse
import io
import time

import numpy as np

import tapegrad as tg
from tapegrad.onnx import _recurrent


def _export(layer: tg.nn.LSTM, x: tg.Tensor, unrolled: bool) -> bytes:
    original = _recurrent.is_recurrent
    if unrolled:  # what the export did before: trace the layer's forward op by op
        _recurrent.is_recurrent = lambda module: False
    try:
        f = io.BytesIO()
        tg.onnx.export(layer, x, f)
    finally:
        _recurrent.is_recurrent = original
    return f.getvalue()


def main() -> None:
    import onnxruntime as ort

    import onnx

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq", type=int, default=50)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=30)
    a = ap.parse_args()
    tg.manual_seed(0)
    layer = tg.nn.LSTM(32, 64, num_layers=2, bidirectional=True).eval()
    x = tg.randn(a.seq, a.batch, 32)
    with tg.no_grad():
        want = layer(x)[0].numpy()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sessions = {}
    for name, unrolled in (("LSTM nodes", False), ("unrolled", True)):
        model = _export(layer, x, unrolled)
        nodes = len(onnx.load_from_string(model).graph.node)
        s = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(s.run(None, {"input": x.numpy()})[0], want, atol=1e-5)
        sessions[name] = (s, nodes, len(model))
    best = dict.fromkeys(sessions, float("inf"))
    for _ in range(a.repeats):
        for name, (s, _, _) in sessions.items():
            t = time.thread_time()
            s.run(None, {"input": x.numpy()})
            best[name] = min(best[name], time.thread_time() - t)
    for name, (_, nodes, size) in sessions.items():
        print(f"{name:11s} {nodes:5d} nodes {size / 1024:7.0f} KiB  {best[name] * 1e3:6.2f} ms/run")


if __name__ == "__main__":
    main()
