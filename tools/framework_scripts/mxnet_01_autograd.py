# MXNet autograd tutorial (seed 001): attach_grad/record/backward, head gradients,
# Python control flow, autograd.grad with create_graph, mark_variables.
import math

import mxnet as mx
from mxnet import autograd

x = mx.np.array([1, 2, 3])
x.attach_grad()
with autograd.record():
    y = 2 * x ** 2
y.backward()
print("grad 2x^2", x.grad.asnumpy().tolist())

x = mx.np.array([2, ])
x.attach_grad()
with autograd.record():
    y = x ** 3
dzdy = mx.np.array(2 * y.asnumpy())
y.backward(dzdy)
print("head grad", x.grad.asnumpy().tolist())


def f(x):
    y = x
    if x < 0.75:
        num_loops = math.floor(1 / (1 - x.item()))
        for _ in range(num_loops):
            y = y * x
    else:
        y = y * 0
    return y


def get_grad(f, x):
    x.attach_grad()
    with autograd.record():
        y = f(x)
    y.backward()
    return x.grad


xs = mx.np.arange(0.0, 1.0, step=0.1)
print("piecewise", [round(get_grad(f, x).item(), 5) for x in xs])

z = mx.nd.array([3.0])
z.attach_grad()
with autograd.record():
    w = mx.nd.sin(z)
    dz = autograd.grad(w, [z], create_graph=True)[0]
dz.backward()
print("second order", dz.asnumpy().tolist(), z.grad.asnumpy().tolist())

v = mx.nd.array([1.0, 2.0])
gv = mx.nd.zeros((2,))
autograd.mark_variables([v], [gv], grad_reqs="add")
for _ in range(2):
    with autograd.record():
        s = (v * v * v).sum()
    s.backward()
print("mark_variables add", gv.asnumpy().tolist())

a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
a.attach_grad()
with autograd.record():
    b = mx.nd.exp(a) * a
    c = b.sum()
c.backward(retain_graph=True)
first = a.grad.asnumpy().round(5).tolist()
c.backward()
print("retain_graph write", first, a.grad.asnumpy().round(5).tolist())

print("modes", autograd.is_recording(), autograd.is_training())
with autograd.record():
    print("in record", autograd.is_recording(), autograd.is_training())
    with autograd.pause():
        print("in pause", autograd.is_recording(), autograd.is_training())
    with autograd.predict_mode():
        print("in predict", autograd.is_recording(), autograd.is_training())
with autograd.train_mode():
    print("in train_mode", autograd.is_recording(), autograd.is_training())


class Sigmoid(autograd.Function):
    def forward(self, x):
        y = 1 / (1 + mx.nd.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved_tensors
        return dy * y * (1 - y)


x = mx.nd.array([-1.0, 0.0, 2.0])
x.attach_grad()
with autograd.record():
    m = Sigmoid()
    y = m(x)
y.backward()
print("custom Function", y.asnumpy().round(6).tolist(), x.grad.asnumpy().round(6).tolist())
