"""Forward-mode AD and torch.func: a Jacobian-vector product with dual tensors, the same with
torch.func.jvp, a Hessian-vector product forward-over-reverse, and per-sample gradients of
a small model with vmap(grad(...))."""

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import functional_call, grad, jvp, vmap

torch.manual_seed(0)


def f(x):
    return torch.sin(x) * x.exp() + (x**2).sum()


x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float64)
v = torch.ones(5, dtype=torch.float64)
with fwAD.dual_level():
    out = f(fwAD.make_dual(x, v))
    primal, tangent = fwAD.unpack_dual(out)
print("primal", [f"{p:.8f}" for p in primal.tolist()])
print("tangent (dual)", [f"{t:.8f}" for t in tangent.tolist()])
_, t2 = jvp(f, (x,), (v,))
print("tangent (func.jvp)", [f"{t:.8f}" for t in t2.tolist()])


def scalar(x):
    return (torch.tanh(x) * x).sum()


_, hvp = jvp(grad(scalar), (x,), (v,))  # forward over reverse
print("hvp", [f"{h:.8f}" for h in hvp.tolist()])

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
model = model.double()
# fixed values (the two frameworks' random generators differ)
params = {
    k: torch.linspace(-0.5, 0.5, p.numel(), dtype=torch.float64).reshape(p.shape)
    for k, p in model.named_parameters()
}
data = torch.sin(torch.arange(24, dtype=torch.float64)).reshape(6, 4)
labels = torch.tensor([0, 1, 2, 0, 1, 2])


def loss_one(p, sample, label):
    logits = functional_call(model, p, (sample.unsqueeze(0),))
    return torch.nn.functional.cross_entropy(logits, label.unsqueeze(0))


per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, data, labels)
loop = [grad(loss_one)(params, data[i], labels[i]) for i in range(6)]
for name in params:
    diff = max((per_sample[name][i] - loop[i][name]).abs().max().item() for i in range(6))
    print(f"{name}: per-sample grads {tuple(per_sample[name].shape)} equal the loop:", diff < 1e-12)
print(f"first weight grad norm {per_sample['0.weight'][0].norm().item():.8f}")
