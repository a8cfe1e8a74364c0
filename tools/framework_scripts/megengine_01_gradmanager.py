# MegEngine GradManager (seed 003): with gm, record()/backward(), attach(model.parameters())
# in a training loop, callbacks, two managers for second order.
import megengine as mge
import megengine.functional as F
import megengine.module as M
import numpy as np
from megengine.autodiff import GradManager

with GradManager() as gm:
    x = mge.tensor([1.0, 2.0, 3.0])
    gm.attach(x)
    y = F.exp(x) * 2
    dy = F.ones_like(y)
    gm.backward(y, dy)
    print("with gm", x.grad.numpy().round(5).tolist())

x = mge.tensor([2.0])
gm = GradManager()
with gm:
    early = x * 3
    gm.attach(x)
    y = early * x
    gm.backward(y)
print("attach after compute", x.grad.numpy().tolist())


class Model(M.Module):
    def __init__(self):
        super().__init__()
        self.fc = M.Linear(3, 1)

    def forward(self, data):
        return F.mean(F.square(self.fc(data[0]) - data[1]))


def fixed_model():
    model = Model()
    model.fc.weight = mge.Parameter([[0.5, -1.0, 2.0]])
    model.fc.bias = mge.Parameter([0.25])
    return model


rng = np.random.RandomState(0)
dataset = [(mge.tensor(rng.normal(size=(4, 3)).astype("float32")),
            mge.tensor(rng.normal(size=(4, 1)).astype("float32"))) for _ in range(3)]

model = fixed_model()
gm = GradManager()
gm.attach(model.parameters())
for data in dataset:
    with gm:
        loss = model(data)
        gm.backward(loss)
print("accumulated", model.fc.weight.grad.numpy().round(5).tolist(),
      model.fc.bias.grad.numpy().round(5).tolist())

model = fixed_model()
gm = GradManager()
gm.attach(model.parameters())
for data in dataset:
    gm.record()
    loss = model(data)
    gm.backward(loss)
print("record/backward", model.fc.weight.grad.numpy().round(5).tolist())

model = fixed_model()
gm = GradManager()
gm.attach(model.parameters(), callbacks=lambda p, g: g + 1)
gm.attach(model.parameters(), callbacks=[lambda p, g: g * 2])
with gm:
    gm.backward(model(dataset[0]))
print("callbacks", model.fc.weight.grad.numpy().round(5).tolist())

x = mge.tensor([3.0])
gm1, gm2 = GradManager(), GradManager()
gm1.attach(x)
gm2.attach(x)
with gm1:
    with gm2:
        y = x ** 3
        gm2.backward(y)
    g = x.grad
    x.grad = None
    gm1.backward(g)
print("second order", g.numpy().tolist(), x.grad.numpy().tolist())
