"""`mx.gluon.model_zoo.vision`: ResNet v1 and v2 (He et al. 2015, 2016), untrained.

    >>> net = mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    >>> net.initialize()

`get_resnet(version, num_layers)` and `resnet{18,34,50,101,152}_v{1,2}` build the
networks of the papers (basic blocks for 18/34 layers, bottlenecks above; v2 puts batch
norm and relu before each convolution). `pretrained=True` raises: tapegrad downloads no
weights; load your own with `net.load_parameters(path)`.
"""

from __future__ import annotations

from ..block import HybridBlock, block_args
from ..nn import (
    Activation,
    BatchNorm,
    Conv2D,
    Dense,
    Flatten,
    GlobalAvgPool2D,
    HybridSequential,
    MaxPool2D,
)

__all__ = ["get_resnet", "get_model", "ResNetV1", "ResNetV2"] + [
    f"resnet{n}_v{v}" for v in (1, 2) for n in (18, 34, 50, 101, 152)
]

_SPEC = {
    18: ("basic", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
    34: ("basic", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
    50: ("bottle", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
    101: ("bottle", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
    152: ("bottle", [3, 8, 36, 3], [64, 256, 512, 1024, 2048]),
}


def _conv3x3(channels, stride, in_channels):
    return Conv2D(channels, 3, stride, 1, use_bias=False, in_channels=in_channels)


class _Residual(HybridBlock):
    """One residual unit: `body` (convolutions) plus the shortcut (1x1 conv when the
    shape changes). v1: relu(body(x) + shortcut(x)); v2: pre-activation."""

    def __init__(self, channels, stride, downsample, in_channels, bottleneck, v2, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._v2 = v2
        # no name_scope of its own: its layers are named in the stage's scope (unique
        # across the stage's units, as in MXNet's model zoo)
        self.body = HybridSequential(prefix="")
        mid = channels // 4 if bottleneck else channels
        if v2:
            self.bn1 = BatchNorm()
        convs = (
            [(mid, 1, 1, in_channels), (mid, 3, stride, mid), (channels, 1, 1, mid)]
            if bottleneck
            else [(channels, 3, stride, in_channels), (channels, 3, 1, channels)]
        )
        for i, (c, k, s, cin) in enumerate(convs):
            if v2 and i > 0:
                self.body.add(BatchNorm())
                self.body.add(Activation("relu"))
            self.body.add(Conv2D(c, k, s, k // 2, use_bias=False, in_channels=cin))
            if not v2:
                self.body.add(BatchNorm())
                if i < len(convs) - 1:
                    self.body.add(Activation("relu"))
        self.downsample = None
        if downsample:
            self.downsample = (
                HybridSequential(prefix="")
                if not v2
                else Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
            )
            if not v2:
                self.downsample.add(
                    Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                )
                self.downsample.add(BatchNorm())

    def forward(self, x):
        import tapegrad as tg

        if self._v2:
            x = tg.relu(self.bn1(x))
            shortcut = self.downsample(x) if self.downsample is not None else x
            return self.body(x) + shortcut
        shortcut = self.downsample(x) if self.downsample is not None else x
        return tg.relu(self.body(x) + shortcut)


class _ResNet(HybridBlock):
    _v2 = False

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**block_args(kwargs))
        bottleneck = block == "bottle" or getattr(block, "_bottleneck", False)
        with self.name_scope():
            self.features = HybridSequential(prefix="")
            if self._v2:
                self.features.add(BatchNorm(scale=False, center=False))
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(Conv2D(channels[0], 7, 2, 3, use_bias=False))
                self.features.add(BatchNorm())
                self.features.add(Activation("relu"))
                self.features.add(MaxPool2D(3, 2, 1))
            in_channels = channels[0]
            for i, n in enumerate(layers):
                stride = 1 if i == 0 else 2
                stage = HybridSequential(prefix=f"stage{i + 1}_")
                with stage.name_scope():
                    for j in range(n):
                        stage.add(
                            _Residual(
                                channels[i + 1],
                                stride if j == 0 else 1,
                                j == 0 and (channels[i + 1] != in_channels or stride != 1),
                                in_channels,
                                bottleneck,
                                self._v2,
                                prefix="",
                            )
                        )
                        in_channels = channels[i + 1]
                self.features.add(stage)
            if self._v2:
                self.features.add(BatchNorm())
                self.features.add(Activation("relu"))
            self.features.add(GlobalAvgPool2D())
            self.features.add(Flatten())
            self.output = Dense(classes, in_units=in_channels)

    def forward(self, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """ResNet v1: convolution, batch norm, relu; the sum then relu."""


class ResNetV2(_ResNet):
    """ResNet v2: batch norm and relu before each convolution (pre-activation)."""

    _v2 = True


def get_resnet(version, num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """ResNet `version` (1 or 2) with `num_layers` (18, 34, 50, 101 or 152)."""
    if pretrained:
        raise ValueError(
            "model_zoo: pretrained weights are not provided (tapegrad downloads "
            "nothing); build the network untrained and load_parameters() your "
            "own file"
        )
    if num_layers not in _SPEC:
        raise ValueError(f"get_resnet: num_layers must be one of {sorted(_SPEC)}, got {num_layers}")
    if version not in (1, 2):
        raise ValueError(f"get_resnet: version must be 1 or 2, got {version}")
    block, layers, channels = _SPEC[num_layers]
    cls = ResNetV1 if version == 1 else ResNetV2
    return cls(block, layers, channels, **kwargs)


def _maker(version, n):
    def make(**kwargs):
        return get_resnet(version, n, **kwargs)

    make.__name__ = make.__qualname__ = f"resnet{n}_v{version}"
    make.__doc__ = f"ResNet-{n} v{version} (untrained; see get_resnet)."
    return make


for _v in (1, 2):
    for _n in _SPEC:
        globals()[f"resnet{_n}_v{_v}"] = _maker(_v, _n)


def get_model(name, **kwargs):
    """A model by name ("resnet18_v1", ...)."""
    fn = globals().get(name.lower())
    if fn is None or not name.lower().startswith("resnet"):
        raise ValueError(
            f"get_model: {name!r} is not provided; the facade has "
            f"{[n for n in __all__ if n.startswith('resnet')]}"
        )
    return fn(**kwargs)
