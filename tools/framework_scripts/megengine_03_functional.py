# megengine.functional where it differs from PyTorch, and the losses with their gradients.
import megengine as mge
import megengine.functional as F
import numpy as np
from megengine.autodiff import GradManager

a = mge.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = mge.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
print("dtypes", mge.tensor([1, 2]).dtype == np.int32, mge.tensor([1.0]).dtype == np.float32)
print("matmul transpose_b", F.matmul(a, b, transpose_b=True).numpy().tolist())
print("transpose", F.transpose(a, (1, 0)).numpy().tolist())
print("sum keepdims", F.sum(a, axis=1, keepdims=True).numpy().tolist())
print("max", F.max(a, axis=0).numpy().tolist(), F.min(a).item())
print("var std", round(F.var(a).item(), 5), round(F.std(a).item(), 5))
print("softmax default axis", F.softmax(a).numpy().round(5).tolist())
print("concat", F.concat([a, b], axis=1).numpy().tolist())
print("split", [p.numpy().tolist() for p in F.split(a, 3, axis=1)])
print("repeat", F.repeat(a, 2, axis=1).numpy().tolist())
print("clip", F.clip(a, 2, 5).numpy().tolist())
print("arange", F.arange(0, 1, 0.25).numpy().tolist())

logits = mge.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]])
label = mge.tensor([2, 0])
gm = GradManager().attach(logits)
with gm:
    loss = F.nn.cross_entropy(logits, label)
    gm.backward(loss)
print("cross_entropy", round(loss.item(), 5), logits.grad.numpy().round(5).tolist())

p = mge.tensor([0.2, 0.7, 0.9])
t = mge.tensor([0.0, 1.0, 1.0])
gm = GradManager().attach(p)
with gm:
    loss = F.nn.binary_cross_entropy(p, t, with_logits=False)
    gm.backward(loss)
print("bce probs", round(loss.item(), 5), p.grad.numpy().round(5).tolist())
gm = GradManager().attach(p)
p.grad = None
with gm:
    loss = F.nn.binary_cross_entropy(p, t) + F.nn.l1_loss(p, t)
    gm.backward(loss)
print("bce logits + l1", round(loss.item(), 5), p.grad.numpy().round(5).tolist())

x = mge.tensor(np.arange(32, dtype="float32").reshape(2, 1, 4, 4) / 10.0)
w = mge.tensor(np.full((2, 1, 3, 3), 0.1, dtype="float32"))
gm = GradManager().attach([x, w])
with gm:
    y = F.nn.max_pool2d(F.relu(F.nn.conv2d(x, w, padding=1)), 2)
    out = (y * F.arange(8).reshape(1, 2, 2, 2)).sum()
    gm.backward(out)
print("conv pool", y.numpy().round(5).ravel().tolist())
print("conv grads", w.grad.numpy().round(4).ravel().tolist(),
      x.grad.numpy().round(4).ravel()[:8].tolist())
