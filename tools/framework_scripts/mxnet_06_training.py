# A Gluon 1.x training loop: MLP classifier, ArrayDataset + DataLoader, SoftmaxCELoss,
# Trainer(sgd, momentum), Dropout active only inside record(), accuracy with argmax.
import mxnet as mx
import numpy as onp
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn

X = onp.stack([onp.linspace(-2, 2, 60), onp.sin(onp.linspace(0, 6, 60))], axis=1)
y = (X[:, 0] + X[:, 1] > 0).astype("float32") + (X[:, 0] > 1).astype("float32")
X = X.astype("float32")

net = nn.Sequential()
net.add(nn.Dense(16, activation="relu", in_units=2), nn.Dropout(0.0),
        nn.Dense(3, in_units=16))
net.initialize()
for i, (_name, p) in enumerate(sorted(net.collect_params().items())):
    p.set_data(nd.array(onp.cos(onp.arange(onp.prod(p.shape)) + i).reshape(p.shape) * 0.3))

loader = gluon.data.DataLoader(gluon.data.ArrayDataset(X, y), batch_size=12)
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2, "momentum": 0.5})
for epoch in range(5):
    total = 0.0
    for xb, yb in loader:
        with autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        trainer.step(xb.shape[0])
        total += loss.sum().asscalar()
    print("epoch", epoch, round(total / len(X), 5))
pred = net(nd.array(X)).argmax(axis=1)
print("accuracy", round(float((pred.asnumpy() == y).mean()), 5))
