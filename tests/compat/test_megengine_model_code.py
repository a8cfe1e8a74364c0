"""What MegEngine model code needs beyond autodiff: megengine.data, M.init, hub, Module
order and state dicts, optimizer state dicts, and import errors that say what to do.
Expected values follow MegEngine 1.13's documented behaviour."""

import math

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.module as M
from tapegrad.compat.megengine import data, hub
from tapegrad.compat.megengine.autodiff import GradManager
from tapegrad.compat.megengine.data import transform as T


def _ds(n=5):
    return data.ArrayDataset(np.arange(2 * n, dtype="float32").reshape(n, 2), np.arange(n))


def test_dataloader_yields_numpy_batches_from_a_sampler():
    ds = _ds()
    batches = list(data.DataLoader(ds, data.SequentialSampler(ds, batch_size=2)))
    assert [y.tolist() for _, y in batches] == [[0, 1], [2, 3], [4]]
    assert all(isinstance(x, np.ndarray) for x, _ in batches)
    np.testing.assert_array_equal(batches[1][0], [[4, 5], [6, 7]])
    dropped = data.DataLoader(ds, data.SequentialSampler(ds, batch_size=2, drop_last=True))
    assert len(dropped) == 2 and len(list(dropped)) == 2


def test_random_sampler_is_a_permutation_per_epoch_and_seeded():
    ds = _ds(10)
    a = data.RandomSampler(ds, batch_size=4, seed=3)
    b = data.RandomSampler(ds, batch_size=4, seed=3)
    first = [i for batch in a for i in batch]
    assert sorted(first) == list(range(10))
    assert first == [i for batch in b for i in batch]
    assert [len(x) for x in a] == [4, 4, 2]


def test_infinite_sampler_restarts():
    ds = _ds(3)
    it = iter(data.DataLoader(ds, data.Infinite(data.SequentialSampler(ds, batch_size=2))))
    assert [next(it)[1].tolist() for _ in range(4)] == [[0, 1], [2], [0, 1], [2]]


def test_stream_dataset_and_transforms():
    class Stream(data.StreamDataset):
        def __iter__(self):
            for i in range(3):
                yield np.full((2, 2, 3), float(i), dtype="float32"), i

    pipeline = T.Compose([T.Normalize(mean=1.0, std=2.0), T.ToMode("CHW")])
    loader = data.DataLoader(
        Stream(), data.SequentialSampler(_ds(3), batch_size=3), transform=pipeline
    )
    ((images, labels),) = list(loader)
    assert images.shape == (3, 3, 2, 2) and labels.tolist() == [0, 1, 2]
    np.testing.assert_allclose(images[:, 0, 0, 0], [-0.5, 0.0, 0.5])


def test_init_fans_and_initialisers():
    w = mge.Parameter(np.zeros((8, 4, 3, 3)))
    assert M.init.calculate_fan_in_and_fan_out(w) == (36, 72)
    group = mge.Parameter(np.zeros((2, 4, 3, 5, 5)))  # (G, O/G, I/G, kh, kw)
    assert M.init.calculate_fan_in_and_fan_out(group) == (75, 100)
    with pytest.raises(ValueError, match="fewer than 2"):
        M.init.calculate_fan_in_and_fan_out(mge.Parameter([1.0]))
    assert M.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert M.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    big = mge.Parameter(np.zeros((200, 300)))
    M.init.xavier_uniform_(big)
    bound = math.sqrt(6 / 500)
    assert np.abs(big.numpy()).max() <= bound and np.abs(big.numpy()).max() > 0.9 * bound
    M.init.msra_normal_(big, mode="fan_out", nonlinearity="relu")
    assert big.numpy().std() == pytest.approx(math.sqrt(2 / 200), rel=0.05)
    M.init.fill_(big, 0.25)
    assert np.all(big.numpy() == 0.25)
    M.init.zeros_(big)
    assert not big.numpy().any()


class _Net(M.Module):
    def __init__(self):
        super().__init__()
        self.fc = M.Linear(2, 3)
        self.bn = M.BatchNorm1d(3)
        self.act_out = M.Linear(3, 1)

    def forward(self, x):
        return self.act_out(self.bn(self.fc(x)))


def test_named_parameters_and_state_dict_in_megengine_order():
    net = _Net()
    assert [k for k, _ in net.named_parameters()] == [
        "act_out.bias",
        "act_out.weight",
        "bn.bias",
        "bn.weight",
        "fc.bias",
        "fc.weight",
    ]
    sd = net.state_dict()
    assert list(sd) == [
        "act_out.bias",
        "act_out.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.weight",
        "fc.bias",
        "fc.weight",
    ]
    assert all(type(v) is np.ndarray for v in sd.values())
    sd["fc.bias"] = np.array([1.0, 2.0, 3.0], dtype="float32")
    net.load_state_dict(sd)
    np.testing.assert_array_equal(net.fc.bias.numpy(), [1.0, 2.0, 3.0])


def test_optimizer_state_dict_in_megengine_format():
    net = M.Linear(2, 1)
    opt = mge.optimizer.SGD(net.parameters(), lr=0.1, momentum=0.9)
    gm = GradManager().attach(net.parameters())
    with gm:
        gm.backward(net(mge.tensor([[1.0, 2.0]])).sum())
    opt.step().clear_grad()
    sd = opt.state_dict()
    assert list(sd) == ["param_groups", "state"]
    assert sd["param_groups"] == [
        {"lr": 0.1, "momentum": 0.9, "nesterov": False, "weight_decay": 0.0, "params": [0, 1]}
    ]
    # parameter 0 is the bias (MegEngine's order); its momentum buffer is d(sum y)/db = 1
    assert set(sd["state"][0]) == {"momentum_buffer"}
    np.testing.assert_allclose(sd["state"][0]["momentum_buffer"], [1.0])
    np.testing.assert_allclose(sd["state"][1]["momentum_buffer"], [[1.0, 2.0]])
    again = mge.optimizer.SGD(net.parameters(), lr=0.5, momentum=0.9)
    again.load_state_dict(sd)
    assert again.param_groups[0]["lr"] == 0.1


def test_hub_pretrained_builds_and_loads_local_weights(tmp_path):
    import pickle

    @hub.pretrained("https://data.example.com/models/tiny_linear_abc.pkl")
    def tiny(**kwargs):
        return M.Linear(2, 1)

    assert isinstance(tiny(), M.Linear)
    with pytest.raises(FileNotFoundError, match="download the file"):
        tiny(pretrained=True)
    weights = {
        "weight": np.full((1, 2), 3.0, dtype="float32"),
        "bias": np.array([0.5], dtype="float32"),
    }
    (tmp_path / "tiny_linear_abc.pkl").write_bytes(pickle.dumps(weights))
    hub.set_dir(tmp_path)
    try:
        model = tiny(pretrained=True)
    finally:
        hub.set_dir(None)
    np.testing.assert_array_equal(model.weight.numpy(), [[3.0, 3.0]])
    (tmp_path / "hubconf.py").write_text(
        "import tapegrad.compat.megengine.module as M\n"
        "def small(width=3):\n    return M.Linear(2, width)\n"
    )
    assert hub.load(str(tmp_path), "small", width=4).weight.shape == (4, 2)
    assert "small" in hub.list(str(tmp_path))


def test_missing_submodule_import_gives_the_facade_hint():
    from tapegrad.compat import alias

    alias.install("megengine")
    try:
        import megengine.data.transform  # noqa: F401
        import megengine.hub  # noqa: F401
        import megengine.module.init  # noqa: F401

        with pytest.raises(ModuleNotFoundError, match="quantization is not supported"):
            import megengine.quantization  # noqa: F401
    finally:
        alias.uninstall("megengine")
