"""Every example runs a few steps (smoke tests; the full runs take under two minutes each)."""

import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_digits(capsys):
    out = _load("mlp_digits").main(["--epochs", "1", "--steps", "5"])
    assert out["steps"] == 5 and out["loss"] > 0
    assert "test accuracy" in capsys.readouterr().out


def test_cnn_digits(tmp_path):
    path = tmp_path / "ck.safetensors"
    out = _load("cnn_digits").main(["--epochs", "1", "--steps", "4", "--save", str(path)])
    assert out["steps"] == 4 and path.exists()
    assert out["reload_acc"] == out["test_acc"]  # eval mode: deterministic, same weights


def test_char_lstm():
    out = _load("char_lstm").main(
        ["--steps", "2", "--seq-len", "16", "--batch-size", "4", "--sample", "20"]
    )
    assert out["vocab"] > 30 and out["sample"].startswith("Shall I ")
    assert len(out["sample"]) == len("Shall I ") + 20


def test_transformer_sort():
    out = _load("transformer_sort").main(["--steps", "3", "--batch-size", "16"])
    assert 0.0 <= out["token_acc"] <= 1.0 and out["loss"] > 0


def test_wgan_gp():
    out = _load("wgan_gp").main(["--steps", "2", "--critic-steps", "2", "--batch-size", "32"])
    assert 0 <= out["modes"] <= 8


def test_wgan_gradient_penalty_is_twice_differentiable():
    import numpy as np

    import tapegrad as tg

    wgan = _load("wgan_gp")
    tg.manual_seed(0)
    critic = wgan.mlp(2, 1, width=8)
    real = wgan.real_batch(np.random.default_rng(0), 16)
    fake = tg.randn(16, 2)
    gp = wgan.gradient_penalty(critic, real, fake)
    gp.backward()  # through grad(..., create_graph=True): second-order terms reach the weights
    first = critic[0].weight.grad
    assert first is not None and float(np.abs(first.numpy()).sum()) > 0


@pytest.mark.parametrize(
    "name", ["mlp_digits", "cnn_digits", "char_lstm", "transformer_sort", "wgan_gp"]
)
def test_example_has_docstring_and_steps_flag(name):
    text = (EXAMPLES / f"{name}.py").read_text()
    assert text.startswith('"""') and "--steps" in text


def test_mlp_digits_reports_the_epoch_mean_loss_and_the_epochs_own_lr(capsys):
    import types

    import numpy as np

    mlp = _load("mlp_digits")
    seen = []  # (batch loss, batch size) of every step, recorded through the example's F

    def cross_entropy(logits, y, **kw):
        loss = real.cross_entropy(logits, y, **kw)
        seen.append((loss.item(), len(y)))
        return loss

    real = mlp.F
    mlp.F = types.SimpleNamespace(cross_entropy=cross_entropy)
    # StepLR(step_size=8, gamma=0.3): epoch 9 (the first after a step) must print 0.03
    out = mlp.main(["--epochs", "9", "--steps", str(8 * 45 + 3)])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
    assert [ln.split("lr ")[1] for ln in lines] == ["0.1000"] * 8 + ["0.0300"]
    assert out["lr"] == 0.1 * 0.3 and out["steps"] == 8 * 45 + 3
    losses, sizes = np.array(seen).T
    assert sizes[:45].tolist() == [32] * 44 + [30]  # 1438 training samples
    first = float(lines[0].split("loss ")[1].split()[0])
    assert first == round(float(np.average(losses[:45], weights=sizes[:45])), 4)
    assert first != round(float(losses[44]), 4)  # not the last batch's loss
    assert out["loss"] == np.average(losses[-3:], weights=sizes[-3:])


def test_cnn_digits_leaves_no_temp_dir(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out = _load("cnn_digits").main(["--epochs", "1", "--steps", "2"])
    assert out["reload_acc"] == out["test_acc"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["mlp_digits", "cnn_digits", "ddp_digits"])
def test_zero_epochs_is_a_usage_error(name, capsys):
    with pytest.raises(SystemExit) as e:
        _load(name).main(["--epochs", "0"])
    assert e.value.code == 2
    assert "argument --epochs: must be at least 1, got 0" in capsys.readouterr().err
