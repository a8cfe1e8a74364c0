"""The facade's torch.load reads checkpoints that PyTorch's own torch.save wrote (its zip
format): tensors, Parameters, state dicts, nested containers, shared storage, map_location,
weights_only's refusals."""

from __future__ import annotations

import collections
import io
import pickle

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as ftorch

torch = pytest.importorskip("torch")


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


class Config:  # a plain class of the script
    def __init__(self):
        self.depth = 3


def test_a_pytorch_state_dict_loads_into_the_facade_model(tmp_path):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU())
    ref(torch.randn(4, 1, 5, 5))  # BatchNorm running statistics move
    torch.save(ref.state_dict(), tmp_path / "m.pt")
    sd = ftorch.load(tmp_path / "m.pt")
    assert type(sd) is collections.OrderedDict and list(sd) == list(ref.state_dict())
    net = ftorch.nn.Sequential(
        ftorch.nn.Conv2d(1, 2, 3), ftorch.nn.BatchNorm2d(2), ftorch.nn.ReLU()
    )
    net.load_state_dict(sd)
    ref.eval(), net.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        net(ftorch.tensor(x)).detach().numpy(),
        ref(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    assert sd["1.num_batches_tracked"].dtype == tg.int64


def test_values_dtypes_and_containers_as_saved():
    a = torch.arange(6.0)
    obj = {
        "f16": torch.ones(2, dtype=torch.float16),
        "f64": torch.tensor([1.5], dtype=torch.float64),
        "i": torch.arange(3),
        "b": torch.tensor([True, False]),
        "u8": torch.tensor([7], dtype=torch.uint8),
        "t": torch.arange(6.0).reshape(2, 3).t(),  # a non-contiguous view
        "p": torch.nn.Parameter(torch.ones(2)),
        "g": torch.ones(2, requires_grad=True),
        "nested": [(1, "x"), {"k": a[1:3]}],
        "dt": torch.float32,
        "dev": torch.device("cpu"),
        "size": torch.Size([2, 3]),
        "set": {1, 2},
    }
    back = ftorch.load(_saved(obj))
    for k in ("f16", "f64", "i", "b", "u8", "t"):
        assert str(back[k].dtype) == str(obj[k].dtype).removeprefix("torch.")
        np.testing.assert_array_equal(back[k].numpy(), obj[k].detach().numpy())
    assert isinstance(back["p"], ftorch.nn.Parameter) and back["p"].requires_grad
    assert back["g"].requires_grad and not isinstance(back["g"], ftorch.nn.Parameter)
    assert back["nested"][0] == (1, "x") and back["nested"][1]["k"].tolist() == [1.0, 2.0]
    assert back["dt"] == ftorch.float32 and back["dev"] == ftorch.device("cpu")
    assert back["size"] == (2, 3) and back["set"] == {1, 2}


def test_shared_storage_stays_shared():
    a = torch.arange(6.0)
    back = ftorch.load(_saved({"a": a, "tail": a[2:], "every_other": a[::2]}))
    back["a"][4] = 100.0
    assert back["tail"].tolist() == [2.0, 3.0, 100.0, 5.0]
    assert back["every_other"].tolist() == [0.0, 2.0, 100.0]


def test_map_location_forms():
    for where in ("cpu", ftorch.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage):
        back = ftorch.load(_saved([torch.ones(2)]), map_location=where)
        assert back[0].device == "cpu"
    seen = []
    ftorch.load(_saved([torch.ones(2)]), map_location=lambda s, loc: seen.append(loc))
    assert seen == ["cpu"]


def test_weights_only_refuses_other_classes_as_torch():
    buf = _saved({"cfg": Config(), "w": torch.ones(1)})
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed.*Config"):
        ftorch.load(buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(buf)
    buf.seek(0)
    assert ftorch.load(buf, weights_only=False)["cfg"].depth == 3
    buf.seek(0)
    with ftorch.serialization.safe_globals([Config]):
        assert ftorch.load(buf)["cfg"].depth == 3


def test_a_pickled_pytorch_module_is_refused_with_the_fix():
    buf = _saved(torch.nn.Linear(2, 1))
    with pytest.raises(pickle.UnpicklingError, match=r"pickled PyTorch torch\.nn.*state_dict\(\)"):
        ftorch.load(buf, weights_only=False)
