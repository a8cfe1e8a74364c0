"""tools/pytorch_examples.py: a case runs through the facade in a scratch copy, with the
stand-ins it names first on the path; a failure reports the last error line; the table
counts what ran. (The upstream checkout is not needed: a fake one is made here.)"""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _runner():
    spec = importlib.util.spec_from_file_location(
        "pytorch_examples", ROOT / "tools" / "pytorch_examples.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


RUNNER = _runner()

_TRAIN = """
import torch, torch.nn as nn, torch.nn.functional as F
from torchvision import datasets, transforms
import torchvision
def torchvision_is_the_stand_in():
    return torchvision.__version__ == "0.0-stand-in"
ds = datasets.MNIST("../data", train=True, download=True, transform=transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))]))
x, y = next(iter(torch.utils.data.DataLoader(ds, batch_size=8)))
assert tuple(x.shape) == (8, 1, 28, 28) and float(x.min()) >= -1.0 and float(x.max()) <= 1.0
net = nn.Linear(784, 10)
loss = F.cross_entropy(net(x.view(8, -1)), y)
loss.backward()
assert type(torch.tensor(0)).__module__.startswith("tapegrad"), "not the facade"
assert torchvision_is_the_stand_in(), "not the stand-in"
"""


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "word_language_model").mkdir()  # what main() checks for
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "main.py").write_text(_TRAIN)
    (demo / "bad.py").write_text("import torch\ntorch.no_such_function()\n")
    return tmp_path


def test_a_case_runs_through_the_facade_with_its_stand_ins(checkout, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    case = RUNNER.Case("demo", "demo", "main.py", stubs=("torchvision",))
    outcome = RUNNER.run_case(case, checkout, scratch, real_torch=False)
    assert outcome.ok, outcome.error
    assert (scratch / "demo" / "main.py").exists()  # ran in the scratch copy


def test_a_failing_case_reports_its_last_error_line(checkout, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outcome = RUNNER.run_case(RUNNER.Case("bad", "demo", "bad.py"), checkout, scratch, False)
    assert not outcome.ok
    assert outcome.error.startswith("AttributeError") and "no_such_function" in outcome.error


def test_the_table_counts_what_ran():
    text = RUNNER.table(
        [RUNNER.Outcome("a", True, 1.0), RUNNER.Outcome("b", False, 2.0, "ValueError: x|y")]
    )
    assert "| a | ok | 1.0 |" in text and "| b | failed: ValueError: x\\|y | 2.0 |" in text
    assert "1 of 2 ran." in text and "- fx:" in text


def test_main_refuses_a_directory_that_is_not_a_checkout(tmp_path, capsys):
    with pytest.raises(SystemExit):
        RUNNER.main([str(tmp_path)])
    assert "is not a pytorch/examples checkout" in capsys.readouterr().err
