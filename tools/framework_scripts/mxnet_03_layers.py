# Gluon layers with constant weights: Conv2D, MaxPool2D, BatchNorm, Flatten, Dense,
# Dropout in predict mode, Embedding, LSTM, and the four losses with their gradients.
import mxnet as mx
import numpy as onp
from mxnet import autograd, gluon
from mxnet.gluon import nn

mx.npx.set_np()

net = nn.HybridSequential()
net.add(nn.Conv2D(channels=2, kernel_size=3, padding=1, activation="relu"),
        nn.BatchNorm(),
        nn.MaxPool2D(pool_size=2),
        nn.Flatten(),
        nn.Dropout(0.0),
        nn.Dense(3))
net.initialize(mx.init.Constant(0.1))
x = mx.np.array(onp.arange(2 * 1 * 4 * 4, dtype="float32").reshape(2, 1, 4, 4) / 10.0)
print("predict", net(x).asnumpy().round(5).tolist())
drop = nn.Dropout(0.5)
print("dropout predict", drop(mx.np.ones((2, 3))).asnumpy().tolist())
net[5].weight.set_data(mx.np.array(onp.linspace(-0.3, 0.3, 24).reshape(3, 8)))
x.attach_grad()
# (record(train_mode=False) is avoided here: MXNet 1.9.1's CPU max-pooling backward routes
# gradients wrongly after a predict-mode forward; tapegrad and PyTorch agree on the values)
with autograd.record():
    out = net(x)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(out, mx.np.array([0, 2]))
loss.backward()
print("ce loss", loss.asnumpy().round(5).tolist())
print("conv w grad", net[0].weight.grad().asnumpy().round(5).ravel().tolist())
print("x grad", x.grad.asnumpy().round(5).ravel().tolist())

bn = nn.BatchNorm(in_channels=2)
bn.initialize()
with autograd.record():
    yb = bn(mx.np.array(onp.arange(8, dtype="float32").reshape(2, 2, 2)))
yb.backward()  # MXNet updates the running statistics in the backward pass
print("bn train", yb.asnumpy().round(5).ravel().tolist())
print("bn running mean", bn.running_mean.data().asnumpy().round(5).tolist())

emb = nn.Embedding(5, 2)
emb.initialize(mx.init.Constant(0.25))
emb.weight.set_data(mx.np.array(onp.arange(10, dtype="float32").reshape(5, 2)))
idx = mx.np.array([1, 3, 3])
with autograd.record():
    e = emb(idx)
    (e * e).sum().backward()
print("embedding", e.asnumpy().tolist(), emb.weight.grad().asnumpy().tolist())

lstm = gluon.rnn.LSTM(3, input_size=2)
lstm.initialize(mx.init.Constant(0.1))
seq = mx.np.array(onp.linspace(-1, 1, 12, dtype="float32").reshape(3, 2, 2))
states = lstm.begin_state(batch_size=2)
with autograd.record():
    out, (h, c) = lstm(seq, states)
    out.sum().backward()
print("lstm out", out.asnumpy().round(5).ravel().tolist())
print("lstm c", c.asnumpy().round(5).ravel().tolist())
print("lstm i2h grad", lstm.l0_i2h_weight.grad().asnumpy().round(5).ravel().tolist())

pred = mx.np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]])
pred.attach_grad()
label = mx.np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])
for name, fn in (("l2", gluon.loss.L2Loss()), ("l1", gluon.loss.L1Loss()),
                 ("bce", gluon.loss.SigmoidBinaryCrossEntropyLoss()),
                 ("ce dense", gluon.loss.SoftmaxCrossEntropyLoss(sparse_label=False))):
    with autograd.record():
        value = fn(pred, label)
    value.backward()
    print(name, value.asnumpy().round(5).tolist(), pred.grad.asnumpy().round(5).ravel().tolist())
