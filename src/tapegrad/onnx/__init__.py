"""`tg.onnx`: write a module's forward as an ONNX model (the optional extra `onnx`).

    >>> net = tg.nn.Sequential(tg.nn.Linear(4, 3), tg.nn.ReLU()).eval()
    >>> tg.onnx.export(net, tg.ones(2, 4), "net.onnx")  # doctest: +SKIP

See docs/guides/compile.md, "Exporting to ONNX".
"""

from ._export import OPSET, export

__all__ = ["OPSET", "export"]
