"""Fit y = sin(x) with a cubic polynomial: nn.Linear on (x, x^2, x^3), SGD, MSE."""

import math

import torch

x = torch.linspace(-math.pi, math.pi, 200)
y = torch.sin(x)
powers = torch.tensor([1, 2, 3])
features = x.unsqueeze(-1).pow(powers)

model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():  # a fixed start, so the run does not depend on the generator
    model[0].weight.copy_(torch.tensor([[0.1, -0.05, 0.02]]))
    model[0].bias.fill_(0.0)
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)

for step in range(400):
    prediction = model(features)
    loss = loss_fn(prediction, y)
    if step % 100 == 99:
        print(f"step {step + 1} loss {loss:.5f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

layer = model[0]
print(
    f"y = {layer.bias.item():.5f} + {layer.weight[0, 0].item():.5f} x"
    f" + {layer.weight[0, 1].item():.5f} x^2 + {layer.weight[0, 2].item():.5f} x^3"
)
