"""Convolutional recurrent cells (MXNet 1.9.1's gluon.contrib.rnn): Conv{1,2,3}D{RNN,LSTM,GRU}Cell.

The RNN, LSTM and GRU cells' equations (rnn/rnn_cell.py) with the matrix products replaced
by convolutions: i2h a convolution of the input (`i2h_kernel`, `i2h_pad`, `i2h_dilate`),
h2h one of the hidden state padded to keep its size (odd `h2h_kernel`). The states are
(N, hidden_channels, *spatial), the spatial size the i2h convolution's output. Channels-first
layouts (NCW, NCHW, NCDHW) only.

    >>> cell = mx.gluon.contrib.rnn.Conv2DLSTMCell((3, 8, 8), 4, 3, 3, i2h_pad=1)
    >>> cell.initialize()
    >>> out, (h, c) = cell(mx.nd.ones((2, 3, 8, 8)), cell.begin_state(2))
    >>> out.shape
    (2, 4, 8, 8)
"""

from __future__ import annotations

from ...rnn.rnn_cell import RecurrentCell, _activation, gru_step, lstm_step

__all__ = [
    "Conv1DRNNCell",
    "Conv2DRNNCell",
    "Conv3DRNNCell",
    "Conv1DLSTMCell",
    "Conv2DLSTMCell",
    "Conv3DLSTMCell",
    "Conv1DGRUCell",
    "Conv2DGRUCell",
    "Conv3DGRUCell",
]

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _tg():
    import tapegrad

    return tapegrad


def _per_axis(value, dims: int, what: str, cls: str) -> tuple[int, ...]:
    values = (value,) * dims if isinstance(value, int) else tuple(value)
    if len(values) != dims:
        raise ValueError(
            f"{cls}: for a {dims}D convolution {what} must be an int or {dims} ints, got {value!r}"
        )
    return tuple(int(v) for v in values)


class _ConvCell(RecurrentCell):
    """What the nine classes share; `_dims` and `_gates` ("rnn", "lstm", "gru") set below."""

    _dims = 1
    _mode = "rnn"

    def __init__(
        self,
        input_shape,
        hidden_channels,
        i2h_kernel,
        h2h_kernel,
        i2h_pad=0,
        i2h_dilate=1,
        h2h_dilate=1,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        conv_layout=None,
        activation="tanh",
        prefix=None,
        params=None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        name, dims = type(self).__name__, self._dims
        layout = conv_layout or _LAYOUTS[dims]
        if layout != _LAYOUTS[dims]:
            raise ValueError(
                f"{name}: conv_layout {layout!r} is not supported by the MXNet facade; use "
                f"{_LAYOUTS[dims]!r} (channels first)"
            )
        self._hidden_channels, self._activation, self._conv_layout = (
            hidden_channels,
            activation,
            layout,
        )
        self._i2h_kernel = _per_axis(i2h_kernel, dims, "i2h_kernel", name)
        self._i2h_pad = _per_axis(i2h_pad, dims, "i2h_pad", name)
        self._i2h_dilate = _per_axis(i2h_dilate, dims, "i2h_dilate", name)
        self._h2h_kernel = _per_axis(h2h_kernel, dims, "h2h_kernel", name)
        self._h2h_dilate = _per_axis(h2h_dilate, dims, "h2h_dilate", name)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise ValueError(
                f"{name}: h2h_kernel must be odd (it keeps the state's size), got {h2h_kernel!r}"
            )
        self._h2h_pad = tuple(
            d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel, strict=True)
        )
        in_channels, *space = input_shape
        self._space = tuple(
            (s + 2 * p - d * (k - 1) - 1) + 1 if s else 0
            for s, k, p, d in zip(
                space, self._i2h_kernel, self._i2h_pad, self._i2h_dilate, strict=True
            )
        )
        rows = hidden_channels * {"rnn": 1, "lstm": 4, "gru": 3}[self._mode]
        for param, shape, init in (
            ("i2h_weight", (rows, in_channels, *self._i2h_kernel), i2h_weight_initializer),
            ("h2h_weight", (rows, hidden_channels, *self._h2h_kernel), h2h_weight_initializer),
            ("i2h_bias", (rows,), i2h_bias_initializer),
            ("h2h_bias", (rows,), h2h_bias_initializer),
        ):
            setattr(
                self,
                param,
                self.params.get(param, shape=shape, init=init, allow_deferred_init=True),
            )

    @classmethod
    def _alias(cls) -> str:
        return f"conv_{cls._mode}"

    def state_info(self, batch_size=0):
        shape = (batch_size, self._hidden_channels, *self._space)
        n = 2 if self._mode == "lstm" else 1
        return [{"shape": shape, "__layout__": self._conv_layout} for _ in range(n)]

    def _convolutions(self, inputs, h):
        F = _tg().nn.functional
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._dims - 1]
        w = self.i2h_weight
        if w._var is None and w.shape[1] == 0:
            w.shape = (w.shape[0], inputs.shape[1], *w.shape[2:])
        for p in (self.i2h_weight, self.h2h_weight, self.i2h_bias, self.h2h_bias):
            p._finish_deferred_init()
        i2h = conv(
            inputs, w.data(), self.i2h_bias.data(), padding=self._i2h_pad, dilation=self._i2h_dilate
        )
        h2h = conv(
            h,
            self.h2h_weight.data(),
            self.h2h_bias.data(),
            padding=self._h2h_pad,
            dilation=self._h2h_dilate,
        )
        return i2h, h2h

    def forward(self, inputs, states):
        i2h, h2h = self._convolutions(inputs, states[0])
        if self._mode == "rnn":
            out = _activation(self._activation, i2h + h2h)
            return out, [out]
        if self._mode == "lstm":  # the gates are along the channel axis
            out, c = lstm_step(i2h + h2h, states[1], 1, self._activation)
            return out, [out, c]
        out = gru_step(i2h, h2h, states[0], 1, self._activation)
        return out, [out]

    def _repr_body(self) -> str:
        shape = self.i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{mapping}, {self._activation}, {self._conv_layout}"


class Conv1DRNNCell(_ConvCell):
    """1D convolutional RNN cell: input (N, C, W); states [h], each
    (N, hidden_channels, W of the i2h convolution's output)."""

    _dims, _mode = 1, "rnn"


class Conv2DRNNCell(_ConvCell):
    """2D convolutional RNN cell: input (N, C, H, W); states [h], each
    (N, hidden_channels, H, W of the i2h convolution's output)."""

    _dims, _mode = 2, "rnn"


class Conv3DRNNCell(_ConvCell):
    """3D convolutional RNN cell: input (N, C, D, H, W); states [h], each
    (N, hidden_channels, D, H, W of the i2h convolution's output)."""

    _dims, _mode = 3, "rnn"


class Conv1DLSTMCell(_ConvCell):
    """1D convolutional LSTM cell: input (N, C, W); states [h, c], each
    (N, hidden_channels, W of the i2h convolution's output)."""

    _dims, _mode = 1, "lstm"


class Conv2DLSTMCell(_ConvCell):
    """2D convolutional LSTM cell: input (N, C, H, W); states [h, c], each
    (N, hidden_channels, H, W of the i2h convolution's output)."""

    _dims, _mode = 2, "lstm"


class Conv3DLSTMCell(_ConvCell):
    """3D convolutional LSTM cell: input (N, C, D, H, W); states [h, c], each
    (N, hidden_channels, D, H, W of the i2h convolution's output)."""

    _dims, _mode = 3, "lstm"


class Conv1DGRUCell(_ConvCell):
    """1D convolutional GRU cell: input (N, C, W); states [h], each
    (N, hidden_channels, W of the i2h convolution's output)."""

    _dims, _mode = 1, "gru"


class Conv2DGRUCell(_ConvCell):
    """2D convolutional GRU cell: input (N, C, H, W); states [h], each
    (N, hidden_channels, H, W of the i2h convolution's output)."""

    _dims, _mode = 2, "gru"


class Conv3DGRUCell(_ConvCell):
    """3D convolutional GRU cell: input (N, C, D, H, W); states [h], each
    (N, hidden_channels, D, H, W of the i2h convolution's output)."""

    _dims, _mode = 3, "gru"
