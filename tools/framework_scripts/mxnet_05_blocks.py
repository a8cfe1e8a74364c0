# Gluon 1.x style blocks: a custom HybridBlock with hybrid_forward(F, x, weight) and
# params.get, a custom Block, Dense flatten modes, BatchNorm statistics, DataLoader.
import mxnet as mx
import numpy as onp
from mxnet import autograd, gluon
from mxnet.gluon import nn


class Scale(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(1, 3),
                                          init=mx.init.Constant(0.5))
            self.dense = nn.Dense(2, in_units=3, weight_initializer=mx.init.Constant(0.1))

    def hybrid_forward(self, F, x, weight):
        return self.dense(F.relu(F.broadcast_mul(x, weight)))


class Net(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.scale = Scale()
            self.out = nn.Dense(1, in_units=2, weight_initializer=mx.init.Constant(-0.3))

    def forward(self, x):
        return self.out(mx.nd.tanh(self.scale(x)))


net = Net()
net.initialize()
net.hybridize()
x = mx.nd.array([[1.0, -2.0, 3.0], [0.5, 0.5, -0.5]])
with autograd.record():
    y = net(x)
    loss = (y * y).sum()
loss.backward()
print("custom blocks", y.asnumpy().round(6).tolist())
print("scale weight grad", net.scale.weight.grad().asnumpy().round(6).tolist())
print("dense grad", net.scale.dense.weight.grad().asnumpy().round(6).tolist())
print("n params", len(list(net.collect_params().keys())))

d = nn.Dense(2, flatten=False, in_units=3)
d.initialize(mx.init.Constant(0.5))
print("dense flatten=False", d(mx.nd.ones((2, 4, 3))).shape)
d2 = nn.Dense(2)
d2.initialize(mx.init.Constant(0.5))
print("dense flatten", d2(mx.nd.ones((2, 4, 3))).shape, d2.weight.shape)

bn = nn.BatchNorm(in_channels=2)
bn.initialize()
with autograd.record():
    yb = bn(mx.nd.array(onp.arange(8, dtype="float32").reshape(2, 2, 2)))
yb.backward()
print("bn running", bn.running_mean.data().asnumpy().round(5).tolist(),
      bn.running_var.data().asnumpy().round(5).tolist())

X = onp.arange(10, dtype="float32").reshape(5, 2)
Y = onp.arange(5, dtype="float32")
ds = gluon.data.ArrayDataset(X, Y)
for xb, yb in gluon.data.DataLoader(ds, batch_size=2):
    print("batch", xb.shape, xb.asnumpy().tolist(), yb.asnumpy().tolist())
print("discard", [xb.shape for xb, _ in gluon.data.DataLoader(ds, batch_size=2,
                                                               last_batch="discard")])
