"""Module, Parameter and the containers: registration, state dicts, modes, hooks, repr."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import nn


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3, bias=False)
        self.scale = nn.Parameter(tg.ones(3))
        self.register_buffer("steps", tg.zeros(1))
        self.register_buffer("cache", tg.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.act(self.fc1(x)))) * self.scale


# ---------------------------------------------------------------- Parameter
def test_parameter_is_a_leaf_that_requires_grad():
    p = nn.Parameter(tg.zeros(2, 3))
    assert isinstance(p, tg.Tensor) and p.is_leaf and p.requires_grad
    assert p.grad_req == "add" and p.grad is None
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(tg.zeros(2), requires_grad=False).requires_grad
    assert nn.Parameter(tg.zeros(2), grad_req="write").grad_req == "write"


def test_parameter_shares_storage_with_its_tensor():
    t = tg.zeros(3)
    p = nn.Parameter(t)
    p.data[0] = 5.0
    assert t.tolist() == [5.0, 0.0, 0.0]


def test_parameter_accumulates_gradients():
    p = nn.Parameter(tg.tensor([1.0, 2.0]))
    for _ in range(2):
        (p * p).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [4.0, 8.0])


def test_integer_parameter_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(tg.tensor([1, 2]))


# ---------------------------------------------------------------- registration and traversal
def test_named_parameters_order_and_names():
    names = [n for n, _ in Block().named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight"]


def test_named_parameters_order_matches_torch(torch):
    class TBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 8)
            self.act = torch.nn.ReLU()
            self.bn = torch.nn.BatchNorm1d(8)
            self.fc2 = torch.nn.Linear(8, 3, bias=False)
            self.scale = torch.nn.Parameter(torch.ones(3))
            self.register_buffer("steps", torch.zeros(1))
            self.register_buffer("cache", torch.zeros(2), persistent=False)

    ours, theirs = Block(), TBlock()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())


def test_shared_parameters_are_listed_once():
    m = nn.Module()
    m.a = nn.Linear(2, 2)
    m.b = m.a
    assert len(list(m.parameters())) == 2
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4


def test_buffers_and_persistence():
    b = Block()
    assert [n for n, _ in b.named_buffers()] == [
        "steps",
        "cache",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert "cache" not in b.state_dict() and "steps" in b.state_dict()


def test_reassigning_a_parameter_slot():
    m = nn.Linear(2, 3)
    m.bias = None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    with pytest.raises(TypeError, match="nn.Parameter"):
        m.weight = tg.zeros(3, 2)
    m.weight = nn.Parameter(tg.zeros(3, 2))
    assert m.weight.shape == (3, 2)


def test_assigning_before_init_is_a_clear_error():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Bad()


def test_missing_attribute_error_names_the_class():
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        nn.Linear(2, 2).nope  # noqa: B018


def test_children_modules_and_get_submodule():
    b = Block()
    assert [type(c).__name__ for c in b.children()] == ["Linear", "ReLU", "BatchNorm1d", "Linear"]
    assert b.get_submodule("bn") is b.bn
    assert b.get_parameter("fc1.weight") is b.fc1.weight
    with pytest.raises(AttributeError, match="no submodule 'zz'"):
        b.get_submodule("zz")


# ---------------------------------------------------------------- state dict
def test_state_dict_round_trip():
    tg.manual_seed(0)
    a, b = Block(), Block()
    x = tg.randn(5, 4)
    a(x)  # train-mode call: updates BatchNorm's running statistics
    a.eval()
    b.eval()
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    for (na, ta), (nb, tb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert na == nb
        np.testing.assert_array_equal(ta.numpy(), tb.numpy())


def test_state_dict_shares_storage_and_is_detached():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    assert not sd["weight"].requires_grad
    sd["weight"].numpy()[0, 0] = 42.0
    assert m.weight._data[0, 0] == 42.0


def test_load_state_dict_reports_missing_and_unexpected_keys_and_changes_nothing():
    m = Block()
    before = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    sd = {k: tg.zeros(*v.shape) for k, v in m.state_dict().items()}
    del sd["fc1.bias"]
    sd["extra.weight"] = tg.zeros(1)
    with pytest.raises(RuntimeError) as err:
        m.load_state_dict(sd)
    msg = str(err.value)
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_load_state_dict_shape_error_leaves_every_parameter_untouched():
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 4))
    before = [p.detach().numpy().copy() for p in m.parameters()]
    sd = {k: tg.full(v.shape, 7.0) for k, v in m.state_dict().items()}
    sd["1.weight"] = tg.zeros(4, 5)  # the last key is wrong: nothing before it may be written
    with pytest.raises(RuntimeError, match=r'size mismatch for "1.weight".*\(4, 5\).*\(4, 3\)'):
        m.load_state_dict(sd)
    for p, b in zip(m.parameters(), before, strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), b)


def test_load_state_dict_dtype_error():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    sd = {"weight": tg.zeros(2, 2, dtype=tg.bool), "bias": sd["bias"]}
    with pytest.raises(RuntimeError, match='dtype mismatch for "weight"'):
        m.load_state_dict(sd)


def test_load_state_dict_non_strict_returns_the_keys():
    m = nn.Linear(2, 2)
    res = m.load_state_dict({"weight": tg.ones(2, 2), "junk": tg.ones(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["junk"]
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones((2, 2)))


def test_load_state_dict_accepts_numpy_and_torch_state(torch):
    t = torch.nn.Linear(3, 2)
    m = nn.Linear(3, 2)
    m.load_state_dict({k: v.detach().numpy() for k, v in t.state_dict().items()})
    m2 = nn.Linear(3, 2)
    m2.load_state_dict(t.state_dict())  # PyTorch tensors are read as arrays
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(
        m(tg.tensor(x)).detach().numpy(),
        t(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_load_state_dict_materializes_lazy_parameters():
    src = nn.Linear(5, 2)
    lazy = nn.Linear(None, 2)
    assert list(lazy.state_dict()) == ["bias"]
    lazy.load_state_dict(src.state_dict())
    assert lazy.in_features == 5
    x = tg.randn(3, 5)
    np.testing.assert_array_equal(lazy(x).detach().numpy(), src(x).detach().numpy())


# ---------------------------------------------------------------- modes, grads, conversion
def test_train_eval_recurse():
    b = Block()
    assert b.training and b.bn.training
    assert b.eval() is b
    assert not any(m.training for m in b.modules())
    b.train()
    assert all(m.training for m in b.modules())
    with pytest.raises(ValueError, match="bool"):
        b.train("yes")


def test_training_none_follows_the_thread_train_mode():
    d = nn.Dropout(0.5)
    d.training = None
    x = tg.ones(1000)
    assert not d.is_training_now
    np.testing.assert_array_equal(d(x).numpy(), x.numpy())  # predict mode outside record()
    with tg.autograd.record():
        assert d.is_training_now
        y = d(x).numpy()
    with tg.autograd.record(train_mode=False):
        assert not d.is_training_now
    with tg.autograd.train_mode():
        assert d.is_training_now
    assert set(np.unique(y)) == {0.0, 2.0}


def test_zero_grad():
    m = nn.Linear(3, 2)
    m(tg.randn(4, 3)).sum().backward()
    assert m.weight.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(m.weight.grad.numpy(), np.zeros((2, 3)))
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_requires_grad_toggles_every_parameter():
    m = Block().requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_apply_visits_children_first():
    seen = []
    nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Sequential"]


def test_apply_with_init():
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))

    def init(mod):
        if isinstance(mod, nn.Linear):
            nn.init.zeros_(mod.weight)

    m.apply(init)
    assert all(not np.any(mod.weight.detach().numpy()) for mod in m)


def test_to_dtype_converts_in_place_and_keeps_identity():
    m = Block()
    w = m.fc1.weight
    m.to(tg.float64)
    assert m.fc1.weight is w and w.dtype == np.float64
    assert m.bn.running_mean.dtype == np.float64
    assert m.bn.num_batches_tracked.dtype == np.int64  # integer buffers are not cast
    assert m.double() is m and m.float().fc1.weight.dtype == np.float32
    assert m.to("cpu") is m


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    h2 = m.register_forward_hook(lambda mod, args, out: out * 0)
    out = m(tg.ones(1, 2))
    assert calls == ["pre"] and not np.any(out.detach().numpy())
    h1.remove()
    h2.remove()
    assert np.any(m(tg.ones(1, 2)).detach().numpy())


def test_missing_forward_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


# ---------------------------------------------------------------- repr
def test_repr_matches_torch(torch):
    ours = nn.Sequential(
        nn.Linear(4, 8),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.BatchNorm1d(8),
        nn.LayerNorm(8),
        nn.Linear(8, 2, bias=False),
        nn.LogSoftmax(dim=1),
    )
    theirs = torch.nn.Sequential(
        torch.nn.Linear(4, 8),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.1),
        torch.nn.BatchNorm1d(8),
        torch.nn.LayerNorm(8),
        torch.nn.Linear(8, 2, bias=False),
        torch.nn.LogSoftmax(dim=1),
    )
    assert repr(ours) == repr(theirs)


def test_module_list_repr_matches_torch(torch):
    ours = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.Tanh(), nn.Tanh()])
    theirs = torch.nn.ModuleList(
        [torch.nn.Linear(2, 2) for _ in range(3)]
        + [torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Tanh()]
    )
    assert repr(ours) == repr(theirs)
    theirs_dict = torch.nn.ModuleDict({"a": torch.nn.ReLU()})
    assert repr(nn.ModuleDict({"a": nn.ReLU()})) == repr(theirs_dict)


def test_nested_repr():
    text = repr(Block())
    assert text.startswith("Block(\n  (fc1): Linear(in_features=4, out_features=8, bias=True)")
    assert text.endswith("(fc2): Linear(in_features=8, out_features=3, bias=False)\n)")


# ---------------------------------------------------------------- containers
def test_sequential_indexing_slicing_append():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(net) == 3 and isinstance(net[0], nn.Linear) and net[-1] is net[2]
    assert net[0].weight.shape == (3, 2)
    head = net[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is net[0]
    net.append(nn.Sigmoid())
    assert len(net) == 4 and [n for n, _ in net.named_children()][-1] == "3"
    assert net(tg.randn(5, 2)).shape == (5, 1)
    with pytest.raises(IndexError, match="out of range"):
        net[4]


def test_sequential_from_ordered_dict():
    from collections import OrderedDict

    net = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in net.named_parameters()] == ["fc.weight", "fc.bias"]
    assert net.fc is net[0]


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.Linear(2, 1))
    assert len(ml) == 4 and len(list(ml.parameters())) == 8
    assert isinstance(ml[1:], nn.ModuleList) and len(ml[1:]) == 3
    md = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ReLU()})
    md["c"] = nn.Linear(2, 3)
    assert list(md.keys()) == ["a", "b", "c"] and "b" in md
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias", "c.weight", "c.bias"]

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = ml

    assert len(list(Holder().parameters())) == 8


def test_lazy_linear_parameter_identity_survives_materialization():
    lin = nn.Linear(None, 4)
    params = list(lin.parameters())  # e.g. an optimizer built before the first call
    assert repr(lin.weight) == "<UninitializedParameter>"
    out = lin(tg.randn(2, 6))
    assert out.shape == (2, 4) and lin.in_features == 6
    assert params[0] is lin.weight and params[0].shape == (4, 6)
    out.sum().backward()
    assert lin.weight.grad.shape == (4, 6)


def test_replacing_a_parameter_keeps_its_place_in_the_order():
    # PyTorch keeps the dict position: named_parameters() was ['bias', 'weight'] after
    # `m.weight = Parameter(...)`, so state_dict() and an optimizer saw another order
    m = tg.nn.Linear(2, 3)
    m.weight = tg.nn.Parameter(tg.ones(3, 2))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m.weight.sum().item() == 6.0


def test_parameter_list_registers_its_items_by_position():
    params = tg.nn.ParameterList([tg.ones(2), tg.nn.Parameter(tg.zeros(3))])
    params.append(tg.full((1,), 5.0))
    holder = tg.nn.Module()
    holder.p = params
    assert [n for n, _ in holder.named_parameters()] == ["p.0", "p.1", "p.2"]
    assert all(isinstance(p, tg.nn.Parameter) and p.requires_grad for p in params)
    assert len(params) == 3 and params[-1].tolist() == [5.0] and len(params[1:]) == 2
    params[0] = tg.zeros(2)
    assert params[0].tolist() == [0.0, 0.0]
    with pytest.raises(IndexError, match="out of range for ParameterList of length 3"):
        params[3]
    (params[0] * 2).sum().backward()
    assert params[0].grad.tolist() == [2.0, 2.0]


def test_parameter_dict_keeps_insertion_order_and_names():
    params = tg.nn.ParameterDict({"scale": tg.ones(2)})
    params["shift"] = tg.zeros(2)
    params.update([("gain", tg.ones(1))])
    assert list(params.keys()) == ["scale", "shift", "gain"]
    assert [n for n, _ in params.named_parameters()] == ["scale", "shift", "gain"]
    assert "shift" in params and params.get("missing") is None
    assert params.pop("shift").tolist() == [0.0, 0.0]
    assert list(params) == ["scale", "gain"] and len(params) == 2
    with pytest.raises(KeyError):
        params["shift"]
    with pytest.raises(TypeError, match="keys must be strings"):
        params[0] = tg.ones(1)
