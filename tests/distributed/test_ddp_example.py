"""examples/ddp_digits.py: a smoke run in one process, and with mpiexec -n 2 where MPI is."""

from __future__ import annotations

import importlib.util
import pathlib

import tapegrad.distributed as dist

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ddp_digits.py"


def test_one_process(monkeypatch, capsys):
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.setattr(dist, "_comm", None)
    for var in dist._SIZE_VARS:
        monkeypatch.delenv(var, raising=False)
    spec = importlib.util.spec_from_file_location("example_ddp_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(["--steps", "3"])
    assert out["world"] == 1 and out["steps"] == 3 and out["spread"] == 0.0
    assert out["loss"] > 0
    text = capsys.readouterr().out
    assert "1 process(es), 1438 training samples each" in text and "test accuracy" in text


def test_two_processes(mpirun):
    proc = mpirun(2, EXAMPLE, "--steps", "4")
    assert "2 process(es), 719 training samples each, batch 32 per process" in proc.stdout
    assert "largest difference between replicas: 0.0" in proc.stdout
    assert proc.stdout.count("test accuracy") == 1  # only rank 0 prints
