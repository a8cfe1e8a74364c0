"""The PyTorch code of seed 002, run through the PyTorch facade (`import torch as t` ->
`import tapegrad.compat.torch as t`), with its stated behaviour checked."""

import numpy as np
import pytest


def test_requires_grad_propagates_and_no_grad():
    import tapegrad.compat.torch as torch

    x = torch.ones(2, requires_grad=True)
    y = x * 2
    z = y.sum()
    assert y.requires_grad and z.requires_grad  # every node that depends on x
    assert x.is_leaf and x.grad_fn is None and y.grad_fn is not None
    with torch.no_grad():
        w = x * 2
    assert not w.requires_grad and w.grad_fn is None
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_data_vs_detach_and_the_inplace_error():
    import tapegrad.compat.torch as t

    a = t.ones(3, 4, requires_grad=True)
    b = t.ones(3, 4, requires_grad=True)
    c = a * b

    assert isinstance(a.data, t.Tensor)  # 还是一个 tensor
    assert a.data.requires_grad is False  # 但是已经是独立于计算图之外

    d = a.data.sigmoid_()  # sigmoid_ 是个 inplace 操作，会修改 a 自身的值
    assert d.requires_grad is False
    np.testing.assert_allclose(a.detach().numpy(), np.full((3, 4), 1 / (1 + np.e**-1)), rtol=1e-6)

    tensor = a.detach()
    assert tensor.requires_grad is False

    # 统计 tensor 的一些指标，不希望被记录
    mean = tensor.mean()
    std = tensor.std()
    maximum = tensor.max()
    assert not (mean.requires_grad or std.requires_grad or maximum.requires_grad)

    tensor[0] = 1
    # 下面会报错: RuntimeError: one of the variables needed for gradient computation has
    # been modified by an inplace operation
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_data_changes_are_not_detected_but_detach_changes_are():
    import tapegrad.compat.torch as t

    a = t.ones(3, requires_grad=True)
    b = t.full((3,), 2.0, requires_grad=True)
    c = a * b
    a.data.mul_(3)  # .data: not tracked, not detected (as in PyTorch)
    c.sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [3.0, 3.0, 3.0])


def test_gradients_accumulate_and_retain_graph():
    import tapegrad.compat.torch as t

    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = (x**2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])  # 多次反向传播时梯度是累加的
    z = (x * 3).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        z.backward()


def test_multiply_add_custom_function():
    import tapegrad.compat.torch as t
    from tapegrad.compat.torch.autograd import Function

    class MultiplyAdd(Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            output = w * x + b
            return output

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            grad_w = grad_output * x
            grad_x = grad_output * w
            grad_b = grad_output * 1
            return grad_w, grad_x, grad_b

    x = t.ones(1)
    w = t.rand(1, requires_grad=True)
    b = t.rand(1, requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    z.backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0])  # dz/dw = x
    np.testing.assert_allclose(b.grad.numpy(), [1.0])
    assert z.grad_fn.name() == "MultiplyAddBackward"

    # the backward runs on tensors: it is differentiable (higher order)
    x = t.tensor([2.0], requires_grad=True)
    w = t.tensor([3.0], requires_grad=True)
    y = MultiplyAdd.apply(w, x, t.zeros(1))
    (gx,) = t.autograd.grad(y, x, create_graph=True)
    (gw,) = t.autograd.grad(gx, w)
    assert gw.item() == 1.0


def test_gradcheck_and_functional_through_the_facade():
    import tapegrad.compat.torch as torch

    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: (t.exp() * t).sum(), (x,))
    jac = torch.autograd.functional.jacobian(lambda t: t**2, x.detach())
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * x.detach().numpy()))


def test_simple_model_training_loop():
    import tapegrad.compat.torch as torch
    import tapegrad.compat.torch.nn.functional as F
    from tapegrad.compat.torch import nn, optim
    from tapegrad.compat.torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    X = torch.randn(64, 2)
    y = X[:, :1] * 2 - X[:, 1:] * 3 + 0.5
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)
    first = None
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
        first = loss.item() if first is None else first
    with torch.no_grad():
        final = F.mse_loss(model(X), y).item()
    assert final < 0.05 < first
