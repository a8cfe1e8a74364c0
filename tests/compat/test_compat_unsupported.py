"""Every facade refuses a name it does not provide with an AttributeError that says so
(and what to use instead) — never a silent fallback to a similar core function."""

import importlib

import pytest

CASES = [
    ("tapegrad.compat.mxnet.symbol", "Group", "symbols do not exist"),
    ("tapegrad.compat.mxnet", "mod", "use mx.gluon"),
    ("tapegrad.compat.mxnet", "no_such_thing", "see the migration guide"),
    ("tapegrad.compat.mxnet.numpy", "fft", "not provided"),
    ("tapegrad.compat.mxnet.ndarray", "Convolution", "Conv2D"),
    ("tapegrad.compat.mxnet.autograd", "get_symbol", "to_dot"),
    ("tapegrad.compat.mxnet.gluon", "metric", "mx.np operations"),
    ("tapegrad.compat.mxnet.gluon.nn", "HybridConcatenate", "HybridConcurrent"),
    ("tapegrad.compat.mxnet.gluon.rnn", "LSTMPCell", "contrib.rnn.LSTMPCell"),
    ("tapegrad.compat.mxnet.gluon.loss", "NoSuchLoss", "see the migration guide"),
    ("tapegrad.compat.mxnet.gluon.data", "RecordFileDataset", "RecordIO"),
    ("tapegrad.compat.mxnet.initializer", "Mixed", "one by one"),
    ("tapegrad.compat.megengine", "quantization", "not supported"),
    ("tapegrad.compat.megengine.functional", "cond_take", "boolean indexing"),
    ("tapegrad.compat.megengine.functional.nn", "nms", "not provided"),
    ("tapegrad.compat.megengine.module", "QuantStub", "quantization"),
    ("tapegrad.compat.megengine.optimizer", "LAMB", "Adam"),
    ("tapegrad.compat.megengine.distributed", "launcher", "mpiexec"),
    ("tapegrad.compat.torch", "expand_dims", "torch.unsqueeze"),  # a tapegrad-only name
    ("tapegrad.compat.torch", "autodiff", "MegEngine"),
    ("tapegrad.compat.torch", "engine", "not supported"),
    ("tapegrad.compat.torch.autograd", "record", "MXNet's record scope"),
    ("tapegrad.compat.torch.nn.parallel", "DistributedDataParallel", "tapegrad.distributed"),
    ("tapegrad.compat.torch.nn", "module", "not supported"),  # core layout stays hidden
    ("tapegrad.compat.torch.utils.data", "DistributedSampler", "tapegrad.distributed"),
]


@pytest.mark.parametrize(("module", "name", "hint"), CASES)
def test_unsupported_name_raises_attribute_error(module, name, hint):
    mod = importlib.import_module(module)
    with pytest.raises(AttributeError, match="is not supported by the") as info:
        getattr(mod, name)
    assert hint in str(info.value)
    assert repr(name) in str(info.value)
    assert not hasattr(mod, name)


def test_from_import_of_unsupported_name_is_an_import_error():
    with pytest.raises(ImportError, match="mod"):
        exec("from tapegrad.compat.mxnet import mod", {})


def test_supported_names_are_the_core_objects():
    import tapegrad as tg
    import tapegrad.compat.megengine.functional as F
    import tapegrad.compat.torch as torch
    from tapegrad.compat import mxnet as mx

    assert torch.relu is tg.relu and torch.nn.Linear is tg.nn.Linear
    assert torch.exp.__wrapped__ is tg.exp  # the facade adds PyTorch's out= around it
    assert torch.no_grad is tg.no_grad
    # torch.Tensor is the core class with PyTorch's legacy constructor (torch.Tensor([0]) is
    # float32): a subclass that every core tensor is an instance of
    assert issubclass(torch.Tensor, tg.Tensor) and isinstance(tg.ones(1), torch.Tensor)
    assert mx.np.exp is tg.exp and mx.autograd.record is tg.autograd.record
    assert F.exp.__wrapped__ is tg.exp  # the facade takes Python numbers (F.exp(0.0)) around it
    assert issubclass(mx.np.ndarray, mx.nd.NDArray) and issubclass(mx.nd.NDArray, tg.Tensor)


def test_package_trees_import_as_documented():
    import tapegrad as tg
    from tapegrad.compat.megengine.autodiff import GradManager
    from tapegrad.compat.mxnet.gluon.nn import Dense
    from tapegrad.compat.torch.autograd import Function

    assert GradManager is tg.autodiff.GradManager and Function is tg.autograd.Function
    assert Dense.training is None  # Gluon blocks follow autograd.is_training()


def test_alias_runs_a_script_unchanged(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(
        "import mxnet as mx\nfrom mxnet import autograd\nfrom mxnet.gluon.nn import Dense\n"
        "x = mx.nd.array([1, 2, 3])\nx.attach_grad()\nwith autograd.record():\n"
        "    y = 2 * x ** 2\ny.backward()\nprint(x.grad.asnumpy().tolist(), Dense.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "tapegrad.compat.run", "mxnet", str(script)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[4.0, 8.0, 12.0] tapegrad.compat.mxnet.gluon.nn.basic_layers"


def test_alias_refuses_unknown_framework():
    from tapegrad.compat import alias

    with pytest.raises(ValueError, match="no facade for 'tensorflow'"):
        alias.install("tensorflow")


@pytest.mark.parametrize(
    "name",
    [
        "randperm",
        "sort",
        "argsort",
        "topk",
        "kthvalue",
        "meshgrid",
        "tril",
        "triu",
        "diag",
        "diagonal",
        "trace",
        "dist",
        "lerp",
    ],
)
def test_torch_facade_maps_names_the_core_gained(name):
    import tapegrad as tg
    import tapegrad.compat.torch as torch

    assert getattr(torch, name) is getattr(tg, name)
    if name not in ("randperm", "meshgrid"):
        assert hasattr(torch.Tensor, name)


def test_facade_getattr_refuses_creating_without_an_array_class():
    """The creating functions are wrapped to return `array_class` arrays; without one the
    facade would fail only when such a name was first read, so it fails when it is made."""
    from tapegrad.compat._facade import facade_getattr

    with pytest.raises(TypeError, match=r"facade_getattr\('m'\).*array_class"):
        facade_getattr(
            "m", "a facade", {"zeros_like": "tapegrad:zeros_like"}, creating=("zeros_like",)
        )
