# A small MegEngine model trained with SGD (momentum) and Adam: losses and weights.
import megengine as mge
import megengine.functional as F
import megengine.module as M
import megengine.optimizer as optim
import numpy as np
from megengine.autodiff import GradManager


class Net(M.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = M.Linear(2, 4)
        self.fc2 = M.Linear(4, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def fixed_net():
    net = Net()
    net.fc1.weight = mge.Parameter(np.linspace(-0.5, 0.5, 8).reshape(4, 2).astype("float32"))
    net.fc1.bias = mge.Parameter(np.array([0.1, -0.1, 0.2, 0.0], dtype="float32"))
    net.fc2.weight = mge.Parameter(np.array([[0.3, -0.2, 0.5, 0.4]], dtype="float32"))
    net.fc2.bias = mge.Parameter(np.array([0.05], dtype="float32"))
    return net


X = mge.tensor(np.linspace(-1, 1, 16).reshape(8, 2).astype("float32"))
Y = mge.tensor((np.linspace(-1, 1, 16).reshape(8, 2) @ [[2.0], [-1.0]] + 0.5).astype("float32"))
for name in ("sgd", "adam"):
    net = fixed_net()
    gm = GradManager().attach(net.parameters())
    if name == "sgd":
        opt = optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
    else:
        opt = optim.Adam(net.parameters(), lr=0.02)
    losses = []
    for _ in range(8):
        with gm:
            loss = F.nn.square_loss(net(X), Y)
            gm.backward(loss)
        opt.step().clear_grad()
        losses.append(round(float(loss.item()), 5))
    print(name, losses)
    print("  fc2", net.fc2.weight.numpy().round(5).tolist(), net.fc2.bias.numpy().round(5).tolist())
