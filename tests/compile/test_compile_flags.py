"""The demo's and the examples' --compile flag: the training step runs under tg.compile
(replayed, not an eager fallback: the suite turns a CompileWarning into an error) and the
loss trajectory equals eager's to 1e-6 for a fixed seed."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

from tapegrad import demo

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(
        f"example_{name}_compiled", EXAMPLES / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "name,argv",
    [
        ("mlp_digits", ["--epochs", "2"]),
        ("transformer_sort", ["--steps", "40", "--batch-size", "16"]),
        ("cnn_digits", ["--epochs", "1", "--steps", "36"]),  # dropout, BatchNorm, AdamW
        ("ddp_digits", ["--epochs", "2", "--steps", "36"]),  # a world of one process
        ("char_lstm", ["--steps", "32", "--batch-size", "8", "--seq-len", "12", "--sample", "0"]),
        ("wgan_gp", ["--steps", "32", "--critic-steps", "2", "--batch-size", "32", "--width", "8"]),
    ],
)
def test_example_compiled_follows_the_eager_losses(name, argv, capsys):
    example = _load(name)
    eager = example.main(argv)
    compiled = example.main(argv + ["--compile"])
    assert len(compiled["losses"]) == len(eager["losses"]) > 30
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-6, atol=1e-6)
    if name != "wgan_gp":  # a GAN's losses need not fall
        assert np.mean(eager["losses"][-5:]) < np.mean(eager["losses"][:5])  # it trains


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_demo_compiled_two_epochs_equal_eager(kind, tmp_path):
    quiet = {"progress": False, "log": lambda s: None, "epochs": 2, "model_kind": kind}
    eager = demo.run(out=str(tmp_path / "e"), **quiet)
    compiled = demo.run(out=str(tmp_path / "c"), compile=True, **quiet)
    assert compiled["compiled"] and not eager["compiled"]
    for key in ("loss", "test_loss", "train_acc", "test_acc"):
        np.testing.assert_allclose(
            compiled["history"][key], eager["history"][key], rtol=1e-6, atol=1e-6
        )


def test_demo_command_line_flag(tmp_path, capsys):
    from tapegrad.__main__ import main

    assert (
        main(
            [
                "demo",
                "--epochs",
                "1",
                "--model",
                "mlp",
                "--compile",
                "--no-progress",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "training steps compiled (tg.compile)" in out and "final test accuracy" in out
