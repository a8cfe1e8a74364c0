"""Autograd: gradients, accumulation, in-place updates, higher-order gradients and a custom
Function with its own (twice-differentiable) backward."""

import torch

x = torch.linspace(-2.0, 2.0, 5, requires_grad=True)
y = x * 3 / 2
y += 1  # in place after a division: PyTorch keeps the graph
loss = (y**2).sum()
loss.backward()
print("grad", x.grad.tolist())

# gradients accumulate until zeroed
(x**3).sum().backward()
print("accumulated", [round(v, 6) for v in x.grad.tolist()])
x.grad.zero_()

# second derivative through create_graph
z = torch.tensor(1.5, requires_grad=True)
f = z**4 - 2 * z**2
(g,) = torch.autograd.grad(f, z, create_graph=True)
(h,) = torch.autograd.grad(g, z)
print(f"f'={g.item():.6f} f''={h.item():.6f}")

# retain_grad on an intermediate
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
hidden = torch.tanh(w * 2)
hidden.retain_grad()
hidden.sum().backward()
print("hidden grad", hidden.grad.tolist())
print("w grad", [f"{v:.6f}" for v in w.grad.tolist()])

with torch.no_grad():
    frozen = w * 2
print("no_grad requires_grad:", frozen.requires_grad)


class Cube(torch.autograd.Function):
    """x ** 3 with a backward written out, itself differentiable."""

    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        return inp**3

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        return grad_output * 3 * inp**2


u = torch.tensor([0.5, 2.0], requires_grad=True)
out = Cube.apply(u).sum()
(du,) = torch.autograd.grad(out, u, create_graph=True)
(ddu,) = torch.autograd.grad(du.sum(), u)
print("cube d", du.tolist(), "dd", ddu.tolist())
print(
    "gradcheck",
    torch.autograd.gradcheck(
        Cube.apply, (torch.tensor([0.3, -1.1], dtype=torch.float64, requires_grad=True),)
    ),
)
