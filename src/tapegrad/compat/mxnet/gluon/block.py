"""`Block`, `HybridBlock`, `Sequential`, `HybridSequential`: Gluon's containers.

A Block registers the Parameters and Blocks assigned to its attributes (Gluon's rule),
and `training` is None on every Block: layers that act differently in training ask
`autograd.is_training()`, which is on inside `record()` and `train_mode()` (API.md 3).
`hybridize()` compiles a HybridBlock's forward with `tg.compile` (see `_hybrid.py`): the
same numbers, replayed without per-op dispatch.

    >>> class Net(mx.gluon.nn.Block):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.dense = mx.gluon.nn.Dense(4)
    ...     def forward(self, x):
    ...         return self.dense(x)
"""
from __future__ import annotations

import contextlib
import re
from collections import OrderedDict

from ... import _facade
from .parameter import Parameter, ParameterDict

__all__ = ["Block", "HybridBlock", "Sequential", "HybridSequential", "SymbolBlock"]


class Block:
    """Base class of every Gluon layer and model; override `forward`."""

    training = None  # follow autograd.is_training(), as every MXNet Block does
    _hybrid = None  # set by hybridize() on a HybridBlock: its compiled forward

    def __init__(self, prefix=None, params=None) -> None:
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_prefix", prefix or "")
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_made_params", OrderedDict())  # by params.get(...)

    def _ensure_init(self) -> None:
        if "_children" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before it assigns "
                "parameters or child blocks"
            )

    def __setattr__(self, name, value) -> None:
        if isinstance(value, (Parameter, Block)):
            self._ensure_init()
            self._children.pop(name, None)
            self._reg_params.pop(name, None)
            if isinstance(value, Parameter):
                self._reg_params[name] = value
            else:
                self._children[name] = value
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ structure
    def register_child(self, block, name=None):
        """Add `block` as a child (named by its position when `name` is None)."""
        self._ensure_init()
        if name is None:
            name = str(len(self._children))
        self._children[name] = block
        return block

    def register_parameter(self, name, param):
        self._ensure_init()
        self._reg_params[name] = param
        return param

    def name_scope(self):
        """Accepted for Gluon 1.x code; names here are structural, so it does nothing."""
        return contextlib.nullcontext()

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def name(self) -> str:
        return self._prefix.rstrip("_") or type(self).__name__.lower()

    @property
    def params(self) -> _OwnParams:
        """This block's own parameters (not its children's). Gluon 1.x style
        `self.weight = self.params.get("weight", shape=(3, 2))` makes one."""
        own = _OwnParams(self._made_params)
        own.update(self._reg_params)
        own._block = self
        return own

    def _collect(self, prefix, out, seen) -> None:
        # a parameter shared by several blocks is listed once, under its first name
        for name, p in list(self._reg_params.items()) + list(self._made_params.items()):
            if id(p) not in seen:
                seen.add(id(p))
                out.setdefault(prefix + name, p)
        for name, child in self._children.items():
            child._collect(f"{prefix}{name}.", out, seen)

    def collect_params(self, select=None) -> ParameterDict:
        """Every parameter of this block and its children, by structural name ("0.weight").

        Args:
            select: a regular expression; only names matching it are returned.
        """
        out = ParameterDict()
        self._collect("", out, set())
        if select is not None:
            rx = re.compile(select)
            out = ParameterDict((k, v) for k, v in out.items() if rx.match(k))
        return out

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False) -> None:
        """Initialize every parameter (deferred until the first forward where shapes are
        unknown). `init` applies to parameters without an initializer of their own."""
        from ..initializer import Uniform

        self.collect_params().initialize(init if init is not None else Uniform(), ctx,
                                         verbose, force_reinit)

    def hybridize(self, active=True, **kwargs) -> None:
        """Compile HybridBlocks' forward with tg.compile (`active=False`: eager again)."""
        if isinstance(self, HybridBlock):
            from ._hybrid import HybridForward

            object.__setattr__(self, "_hybrid", HybridForward(self) if active else None)
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype) -> None:
        for p in self.collect_params().values():
            p.cast(dtype)

    def zero_grad(self) -> None:
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx) -> None:
        self.collect_params().reset_ctx(ctx)

    def apply(self, fn):
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def register_forward_hook(self, hook):
        """Call `hook(block, inputs, output)` after each forward."""
        self._forward_hooks.append(hook)

        class _Handle:
            def detach(_self) -> None:  # noqa: N805
                if hook in self._forward_hooks:
                    self._forward_hooks.remove(hook)

        return _Handle()

    # ------------------------------------------------------------------ saving
    def save_parameters(self, filename, deduplicate=False) -> None:
        """Write every parameter to `filename` (tapegrad's safetensors format)."""
        from .... import io

        io.save({k: p.data() for k, p in self.collect_params().items()}, filename)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current") -> None:
        """Read what `save_parameters` wrote; checks every name and shape before writing."""
        from .... import io

        loaded = io.load(filename)
        params = self.collect_params()
        missing = [k for k in params if k not in loaded]
        extra = [k for k in loaded if k not in params]
        if missing and not allow_missing:
            raise RuntimeError(f"load_parameters: {filename} lacks parameters {missing}")
        if extra and not ignore_extra:
            raise RuntimeError(f"load_parameters: {filename} has unknown parameters {extra}")
        for k, p in params.items():
            if k in loaded and p._var is not None and tuple(loaded[k].shape) != p._var.shape:
                raise ValueError(
                    f"load_parameters: {k} has shape {tuple(loaded[k].shape)} in the file but "
                    f"{p._var.shape} in the model"
                )
        for k, p in params.items():
            if k in loaded:
                p.set_data(loaded[k])

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        out = (self._hybrid or self.forward)(*args, **kwargs)
        for hook in self._forward_hooks:
            hook(self, args, out)
        return out

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __getattr__(self, name):
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _repr_body(self) -> str:
        return ""

    def __repr__(self) -> str:
        if not self._children:
            return f"{type(self).__name__}({self._repr_body()})"
        lines = [f"  ({k}): " + repr(c).replace("\n", "\n  ") for k, c in self._children.items()]
        return f"{type(self).__name__}(\n" + "\n".join(lines) + "\n)"

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write `path.onnx` (the forward as ONNX, tg.onnx.export) and `path-0000.params`
        (save_parameters); returns both names. As in MXNet, hybridize() and run a forward
        first: its inputs are what is traced (named data, or data0, data1...). No symbol
        JSON exists in tapegrad: the ONNX file is its stand-in (docs/migrating-from-mxnet.md)."""
        from ....onnx import export as onnx_export

        hybrid = getattr(self, "_hybrid", None)
        args = getattr(hybrid, "last_args", None)
        if args is None:
            raise RuntimeError(f"{type(self).__name__}.export: call hybridize() and run a "
                               "forward once first (its inputs are what the export traces)")
        names = ["data"] if len(args) == 1 else [f"data{i}" for i in range(len(args))]
        model_file, params_file = f"{path}.onnx", f"{path}-{epoch:04d}.params"
        onnx_export(self, tuple(args), model_file, input_names=names)
        self.save_parameters(params_file)
        return model_file, params_file


class _OwnParams(ParameterDict):
    """`block.params`: `get(name, **kwargs)` returns the parameter, making it when new."""

    _block = None

    def get(self, name, default=None, **kwargs):
        if name in self:
            return self[name]
        if self._block is None or (default is not None and not kwargs):
            return default
        kwargs.setdefault("allow_deferred_init", True)
        param = Parameter(name, **kwargs)
        self._block._made_params[name] = param
        self[name] = param
        return param

    def get_constant(self, name, value=None):
        from .parameter import Constant

        if name not in self:
            const = Constant(name, value)
            self._block._made_params[name] = const
            self[name] = const
        return self[name]


class HybridBlock(Block):
    """A Block that may be hybridized (accepted and ignored: tapegrad is always eager).

    Gluon 1.x style works too: define `hybrid_forward(self, F, x, ...)`; it is called with
    `F = mx.nd` and this block's own parameters as keyword arguments.
    """

    def forward(self, x, *args):
        hybrid = getattr(type(self), "hybrid_forward", None)
        if hybrid is None:
            raise NotImplementedError(
                f"{type(self).__name__} must define forward() (or hybrid_forward(F, x, ...))"
            )
        from .. import ndarray

        params = {}
        for name, p in self._reg_params.items():
            p._finish_deferred_init()
            params[name] = p.data()
        return hybrid(self, ndarray, x, *args, **params)

    def infer_shape(self, *args) -> None:
        """Shapes are inferred at the first forward; nothing to do ahead of it."""

    def optimize_for(self, x, *args, backend=None, **kwargs):
        self.hybridize()
        return self(x, *args)


_SYMBOLS = ("symbols do not exist in tapegrad; rebuild the network from gluon.nn layers and "
            "load_parameters() the .params file export() wrote, or run the .onnx file it wrote "
            "with onnxruntime")


class SymbolBlock(HybridBlock):
    """Not provided: see `imports`."""

    def __init__(self, *args, **kwargs) -> None:
        raise _facade.unsupported("the MXNet facade", "SymbolBlock", _SYMBOLS)

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, **kwargs):
        """Not provided: tapegrad runs no saved graphs (the exported ONNX file is for other
        runtimes); rebuild the network in Python and load the .params file."""
        raise _facade.unsupported("the MXNet facade", "SymbolBlock.imports", _SYMBOLS)


class Sequential(Block):
    """Blocks run one after the other: `net.add(Dense(3), Dense(1))`; `net[0]`, `len(net)`."""

    def __init__(self, prefix=None, params=None) -> None:
        super().__init__(prefix, params)

    def add(self, *blocks) -> None:
        for b in blocks:
            if not isinstance(b, Block):
                raise TypeError(
                    f"{type(self).__name__}.add expects Gluon blocks, got {type(b).__name__}"
                )
            self.register_child(b)

    def forward(self, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (list, tuple)) and len(x) == 1:
                x = x[0]
        return x

    def __getitem__(self, key):
        layers = list(self._children.values())
        if isinstance(key, slice):
            net = type(self)()
            net.add(*layers[key])
            return net
        return layers[key]

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self):
        return iter(self._children.values())


class HybridSequential(Sequential, HybridBlock):
    """Sequential that may be hybridized (accepted; tapegrad stays eager)."""

    forward = Sequential.forward
