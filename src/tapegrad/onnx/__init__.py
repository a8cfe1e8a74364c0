"""`tg.onnx`: write a module's forward as an ONNX model (the optional extra `onnx`).

    >>> net = tg.nn.Sequential(tg.nn.Linear(4, 3), tg.nn.ReLU()).eval()
    >>> tg.onnx.export(net, tg.ones(2, 4), "net.onnx")  # doctest: +SKIP

RNN, LSTM and GRU layers are written as ONNX's `RNN`, `LSTM` and `GRU` operators; a custom
`tg.autograd.Function` with a static `symbolic(g, *args)` method writes its own nodes
through `g` (a `SymbolicContext`), whose inputs and outputs are `Value`s.

See docs/guides/compile.md, "Exporting to ONNX".
"""

from ._export import OPSET, export
from ._symbolic import SymbolicContext, Value

__all__ = ["OPSET", "SymbolicContext", "Value", "export"]
