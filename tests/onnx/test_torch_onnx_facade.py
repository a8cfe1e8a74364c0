"""The torch facade's torch.onnx.export writes the model through tg.onnx.export."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.compat.torch as torch
from tapegrad.compat.torch import nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def test_export_in_eval_mode_restores_training_and_matches_eager(tmp_path, rng):
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 3, 3),
        nn.BatchNorm2d(3),
        nn.ReLU(),
        nn.Dropout(0.3),
        nn.Flatten(),
        nn.Linear(3 * 4 * 4, 2),
    )
    net(torch.randn(4, 1, 6, 6))  # moves the running statistics off their start
    assert net.training
    path = tmp_path / "m.onnx"
    torch.onnx.export(
        net,
        (torch.randn(2, 1, 6, 6),),
        str(path),
        input_names=["x"],
        output_names=["logits"],
        dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}},
        opset_version=17,
        do_constant_folding=True,
    )
    assert net.training and not torch.onnx.is_in_onnx_export()
    graph = onnx.load(str(path)).graph
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "n"
    x = torch.tensor(rng.standard_normal((5, 1, 6, 6)), dtype=torch.float32)
    net.eval()
    with torch.no_grad():
        want = net(x).numpy()
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x.numpy()}
    )[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_unsupported_options_are_named(tmp_path):
    net = nn.Linear(2, 2)
    x = torch.randn(1, 2)
    with pytest.raises(TypeError, match="unexpected arguments"):
        torch.onnx.export(net, x, str(tmp_path / "a.onnx"), bogus=1)
    with pytest.raises(ValueError, match="export_params=False"):
        torch.onnx.export(net, x, str(tmp_path / "a.onnx"), export_params=False)
    with pytest.raises(ValueError, match="TRAINING"):
        torch.onnx.export(
            net, x, str(tmp_path / "a.onnx"), training=torch.onnx.TrainingMode.TRAINING
        )
