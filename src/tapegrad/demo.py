"""`python -m tapegrad demo`: train a small CNN (or MLP) on the 8x8 handwritten digits.

The whole user journey in one file: a real data set, a DataLoader, a model built from
`tg.nn`, an optimizer and a scheduler, a progress bar, evaluation, a safetensors checkpoint
that is reloaded and checked, and a training-curve PNG.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

import numpy as np

from .utils.hints import install_hint

DEFAULT_EPOCHS = {"cnn": 10, "mlp": 20}
PLOT_HINT = f"for the training-curve PNG: {install_hint('plot')}"


def build_model(kind: str):
    """The demo's networks: a small CNN for (N, 1, 8, 8) images, or an MLP for (N, 64)."""
    from . import nn

    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),  # 8x8 -> 4x4
            nn.Flatten(),
            nn.Linear(64 * 4 * 4, 128),
            nn.ReLU(),
            nn.Linear(128, 10),
        )
    if kind == "mlp":
        return nn.Sequential(
            nn.Linear(64, 256),
            nn.ReLU(),
            nn.Linear(256, 128),
            nn.ReLU(),
            nn.Linear(128, 10),
        )
    raise ValueError(f"unknown model {kind!r}: choose 'cnn' or 'mlp'")


def evaluate(model, x, y, batch_size: int = 512) -> float:
    """Accuracy of `model` on tensors `x`, `y` (eval mode, nothing recorded)."""
    return evaluate_with_loss(model, x, y, batch_size)[0]


def evaluate_with_loss(model, x, y, batch_size: int = 512) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) of `model` on tensors `x`, `y` (eval mode)."""
    import tapegrad as tg
    import tapegrad.nn.functional as F

    model.eval()
    correct, loss_sum = 0, 0.0
    with tg.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(x[start : start + batch_size])
            yb = y[start : start + batch_size]
            loss_sum += F.cross_entropy(logits, yb, reduction="sum").item()
            pred = logits.detach().numpy().argmax(axis=1)
            correct += int((pred == yb.numpy()).sum())
    model.train()
    return correct / len(y), loss_sum / len(y)


@contextlib.contextmanager
def thread_policy(threads: int | None):
    """The project's thread policy while the demo trains (`tg.threads.apply_thread_policy`:
    `threads`, else $TAPEGRAD_NUM_THREADS, else one BLAS thread), restored afterwards;
    `threads=0` leaves BLAS as it is. The matrices are small: one thread is as fast on a
    quiet machine, and on a busy one BLAS threads spin-wait and slow every step."""
    from . import threads as _threads

    if threads == 0:
        yield
        return
    before = _threads.get_num_threads()
    _threads.apply_thread_policy(threads)
    try:
        yield
    finally:
        _threads.set_num_threads(before)


def run(
    epochs: int | None = None,
    model_kind: str = "cnn",
    seed: int = 0,
    out: str = "tapegrad-demo",
    batch_size: int = 32,
    lr: float = 3e-3,
    progress: bool = True,
    log=print,
    threads: int | None = None,
    compile: bool = False,
) -> dict:  # noqa: A002 - the --compile flag's name
    """Train, evaluate, checkpoint and plot; returns the history and the final accuracy.

    Args:
        epochs: passes over the training set (default 10 for the CNN, 20 for the MLP).
        model_kind: "cnn" or "mlp". seed: seeds the split, the initialisation and the shuffling.
        out: folder for the checkpoint, the curve PNG and history.json (created).
        progress: show a tqdm bar (loss and accuracy so far) for each epoch.
        threads: BLAS threads while training (None: the policy, one thread unless
            $TAPEGRAD_NUM_THREADS says otherwise; 0: leave BLAS alone); see `thread_policy`.
        compile: run each training step (zero_grad, forward, backward, Adam's step) under
            `tg.compile`: traced once per batch shape, then replayed; the same numbers.
    """
    with thread_policy(threads):
        return _run(epochs, model_kind, seed, out, batch_size, lr, progress, log, compile)


def _run(epochs, model_kind, seed, out, batch_size, lr, progress, log, compiled=False) -> dict:
    from tqdm.auto import tqdm

    import tapegrad as tg
    import tapegrad.nn.functional as F

    epochs = DEFAULT_EPOCHS[model_kind] if epochs is None else int(epochs)
    if epochs < 1:
        raise ValueError(f"--epochs must be at least 1, got {epochs}")
    t0 = time.perf_counter()
    tg.manual_seed(seed)
    images, labels, source = tg.data.load_digits()
    x_all = images.astype(np.float32) / 16.0
    x_all = x_all[:, None] if model_kind == "cnn" else x_all.reshape(len(x_all), -1)
    dataset = tg.data.TensorDataset(x_all, labels)
    train_set, test_set = tg.data.random_split(dataset, [0.8, 0.2], seed=seed)
    x_test = tg.tensor(x_all[test_set.indices])
    y_test = tg.tensor(labels[test_set.indices])
    loader = tg.data.DataLoader(train_set, batch_size=batch_size, shuffle=True, seed=seed)
    where = "scikit-learn" if source == "sklearn" else "the copy shipped with tapegrad"
    log(
        f"digits: {len(dataset)} 8x8 images from {where} ({len(train_set)} train, "
        f"{len(test_set)} test); model: {model_kind}, {epochs} epochs"
    )

    model = build_model(model_kind)
    n_params = sum(p.numel() for p in model.parameters())
    opt = tg.optim.Adam(model.parameters(), lr=lr)
    sched = tg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=lr * 0.05)
    log(
        f"{n_params:,} parameters; Adam(lr={lr}) with cosine annealing"
        + ("; training steps compiled (tg.compile)" if compiled else "")
    )

    def train_step(xb, yb):
        opt.zero_grad()
        logits = model(xb)
        loss = F.cross_entropy(logits, yb)
        predictions = logits.detach()  # before backward: a compiled step ends with the update
        loss.backward()
        opt.step()
        return loss, predictions

    step = tg.compile(train_step) if compiled else train_step

    history: dict[str, list] = {"loss": [], "train_acc": [], "test_acc": [], "test_loss": []}
    for epoch in range(1, epochs + 1):
        total, correct, loss_sum = 0, 0, 0.0
        bar = tqdm(
            loader,
            desc=f"epoch {epoch:>2}/{epochs}",
            leave=False,
            disable=not progress,
            unit="batch",
        )
        last = len(loader) - 1
        for i, (xb, yb) in enumerate(bar):
            loss, logits = step(xb, yb)
            n = len(yb)
            total += n
            loss_sum += loss.item() * n
            correct += int((logits.numpy().argmax(axis=1) == yb.numpy()).sum())
            # redrawn at tqdm's own pace, and once more with the epoch's final numbers
            bar.set_postfix(
                loss=f"{loss_sum / total:.4f}", acc=f"{correct / total:.1%}", refresh=i == last
            )
        sched.step()
        test_acc, test_loss = evaluate_with_loss(model, x_test, y_test)
        history["loss"].append(loss_sum / total)
        history["train_acc"].append(correct / total)
        history["test_acc"].append(test_acc)
        history["test_loss"].append(test_loss)
        log(
            f"epoch {epoch:>2}/{epochs}  loss {loss_sum / total:.4f}  test loss {test_loss:.4f}"
            f"  train acc {correct / total:6.2%}  test acc {test_acc:6.2%}  "
            f"({time.perf_counter() - t0:.1f}s)"
        )

    os.makedirs(out, exist_ok=True)
    ckpt = os.path.join(out, f"digits_{model_kind}.safetensors")
    tg.save(
        {
            "model": model.state_dict(),
            "optim": opt.state_dict(),
            "epoch": epochs,
            "model_kind": model_kind,
            "test_acc": history["test_acc"][-1],
        },
        ckpt,
    )
    reloaded = build_model(model_kind)
    reloaded.load_state_dict(tg.load(ckpt)["model"])
    reload_acc = evaluate(reloaded, x_test, y_test)
    log(f"checkpoint: {ckpt} (reloaded: test acc {reload_acc:.2%})")
    with open(os.path.join(out, "history.json"), "w") as f:
        json.dump(history, f, indent=1)
    png = plot_history(history, os.path.join(out, "training_curve.png"))
    log(f"training curve: {png}" if png else PLOT_HINT)
    elapsed = time.perf_counter() - t0
    log(f"final test accuracy {history['test_acc'][-1]:.2%} in {elapsed:.1f}s")
    return {
        "history": history,
        "test_acc": history["test_acc"][-1],
        "reload_acc": reload_acc,
        "checkpoint": ckpt,
        "png": png,
        "seconds": elapsed,
        "source": source,
        "compiled": compiled,
    }


def plot_history(history: dict, path: str) -> str | None:
    """Loss (train and test, on a log axis: the late epochs stay visible) and accuracy per
    epoch as a PNG; None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig = history_figure(history)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def history_figure(history: dict):
    """The matplotlib figure `plot_history` saves (loss panel, accuracy panel)."""
    import matplotlib.pyplot as plt

    epochs = np.arange(1, len(history["loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.plot(epochs, history["loss"], marker="o", label="train")
    if history.get("test_loss"):
        ax1.plot(epochs, history["test_loss"], marker="s", label="test")
    ax1.set_yscale("log")
    ax1.set(title="loss", xlabel="epoch", ylabel="cross-entropy (log scale)")
    ax1.legend()
    ax2.plot(epochs, np.array(history["train_acc"]) * 100, marker="o", label="train")
    ax2.plot(epochs, np.array(history["test_acc"]) * 100, marker="s", label="test")
    ax2.set(title="accuracy", xlabel="epoch", ylabel="%")
    ax2.legend()
    fig.suptitle("tapegrad demo: 8x8 handwritten digits")
    fig.tight_layout()
    return fig
