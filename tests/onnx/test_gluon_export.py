"""The MXNet facade's HybridBlock.export also writes ONNX when onnx is installed (the
graph file and SymbolBlock.imports are tests/compat/test_mxnet_hybrid_export.py's)."""

from __future__ import annotations

import numpy as np
import pytest

from tapegrad.compat.mxnet import gluon, nd

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _net():
    net = gluon.nn.HybridSequential()
    net.add(
        gluon.nn.Conv2D(4, 3, padding=1, activation="relu"),
        gluon.nn.BatchNorm(),
        gluon.nn.MaxPool2D(2),
        gluon.nn.Flatten(),
        gluon.nn.Dropout(0.5),
        gluon.nn.Dense(3),
    )
    net.initialize()
    return net


def test_export_after_hybridize_runs_in_onnxruntime_and_reloads(tmp_path):
    net = _net()
    net.hybridize()
    x = nd.random.normal(shape=(2, 1, 6, 6))
    net(x)
    symbol_file, params_file = net.export(str(tmp_path / "net"), epoch=3)
    assert symbol_file.endswith("net-symbol.json") and params_file.endswith("net-0003.params")
    model_file = str(tmp_path / "net.onnx")
    session = ort.InferenceSession(model_file, providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["data"]
    np.testing.assert_allclose(
        session.run(None, {"data": x.asnumpy()})[0], net(x).asnumpy(), rtol=1e-5, atol=1e-5
    )
    names = {i.name for i in onnx.load(model_file).graph.initializer}
    # parameters keep their Gluon names (collect_params keys), as MXNet's export does
    assert set(net.collect_params().keys()) <= names
    again = _net()
    again.load_parameters(params_file)
    np.testing.assert_array_equal(again(x).asnumpy(), net(x).asnumpy())


def test_export_needs_a_hybridized_forward_first(tmp_path):
    net = _net()
    net(nd.ones((1, 1, 4, 4)))
    with pytest.raises(RuntimeError, match=r"hybridize\(\) and run a forward"):
        net.export(str(tmp_path / "n"))
