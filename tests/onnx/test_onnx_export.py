"""tg.onnx.export: onnxruntime reproduces every exported layer's outputs to 1e-5, with a
dynamic batch where dynamic_axes asks for one; unmapped ops name the op and the layer."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compile.replay import split

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
nn = tg.nn


def _session(model_bytes):
    return ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])


def _eager(module, args):
    with tg.no_grad():
        out = module(*args)
    flat: list = []
    split(out, flat)
    return [t.numpy() for t in flat]


def _export(module, args, **kw):
    f = io.BytesIO()
    names = [f"in{i}" for i in range(len(args))]
    tg.onnx.export(module, tuple(args), f, input_names=names, **kw)
    return _session(f.getvalue()), names


def _assert_runs_like_eager(module, args, batch_axis=None, other_batch=None):
    """Export on `args`; onnxruntime matches eager on them and, with a batch axis, on a
    batch of another size (`other_batch`: the same inputs at that size)."""
    module.eval()
    dyn = None
    if batch_axis is not None:
        dyn = {
            f"in{i}": {batch_axis[i]: "batch"}
            for i in range(len(args))
            if batch_axis[i] is not None
        }
    sess, names = _export(module, args, dynamic_axes=dyn)
    for inputs in [args] + ([other_batch] if other_batch is not None else []):
        want = _eager(module, inputs)
        got = sess.run(None, {n: a.numpy() for n, a in zip(names, inputs, strict=True)})
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _randn(rng, *shape):
    return tg.tensor(rng.standard_normal(shape), dtype=tg.float32)


# (name, module factory, input shapes at batch 2, batch axis per input)
_IMAGES = [(2, 3, 8, 8)]
LAYERS = [
    ("linear", lambda: nn.Linear(4, 3), [(2, 4)], [0]),
    ("linear_3d_no_bias", lambda: nn.Linear(4, 3, bias=False), [(2, 5, 4)], [0]),
    ("conv1d", lambda: nn.Conv1d(3, 4, 3, padding=1, stride=2), [(2, 3, 9)], [0]),
    ("conv2d", lambda: nn.Conv2d(3, 4, 3, padding=1, dilation=2), _IMAGES, [0]),
    (
        "conv2d_groups",
        lambda: nn.Conv2d(4, 6, 3, groups=2, stride=2, bias=False),
        [(2, 4, 9, 9)],
        [0],
    ),
    (
        "conv_transpose2d",
        lambda: nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1),
        _IMAGES,
        [0],
    ),
    ("max_pool2d", lambda: nn.MaxPool2d(3, stride=2, padding=1), _IMAGES, [0]),
    ("avg_pool2d", lambda: nn.AvgPool2d(3, stride=2, padding=1), _IMAGES, [0]),
    ("adaptive_avg_pool2d_1", lambda: nn.AdaptiveAvgPool2d((1, 1)), _IMAGES, [0]),
    ("adaptive_avg_pool2d_2", lambda: nn.AdaptiveAvgPool2d(2), _IMAGES, [0]),
    ("batch_norm2d", lambda: nn.BatchNorm2d(3), _IMAGES, [0]),
    ("batch_norm1d", lambda: nn.BatchNorm1d(3), [(4, 3)], [0]),
    ("layer_norm", lambda: nn.LayerNorm([8, 8]), _IMAGES, [0]),
    ("group_norm", lambda: nn.GroupNorm(2, 4), [(2, 4, 5, 5)], [0]),
    ("dropout_eval", lambda: nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)), [(2, 4)], [0]),
    (
        "activations",
        lambda: nn.Sequential(
            nn.ReLU(),
            nn.LeakyReLU(0.1),
            nn.ELU(0.7),
            nn.GELU(),
            nn.SiLU(),
            nn.Sigmoid(),
            nn.Tanh(),
            nn.Softplus(beta=2.0, threshold=3.0),
            nn.Softmax(1),
            nn.LogSoftmax(1),
            nn.Flatten(),
        ),
        _IMAGES,
        [0],
    ),
    ("gelu_tanh", lambda: nn.GELU(approximate="tanh"), [(2, 6)], [0]),
    (
        "multihead_attention",
        lambda: nn.MultiheadAttention(8, 2, batch_first=True),
        [(2, 5, 8)] * 3,
        [0, 0, 0],
    ),
    (
        "transformer_encoder_layer",
        lambda: nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, activation="gelu"),
        [(2, 5, 8)],
        [0],
    ),
    (
        "cnn",
        lambda: nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(64, 5),
        ),
        _IMAGES,
        [0],
    ),
]


def _prepare(factory, rng):
    tg.manual_seed(0)
    module = factory()
    for name, buf in module.named_buffers():  # statistics other than the initial ones
        if name.endswith("running_mean"):
            buf.data = tg.tensor(rng.standard_normal(buf.shape), dtype=tg.float32)
        elif name.endswith("running_var"):
            buf.data = tg.tensor(rng.uniform(0.5, 2.0, buf.shape), dtype=tg.float32)
    return module


@pytest.mark.parametrize("name,factory,shapes,axes", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_matches_eager_with_a_dynamic_batch(name, factory, shapes, axes, rng):
    module = _prepare(factory, rng)
    args = [_randn(rng, *s) for s in shapes]
    bigger = [_randn(rng, *((5,) + s[1:])) for s in shapes]
    _assert_runs_like_eager(module, args, axes, bigger)


def test_embedding_with_a_dynamic_batch(rng):
    emb = nn.Embedding(10, 4, padding_idx=0)
    idx = tg.tensor(rng.integers(0, 10, (2, 3)))
    _assert_runs_like_eager(emb, [idx], [0], [tg.tensor(rng.integers(0, 10, (7, 3)))])


class _ZeroState(nn.Module):
    def forward(self, x):
        return x + tg.zeros(x.shape[0], 4)  # made inside at the traced batch size


def test_a_tensor_made_at_the_traced_batch_size_says_what_to_do(rng):
    with pytest.raises(RuntimeError, match=r"(?s)_ZeroState.*made itself.*as an input"):
        tg.onnx.export(
            _ZeroState(), _randn(rng, 2, 4), io.BytesIO(), dynamic_axes={"input": {0: "batch"}}
        )


class _AddsAConstant(nn.Module):
    def forward(self, x):
        return x * tg.arange(4.0) + tg.ones(4)  # made inside: constants of the model


def test_tensors_made_inside_the_forward_are_constants(rng):
    _assert_runs_like_eager(_AddsAConstant(), [_randn(rng, 2, 4)], [0], [_randn(rng, 9, 4)])


def test_file_on_disk_names_initializers_after_the_module(tmp_path, rng):
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)).eval()
    path = tmp_path / "net.onnx"
    model = tg.onnx.export(net, _randn(rng, 2, 4), path, input_names=["x"], output_names=["y"])
    loaded = onnx.load(str(path))
    assert loaded == model
    assert loaded.opset_import[0].version == 17
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in loaded.graph.initializer}
    np.testing.assert_array_equal(inits["0.weight"], net[0].weight.detach().numpy())
    assert [i.name for i in loaded.graph.input] == ["x"]
    assert [o.name for o in loaded.graph.output] == ["y"]
    x = _randn(rng, 2, 4)
    got = _session(str(path)).run(["y"], {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, _eager(net, [x])[0], rtol=1e-5, atol=1e-6)


class _Sorts(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return tg.cumsum(self.fc(x), 1)


def test_unmapped_op_names_op_and_layer(rng):
    with pytest.raises(RuntimeError, match=r"op 'cumsum' in layer \(root\) \(_Sorts\)"):
        tg.onnx.export(_Sorts().eval(), _randn(rng, 2, 3), io.BytesIO())


def test_training_batch_norm_is_refused_with_the_fix(rng):
    net = nn.Sequential(nn.Conv2d(3, 2, 1), nn.BatchNorm2d(2)).train()
    with pytest.raises(RuntimeError, match=r"layer 1 \(BatchNorm2d\).*eval\(\)"):
        tg.onnx.export(net, _randn(rng, 2, 3, 4, 4), io.BytesIO())


def test_bad_arguments_are_named(rng):
    net = nn.Linear(2, 2).eval()
    x = _randn(rng, 1, 2)
    with pytest.raises(ValueError, match="opset 17"):
        tg.onnx.export(net, x, io.BytesIO(), opset_version=11)
    with pytest.raises(ValueError, match="input_names"):
        tg.onnx.export(net, x, io.BytesIO(), input_names=["a", "b"])
    with pytest.raises(ValueError, match=r"dynamic_axes names \['z'\]"):
        tg.onnx.export(net, x, io.BytesIO(), dynamic_axes={"z": [0]})
    with pytest.raises(TypeError, match="tensor or a tuple"):
        tg.onnx.export(net, x.numpy(), io.BytesIO())


def test_value_read_in_forward_is_refused(rng):
    class Reads(nn.Module):
        def forward(self, x):
            return x * float(x.sum())

    with pytest.raises(RuntimeError, match=r"can't be traced.*reads a tensor's value"):
        tg.onnx.export(Reads(), _randn(rng, 2), io.BytesIO())


def test_missing_onnx_gives_the_install_hint(monkeypatch, rng):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"tapegrad\[onnx\]"):
        tg.onnx.export(nn.Linear(2, 2), _randn(rng, 1, 2), io.BytesIO())


class _FunctionalDropout(nn.Module):
    def forward(self, x):
        return tg.nn.functional.dropout(x, 0.5, training=True)  # no Dropout layer to check


def test_functional_dropout_in_training_is_refused(rng):
    with pytest.raises(RuntimeError, match=r"op 'dropout'.*training mode.*eval\(\)"):
        tg.onnx.export(_FunctionalDropout(), _randn(rng, 2, 4), io.BytesIO())
