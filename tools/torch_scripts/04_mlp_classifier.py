"""Classify two interleaved spirals with an MLP: Dataset, DataLoader, CrossEntropyLoss,
Adam, a learning-rate schedule, train/eval modes and a saved state_dict."""

import math

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
n = 120
t = torch.linspace(0.2, 3 * math.pi, n // 2)
arm = torch.stack([t * torch.cos(t), t * torch.sin(t)], dim=1) / 10
points = torch.cat([arm, -arm])
labels = torch.cat([torch.zeros(n // 2, dtype=torch.long), torch.ones(n // 2, dtype=torch.long)])


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.head = nn.Linear(16, 2)
        self.dropout = nn.Dropout(0.0)

    def forward(self, inp):
        return self.head(self.dropout(self.body(inp)))


model = MLP()
with torch.no_grad():  # a generator-independent start
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 1.3 + i).reshape(p.shape) * 0.8)

loader = DataLoader(TensorDataset(points, labels), batch_size=30, shuffle=False)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)

for epoch in range(60):
    model.train()
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(xb)
    scheduler.step()
    if epoch % 20 == 19:
        print(f"epoch {epoch + 1} loss {total / n:.5f} lr {scheduler.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    logits = model(points)
    probs = torch.softmax(logits, dim=1)
    accuracy = (logits.argmax(dim=1) == labels).float().mean()
    true_class_prob = probs[range(n), labels]
print(f"accuracy {accuracy:.4f} mean p(true) {true_class_prob.mean():.5f}")
state = model.state_dict()
print("state keys", sorted(state.keys()))
