"""tg.save's files: permissions follow the umask; .pt/.pth names warn (they are safetensors)."""

import os
import stat
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.io import PickleNameWarning


def _mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask(tmp_path, umask, expected):
    old = os.umask(umask)
    try:
        tg.save({"w": tg.ones(2)}, tmp_path / "ck.safetensors")
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    assert _mode(tmp_path / "ck.safetensors") == expected == _mode(tmp_path / "plain")


def test_a_replaced_file_keeps_its_mode(tmp_path):
    p = tmp_path / "ck.safetensors"
    tg.save({"w": tg.ones(2)}, p)
    os.chmod(p, 0o640)
    tg.save({"w": tg.zeros(2)}, p)
    assert _mode(p) == 0o640 and tg.load(p)["w"].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name", ["model.pt", "model.PTH"])
def test_torch_names_warn_at_the_callers_line(tmp_path, name):
    with pytest.warns(
        PickleNameWarning,
        match=r"is a safetensors file .*torch.load before "
        r"2.13 rejects it.*load_file\(path\)",
    ) as rec:
        tg.save({"w": tg.ones(2)}, tmp_path / name)
    assert rec[0].filename == __file__
    assert tg.load(tmp_path / name)["w"].tolist() == [1.0, 1.0]  # still written
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.save({"w": tg.ones(2)}, tmp_path / "model.safetensors")  # no warning


def test_torch_facade_save_warns_and_pytorch_reads_it_with_safetensors(tmp_path):
    import tapegrad.compat.torch as ftorch

    net = ftorch.nn.Linear(3, 2)
    with pytest.warns(PickleNameWarning) as rec:
        ftorch.save(net.state_dict(), tmp_path / "lin.pt")
    assert rec[0].filename == __file__
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    sd = load_file(str(tmp_path / "lin.pt"))
    np.testing.assert_array_equal(sd["weight"].numpy(), net.weight.detach().numpy())
    with pytest.warns(PickleNameWarning):
        tg.save({"model": net.state_dict(), "epoch": 3}, tmp_path / "ck.pth")
    try:  # what the warning is about: torch.load rejects it, or keeps only flat tensors
        got = torch.load(tmp_path / "ck.pth")
    except Exception as e:
        assert "pickle" in str(e).lower() or "load" in str(e).lower()
    else:
        assert set(got) == {"model.weight", "model.bias"}  # the epoch is gone
