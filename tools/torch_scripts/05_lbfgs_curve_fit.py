"""Fit a damped oscillation's parameters with L-BFGS and a strong Wolfe line search."""

import torch

t = torch.linspace(0.0, 4.0, 50, dtype=torch.float64)
observed = 1.5 * torch.exp(-0.4 * t) * torch.cos(2.2 * t) + 0.01 * torch.sin(17 * t)

params = torch.tensor([1.0, 0.1, 2.0], dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.LBFGS(
    [params], lr=1, max_iter=50, history_size=10, line_search_fn="strong_wolfe"
)


def closure():
    optimizer.zero_grad()
    amplitude, decay, frequency = params[0], params[1], params[2]
    model = amplitude * torch.exp(-decay * t) * torch.cos(frequency * t)
    loss = ((model - observed) ** 2).mean()
    loss.backward()
    return loss


for outer in range(3):
    loss = optimizer.step(closure)
    print(f"round {outer} loss {loss.item():.8e}")
print("fit", [f"{v:.6f}" for v in params.detach().tolist()])

# the fixed-step variant on a quadratic bowl
w = torch.tensor([3.0, -2.0], dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([w], lr=0.5, max_iter=10)


def bowl():
    opt.zero_grad()
    value = (w[0] - 1) ** 2 + 10 * (w[1] + 0.5) ** 2
    value.backward()
    return value


for _ in range(3):
    opt.step(bowl)
print("bowl", [f"{v:.6f}" for v in w.detach().tolist()])
