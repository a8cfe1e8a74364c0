"""The PyTorch scripts of tools/torch_scripts/ run unchanged under the facade
(`python -m tapegrad.compat.run torch`), and print what real PyTorch prints."""

import functools
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _runner():
    spec = importlib.util.spec_from_file_location(
        "torch_scripts", ROOT / "tools" / "torch_scripts.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


RUNNER = _runner()
SCRIPTS = RUNNER.scripts_in(RUNNER.DEFAULT_DIR)


@functools.cache
def _facade_run(script: Path):
    return RUNNER.run_script(script, facade=True, timeout=300)


def test_there_are_scripts():
    assert len(SCRIPTS) >= 10  # issue 11: ten scripts in the styles of the tutorials


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_runs_unchanged_under_the_facade(script):
    run = _facade_run(script)
    assert run.ok, f"{script.name} failed under the facade: {run.error}"
    assert run.stdout.strip()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_prints_the_numbers_pytorch_prints(script):
    pytest.importorskip("torch")
    theirs = RUNNER.run_script(script, facade=False, timeout=300)
    assert theirs.ok, f"{script.name} failed under PyTorch: {theirs.error}"
    ours = _facade_run(script)
    assert ours.ok, f"{script.name} failed under the facade: {ours.error}"
    agree, worst, mismatch, count = RUNNER.compare_outputs(
        ours.stdout, theirs.stdout, rtol=1e-4, atol=1e-6
    )
    assert agree, mismatch
    assert count >= 5  # the comparison looked at numbers


def test_the_comparison_catches_differences():
    same = RUNNER.compare_outputs("loss 0.5000\nok True", "loss 0.50001\nok True", 1e-4, 1e-6)
    assert same[0] and same[3] == 1
    assert not RUNNER.compare_outputs("loss 0.51", "loss 0.50", 1e-4, 1e-6)[0]
    assert not RUNNER.compare_outputs("ok False", "ok True", 1e-4, 1e-6)[0]
    assert not RUNNER.compare_outputs("a 1\nb 2", "a 1", 1e-4, 1e-6)[0]
    assert RUNNER.compare_outputs("x nan 1e-3", "x nan 0.001", 1e-4, 1e-6)[0]


def test_run_only_reports_runs_not_numbers(tmp_path, capsys):
    # a script whose numbers differ between runs: the comparison fails, --run-only passes
    (tmp_path / "noisy.py").write_text("import random\nprint(random.random())\n")
    (tmp_path / "broken.py").write_text("raise SystemExit('no')\n")
    assert RUNNER.main([str(tmp_path), "--run-only"]) == 0  # broken fails both ways: skipped
    out = capsys.readouterr().out
    assert "noisy.py" in out and "runs" in out and "DIFFER" not in out
    assert "2 scripts; 1 run under PyTorch; of those 1 run unchanged under the facade" in out
    assert RUNNER.main([str(tmp_path)]) == 1  # comparing numbers: they differ
