"""tg.save / tg.load: round trips in the safetensors format and every kind of bad file."""

import json

import numpy as np
import pytest

import tapegrad as tg


def _flat(rng):
    return {
        "0.weight": tg.tensor(rng.standard_normal((3, 4)).astype(np.float32)),
        "0.bias": tg.tensor(rng.standard_normal(3).astype(np.float32)),
        "2.running_mean": tg.tensor(np.zeros(5)),
        "steps": tg.tensor(np.array(7, dtype=np.int64)),
        "mask": tg.tensor(np.array([True, False])),
    }


def test_flat_state_dict_round_trip(tmp_path, rng):
    sd = _flat(rng)
    tg.save(sd, tmp_path / "m.safetensors")
    back = tg.load(str(tmp_path / "m.safetensors"))
    assert list(back) == list(sd)
    for k in sd:
        assert isinstance(back[k], tg.Tensor)
        assert back[k].dtype == sd[k].dtype and back[k].shape == sd[k].shape
        np.testing.assert_array_equal(back[k].numpy(), sd[k].numpy())
    back["0.weight"]._data[0, 0] = 5.0  # loaded tensors are writable, independent copies
    assert sd["0.weight"].numpy()[0, 0] != 5.0


def test_flat_file_is_plain_safetensors(tmp_path, rng):
    from safetensors.numpy import load_file

    sd = _flat(rng)
    tg.save(sd, tmp_path / "m.safetensors")
    raw = load_file(tmp_path / "m.safetensors")
    assert set(raw) == set(sd)
    np.testing.assert_array_equal(raw["0.bias"], sd["0.bias"].numpy())


def test_nested_checkpoint_with_metadata_round_trip(tmp_path, rng):
    ck = {
        "model": _flat(rng),
        "optim": {
            "state": {0: {"step": 3, "exp_avg": tg.tensor(np.ones(3))}},
            "param_groups": [
                {
                    "lr": 0.01,
                    "betas": (0.9, 0.999),
                    "params": [0, 1],
                    "amsgrad": False,
                    "name": "head",
                    "extra": None,
                }
            ],
        },
        "epoch": 12,
        "history": [0.5, 0.25],
        "raw": np.arange(4),
    }
    tg.save(ck, tmp_path / "ck.safetensors")
    back = tg.load(tmp_path / "ck.safetensors")
    assert back["epoch"] == 12 and back["history"] == [0.5, 0.25]
    g = back["optim"]["param_groups"][0]
    assert g == {
        "lr": 0.01,
        "betas": (0.9, 0.999),
        "params": [0, 1],
        "amsgrad": False,
        "name": "head",
        "extra": None,
    }
    assert list(back["optim"]["state"]) == [0]  # int keys stay ints
    assert back["optim"]["state"][0]["step"] == 3
    np.testing.assert_array_equal(back["optim"]["state"][0]["exp_avg"].numpy(), np.ones(3))
    assert isinstance(back["raw"], np.ndarray) and back["raw"].tolist() == [0, 1, 2, 3]
    # the tensors sit under dotted keys any safetensors reader sees
    from safetensors import safe_open

    with safe_open(str(tmp_path / "ck.safetensors"), "np") as f:
        keys = set(f.keys())
        meta = f.metadata()
    assert "model.0.weight" in keys and "optim.state.0.exp_avg" in keys
    assert json.loads(meta["tapegrad"])["format"] == 1


def test_tensor_that_requires_grad_and_a_bare_tensor(tmp_path):
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.save(w, tmp_path / "w.safetensors")
    back = tg.load(tmp_path / "w.safetensors")
    assert isinstance(back, tg.Tensor) and back.tolist() == [1.0, 2.0]
    assert not back.requires_grad


def test_plain_safetensors_file_from_elsewhere_loads_as_flat_dict(tmp_path):
    from safetensors.numpy import save_file

    save_file({"a": np.ones((2, 2), np.float32)}, str(tmp_path / "x.safetensors"))
    back = tg.load(tmp_path / "x.safetensors")
    assert list(back) == ["a"] and back["a"].shape == (2, 2)


def test_map_location_and_module_hint(tmp_path):
    tg.save({"w": tg.tensor([1.0])}, tmp_path / "w.safetensors")
    back = tg.load(tmp_path / "w.safetensors", map_location="cpu", weights_only=True)
    assert back["w"].device == "cpu"

    class Model:
        def state_dict(self):
            return {}

    with pytest.raises(TypeError, match=r"save its \.state_dict\(\) instead"):
        tg.save(Model(), tmp_path / "m.safetensors")


def test_unsaveable_values_raise(tmp_path):
    with pytest.raises(TypeError, match=r"can't save a object at 'cfg.fn'.*no pickle"):
        tg.save({"cfg": {"fn": object()}}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="dict keys must be strings or ints"):
        tg.save({(1, 2): tg.tensor([1.0])}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="same key 'a.b'"):
        tg.save({"a.b": tg.tensor([1.0]), "a": {"b": tg.tensor([2.0])}}, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_failed_save_keeps_the_old_checkpoint(tmp_path):
    p = tmp_path / "ck.safetensors"
    tg.save({"w": tg.tensor([1.0])}, p)
    with pytest.raises(TypeError):
        tg.save({"w": tg.tensor([2.0]), "bad": object()}, p)
    assert tg.load(p)["w"].tolist() == [1.0]


@pytest.mark.parametrize(
    "damage", ["truncated", "cut_header", "garbage", "empty", "pickle", "bad_json"]
)
def test_bad_files_raise_clear_errors(tmp_path, damage):
    p = tmp_path / "ck.safetensors"
    tg.save({"w": tg.tensor(np.arange(100.0)), "epoch": 1}, p)
    data = p.read_bytes()
    bad = {
        "truncated": data[:-10],
        "cut_header": data[:20],
        "garbage": b"this is not a checkpoint at all",
        "empty": b"",
        "pickle": b"\x80\x04\x95" + b"\x00" * 40,
        "bad_json": data[:8] + b"[" + data[9:],
    }[damage]
    p.write_bytes(bad)
    with pytest.raises(ValueError, match=r"'.*ck.safetensors' is not a valid safetensors file"):
        tg.load(p)


def test_pickle_hint(tmp_path):
    p = tmp_path / "model.pt"
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    with pytest.raises(ValueError, match="tapegrad never unpickles"):
        tg.load(p)


def test_damaged_metadata(tmp_path):
    from safetensors.numpy import save_file

    p = tmp_path / "x.safetensors"
    skeleton = json.dumps({"format": 1, "object": {"$d": [["w", {"$t": "missing"}]]}})
    save_file({"w": np.ones(2)}, str(p), metadata={"tapegrad": skeleton})
    with pytest.raises(ValueError, match="damaged tapegrad metadata.*'missing'"):
        tg.load(p)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        tg.load("/nonexistent/dir/ck.safetensors")


def _net():
    nn = tg.nn
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def test_module_checkpoint_round_trip(tmp_path):
    if not hasattr(tg.nn, "Sequential"):
        pytest.skip("tg.nn not available yet")
    tg.manual_seed(0)
    net = _net()
    opt = tg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x = tg.randn(5, 4)
    net(x).sum().backward()
    opt.step()
    tg.save({"model": net.state_dict(), "optim": opt.state_dict()}, tmp_path / "ck.safetensors")
    ck = tg.load(tmp_path / "ck.safetensors")
    net2 = _net()
    net2.load_state_dict(ck["model"])
    opt2 = tg.optim.SGD(net2.parameters(), lr=0.5)
    opt2.load_state_dict(ck["optim"])
    np.testing.assert_array_equal(net2(x).detach().numpy(), net(x).detach().numpy())
    assert opt2.param_groups[0]["momentum"] == 0.9
    p2 = list(net2.parameters())[0]
    np.testing.assert_array_equal(
        opt2.state[p2]["momentum_buffer"], opt.state[list(net.parameters())[0]]["momentum_buffer"]
    )


def test_loading_mismatched_checkpoint_into_a_module_changes_nothing(tmp_path):
    if not hasattr(tg.nn, "Sequential"):
        pytest.skip("tg.nn not available yet")
    nn = tg.nn
    tg.save(
        nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2)).state_dict(),
        tmp_path / "other.safetensors",
    )
    net = _net()
    before = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    with pytest.raises((RuntimeError, ValueError), match=r"(?i)shape|size"):
        net.load_state_dict(tg.load(tmp_path / "other.safetensors"))
    sd = tg.load(tmp_path / "other.safetensors")
    sd.pop("2.bias")
    sd["extra"] = tg.zeros(1)
    with pytest.raises((RuntimeError, ValueError, KeyError), match=r"2\.bias|extra"):
        net.load_state_dict(sd)
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.detach().numpy(), before[k])


def test_file_objects():
    import io

    buf = io.BytesIO()
    tg.save({"w": tg.tensor([1.0, 2.0]), "n": 3}, buf)
    buf.seek(0)
    back = tg.load(buf)
    assert back["w"].tolist() == [1.0, 2.0] and back["n"] == 3
    with pytest.raises(ValueError, match="'<file object>' is not a valid safetensors file"):
        tg.load(io.BytesIO(b"nonsense"))
