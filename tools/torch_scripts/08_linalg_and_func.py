"""torch.linalg and torch.func: solve a system, determinants, and function transforms."""

import torch
import torch.func
import torch.linalg
from torch.func import grad

A = torch.tensor([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], dtype=torch.float64)
b = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
x = torch.linalg.solve(A, b)
print("solution", [f"{v:.8f}" for v in x.tolist()])
print(f"det {torch.linalg.det(A).item():.6f}")
sign, logabsdet = torch.linalg.slogdet(A)
print(f"slogdet {sign.item():.1f} {logabsdet.item():.8f}")
print("inverse row", [f"{v:.8f}" for v in torch.linalg.inv(A)[0].tolist()])
print(f"residual {torch.linalg.norm(A @ x - b).item():.2e}")


def energy(v):
    return 0.5 * v @ A @ v - b @ v


g = grad(energy)(torch.zeros(3, dtype=torch.float64))
print("grad at 0", g.tolist())
g2 = grad(energy)(x)
print(f"energy at the solution {energy(x).item():.8f}, grad norm {g2.norm().item():.1e}")
d2 = grad(lambda s: grad(lambda u: u**3)(s))(torch.tensor(2.0))
print("second derivative of u^3 at 2:", d2.item())
