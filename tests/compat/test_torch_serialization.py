"""torch.save / torch.load in the PyTorch facade: nested objects, file objects, map_location,
weights_only's allowlist, shared storage; what real torch does in the same cases."""

from __future__ import annotations

import collections
import io
import pickle
import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as ftorch
from tapegrad.io import PickleNameWarning


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _round_trip(obj, **load_kw):
    buf = io.BytesIO()
    ftorch.save(obj, buf)
    buf.seek(0)
    return ftorch.load(buf, **load_kw)


def _real_round_trip(torch, obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw)


class Config:  # a class of the script: refused by weights_only=True
    def __init__(self, n=3):
        self.n = n
        self.table = None


def _trained():
    net = ftorch.nn.Sequential(ftorch.nn.Linear(3, 4), ftorch.nn.ReLU(), ftorch.nn.Linear(4, 1))
    opt = ftorch.optim.Adam(net.parameters(), lr=0.01)
    for _ in range(2):
        opt.zero_grad()
        net(ftorch.ones(5, 3)).pow(2).mean().backward()
        opt.step()
    return net, opt


def test_a_checkpoint_of_state_dicts_round_trips(tmp_path):
    net, opt = _trained()
    ck = {"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 7, "loss": [0.5, 0.25]}
    ftorch.save(ck, tmp_path / "ck.tar")
    back = ftorch.load(tmp_path / "ck.tar")
    assert type(back["model"]) is collections.OrderedDict
    assert list(back["model"]) == list(ck["model"])
    for k, v in ck["model"].items():
        np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())
    assert back["epoch"] == 7 and back["loss"] == [0.5, 0.25]
    assert back["optim"]["param_groups"] == ck["optim"]["param_groups"]
    assert set(back["optim"]["state"]) == {0, 1, 2, 3}  # int keys stay ints
    for i, st in ck["optim"]["state"].items():
        np.testing.assert_array_equal(
            back["optim"]["state"][i]["exp_avg"].numpy(), st["exp_avg"].numpy()
        )
    # and they load back into fresh objects, which then step the same
    net2, _ = _trained()
    net2.load_state_dict(back["model"])
    opt2 = ftorch.optim.Adam(net2.parameters(), lr=0.01)
    opt2.load_state_dict(back["optim"])
    for n, o in ((net, opt), (net2, opt2)):
        o.zero_grad()
        n(ftorch.ones(5, 3)).pow(2).mean().backward()
        o.step()
    for a, b in zip(net.parameters(), net2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_torch_keeps_the_same_structure(torch):
    # what the facade gives back has the types real torch gives back
    obj = {
        "od": collections.OrderedDict(a=1),
        "tu": (1, "x"),
        "li": [None, True, 2.5],
        "set": {1, 2},
        "c": 1 + 2j,
        "b": b"xy",
        "ba": bytearray(b"z"),
        3: "int key",
    }
    ours, theirs = _round_trip(obj), _real_round_trip(torch, obj)
    assert ours == theirs
    assert {k: type(v) for k, v in ours.items()} == {k: type(v) for k, v in theirs.items()}


def test_dtypes_devices_and_sizes_are_allowed_by_default():
    back = _round_trip(
        {"dt": ftorch.float64, "dev": ftorch.device("cpu"), "size": ftorch.ones(2, 3).shape}
    )
    assert back["dt"] == ftorch.float64 and back["dev"] == ftorch.device("cpu")
    assert back["size"] == (2, 3)


@pytest.mark.parametrize(
    "obj", [Config(), collections.defaultdict(int), slice(1, 2), range(3)]
)  # (frozenset: pickled without a global from protocol 4 on, so it loads; torch refuses it)
def test_weights_only_refuses_other_classes_as_torch(torch, obj):
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed") as ours:
        _round_trip({"x": obj, "w": ftorch.ones(1)})
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed") as theirs:
        _real_round_trip(torch, {"x": obj})
    # both name the global and the two ways out
    name = type(obj).__qualname__
    for msg in (str(ours.value), str(theirs.value)):
        assert name in msg and "weights_only" in msg and "add_safe_globals" in msg
    # weights_only=False reads it
    back = _round_trip({"x": obj}, weights_only=False)
    assert type(back["x"]) is type(obj)


def test_weights_only_false_reads_objects_with_tensors_inside():
    cfg = Config()
    cfg.table = ftorch.arange(3.0)
    back = _round_trip({"cfg": cfg, "same": cfg.table}, weights_only=False)
    assert back["cfg"].n == 3 and back["cfg"].table.tolist() == [0.0, 1.0, 2.0]
    assert back["cfg"].table is back["same"]  # one tensor, inside and outside the object


def test_a_whole_module_loads_with_weights_only_false():
    net, _ = _trained()
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        _round_trip(net)
    back = _round_trip(net, weights_only=False)
    x = ftorch.ones(2, 3)
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())
    assert all(isinstance(p, ftorch.nn.Parameter) for p in back.parameters())


def test_safe_globals_allow_a_class(torch):
    with ftorch.serialization.safe_globals([Config]):
        assert _round_trip(Config(5)).n == 5
    with pytest.raises(pickle.UnpicklingError):
        _round_trip(Config())
    ftorch.serialization.add_safe_globals([Config])
    try:
        assert Config in ftorch.serialization.get_safe_globals()
        assert _round_trip(Config(4)).n == 4
    finally:
        ftorch.serialization.clear_safe_globals()
    assert ftorch.serialization.get_safe_globals() == []


def test_shared_storage_stays_shared(torch):
    base = ftorch.arange(6.0)
    obj = {"base": base, "tail": base[2:], "every_other": base[::2], "again": base}
    back = _round_trip(obj)
    assert back["again"] is back["base"]
    back["base"][4] = 100.0  # one write, seen through every view, as in PyTorch
    assert back["tail"].tolist() == [2.0, 3.0, 100.0, 5.0]
    assert back["every_other"].tolist() == [0.0, 2.0, 100.0]
    t = torch.arange(6.0)
    theirs = _real_round_trip(torch, {"base": t, "tail": t[2:], "every_other": t[::2]})
    theirs["base"][4] = 100.0
    assert theirs["tail"].tolist() == back["tail"].tolist()
    assert theirs["every_other"].tolist() == back["every_other"].tolist()


def _tied(nn):
    emb, head = nn.Embedding(5, 3), nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    return nn.ModuleDict({"emb": emb, "head": head})


def test_tied_weights_stay_tied(torch):
    back = _round_trip(_tied(ftorch.nn).state_dict())
    theirs = _real_round_trip(torch, _tied(torch.nn).state_dict())
    for sd in (back, theirs):  # two tensors (state_dict detaches), one storage
        sd["emb.weight"][0, 0] = 42.0
        assert sd["head.weight"][0, 0].item() == 42.0


def test_tensors_keep_requires_grad_and_parameters_their_class(torch):
    w = ftorch.tensor([1.0, 2.0], requires_grad=True)
    p = ftorch.nn.Parameter(ftorch.zeros(2))
    back = _round_trip({"w": w, "p": p, "c": ftorch.ones(1)})
    theirs = _real_round_trip(
        torch,
        {
            "w": torch.ones(2, requires_grad=True),
            "p": torch.nn.Parameter(torch.zeros(2)),
            "c": torch.ones(1),
        },
    )
    for k in ("w", "p", "c"):
        assert back[k].requires_grad == theirs[k].requires_grad
        assert back[k].grad_fn is None
    assert isinstance(back["p"], ftorch.nn.Parameter) and isinstance(
        theirs["p"], torch.nn.Parameter
    )
    assert not isinstance(back["w"], ftorch.nn.Parameter)


@pytest.mark.parametrize(
    "where",
    [
        "cpu",
        ftorch.device("cpu"),
        {"cpu": "cpu"},
        {"cuda:0": "cpu"},
        lambda storage, loc: storage,
        lambda s, loc: None,
    ],
)
def test_map_location_forms_are_accepted(where):
    back = _round_trip({"w": ftorch.ones(2)}, map_location=where)
    assert back["w"].device == "cpu" and back["w"].tolist() == [1.0, 1.0]


def test_map_location_function_gets_the_tensor_and_its_location():
    seen = []

    def where(storage, location):
        seen.append((storage.tolist(), location))
        return storage * 2

    back = _round_trip([ftorch.ones(2)], map_location=where)
    assert seen == [([1.0, 1.0], "cpu")] and back[0].tolist() == [2.0, 2.0]


def test_paths_file_objects_and_the_pt_name(tmp_path):
    net, _ = _trained()
    with pytest.warns(PickleNameWarning, match="torch.save: "):
        ftorch.save(net.state_dict(), tmp_path / "m.pt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ftorch.save(net.state_dict(), str(tmp_path / "m.tar"))
        with open(tmp_path / "m.bin", "wb") as f:
            ftorch.save(net.state_dict(), f)
    for name in ("m.pt", "m.tar", "m.bin"):
        with open(tmp_path / name, "rb") as f:
            back = ftorch.load(f)
        assert list(back) == list(net.state_dict())


def test_a_state_dict_file_is_plain_safetensors_for_pytorch(tmp_path, torch):
    from safetensors.torch import load_file

    net, _ = _trained()
    ftorch.save(net.state_dict(), tmp_path / "m.safetensors")
    theirs = load_file(str(tmp_path / "m.safetensors"))
    assert set(theirs) == set(net.state_dict())
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(theirs[k].numpy(), v.numpy())


def test_tg_save_files_and_plain_safetensors_load_too(tmp_path):
    from safetensors.numpy import save_file

    tg.save({"w": tg.ones(2), "epoch": 2}, tmp_path / "a.safetensors")
    back = ftorch.load(tmp_path / "a.safetensors", map_location="cpu")
    assert back["epoch"] == 2 and back["w"].tolist() == [1.0, 1.0]
    save_file({"x": np.zeros(3, np.float32)}, str(tmp_path / "b.safetensors"))
    assert ftorch.load(tmp_path / "b.safetensors")["x"].shape == (3,)
    # and tg.load reads a facade file as its flat dict of tensors
    ftorch.save({"w": ftorch.ones(2), "cfg": {1, 2}}, tmp_path / "c.safetensors")
    assert list(tg.load(tmp_path / "c.safetensors")) == ["w"]


def test_bad_files_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="torch.load: '<file object>' is not a valid safetensors"):
        ftorch.load(io.BytesIO(b"nonsense"))
    with pytest.raises(FileNotFoundError):
        ftorch.load(tmp_path / "missing.pt")
