"""The MegEngine GradManager code of seed 003, through the MegEngine facade (only the import
lines changed: `megengine` -> `tapegrad.compat.megengine`)."""

import numpy as np
import pytest


def _model_and_data():
    import tapegrad.compat.megengine as mge
    import tapegrad.compat.megengine.functional as F
    import tapegrad.compat.megengine.module as M

    class Model(M.Module):
        def __init__(self):
            super().__init__()
            self.fc = M.Linear(3, 1)

        def forward(self, x):
            return F.mean(F.square(self.fc(x[0]) - x[1]))

    model = Model()
    model.fc.weight.data = mge.tensor([[0.5, -1.0, 2.0]])
    model.fc.bias.data = mge.tensor([0.25])
    rng = np.random.default_rng(0)
    dataset = [
        (mge.tensor(rng.normal(size=(4, 3))), mge.tensor(rng.normal(size=(4, 1)))) for _ in range(3)
    ]
    return model, dataset


def _expected_grads(model, dataset):
    w, b = model.fc.weight.numpy(), model.fc.bias.numpy()
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    for x, y in dataset:
        x, y = x.numpy(), y.numpy()
        err = x @ w.T + b - y
        gw += 2 * (err.T @ x) / err.size
        gb += 2 * err.sum(0) / err.size
    return gw, gb


def test_with_gradmanager_attach_before_compute():
    import tapegrad.compat.megengine as mge
    import tapegrad.compat.megengine.functional as F
    from tapegrad.compat.megengine.autodiff import GradManager

    def get_x():
        return mge.tensor([1.0, 2.0, 3.0])

    def f(x):
        return F.exp(x) * 2

    with GradManager() as gm:
        x = get_x()
        gm.attach(x)  # must be placed before any computation on x that needs differentiation
        y = f(x)
        dy = F.ones_like(y)
        gm.backward(y, dy)  # doesn't need x, already known via attach()
        dx = x.grad  # backward() saves result to .grad attribute
    np.testing.assert_allclose(dx.numpy(), 2 * np.exp([1.0, 2.0, 3.0]), rtol=1e-6)


def test_computation_before_attach_is_a_constant():
    import tapegrad.compat.megengine as mge
    from tapegrad.compat.megengine.autodiff import GradManager

    x = mge.tensor([2.0])
    gm = GradManager()
    with gm:
        early = x * 3  # computed before attach: ignored by autodiff
        gm.attach(x)
        y = early * x
        gm.backward(y)
    np.testing.assert_allclose(x.grad.numpy(), [6.0])  # d(6 * x)/dx, not 12x


def test_training_loop_with_gm_context():
    from tapegrad.compat.megengine.autodiff import GradManager

    model, dataset = _model_and_data()
    gw, gb = _expected_grads(model, dataset)

    gm = GradManager()
    gm.attach(model.parameters())

    for data in dataset:
        with gm:
            loss = model(data)
            gm.backward(loss)
    # gradients w.r.t. parameters is accumulated into their .grad attributes
    np.testing.assert_allclose(model.fc.weight.grad.numpy(), gw, rtol=1e-5)
    np.testing.assert_allclose(model.fc.bias.grad.numpy(), gb, rtol=1e-5)


def test_training_loop_with_record_and_backward():
    from tapegrad.compat.megengine.autodiff import GradManager

    model, dataset = _model_and_data()
    gw, _ = _expected_grads(model, dataset)
    gm = GradManager()
    gm.attach(model.parameters())

    for data in dataset:
        gm.record()
        loss = model(data)
        gm.backward(loss)
        # backward() will clear recorded history and free resources
        # call release() if backward() is not called
        # gm.release()
    np.testing.assert_allclose(model.fc.weight.grad.numpy(), gw, rtol=1e-5)
    assert not gm.is_recording
    gm.record()
    model(dataset[0])
    gm.release()  # no backward: release() stops recording
    assert not gm.is_recording


def test_parameters_untracked_outside_gm_and_optimizer_chaining():
    import tapegrad.compat.megengine as mge
    import tapegrad.compat.megengine.optimizer as optim
    from tapegrad.compat.megengine.autodiff import GradManager

    model, dataset = _model_and_data()
    w0 = model.fc.weight.numpy().copy()  # .numpy() works: parameters require no grad
    out = model(dataset[0])
    assert out.grad_fn is None  # nothing is recorded outside a GradManager
    gm = GradManager().attach(model.parameters())
    opt = optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(20):
        for data in dataset:
            with gm:
                loss = model(data)
                gm.backward(loss)
            opt.step().clear_grad()
            losses.append(loss.item())
    assert model.fc.weight.grad is None
    assert not np.allclose(model.fc.weight.numpy(), w0)
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    assert isinstance(model.fc.weight, mge.Tensor)


def test_allreduce_callback_any_case_and_custom_callback():
    import tapegrad.compat.megengine.distributed as dist
    from tapegrad.compat.megengine.autodiff import GradManager

    model, dataset = _model_and_data()
    gw, _ = _expected_grads(model, dataset[:1])
    gm = GradManager()
    gm.attach(model.parameters(), callbacks=dist.make_allreduce_cb("MEAN"))
    seen = []
    gm.attach(model.parameters(), callbacks=lambda p, g: seen.append(p) or g * 2)
    with gm:
        loss = model(dataset[0])
        gm.backward(loss)
    # one process: the all-reduce mean is the identity; the second callback doubles
    np.testing.assert_allclose(model.fc.weight.grad.numpy(), 2 * gw, rtol=1e-5)
    assert len(seen) == 2
    with pytest.raises(ValueError, match="mean"):
        dist.make_allreduce_cb("median")


def test_seed_callback_keyword_spelling():
    # the seed writes attach(..., callback=dist.make_allreduce_cb("MEAN"))
    import tapegrad.compat.megengine.distributed as dist
    from tapegrad.compat.megengine.autodiff import GradManager

    model, dataset = _model_and_data()
    gm = GradManager()
    gm.attach(model.parameters(), callback=dist.make_allreduce_cb("MEAN"))
    with gm:
        gm.backward(model(dataset[0]))
    assert model.fc.weight.grad is not None


def test_two_managers_give_second_order():
    import tapegrad.compat.megengine as mge
    from tapegrad.compat.megengine.autodiff import GradManager

    x = mge.tensor([3.0])
    gm1, gm2 = GradManager(), GradManager()
    gm1.attach(x)
    gm2.attach(x)
    with gm1:
        with gm2:
            y = x**3
            gm2.backward(y)  # x.grad = 3x^2, itself recorded by gm1
        g = x.grad
        x.grad = None
        gm1.backward(g)
    np.testing.assert_allclose(x.grad.numpy(), [18.0])  # 6x
