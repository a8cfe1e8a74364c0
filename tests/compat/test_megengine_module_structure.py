"""MegEngine's Module walks every attribute that holds a Tensor or a Module, also inside
lists, tuples and dicts, in attribute-name order (megengine/module/module.py's documented
behaviour): so layers kept in a Python list are trained, saved and switched to eval mode,
and a Tensor attribute is a buffer that state_dict() holds."""

import subprocess
import sys

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F
import tapegrad.compat.megengine.module as M
from tapegrad.compat.megengine.autodiff import GradManager


class Blocks(M.Module):
    def __init__(self):
        super().__init__()
        self.layers = [M.Linear(2, 3), M.Linear(3, 1)]
        self.heads = {"b": M.Linear(1, 1), "a": M.Dropout(0.5)}
        self.scale = mge.tensor(np.full(1, 2.0, dtype=np.float32))  # a buffer

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.heads["b"](self.heads["a"](x)) * self.scale


def test_layers_in_lists_and_dicts_are_parameters_and_state():
    net = Blocks()
    names = [k for k, _ in net.named_parameters()]
    assert names == [
        "heads.b.bias",
        "heads.b.weight",
        "layers.0.bias",
        "layers.0.weight",
        "layers.1.bias",
        "layers.1.weight",
    ]
    assert list(net.state_dict()) == ["scale", *names]  # own tensors first, then children
    assert [k for k, _ in net.named_buffers()] == ["scale"]
    assert [k for k, _ in net.named_modules()] == ["", "heads.a", "heads.b", "layers.0", "layers.1"]


def test_an_optimizer_trains_the_layers_in_a_list():
    net = Blocks()
    before = net.layers[0].weight.numpy().copy()
    gm = GradManager().attach(net.parameters())
    opt = mge.optimizer.SGD(net.parameters(), lr=0.1)
    net.eval()  # the Dropout inside the dict follows the parent
    assert not net.heads["a"].training
    with gm:
        gm.backward(net(mge.tensor([[1.0, 2.0]])).sum())
    opt.step().clear_grad()
    assert not np.array_equal(net.layers[0].weight.numpy(), before)


def test_state_dict_round_trip_and_validation_before_writing():
    net, other = Blocks(), Blocks()
    other.load_state_dict(net.state_dict())
    for (k, a), (_, b) in zip(net.state_dict().items(), other.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=k)
    sd = net.state_dict()
    sd["layers.0.weight"] = np.zeros((5, 5), dtype=np.float32)
    sd["heads.b.bias"] = np.full(1, 7.0, dtype=np.float32)
    kept = other.heads["b"].bias.numpy().copy()
    with pytest.raises(ValueError, match="layers.0.weight"):
        other.load_state_dict(sd)
    np.testing.assert_array_equal(other.heads["b"].bias.numpy(), kept)  # nothing written
    with pytest.raises(KeyError, match="missing"):
        other.load_state_dict({"scale": np.ones(1, dtype=np.float32)})
    other.load_state_dict({"scale": np.full(1, 3.0, dtype=np.float32)}, strict=False)
    assert other.scale.numpy().item() == 3.0


def test_children_and_modules_come_in_name_order():
    class Net(M.Module):
        def __init__(self):
            super().__init__()
            self.zeta = M.Linear(1, 1)
            self.alpha = M.BatchNorm1d(1)

        def forward(self, x):
            return self.alpha(self.zeta(x))

    net = Net()
    assert [k for k, _ in net.named_children()] == ["alpha", "zeta"]
    assert list(net.modules()) == [net, net.alpha, net.zeta]
    assert list(net.modules(with_parent=True))[1] == (net.alpha, net)
    assert isinstance(net.alpha.running_mean, mge.Tensor)


def test_tensor_is_the_class_and_megengine_tensor_the_module():
    x = mge.tensor([1.0, 2.0])
    assert isinstance(x, mge.tensor) and mge.tensor is mge.Tensor
    code = (
        "from tapegrad.compat import alias; alias.install('megengine')\n"
        "import megengine\n"
        "import megengine.tensor as T\n"
        "from megengine.tensor import Tensor, Parameter\n"
        "from megengine.autodiff.grad_manager import GradManager\n"
        "from megengine.device import get_device_count\n"
        "assert T is megengine.Tensor and Tensor is megengine.Tensor, T\n"
        "assert megengine.tensor([1.0]).shape == (1,)\n"
        "assert get_device_count('cpu') >= 1\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_functional_shapes_from_tensors_and_pad_mode_in_any_case():
    np.testing.assert_array_equal(F.ones(mge.tensor([2, 3])).numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(F.ones(mge.tensor(2)).numpy(), np.ones(2))
    out = F.nn.pad(mge.tensor(np.ones((1, 1))), ((1, 1), (0, 1)), "CONSTANT", constant_value=3)
    np.testing.assert_array_equal(out.numpy(), [[3, 3], [1, 3], [3, 3]])
