"""A small CNN on synthetic 8x8 images (stripes vs. checks): Conv2d, MaxPool2d, view,
Linear, SGD with momentum, and an evaluation pass."""

import torch
import torch.nn.functional as F
from torch import nn

idx = torch.arange(8, dtype=torch.float32)
stripes = torch.sin(idx).unsqueeze(0).expand(8, 8)
checks = torch.cos(idx).unsqueeze(0) * torch.cos(idx).unsqueeze(1)
images = torch.stack(
    [stripes * (1 + 0.1 * k) if k % 2 == 0 else checks * (1 + 0.1 * k) for k in range(16)]
).unsqueeze(1)
targets = torch.tensor([k % 2 for k in range(16)])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = x.view(x.size(0), -1)
        return self.fc(x)


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(
            torch.cos(torch.arange(p.numel(), dtype=torch.float32) * (i + 1)).reshape(p.shape) * 0.3
        )
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

for epoch in range(30):
    optimizer.zero_grad()
    out = net(images)
    loss = F.cross_entropy(out, targets)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1} loss {loss.item():.6f}")

net.eval()
with torch.no_grad():
    predictions = net(images).argmax(1)
print("correct", int((predictions == targets).sum()), "of", len(targets))
print("conv1 weight norm", f"{net.conv1.weight.norm():.6f}")
