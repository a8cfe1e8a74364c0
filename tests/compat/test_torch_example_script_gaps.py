"""Gaps that PyTorch's own example scripts hit in the facade: the `torch.nn.modules.<file>`
class paths (safe_globals lists of a pickled model), `F.relu(x, inplace=True)`, and
`torch.randint(high, size)`."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as ftorch


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


PATHS = [
    ("linear", "Linear"),
    ("linear", "NonDynamicallyQuantizableLinear"),
    ("rnn", "LSTM"),
    ("rnn", "GRU"),
    ("dropout", "Dropout"),
    ("sparse", "Embedding"),
    ("container", "ModuleList"),
    ("normalization", "LayerNorm"),
    ("activation", "MultiheadAttention"),
    ("transformer", "TransformerEncoderLayer"),
    ("conv", "Conv2d"),
    ("module", "Module"),
]


@pytest.mark.parametrize("leaf,name", PATHS)
def test_module_paths_name_the_facade_classes(torch, leaf, name):
    ours = getattr(getattr(ftorch.nn.modules, leaf), name)
    assert ours is getattr(ftorch.nn, "Linear" if name.startswith("NonDyn") else name)
    theirs = getattr(getattr(torch.nn.modules, leaf), name)
    assert issubclass(theirs, getattr(torch.nn, ours.__name__))  # the same class in PyTorch


def test_module_paths_import_under_the_torch_name():
    code = (
        "from tapegrad.compat import alias; alias.install('torch')\n"
        "import torch\n"
        "from torch.nn.modules.utils import _pair, _triple\n"
        "from torch.nn.modules.rnn import LSTM\n"
        "import torch.nn.modules.linear as L\n"
        "print(LSTM is torch.nn.LSTM, L.Linear is torch.nn.Linear, _pair(2), _triple((1, 2, 3)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "(2,", "2)", "(1,", "2,", "3)"]


def test_unknown_names_say_so():
    with pytest.raises(
        AttributeError,
        match=r"'NoSuchLayer' is not supported by the PyTorch facade \(torch.nn.modules.rnn\)",
    ):
        _ = ftorch.nn.modules.rnn.NoSuchLayer


class Net(ftorch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = ftorch.nn.Embedding(10, 4)
        self.rnn = ftorch.nn.LSTM(4, 4)
        self.drop = ftorch.nn.Dropout(0.1)
        self.out = ftorch.nn.Linear(4, 10)

    def forward(self, x):
        h, _ = self.rnn(self.drop(self.emb(x)))
        return self.out(h)


def test_a_whole_model_loads_with_safe_globals_named_by_module_paths():
    # what word_language_model/main.py does: torch.save(model), then load it allowlisted
    net = Net()
    buf = io.BytesIO()
    ftorch.save(net, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Net"):
        ftorch.load(buf)
    m = ftorch.nn.modules
    allowed = [Net, m.rnn.LSTM, m.dropout.Dropout, m.linear.Linear, m.sparse.Embedding]
    buf.seek(0)
    with ftorch.serialization.safe_globals(allowed):
        back = ftorch.load(buf)
    x = ftorch.tensor([[1, 2], [3, 4]])
    net.eval(), back.eval()
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())


def test_functional_relu_takes_inplace_as_torch(torch):
    a = np.array([-1.0, 0.5])
    x, xt = ftorch.tensor(a), torch.tensor(a)
    assert ftorch.nn.functional.relu(x, inplace=True) is x
    assert torch.nn.functional.relu(xt, inplace=True) is xt
    np.testing.assert_array_equal(x.numpy(), xt.numpy())
    for name in ("relu", "leaky_relu", "elu", "silu", "gelu", "sigmoid", "tanh", "softplus"):
        assert getattr(ftorch.nn.functional, name) is getattr(tg.nn.functional, name)


def test_randint_high_size_form_as_torch(torch):
    for args in [(5, (2, 3)), (2, 5, (4,)), (7, [3])]:
        out, ref = ftorch.randint(*args), torch.randint(*args)
        assert out.shape == tuple(ref.shape) and out.dtype == tg.int64
        low, high = (0, args[0]) if len(args) == 2 else args[:2]
        assert int(out.min()) >= low and int(out.max()) < high
    assert ftorch.randint(10, size=(2,)).shape == (2,)
    with pytest.raises(RuntimeError, match="floating"):
        ftorch.randint(3, (2,), requires_grad=True)
    with pytest.raises(RuntimeError, match="floating"):
        torch.randint(3, (2,), requires_grad=True)


def test_data_parallel_on_one_device_is_the_module_as_torch_on_cpu(torch):
    net = ftorch.nn.Linear(3, 2)
    dp = ftorch.nn.DataParallel(net)
    ref = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(dp.state_dict()) == list(ref.state_dict()) == ["module.weight", "module.bias"]
    assert dp.module is net and dp.device_ids == ref.device_ids == []
    x = ftorch.ones(4, 3)
    np.testing.assert_array_equal(dp(x).detach().numpy(), net(x).detach().numpy())
    assert ftorch.nn.parallel.data_parallel(net, x).shape == (4, 2)
    assert ftorch.nn.DataParallel is ftorch.nn.parallel.DataParallel
    with pytest.raises(RuntimeError, match=r"device_ids=\[0, 1\] asks for 2 devices"):
        ftorch.nn.DataParallel(net, device_ids=[0, 1])
    with pytest.raises(AttributeError, match="tapegrad.distributed"):
        _ = ftorch.nn.parallel.DistributedDataParallel


def test_import_torch_nn_parallel_under_the_torch_name():
    code = (
        "from tapegrad.compat import alias; alias.install('torch')\n"
        "import torch, torch.nn.parallel\n"
        "print(torch.nn.parallel.data_parallel(torch.nn.Identity(), torch.ones(2)).tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[1.0,", "1.0]"]


@pytest.mark.parametrize("name", ["is_cpu", "is_cuda", "is_xpu", "is_mps", "is_meta", "is_sparse"])
def test_device_kind_flags_as_torch_on_cpu(torch, name):
    assert getattr(tg.ones(2), name) == getattr(torch.ones(2), name)
