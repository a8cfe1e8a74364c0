"""`python -m tapegrad demo`: one short epoch really learns; checkpoint, curve and CLI work."""

import json
import subprocess
import sys

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import demo
from tapegrad.__main__ import main


def test_one_epoch_of_the_cnn_learns(tmp_path):
    lines = []
    result = demo.run(
        epochs=1, model_kind="cnn", out=str(tmp_path), progress=False, log=lines.append
    )
    assert result["test_acc"] > 0.5  # chance is 0.1; one epoch reaches ~0.9
    assert result["reload_acc"] == result["test_acc"]  # the checkpoint holds the trained model
    ck = tg.load(result["checkpoint"])
    assert ck["epoch"] == 1 and ck["model_kind"] == "cnn"
    assert ck["optim"]["state"][0]["step"] == 45  # ceil(1438 / 32) Adam steps
    history = json.loads((tmp_path / "history.json").read_text())
    assert len(history["loss"]) == 1 and history["test_acc"][0] == result["test_acc"]
    assert any("test acc" in line for line in lines)
    if result["png"]:
        assert (tmp_path / "training_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_mlp_via_main_is_reproducible(tmp_path, capsys):
    a = demo.run(
        epochs=1,
        model_kind="mlp",
        seed=3,
        out=str(tmp_path / "a"),
        progress=False,
        log=lambda s: None,
    )
    b = demo.run(
        epochs=1,
        model_kind="mlp",
        seed=3,
        out=str(tmp_path / "b"),
        progress=False,
        log=lambda s: None,
    )
    assert a["history"] == b["history"]
    assert a["test_acc"] > 0.5
    assert main(["demo", "--epochs", "1", "--model", "mlp", "--out", str(tmp_path / "c")]) == 0
    captured = capsys.readouterr()
    assert "epoch  1/1" in captured.err and "acc=" in captured.err  # the tqdm bar
    assert "final test accuracy" in captured.out
    wa = tg.load(a["checkpoint"])["model"]
    wc = tg.load(str(tmp_path / "c" / "digits_mlp.safetensors"))["model"]
    assert set(wa) == set(wc)  # seed 0 vs 3: same structure, different weights
    assert not np.array_equal(wa["0.weight"].numpy(), wc["0.weight"].numpy())


def test_without_matplotlib_and_sklearn(tmp_path, monkeypatch):
    """The optional extras are optional: the shipped digits and a one-line plot hint."""
    for name in ("matplotlib", "sklearn", "sklearn.datasets"):
        monkeypatch.setitem(sys.modules, name, None)  # import -> ImportError
    lines = []
    result = demo.run(
        epochs=1, model_kind="mlp", out=str(tmp_path), progress=False, log=lines.append
    )
    assert result["source"] == "package" and result["test_acc"] > 0.5
    assert "from the copy shipped with tapegrad" in lines[0]
    assert result["png"] is None
    assert demo.PLOT_HINT in lines
    assert not (tmp_path / "training_curve.png").exists()


def test_bad_arguments():
    with pytest.raises(ValueError, match="--epochs must be at least 1"):
        demo.run(epochs=0, out="unused", log=lambda s: None)
    with pytest.raises(ValueError, match="unknown model 'rnn'"):
        demo.build_model("rnn")
    with pytest.raises(SystemExit):
        main(["demo", "--model", "rnn"])


def test_help_documents_the_options():
    out = subprocess.run(
        [sys.executable, "-m", "tapegrad", "demo", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for opt in ("--epochs", "--model", "{cnn,mlp}", "--seed", "--out"):
        assert opt in out


def test_bench_forwards_to_the_harness():
    r = subprocess.run(
        [sys.executable, "-m", "tapegrad", "bench", "--help"], capture_output=True, text=True
    )
    assert r.returncode == 0 and "usage: run.py" in r.stdout


def test_cli_rejects_zero_epochs_and_has_a_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["demo", "--epochs", "0"])
    assert e.value.code == 2
    assert "argument --epochs: must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"tapegrad {tg.__version__}"


@pytest.mark.parametrize(
    ("argv0", "prog"),
    [("/venv/bin/tapegrad", "tapegrad"), ("/src/tapegrad/__main__.py", "python -m tapegrad")],
)
def test_usage_names_the_real_program(monkeypatch, capsys, argv0, prog):
    monkeypatch.setattr(sys, "argv", [argv0])
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert capsys.readouterr().out.startswith(f"usage: {prog} demo ")


def test_history_has_test_loss_and_the_curve_a_log_loss_axis(tmp_path):
    pytest.importorskip("matplotlib")
    result = demo.run(
        epochs=2, model_kind="mlp", out=str(tmp_path), progress=False, log=lambda s: None
    )
    h = result["history"]
    assert len(h["test_loss"]) == 2 and 0 < h["test_loss"][1] < h["test_loss"][0] < 2.4
    # the test loss is the mean cross-entropy of the reloaded model on the test split
    import tapegrad.nn.functional as F

    ck = tg.load(result["checkpoint"])
    model = demo.build_model("mlp")
    model.load_state_dict(ck["model"])
    images, labels, _ = tg.data.load_digits()
    x = (images.astype(np.float32) / 16.0).reshape(len(images), -1)
    _, test = tg.data.random_split(tg.data.TensorDataset(x, labels), [0.8, 0.2], seed=0)
    model.eval()
    with tg.no_grad():
        ref = F.cross_entropy(
            model(tg.tensor(x[test.indices])), tg.tensor(labels[test.indices])
        ).item()
    assert abs(ref - h["test_loss"][1]) < 1e-5
    fig = demo.history_figure(h)
    loss_ax = fig.axes[0]
    assert loss_ax.get_yscale() == "log"
    curves = {line.get_label(): line.get_ydata().tolist() for line in loss_ax.get_lines()}
    assert curves == {"train": h["loss"], "test": h["test_loss"]}
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_demo_applies_the_thread_policy_and_restores_it(monkeypatch, tmp_path):
    from threadpoolctl import threadpool_info

    if not any(lib["user_api"] == "blas" for lib in threadpool_info()):
        pytest.skip("NumPy's BLAS is not visible to threadpoolctl")
    before = tg.get_num_threads()
    tg.set_num_threads(2)
    seen = []
    monkeypatch.delenv("TAPEGRAD_NUM_THREADS", raising=False)
    try:
        demo.run(
            epochs=1,
            model_kind="mlp",
            out=str(tmp_path),
            progress=False,
            log=lambda s: seen.append(tg.get_num_threads()),
        )
    finally:
        after = tg.get_num_threads()
        tg.set_num_threads(before)
    assert set(seen) == {1} and after == 2


def test_install_hints_give_the_checkout_and_the_package_form(monkeypatch):
    import pathlib
    import re

    src = pathlib.Path(tg.__file__).parent
    stale = [
        f"{p.relative_to(src)}:{i}"
        for p in src.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"install '?tapegrad\[", line)
    ]
    assert stale == []  # every hint goes through tg.utils.install_hint
    both = r'pip install -e "\.\[{0}\]" \(from a checkout\) or pip install "tapegrad\[{0}\]"'
    assert re.fullmatch(both.format("plot"), tg.utils.install_hint("plot"))
    assert re.search(both.format("plot"), demo.PLOT_HINT)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match=both.format("viz")):
        tg.viz._graphviz()
    for name in ("sklearn", "sklearn.datasets"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=both.format("sklearn")):
        tg.data.load_digits(source="sklearn")
