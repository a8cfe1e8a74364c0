"""The MXNet facade's hybridized HybridBlock: MXNet 1.9.1's input rules, and
`export` -> `SymbolBlock.imports` (the traced graph file) giving back the same block."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd, gluon, nd
from tapegrad.compat.mxnet.gluon import _graph_file, nn


class Add(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b=None):
        if isinstance(a, list):
            a = sum(a)
        return a if b is None else a + b


# ------------------------------------------------------------------ input rules
def test_hybridized_block_refuses_numbers_but_eager_takes_them():
    x = nd.ones((3,))
    np.testing.assert_array_equal(Add()(x, 2).asnumpy(), [3, 3, 3])
    net = Add()
    net.hybridize()
    with pytest.raises(ValueError, match="must be \\(nested\\) list of Symbol or NDArray"):
        net(x, 2)
    np.testing.assert_array_equal(net([x, x], x).asnumpy(), [3, 3, 3])  # nested lists are fine


def test_hybridized_block_keeps_the_first_calls_none_pattern():
    x = nd.ones((2,))
    net = Add()
    net.hybridize()
    net(x)
    np.testing.assert_array_equal(net(x, None).asnumpy(), [1, 1])  # a trailing default
    with pytest.raises(ValueError, match=r"Stored format = \[0\], input format = \[0, 0\]"):
        net(x, x)
    net.hybridize()  # hybridize() again: a new cached graph, a new pattern
    np.testing.assert_array_equal(net(x, x).asnumpy(), [2, 2])
    with pytest.raises(ValueError, match="does not match the cached version"):
        net(None, x)


def test_inputs_need_an_array_and_no_symbols_hybridized_or_not():
    for hybrid in (False, True):
        net = Add()
        if hybrid:
            net.hybridize()
        with pytest.raises(ValueError, match="there must be one NDArray"):
            net(None, None)
        with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
            net(nd.ones((2,)), mx.sym.var("b"))
        with pytest.raises(TypeError, match="builds no symbol graphs"):
            net(mx.sym.var("a"))


def test_hybridized_block_takes_one_context():
    a, b = nd.ones((2,), ctx=mx.cpu(1)), nd.ones((2,), ctx=mx.cpu(2))
    np.testing.assert_array_equal(Add()(a, b).asnumpy(), [2, 2])  # eager: allowed
    net = Add()
    net.hybridize()
    with pytest.raises(ValueError, match="multiple contexts"):
        net(a, b)
    np.testing.assert_array_equal(net(a, a).asnumpy(), [2, 2])
    net = Add()
    net.hybridize()  # a core tensor is on its device's id 0, as an NDArray made there
    np.testing.assert_array_equal(net(nd.ones((2,)), tg.ones(2)).asnumpy(), [2, 2])


def test_child_blocks_are_part_of_the_outer_graph_and_not_checked():
    class Outer(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.inner = Add()

        def hybrid_forward(self, F, x, y):
            # the inner block sees a different None pattern on each call
            return self.inner(x) + self.inner(x, y)

    net = Outer()
    net.hybridize()
    x = nd.ones((2,))
    for _ in range(3):
        np.testing.assert_array_equal(net(x, x).asnumpy(), [3, 3])


def test_arrays_remember_an_explicit_device_id():
    a = nd.ones((2,), ctx=mx.cpu(1))
    assert a.ctx == mx.cpu(1) and mx.np.zeros((1,), ctx=mx.cpu(3)).ctx == mx.cpu(3)
    assert (a + 1).ctx == mx.cpu(0)  # an op's result reports id 0
    b = a.as_in_context(mx.cpu(2))
    assert b.ctx == mx.cpu(2) and a.ctx == mx.cpu(1) and b is not a
    assert a.as_in_context(mx.cpu(1)) is a
    assert a.copyto(mx.cpu(4)).ctx == mx.cpu(4)


def test_sym_var_is_a_placeholder_only():
    s = mx.sym.var("data")
    assert s.list_arguments() == ["data"] and s.name == "data"
    with pytest.raises(TypeError, match="symbols do not exist"):
        s + 1
    with pytest.raises(AttributeError, match="symbols do not exist"):
        mx.sym.Group  # noqa: B018


# ------------------------------------------------------------------ export -> imports
def _cnn():
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(4, 3, padding=1, activation="relu"),
        nn.BatchNorm(),
        nn.MaxPool2D(2),
        nn.Flatten(),
        nn.Dropout(0.5),
        nn.Dense(3),
    )
    net.initialize(mx.init.Xavier())
    return net


def _grads(net, x, train_mode=False):
    x = x.copy()
    x.attach_grad()
    with autograd.record(train_mode=train_mode):
        loss = (net(x) ** 2).sum()
    loss.backward()
    grads = {
        k: p.grad().asnumpy().copy()
        for k, p in net.collect_params().items()
        if p.grad_req != "null"
    }
    return grads, x.grad.asnumpy()


def _warm_up_running_stats(net, x):
    with autograd.record():  # batch norm's running statistics move off their initial values
        net(x)


def test_export_imports_round_trip_values_names_and_gradients(tmp_path):
    net = _cnn()
    x = nd.random.normal(shape=(2, 1, 6, 6))
    _warm_up_running_stats(net, x)
    net.hybridize()
    want = net(x)
    symbol_file, params_file = net.export(str(tmp_path / "net"), epoch=2)
    assert symbol_file.endswith("net-symbol.json") and params_file.endswith("net-0002.params")
    loaded = gluon.SymbolBlock.imports(symbol_file, ["data"], params_file)
    got = loaded(x)
    assert isinstance(got, nd.NDArray)
    np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    assert list(loaded.collect_params().keys()) == list(net.collect_params().keys())
    assert list(loaded.params.keys()) == list(net.collect_params().keys())
    assert [p.grad_req for p in loaded.collect_params().values()] == [
        p.grad_req for p in net.collect_params().values()
    ]
    lines = str(loaded).splitlines()
    assert lines[0] == "SymbolBlock(" and lines[1] and lines[2] == ")"
    # predict mode: the graph is the traced one, so gradients equal the original's
    (g_want, dx_want), (g_got, dx_got) = _grads(net, x), _grads(loaded, x)
    np.testing.assert_array_equal(dx_got, dx_want)
    assert g_got.keys() == g_want.keys()
    for k in g_want:
        np.testing.assert_array_equal(g_got[k], g_want[k], err_msg=k)
    assert np.abs(g_got[net[5].weight.name]).sum() > 0


def test_imported_block_trains_with_a_trainer(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(5, activation="tanh"), nn.Dense(1))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x, y = nd.random.normal(shape=(8, 3)), nd.random.normal(shape=(8, 1))
    net(x)
    loaded = gluon.SymbolBlock.imports(*net.export(str(tmp_path / "mlp"))[:1], "data")
    loaded.load_parameters(str(tmp_path / "mlp-0000.params"))
    results = []
    for block in (net, loaded):
        trainer = gluon.Trainer(block.collect_params(), "sgd", {"learning_rate": 0.1})
        for _ in range(3):
            with autograd.record():
                loss = ((block(x) - y) ** 2).mean()
            loss.backward()
            trainer.step(1)
        results.append([p.data().asnumpy().copy() for p in block.collect_params().values()])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


def test_imported_float64_gradient_matches_finite_differences(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="tanh"), nn.Dense(2))
    net.initialize(mx.init.Xavier())
    net.cast("float64")
    x = nd.array(np.random.default_rng(0).standard_normal((3, 2)), dtype="float64")
    net.hybridize()
    net(x)
    loaded = gluon.SymbolBlock.imports(
        *net.export(str(tmp_path / "f64"))[:1], ["data"], str(tmp_path / "f64-0000.params")
    )
    w = loaded.collect_params()[net[0].weight.name]
    with autograd.record():
        loss = (loaded(x) ** 2).sum()
    loss.backward()
    analytic = w.grad().asnumpy()
    base = w.data().asnumpy().copy()
    numeric = np.zeros_like(base)
    eps = 1e-6
    for idx in np.ndindex(base.shape):
        vals = []
        for sign in (1, -1):
            moved = base.copy()
            moved[idx] += sign * eps
            w.set_data(moved)
            vals.append(float((loaded(x) ** 2).sum().asnumpy()))
        numeric[idx] = (vals[0] - vals[1]) / (2 * eps)
    w.set_data(base)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


class TwoInTwoOut(gluon.HybridBlock):
    """Two inputs, a nested result, a shared parameter, slicing and a constant array."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.a = nn.Dense(3, in_units=4)
            self.b = nn.Dense(3, in_units=4, params=self.a.collect_params())

    def hybrid_forward(self, F, x, y):
        h = self.a(x[:, 1:5]) * mx.nd.array([1.0, 2.0, 3.0])
        return h, (self.b(y[..., :4]) - h, h.sum(axis=1, keepdims=True))


def test_round_trip_of_several_inputs_nested_outputs_and_shared_parameters(tmp_path):
    net = TwoInTwoOut()
    net.initialize()
    net.hybridize()
    x, y = nd.random.normal(shape=(2, 6)), nd.random.normal(shape=(2, 5))
    want = net(x, y)
    symbol_file, params_file = net.export(str(tmp_path / "two"))
    graph = json.loads(Path(symbol_file).read_text())
    assert [i["name"] for i in graph["inputs"]] == ["data0", "data1"]
    assert [p["keys"] for p in graph["params"]] == [
        ["a.weight", "b.weight"],
        ["a.bias", "b.bias"],
    ]
    loaded = gluon.SymbolBlock.imports(symbol_file, ["data0", "data1"], params_file)
    got = loaded(x, y)
    assert isinstance(got, tuple) and isinstance(got[1], tuple) and len(got[1]) == 2
    for g, w in zip([got[0], *got[1]], [want[0], *want[1]], strict=True):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
    assert len(loaded.collect_params()) == 2  # the shared parameters once
    loaded.save_parameters(str(tmp_path / "again.params"))
    net.load_parameters(str(tmp_path / "again.params"))  # the same structural names


def test_imports_without_params_then_initialize_and_hybridize(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(3), nn.Activation("relu"))
    net.initialize()
    net.hybridize()
    x = nd.random.normal(shape=(4, 2))
    net(x)
    symbol_file, params_file = net.export(str(tmp_path / "n"))
    loaded = gluon.SymbolBlock.imports(symbol_file, "data")
    loaded.initialize()
    assert loaded(x).shape == (4, 3)
    loaded.load_parameters(params_file)
    loaded.hybridize()
    for _ in range(3):  # eager first call, trace, replay: the same numbers
        np.testing.assert_array_equal(loaded(x).asnumpy(), net(x).asnumpy())
    assert loaded._hybrid.cache_info().hits == 1


def test_imported_block_refuses_other_shapes_and_names(tmp_path):
    net = _cnn()
    net.hybridize()
    net(nd.ones((2, 1, 6, 6)))
    symbol_file, params_file = net.export(str(tmp_path / "net"))
    with pytest.raises(ValueError, match=r"input_names \['x'\] do not match the inputs"):
        gluon.SymbolBlock.imports(symbol_file, ["x"], params_file)
    loaded = gluon.SymbolBlock.imports(symbol_file, ["data"], params_file)
    with pytest.raises(ValueError, match=r"traced for shape \(2, 1, 6, 6\) float32"):
        loaded(nd.ones((3, 1, 6, 6)))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        loaded(nd.ones((2, 1, 6, 6)), nd.ones((1,)))
    # it traced predict mode: under record() it says so once
    warned = pytest.warns(UserWarning, match=r"predict mode.*batchnorm\d+.*dropout\d+")
    with warned, autograd.record():
        loaded(nd.ones((2, 1, 6, 6)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with autograd.record():
            loaded(nd.ones((2, 1, 6, 6)))


def test_imports_refuses_other_files_and_symbol_block_from_symbols(tmp_path):
    mxnet_json = tmp_path / "mx-symbol.json"
    mxnet_json.write_text(json.dumps({"nodes": [], "arg_nodes": [], "heads": []}))
    with pytest.raises(ValueError, match="not a graph file written by tapegrad"):
        gluon.SymbolBlock.imports(str(mxnet_json), ["data"])
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        gluon.SymbolBlock.imports(str(tmp_path / "bad.json"), ["data"])
    with pytest.raises(AttributeError, match=r"SymbolBlock\.imports"):
        gluon.SymbolBlock(mx.sym.var("out"), mx.sym.var("data"))


def test_export_needs_a_hybridized_forward_first(tmp_path):
    net = _cnn()
    net(nd.ones((1, 1, 4, 4)))
    with pytest.raises(RuntimeError, match=r"hybridize\(\) and run a forward"):
        net.export(str(tmp_path / "n"))


def test_graph_file_values_round_trip():
    values = [
        None,
        True,
        3,
        -2.5,
        float("inf"),
        "same",
        (1, (2, 3)),
        [1, 2],
        {"k": (1,)},
        slice(None, 5, 2),
        Ellipsis,
        np.dtype("float16"),
        np.float32,
        np.int64(7),
        np.arange(6, dtype=np.int32).reshape(2, 3),
    ]
    back = _graph_file.decode(json.loads(json.dumps(_graph_file.encode(values, "test"))))
    for v, b in zip(values, back, strict=True):
        if isinstance(v, np.ndarray):
            assert b.dtype == v.dtype
            np.testing.assert_array_equal(b, v)
        else:
            assert b == v and type(b) is type(v)
    assert np.isnan(_graph_file.decode(_graph_file.encode(float("nan"), "test")))
    with pytest.raises(RuntimeError, match="op 'x' takes a object"):
        _graph_file.encode(object(), "op 'x'")


# ------------------------------------------------------------------ MXNet's pretrained tests
# test_gluon.py's test_hybrid_static_memory*, test_import need downloaded ResNet-18 weights
# (tools/mxnet_conformance.py deselects them); the same checks here on a narrow ResNet v1
# (the model zoo's architecture, fewer channels) with the weights copied instead. Batch
# norm in training makes the hybridized forward run eagerly, with a CompileWarning saying
# so (tests/compile checks it); the values are what is checked here.
_EAGER_BN = pytest.mark.filterwarnings("ignore::tapegrad.compile.CompileWarning")


def _resnet(prefix="net_"):
    from tapegrad.compat.mxnet.gluon.model_zoo.vision import ResNetV1

    return ResNetV1("basic", [1, 1, 1, 1], [4, 4, 8, 8, 16], classes=10, prefix=prefix)


def _pair(tmp_path, **kwargs):
    x = nd.random.uniform(shape=(2, 3, 16, 16))
    net1, net2 = _resnet(), _resnet()
    net1.initialize()
    net1(x)
    net1.save_parameters(str(tmp_path / "w.params"))  # in place of the pretrained file
    net2.load_parameters(str(tmp_path / "w.params"))
    net2.hybridize(**kwargs)
    return net1, net2, x


@_EAGER_BN
@pytest.mark.parametrize(
    "kwargs", [{}, {"static_alloc": True}, {"static_alloc": True, "static_shape": True}]
)
def test_hybrid_static_memory(tmp_path, kwargs):
    net1, net2, x = _pair(tmp_path, **kwargs)
    x.attach_grad()
    net1(x)
    net2(x)

    def run(net):
        with autograd.record():
            y = net(x) + net(x)
            y.backward()
        grads = {k: v.grad() for k, v in net.collect_params().items() if v.grad_req != "null"}
        return y, grads

    y1, grads1 = run(net1)
    y2, grads2 = run(net2)
    np.testing.assert_allclose(y2.asnumpy(), y1.asnumpy(), rtol=1e-3, atol=1e-5)
    for key in grads1:
        np.testing.assert_allclose(
            grads2[key].asnumpy(), grads1[key].asnumpy(), rtol=1e-3, atol=1e-4, err_msg=key
        )


@_EAGER_BN
@pytest.mark.parametrize("kwargs", [{}, {"static_alloc": True, "static_shape": True}])
def test_hybrid_static_memory_switching_and_recording(tmp_path, kwargs):
    net1, net2, _ = _pair(tmp_path, **kwargs)
    for shape in ((4, 3, 16, 16), (2, 3, 16, 16)):  # switching: another batch size
        x = nd.random.uniform(shape=shape)
        for net in (net1, net2):
            net(x)
            with autograd.record():
                y = net(x)
                y.backward()
        np.testing.assert_allclose(net2(x).asnumpy(), net1(x).asnumpy(), rtol=1e-4, atol=1e-5)
    x = nd.random.uniform(shape=(1, 3, 16, 16))
    for net in (net1, net2):
        with autograd.record(True):  # recording: a forward with no backward, then predict
            net(x)
    np.testing.assert_allclose(net2(x).asnumpy(), net1(x).asnumpy(), rtol=1e-4, atol=1e-5)


def test_import_of_an_exported_resnet(tmp_path):
    """test_gluon.py's test_import, with the narrow ResNet."""
    net1, _, _ = _pair(tmp_path)
    net1.hybridize()
    data = nd.random.normal(shape=(1, 3, 16, 16))
    out1 = net1(data)
    net1.export(str(tmp_path / "net1"), epoch=1)
    net2 = gluon.SymbolBlock.imports(
        str(tmp_path / "net1-symbol.json"), ["data"], str(tmp_path / "net1-0001.params"), mx.cpu()
    )
    out2 = net2(data)
    lines = str(net2).splitlines()
    np.testing.assert_array_equal(out2.asnumpy(), out1.asnumpy())
    assert lines[0] == "SymbolBlock(" and lines[1] and lines[2] == ")"
