# A small PyTorch model (Linear, Conv2d, BatchNorm, pooling) with fixed weights, trained
# with SGD and Adam.
import torch
import torch.nn.functional as F
from torch import nn, optim


def fixed(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
    return model


X = torch.linspace(-1, 1, 16).reshape(8, 2)
Y = X @ torch.tensor([[2.0], [-1.0]]) + 0.5
for name in ("sgd", "adam"):
    model = fixed(nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1)))
    if name == "sgd":
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
    else:
        opt = optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        loss = F.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
    print(name, losses)

cnn = fixed(nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8, 3)))
x = torch.arange(32, dtype=torch.float32).reshape(2, 1, 4, 4) / 10.0
loss = F.cross_entropy(cnn(x), torch.tensor([0, 2]))
loss.backward()
print("cnn loss", round(loss.item(), 5))
print("conv grad", [round(v, 4) for v in cnn[0].weight.grad.flatten().tolist()])
print("running mean", [round(v, 5) for v in cnn[1].running_mean.tolist()])
cnn.eval()
print("eval", [round(v, 5) for v in cnn(x).flatten().tolist()])
