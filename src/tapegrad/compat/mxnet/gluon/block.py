"""`Block`, `HybridBlock`, `Sequential`, `HybridSequential`: Gluon's containers.

Names follow Gluon 1.x (MXNet 1.9.1): a Block made without `prefix=` is named after its
class and a counter (`dense0_`), inside its parent's `name_scope()` after the parent's
prefix (`net_dense0_`); its parameters are `prefix + "weight"`, and `collect_params()` is
keyed by those names. `Block(params=other.collect_params())` shares `other`'s parameters
(a child's `params.get("weight")` finds the same-named one there). Files written by
`save_parameters` use structural names ("0.weight"), as MXNet's do, so a block loads the
file of any block of the same structure, whatever its prefix.

A Block registers the Parameters and Blocks assigned to its attributes (Gluon's rule),
and `training` is None on every Block: layers that act differently in training ask
`autograd.is_training()`, which is on inside `record()` and `train_mode()` (docs/recording.md).
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

import re
import threading
import warnings
from collections import OrderedDict

import numpy as np

from ....tensor import Tensor
from ... import _facade
from .parameter import Parameter, ParameterDict

__all__ = ["Block", "HybridBlock", "Sequential", "HybridSequential", "SymbolBlock", "block_args"]


def block_args(kwargs: dict) -> dict:
    """The Block arguments (`prefix`, `params`) among a layer's keyword arguments."""
    return {k: kwargs[k] for k in ("prefix", "params") if k in kwargs}


class _BlockScope:
    """The `name_scope()` of one block: children made inside get names under its prefix."""

    _current = threading.local()

    def __init__(self, block) -> None:
        self._block = block
        self._counter: dict[str, int] = {}
        self._old: list[_BlockScope | None] = []

    def __enter__(self):
        self._old.append(getattr(_BlockScope._current, "value", None))
        _BlockScope._current.value = self
        return self

    def __exit__(self, *exc) -> None:
        _BlockScope._current.value = self._old.pop()


_GLOBAL_COUNTER: dict[str, int] = {}  # names of blocks made outside every name_scope


def _create_names(prefix, params, hint):
    """(prefix, ParameterDict) of a new block, as Gluon 1.x names them."""
    current = getattr(_BlockScope._current, "value", None)
    if current is None:
        if prefix is None:
            count = _GLOBAL_COUNTER.get(hint, 0)
            _GLOBAL_COUNTER[hint] = count + 1
            prefix = f"{hint}{count}_"
        own = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
        return prefix, own
    if prefix is None:
        count = current._counter.get(hint, 0)
        current._counter[hint] = count + 1
        prefix = f"{hint}{count}_"
    parent = current._block._params
    own = (
        ParameterDict(parent.prefix + prefix, parent._shared)
        if params is None
        else ParameterDict(params.prefix, params)
    )
    return current._block.prefix + prefix, own


class Block:
    """Base class of every Gluon layer and model; override `forward`.

    Args:
        prefix: the prefix of this block's name and of its parameters' names (default:
            the class name and a counter, `dense0_`).
        params: a ParameterDict (`other.collect_params()`) whose parameters this block
            shares (matched by name).
    """

    training = None  # follow autograd.is_training(), as every MXNet Block does
    _hybrid = None  # set by hybridize() on a HybridBlock: its compiled forward

    def __init__(self, prefix=None, params=None) -> None:
        prefix, own = _create_names(prefix, params, type(self)._alias())
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_params", own)
        object.__setattr__(self, "_scope", _BlockScope(self))
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_forward_pre_hooks", [])

    @classmethod
    def _alias(cls) -> str:
        """The name hint of this kind of block (`dense` for Dense; `conv` for convolutions)."""
        return cls.__name__.lower()

    def _ensure_init(self) -> None:
        if "_children" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before it assigns "
                "parameters or child blocks"
            )

    def __setattr__(self, name, value) -> None:
        if "_children" in self.__dict__:
            old = self.__dict__.get(name)
            # Gluon: an attribute keeps its kind (a Block stays a Block ...); None is the
            # one change allowed here (it unregisters the child)
            if (
                isinstance(old, (Parameter, Block))
                and not isinstance(value, type(old))
                and value is not None
            ):
                raise TypeError(
                    f"{type(self).__name__}.{name}: changing the attribute from "
                    f"{type(old).__name__} to {type(value).__name__} is not allowed"
                )
            # set to None: the old child (or parameter) is no longer registered; replaced
            # by one of its kind: the new one takes its place (the order is kept)
            if isinstance(old, Block) and not isinstance(value, Block):
                self._children.pop(name, None)
            if isinstance(old, Parameter) and not isinstance(value, Parameter):
                self._reg_params.pop(name, None)
        if isinstance(value, (Parameter, Block)):
            self._ensure_init()
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
        """Children made inside `with self.name_scope():` are named under this block's
        prefix (`net_dense0_`), and their parameters found in its ParameterDict."""
        return self._scope

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def name(self) -> str:
        return self._prefix[:-1] if self._prefix.endswith("_") else self._prefix

    @property
    def params(self) -> ParameterDict:
        """This block's own ParameterDict (not its children's); Gluon 1.x style
        `self.weight = self.params.get("weight", shape=(3, 2))` makes (or shares) one."""
        return self._params

    def _collect(self, prefix, out, seen) -> None:
        # structural names, for files; `seen` (a set) lists a shared parameter once
        for name, p in self._reg_params.items():
            if seen is None or id(p) not in seen:
                if seen is not None:
                    seen.add(id(p))
                out.setdefault(prefix + name, p)
        for name, child in self._children.items():
            child._collect(f"{prefix}{name}.", out, seen)

    def _collect_params_with_prefix(self, prefix="", deduplicate=False) -> dict:
        """Parameters by structural name ("0.weight"); a parameter shared by several
        blocks appears under each of its names unless `deduplicate`."""
        out: dict = {}
        self._collect(prefix + "." if prefix else "", out, set() if deduplicate else None)
        return out

    def collect_params(self, select=None) -> ParameterDict:
        """Every parameter of this block and its children, by name ("net_dense0_weight").

        Args:
            select: a regular expression (or several joined by "|"); only names it matches
                (from the start) are returned.
        """
        self._check_container_with_block()
        rx = re.compile(select) if select is not None else None
        out = ParameterDict(self._params.prefix)
        self._collect_named(out, rx, set())
        return out

    def _check_container_with_block(self) -> None:
        """Warn about Blocks held in a list or dict attribute: they are not children, so
        their parameters are not collected (as Gluon warns)."""
        children = {id(c) for c in self._children.values()}

        def holds_block(value) -> bool:
            if isinstance(value, (list, tuple)):
                return any(holds_block(v) for v in value)
            if isinstance(value, dict):
                return any(holds_block(v) for v in value.values())
            return isinstance(value, Block) and id(value) not in children

        for name, value in vars(self).items():
            if isinstance(value, (list, tuple, dict)) and holds_block(value):
                warnings.warn(
                    f'"{type(self).__name__}.{name}" is an unregistered container with Blocks: '
                    "their parameters are not collected. Register them with register_child(), "
                    "or use nn.Sequential",
                    stacklevel=3,
                )
        for child in self._children.values():
            child._check_container_with_block()

    def _collect_named(self, out, rx, seen) -> None:
        own = list(self._params.values()) + list(self._reg_params.values())
        for p in own:
            if id(p) in seen or (rx is not None and not rx.match(p.name)):
                continue
            seen.add(id(p))
            out._put(p)
        for child in self._children.values():
            child._collect_named(out, rx, seen)

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False) -> None:
        """Initialize every parameter (deferred until the first forward where shapes are
        unknown). `init` applies to parameters without an initializer of their own."""
        from ..initializer import Uniform

        self.collect_params().initialize(
            init if init is not None else Uniform(), ctx, verbose, force_reinit
        )

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
        """Call `hook(block, inputs, output)` after each forward; returns a handle whose
        `detach()` removes it."""
        return _HookHandle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        """Call `hook(block, inputs)` before each forward; returns a handle."""
        return _HookHandle(self._forward_pre_hooks, hook)

    def summary(self, *inputs) -> None:
        """Print each block's output shape and parameter count for a forward on `inputs`
        (the block must be initialized)."""
        if getattr(self, "_hybrid", None) is not None:
            # MXNet's summary refuses a hybridized block with an AssertionError; the same
            # error here, so code that expects it keeps working
            raise AssertionError(
                f"{type(self).__name__}.summary: the block is hybridized; "
                "call summary() before hybridize()"
            )
        rows: list[tuple[str, str, int]] = []
        handles: list = []

        def flat(out):
            if isinstance(out, (list, tuple)):
                return [o for item in out for o in flat(item)]
            return [out]

        def record_row(block, args, out):
            outs = flat(out)
            n = sum(
                int(np.prod(p.shape)) for p in block._reg_params.values() if p.shape is not None
            )
            rows.append(
                (
                    f"{type(block).__name__}-{len(rows) + 1}",
                    ", ".join(str(tuple(o.shape)) for o in outs),
                    n,
                )
            )

        def attach(block):
            handles.append(block.register_forward_hook(record_row))

        self.apply(attach)
        try:
            self(*inputs)
        finally:
            for h in handles:
                h.detach()
        line = "-" * 80
        print(line)
        print(f"{'Layer (type)':>30}{'Output Shape':>35}{'Param #':>15}")
        print("=" * 80)
        for name, shape, n in rows:
            print(f"{name:>30}{shape:>35}{n:>15}")
        print("=" * 80)
        total = sum(int(np.prod(p.shape)) for p in self.collect_params().values())
        trainable = sum(
            int(np.prod(p.shape)) for p in self.collect_params().values() if p.grad_req != "null"
        )
        print(
            f"Parameters in forward computation graph, duplicate included\n"
            f"   Total params: {total}\n   Trainable params: {trainable}\n"
            f"   Non-trainable params: {total - trainable}"
        )
        print(line)

    # ------------------------------------------------------------------ saving
    def save_parameters(self, filename, deduplicate=False) -> None:
        """Write every parameter to `filename` (tapegrad's safetensors format), by
        structural name ("0.weight"); a parameter shared by several blocks is written under
        each of its names, or once with `deduplicate=True`."""
        from .... import io

        params = self._collect_params_with_prefix(deduplicate=deduplicate)
        io.save({k: p.data() for k, p in params.items()}, filename)

    def load_parameters(
        self,
        filename,
        ctx=None,
        allow_missing=False,
        ignore_extra=False,
        cast_dtype=False,
        dtype_source="current",
    ) -> None:
        """Read what `save_parameters` wrote; checks every name and shape before writing.

        Args:
            cast_dtype, dtype_source: with cast_dtype=True and dtype_source="saved" the
                parameters take the file's dtypes; otherwise they keep their own.
        """
        from .... import io
        from .parameter import _load_into

        _load_into(
            self._collect_params_with_prefix(),
            io.load(filename),
            filename,
            allow_missing,
            ignore_extra,
            cast_dtype,
            dtype_source,
            "load_parameters",
        )

    save_params = save_parameters  # MXNet's older names
    load_params = load_parameters

    def _structure(self, params: list, seen: set) -> dict:
        """This block's class, its parameters' positions in `params` (a parameter shared
        by several blocks is listed once) and its children's structures, in order."""
        own = []
        for p in self._reg_params.values():
            if id(p) not in seen:
                seen.add(id(p))
                params.append(p)
            own.append(next(i for i, q in enumerate(params) if q is p))
        children = [c._structure(params, seen) for c in self._children.values()]
        return {"class": type(self).__name__, "params": own, "children": children}

    def save(self, prefix) -> None:
        """Write `prefix-model.json` (the blocks' classes, nested, in order) and
        `prefix-model.params` (the parameters in that order), MXNet 1.9.1's `Block.save`:
        `load` restores them into a block built the same way, whatever its names."""
        import json

        from .... import io

        params: list = []
        structure = self._structure(params, set())
        io.save({str(i): p.data() for i, p in enumerate(params)}, f"{prefix}-model.params")
        with open(f"{prefix}-model.json", "w") as f:
            json.dump(structure, f)

    def load(self, prefix) -> None:
        """Read what `save(prefix)` wrote into this block, which must have been built the
        same way (the same classes in the same order); no `initialize()` needed."""
        import json

        from .... import io

        with open(f"{prefix}-model.json") as f:
            saved = json.load(f)
        params: list = []
        mine = self._structure(params, set())
        if mine != saved:
            raise ValueError(
                f"{type(self).__name__}.load({prefix!r}): the saved model's blocks differ from "
                f"this one's: saved {_outline(saved)}, this block {_outline(mine)}; build the "
                "model the same way before loading (or use save_parameters/load_parameters)"
            )
        values = io.load(f"{prefix}-model.params")
        for i, p in enumerate(params):
            p.set_data(values[str(i)])

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        for hook in self._forward_pre_hooks:
            hook(self, args)
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
        """Write `path-symbol.json` (the forward's graph, traced: see `_graph_file.py`) and
        `path-NNNN.params` (save_parameters); returns both names, as MXNet's export does.
        With the optional extra `onnx` installed, `path.onnx` (tg.onnx.export) is written
        too, for other runtimes. As in MXNet, hybridize() and run a forward first: its
        inputs are what is traced (named data, or data0, data1...);
        `gluon.SymbolBlock.imports` loads the two files back."""
        import importlib.util

        from . import _graph_file

        hybrid = getattr(self, "_hybrid", None)
        args = getattr(hybrid, "last_args", None)
        if args is None:
            raise RuntimeError(
                f"{type(self).__name__}.export: call hybridize() and run a "
                "forward once first (its inputs are what the export traces)"
            )
        names = ["data"] if len(args) == 1 else [f"data{i}" for i in range(len(args))]
        symbol_file, params_file = f"{path}-symbol.json", f"{path}-{epoch:04d}.params"
        _graph_file.write(self, tuple(args), names, symbol_file)
        self.save_parameters(params_file)
        spec = importlib.util.find_spec("onnx")
        if spec is not None and spec.origin is not None:  # installed (not a bare directory)
            from ....onnx import export as onnx_export

            onnx_export(self, tuple(args), f"{path}.onnx", input_names=names)
        return symbol_file, params_file


def _outline(structure: dict) -> str:
    """A block structure as `Class(Child, Child(...))`, for error messages."""
    inner = ", ".join(_outline(c) for c in structure["children"])
    return structure["class"] + (f"({inner})" if inner else "")


class _HookHandle:
    """What `register_forward_hook` returns: `detach()` removes the hook (also as a
    context manager)."""

    def __init__(self, hooks: list, hook) -> None:
        self._hooks, self._hook = hooks, hook
        hooks.append(hook)

    def detach(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.detach()


class HybridBlock(Block):
    """A Block that may be hybridized: `hybridize()` compiles its forward (`_hybrid.py`).

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
        from ._hybrid import check_kinds

        check_kinds(self, (x, *args))
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


class SymbolBlock(HybridBlock):
    """A block that runs a graph `HybridBlock.export` wrote: `SymbolBlock.imports(...)`.

    Its parameters are the exported block's (same Gluon names in `collect_params()`, same
    structural names in its `.params` files), and its forward runs the traced ops through
    the dispatcher, so it records under `autograd.record()` and gradients reach them. The
    graph is the one traced at export (predict mode, the traced input shapes; see
    `_graph_file.py`). Building one from symbols (`SymbolBlock(outputs, inputs)`) is not
    supported: tapegrad has no symbol graphs.
    """

    def __init__(self, outputs=None, inputs=None, params=None) -> None:
        raise _facade.unsupported(
            "the MXNet facade",
            "SymbolBlock(outputs, inputs)",
            "tapegrad builds no symbol graphs; load the files HybridBlock.export wrote with "
            "SymbolBlock.imports(symbol_file, input_names, param_file), or use the block itself",
        )

    @classmethod
    def _from_graph(cls, graph: dict, where: str):
        block = cls.__new__(cls)
        Block.__init__(block, prefix="", params=None)
        object.__setattr__(block, "_graph", graph)
        object.__setattr__(block, "_where", where)
        object.__setattr__(block, "_warned", False)
        for spec in graph["params"]:
            p = Parameter(
                spec["name"],
                grad_req=spec["grad_req"],
                shape=tuple(spec["shape"]),
                dtype=np.dtype(spec["dtype"]),
            )
            block._params._put(p)  # `block.params`, by Gluon name (as MXNet's SymbolBlock)
            for key in spec["keys"]:  # a shared parameter: under each of its names
                block._reg_params[key] = p
        return block

    @staticmethod
    def imports(
        symbol_file,
        input_names,
        param_file=None,
        ctx=None,
        allow_missing=False,
        ignore_extra=False,
    ):
        """The block saved by `HybridBlock.export`: `symbol_file` (its `-symbol.json`),
        the names of its inputs (`["data"]`, as export names them), and `param_file` (its
        `.params`; without one, call `initialize()` before the first forward)."""
        from . import _graph_file

        graph = _graph_file.read(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        written = [spec["name"] for spec in graph["inputs"]]
        if list(input_names) != written:
            raise ValueError(
                f"SymbolBlock.imports: input_names {list(input_names)} do not match the "
                f"inputs {written} of {symbol_file}"
            )
        block = SymbolBlock._from_graph(graph, str(symbol_file))
        if param_file is not None:
            block.load_parameters(
                param_file, ctx, allow_missing=allow_missing, ignore_extra=ignore_extra
            )
        return block

    def forward(self, *args):
        from . import _graph_file

        specs = self._graph["inputs"]
        if len(args) != len(specs):
            raise TypeError(
                f"SymbolBlock ({self._where}): takes {len(specs)} inputs "
                f"{[s['name'] for s in specs]}, got {len(args)}"
            )
        for spec, x in zip(specs, args, strict=True):
            shape, dtype = tuple(spec["shape"]), np.dtype(spec["dtype"])
            if not isinstance(x, Tensor) or tuple(x.shape) != shape or x.dtype != dtype:
                got = (
                    f"shape {tuple(x.shape)} {x.dtype}"
                    if isinstance(x, Tensor)
                    else type(x).__name__
                )
                raise ValueError(
                    f"SymbolBlock ({self._where}): input {spec['name']!r} is {got}, but the "
                    f"graph was traced for shape {shape} {dtype}; export again after a "
                    "forward on inputs of this shape"
                )
        if self._graph["predict_only"] and not self._warned:
            from ..autograd import is_training

            if is_training():
                object.__setattr__(self, "_warned", True)
                warnings.warn(
                    f"SymbolBlock ({self._where}): the graph was traced in predict mode; "
                    f"its layers {self._graph['predict_only']} act differently in training "
                    "(dropout, batch statistics), and here they keep their predict-mode "
                    "behaviour. Train the original block instead.",
                    stacklevel=3,
                )
        params = {}
        for spec in self._graph["params"]:
            p = self._reg_params[spec["keys"][0]]
            p._finish_deferred_init()
            params[spec["slot"]] = p.data()
        return _graph_file.run(self._graph, list(args), params)

    def __repr__(self) -> str:
        names = ", ".join(spec["name"] for spec in self._graph["inputs"])
        return f"SymbolBlock(\n  {names} -> {len(self._graph['nodes'])} ops\n)"


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
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers[key])
            return net
        return layers[key]

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self):
        return iter(self._children.values())

    def hybridize(self, active=True, **kwargs) -> None:
        if (
            self._children
            and all(isinstance(c, HybridBlock) for c in self._children.values())
            and not isinstance(self, HybridBlock)
        ):
            warnings.warn(
                f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. "
                "Consider using HybridSequential for the best performance.",
                stacklevel=2,
            )
        super().hybridize(active, **kwargs)


class HybridSequential(Sequential, HybridBlock):
    """Sequential that may be hybridized (compiled as a whole, see `_hybrid.py`)."""

    forward = Sequential.forward
