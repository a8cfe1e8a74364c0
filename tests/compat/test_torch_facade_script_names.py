"""The names PyTorch scripts use at their top and in passing (issue 11): submodules that
import, backends and accelerator queries, threads, legacy tensor types, out=."""

import importlib
import subprocess
import sys

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as torch


@pytest.fixture
def real_torch():
    return pytest.importorskip("torch")


def test_submodules_import_and_are_the_core_names():
    linalg = importlib.import_module("tapegrad.compat.torch.linalg")
    func = importlib.import_module("tapegrad.compat.torch.func")
    assert linalg.det is tg.linalg.det and linalg.inv is tg.linalg.inv
    assert func.grad is tg.func.grad and func.grad_and_value is tg.func.grad_and_value
    np.testing.assert_allclose(linalg.det(tg.eye(2) * 3).item(), 9.0)
    with pytest.raises(AttributeError, match="torch.linalg"):
        linalg.not_a_function  # noqa: B018


def test_onnx_imports_as_a_module():
    # export itself is tested in tests/onnx/test_torch_onnx_facade.py (the `onnx` extra)
    onnx = importlib.import_module("tapegrad.compat.torch.onnx")
    assert onnx.is_in_onnx_export() is False
    assert callable(onnx.export)


def test_an_unchanged_script_imports_every_submodule(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import torch\nimport torch.linalg\nimport torch.func\nimport torch.onnx\n"
        "import torch.backends.cudnn as cudnn\nfrom torch.func import grad\n"
        "cudnn.benchmark = True\n"
        "print(torch.backends.mps.is_available(), torch.linalg.det(torch.eye(2) * 2).item(),\n"
        "      grad(lambda x: (x ** 2).sum())(torch.tensor([3.0])).tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "tapegrad.compat.run", "torch", str(script)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["False", "4.0", "[6.0]"]


def test_backends_answer_for_this_machine():
    import importlib.util

    assert torch.backends.mps.is_available() is False and torch.backends.mps.is_built() is False
    assert torch.backends.cuda.is_built() == (importlib.util.find_spec("cupy") is not None)
    assert torch.backends.cudnn.is_available() == torch.cuda.is_available()
    assert torch.backends.cudnn.enabled is True and torch.backends.cudnn.deterministic is False
    torch.backends.cudnn.deterministic = True  # scripts set these; they are kept
    assert torch.backends.cudnn.deterministic is True
    torch.backends.cudnn.deterministic = False
    torch.backends.cuda.matmul.allow_tf32 = False
    assert torch.backends.mkldnn.is_available() is False


def test_accelerator_reports_the_gpu_or_none():
    available = torch.cuda.is_available()
    assert torch.accelerator.is_available() == available
    assert torch.accelerator.device_count() == (1 if available else 0)
    if available:
        assert torch.accelerator.current_accelerator() == torch.device("cuda")
    else:
        assert torch.accelerator.current_accelerator() is None
        assert torch.accelerator.current_device_index() == -1


def test_set_default_device_takes_the_cpu_only():
    torch.set_default_device("cpu")
    torch.set_default_device(torch.device("cpu"))
    assert torch.get_default_device() == torch.device("cpu")
    with pytest.raises(NotImplementedError, match=r"\.to\(device\)"):
        torch.set_default_device("cuda")
    with pytest.raises(ValueError, match="unknown device"):
        torch.set_default_device("mps")


def test_num_threads_sets_the_blas_pool():
    from threadpoolctl import threadpool_info

    if not threadpool_info():
        pytest.skip("no BLAS thread pool is loaded")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert torch.get_num_threads() == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    finally:
        torch.set_num_threads(before)
    assert torch.get_num_threads() == before
    for bad in (0, -2, 1.5, True):
        with pytest.raises(RuntimeError, match="positive integer"):
            torch.set_num_threads(bad)


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("FloatTensor", np.float32),
        ("DoubleTensor", np.float64),
        ("LongTensor", np.int64),
        ("IntTensor", np.int32),
        ("BoolTensor", np.bool_),
        ("ByteTensor", np.uint8),
    ],
)
def test_legacy_tensor_types_match_pytorch(real_torch, name, dtype):
    data = [[1, 0], [3, 2]]
    ours, theirs = getattr(torch, name)(data), getattr(real_torch, name)(data)
    assert ours.dtype == dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert getattr(torch, name)(2, 3).shape == tuple(getattr(real_torch, name)(2, 3).shape)
    assert getattr(torch, name)().shape == tuple(getattr(real_torch, name)().shape) == (0,)
    assert isinstance(ours, getattr(torch, name)) and isinstance(ours, tg.Tensor)
    other = "DoubleTensor" if name != "DoubleTensor" else "FloatTensor"
    assert not isinstance(ours, getattr(torch, other))
    assert not isinstance(theirs, getattr(real_torch, other))


def test_legacy_type_from_a_tensor_converts():
    t = torch.FloatTensor(tg.tensor([1, 2]))
    assert t.dtype == np.float32 and t.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="FloatTensor"):
        torch.FloatTensor([1.0], [2.0])


# ---------------------------------------------------------------- out=
def test_matmul_out_writes_into_out(real_torch):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    out = torch.empty(3, 2, dtype=torch.float64)
    version = out._version
    got = torch.matmul(tg.tensor(a), tg.tensor(b), out=out)
    ref = real_torch.empty(3, 2, dtype=real_torch.float64)
    real_torch.matmul(real_torch.tensor(a), real_torch.tensor(b), out=ref)
    assert got is out and out._version == version + 1
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("add", ([1.0, 2.0], [3.0, 4.0])),
        ("mul", ([1.0, 2.0], [3.0, 4.0])),
        ("sub", ([1.0, 2.0], [3.0, 4.0])),
        ("div", ([1.0, 2.0], [3.0, 4.0])),
        ("exp", ([0.5, 1.0],)),
        ("maximum", ([1.0, 5.0], [3.0, 4.0])),
    ],
)
def test_elementwise_out_matches_pytorch(real_torch, name, args):
    ours_out, theirs_out = torch.zeros(2), real_torch.zeros(2)
    getattr(torch, name)(*[torch.tensor(a) for a in args], out=ours_out)
    getattr(real_torch, name)(*[real_torch.tensor(a) for a in args], out=theirs_out)
    np.testing.assert_allclose(ours_out.numpy(), theirs_out.numpy(), rtol=1e-6)


def test_cat_out_and_sum_out(real_torch):
    parts = [[1.0, 2.0], [3.0]]
    ours, theirs = torch.empty(3), real_torch.empty(3)
    torch.cat([torch.tensor(p) for p in parts], out=ours)
    real_torch.cat([real_torch.tensor(p) for p in parts], out=theirs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = torch.empty(())
    torch.sum(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), out=ours)
    assert ours.item() == 10.0


def test_out_of_the_wrong_shape_is_resized_with_pytorchs_warning(real_torch):
    with pytest.warns(UserWarning, match="resized"):
        out = torch.add(torch.ones(2, 2), 1.0, out=torch.zeros(3))
    assert out.shape == (2, 2) and out.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.warns(UserWarning, match="resized"):
        real_torch.add(real_torch.ones(2, 2), 1.0, out=real_torch.zeros(3))
    empty = torch.empty(0)  # an empty out resizes silently, as in PyTorch
    torch.add(torch.ones(2), 1.0, out=empty)
    assert empty.tolist() == [2.0, 2.0]


def test_out_refuses_autograd_and_bad_casts(real_torch):
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.mul(x, 2.0, out=torch.empty(2))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        real_torch.mul(real_torch.ones(2, requires_grad=True), 2.0, out=real_torch.empty(2))
    with torch.no_grad():  # allowed without recording, as in PyTorch
        assert torch.mul(x, 2.0, out=torch.empty(2)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.add(torch.ones(2), 0.5, out=torch.zeros(2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="can't be cast"):
        real_torch.add(real_torch.ones(2), 0.5, out=real_torch.zeros(2, dtype=real_torch.int64))
    with pytest.raises(TypeError, match="'out' must be a Tensor"):
        torch.add(torch.ones(2), 1.0, out=[0.0, 0.0])


def test_lbfgs_and_multinomial_come_from_the_core():
    assert torch.optim.LBFGS is tg.optim.LBFGS
    assert torch.multinomial.__wrapped__ is tg.multinomial


def test_type_casts_to_a_legacy_type(real_torch):
    assert torch.ones(2).type(torch.DoubleTensor).dtype == np.float64
    assert real_torch.ones(2).type(real_torch.DoubleTensor).dtype == real_torch.float64
    assert torch.tensor([1.7]).type(torch.LongTensor).tolist() == [1]
