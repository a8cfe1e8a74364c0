# Gluon: the tutorial's regression net with fixed weights, grad_req, Trainer (sgd, adam).
import mxnet as mx
import numpy as onp
from mxnet import autograd, gluon
from mxnet.gluon.loss import L2Loss
from mxnet.gluon.nn import Dense, HybridSequential

mx.npx.set_np()  # MXNet 1.x: Gluon takes mx.np arrays in NumPy mode (a no-op on tapegrad)


def fixed_net():
    net = HybridSequential()
    net.add(Dense(units=3, in_units=2, activation="tanh"))
    net.add(Dense(units=1, in_units=3))
    net.initialize()
    net[0].weight.set_data(mx.np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]]))
    net[0].bias.set_data(mx.np.array([0.01, -0.02, 0.03]))
    net[1].weight.set_data(mx.np.array([[0.7, -0.8, 0.9]]))
    net[1].bias.set_data(mx.np.array([0.05]))
    net.hybridize()
    return net


net = fixed_net()
loss_fn = L2Loss()
x = mx.np.array([[0.3, 0.5]])
y = mx.np.array([[1.5]])
with autograd.record():
    y_hat = net(x)
    loss = loss_fn(y_hat, y)
loss.backward()
print("loss", loss.asnumpy().round(6).tolist())
print("w0 grad", net[0].weight.grad().asnumpy().round(6).tolist())
print("w1 grad", net[1].weight.grad().asnumpy().round(6).tolist())
print("b1 grad", net[1].bias.grad().asnumpy().round(6).tolist())

with autograd.record():
    loss = loss_fn(net(x), y)
loss.backward()
print("write again", net[0].weight.grad().asnumpy().round(6).tolist())

net[0].weight.grad_req = "null"
with autograd.record():
    loss = loss_fn(net(x), y)
loss.backward()
print("b0 grad with w0 frozen", net[0].bias.grad().asnumpy().round(6).tolist())

X = mx.np.array(onp.linspace(-1, 1, 16, dtype="float32").reshape(8, 2))
Y = mx.np.array(X.asnumpy() @ onp.array([[2.0], [-1.0]], dtype="float32") + 0.5)
for name, opts in (("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
                   ("adam", {"learning_rate": 0.05}),
                   ("sgd", {"learning_rate": 0.5, "clip_gradient": 0.1})):
    net = fixed_net()
    trainer = gluon.Trainer(net.collect_params(), name, opts)
    losses = []
    for _step in range(6):
        with autograd.record():
            loss = loss_fn(net(X), Y)
        loss.backward()
        trainer.step(batch_size=X.shape[0])
        losses.append(round(float(loss.mean().item()), 6))
    print("trainer", name, losses)
    print("  w1 after", net[1].weight.data().asnumpy().round(5).tolist())

p = gluon.Parameter("w", shape=(2, 3), init=mx.init.Constant(0.5))
p.initialize()
with autograd.record():
    s = (p.data() * mx.np.array([1.0, 2.0, 3.0])).sum()
s.backward()
print("Parameter", p.data().asnumpy().tolist(), p.grad().asnumpy().tolist())

params = net.collect_params()
print("collect_params", len(list(params.keys())))
params.setattr("grad_req", "null")
print("grad_reqs", sorted({v.grad_req for v in params.values()}))
