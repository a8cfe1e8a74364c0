# PyTorch autograd notes (seed 002): requires_grad propagation, no_grad, .data vs detach,
# accumulation, retain_graph, hooks, the MultiplyAdd custom Function, higher order.
import torch as t
from torch.autograd import Function

a = t.ones(3, 4, requires_grad=True)
b = t.ones(3, 4, requires_grad=True)
c = a * b
print("flags", a.data.requires_grad, c.requires_grad, a.is_leaf, c.is_leaf)
d = a.data.sigmoid_()
print("sigmoid_ through .data", d.requires_grad, a[0, :2].tolist())
tensor = a.detach()
print("detach", tensor.requires_grad, round(tensor.mean().item(), 5), round(tensor.std().item(), 5))
tensor[0] = 1
try:
    c.sum().backward()
    print("in-place error", False)
except RuntimeError:
    print("in-place error", True)

with t.no_grad():
    e = a * 2
print("no_grad", e.requires_grad)

x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 2).sum()
y.backward(retain_graph=True)
y.backward()
print("accumulated", x.grad.tolist())

x.grad = None
h = x * 3
h.retain_grad()
seen = []
handle = h.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
(h ** 2).sum().backward()
handle.remove()
print("hook", seen, h.grad.tolist(), x.grad.tolist())


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


x = t.tensor([2.0, -1.0])
w = t.tensor([0.5, 3.0], requires_grad=True)
b = t.tensor([1.0, 1.0], requires_grad=True)
z = MultiplyAdd.apply(w, x, b)
z.sum().backward()
print("MultiplyAdd", z.tolist(), w.grad.tolist(), b.grad.tolist())

x = t.tensor([3.0], requires_grad=True)
(g,) = t.autograd.grad(x ** 3, x, create_graph=True)
(gg,) = t.autograd.grad(g, x)
print("higher order", g.tolist(), gg.tolist())
