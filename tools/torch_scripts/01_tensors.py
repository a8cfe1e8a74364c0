"""Tensors: creation, indexing, arithmetic and the small conveniences scripts lean on."""

import torch

torch.manual_seed(0)
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
print("mps available:", torch.backends.mps.is_available())
torch.backends.cudnn.benchmark = False

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print("shape", tuple(x.shape), "sum", x.sum().item(), "mean", f"{x.mean():.4f}")

# rows picked per label, as a loss function does it
labels = torch.tensor([3, 0, 2])
picked = x[range(3), labels]
print("picked", picked.tolist())
print("rows 0 and 2", x[[0, 2]].tolist())
mask = x[:, 0] > 3
print("masked rows", x[mask].tolist())
print("layout of x3[0, :, [1, 2]]", tuple(torch.arange(24).reshape(2, 3, 4)[0, :, [1, 2]].shape))

# transposes are not contiguous: view needs contiguous(), reshape copies as needed
t = x.T
print("contiguous", x.is_contiguous(), t.is_contiguous())
print("flat", t.contiguous().view(-1)[:5].tolist(), t.reshape(-1)[5:8].tolist())

# out= and the legacy constructors
out = torch.empty(3, 3)
torch.matmul(x[:, :3], x[:, :3].T, out=out)
print("gram diag", torch.diagonal(out).tolist())
acc = torch.zeros(4)
torch.add(x[0], x[1], out=acc)
print("added", acc.tolist())
legacy = torch.FloatTensor([[1, 2], [3, 4]])
print(
    "legacy",
    legacy.dtype == torch.float32,
    isinstance(legacy, torch.FloatTensor),
    torch.LongTensor([1, 2]).dtype == torch.int64,
)

# broadcasting, reductions, comparisons
a = torch.linspace(-1, 1, 5)
b = a.unsqueeze(1) * a.unsqueeze(0)
print("outer max", b.max().item(), "argmax", b.argmax().item())
print("clamped", a.clamp(min=-0.5, max=0.5).tolist())
print("any", bool((a > 0.9).any()), "all", bool((a >= -1).all()))
values, indices = torch.sort(torch.tensor([3.0, 1.0, 2.0]), descending=True)
print("sorted", values.tolist(), indices.tolist())
print(f"norm {torch.linalg.norm(a):.6f}")
