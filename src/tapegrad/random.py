"""Random streams: one generator per thread (`tg.manual_seed(s)` makes every thread's stream
reproducible), and `tg.Generator`, an independent stream of its own (PyTorch's
`torch.Generator`) that the random functions take as `generator=`.

    >>> g = tg.Generator().manual_seed(0)
    >>> a = tg.rand(3, generator=g)
    >>> bool((tg.rand(3, generator=tg.Generator().manual_seed(0)) == a).all())
    True

Both are NumPy `PCG64` streams: a seed reproduces tapegrad's numbers, not PyTorch's.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = [
    "Generator",
    "default_generator",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

_local = threading.local()
_seed_lock = threading.Lock()
_base_seed: int | None = None  # set by manual_seed; threads derive their own stream from it


def _check_seed(what: str, seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{what}: seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _fresh_seed() -> int:
    """A non-deterministic 64-bit seed (from the OS's entropy), as `torch.seed()` draws."""
    return int(np.random.SeedSequence().generate_state(2, np.uint32).view(np.uint64)[0])


def manual_seed(seed: int) -> Generator:
    """Seed the generator of this thread (and the base seed new threads start from); returns
    `tg.default_generator`, as `torch.manual_seed` returns its default generator."""
    global _base_seed
    s = _check_seed("manual_seed", seed)
    with _seed_lock:
        _base_seed = s
    _local.rng = np.random.default_rng(s)
    _local.seed = s
    return default_generator


def seed() -> int:
    """Seed this thread's generator from the OS's entropy (non-deterministic); returns the seed."""
    s = _fresh_seed()
    _local.rng = np.random.default_rng(s)
    _local.seed = s
    return s


def initial_seed() -> int:
    """The seed this thread's generator started from (drawn from the OS's entropy when
    nothing seeded it)."""
    generator()
    return int(_local.seed)


def generator() -> np.random.Generator:
    """This thread's generator (made on first use; seeded from manual_seed when it was called)."""
    rng = getattr(_local, "rng", None)
    if rng is None:
        if _base_seed is None:
            _local.seed = _fresh_seed()
            rng = np.random.default_rng(_local.seed)
        else:  # a different but reproducible stream per thread
            _local.seed = _base_seed
            rng = np.random.default_rng([_base_seed, threading.get_ident() % (2**32)])
        _local.rng = rng
    return rng


def _state_tensor(rng: np.random.Generator) -> Tensor:
    import json  # (not at import: `import tapegrad` stays free of json, tests/test_import_lazy.py)

    from .tensor import _wrap

    encoded = json.dumps(rng.bit_generator.state).encode("ascii")
    return _wrap(np.frombuffer(encoded, dtype=np.uint8).copy(), 0)


def _state_from(what: str, state: Any) -> dict[str, Any]:
    """The PCG64 state a `get_state()` tensor encodes; a clear error for anything else."""
    import json

    from .tensor import Tensor

    if not isinstance(state, Tensor) or state.dtype != np.uint8 or state.ndim != 1:
        got = type(state).__name__ if not isinstance(state, Tensor) else f"{state.dtype} tensor"
        raise TypeError(
            f"{what}: expected the uint8 tensor that get_state()/get_rng_state() returned, "
            f"got {got}"
        )
    try:
        decoded = json.loads(bytes(np.asarray(state._data)).decode("ascii"))
        probe = np.random.PCG64()
        probe.state = decoded
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise ValueError(
            f"{what}: the tensor is not a tapegrad generator state (PyTorch's states are "
            "another format); pass what get_state()/get_rng_state() returned"
        ) from None
    return dict(decoded)


def get_rng_state() -> Tensor:
    """This thread's generator state, a uint8 tensor for `set_rng_state`."""
    return _state_tensor(generator())


def set_rng_state(new_state: Tensor) -> None:
    """Restore this thread's generator to a state `get_rng_state()` returned."""
    generator().bit_generator.state = _state_from("set_rng_state", new_state)


def _note_draw() -> None:
    """A draw from a `Generator` object: tg.compile sees it (its replays cannot repeat one)."""
    _local.object_draws = getattr(_local, "object_draws", 0) + 1


def object_draws() -> int:
    """How many draws this thread took from `Generator` objects (tg.compile's side-effect check)."""
    return int(getattr(_local, "object_draws", 0))


# PyTorch's: every new torch.Generator starts from this seed, so two unseeded generators
# give the same stream (tapegrad's numbers still differ from PyTorch's: another algorithm)
_GENERATOR_DEFAULT_SEED = 67280421310721


class Generator:
    """An independent random stream, PyTorch's `torch.Generator`: pass it as `generator=` to
    `tg.rand`, `randn`, `randint`, `randperm`, `normal`, `bernoulli`, `poisson`,
    `multinomial`, the in-place fills (`t.uniform_`, ...), `nn.init`, and the data
    loading (`DataLoader`, the samplers, `random_split`).

    Args:
        device: "cpu" (numbers are drawn on the host; a CUDA tensor receives them copied).

    A new generator starts from PyTorch's fixed default seed (67280421310721): seed it
    (`manual_seed`, or `seed()` for a non-deterministic one) for a stream of its own.

    Not shared between threads without a lock (as a NumPy generator).

    >>> g = tg.Generator()
    >>> g.manual_seed(7).initial_seed()
    7
    """

    def __init__(self, device: str = "cpu") -> None:
        name = str(getattr(device, "type", device)).partition(":")[0]
        if name not in ("cpu", "cuda"):
            raise ValueError(f"Generator: unknown device {device!r}; tapegrad has 'cpu' and 'cuda'")
        self.device = name
        self.manual_seed(_GENERATOR_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed`; returns the generator (for chaining)."""
        self._seed = _check_seed("Generator.manual_seed", seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Restart the stream from a non-deterministic seed, and return that seed."""
        self._seed = _fresh_seed()
        self._rng = np.random.default_rng(self._seed)
        return self._seed

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._seed

    def get_state(self) -> Tensor:
        """The stream's state, a uint8 tensor for `set_state`."""
        return _state_tensor(self._rng)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state `get_state()` returned; returns the generator."""
        self._rng.bit_generator.state = _state_from("Generator.set_state", new_state)
        return self

    def _numpy(self) -> np.random.Generator:
        _note_draw()
        return self._rng

    def __repr__(self) -> str:
        return f"<tapegrad.Generator device={self.device!r} initial_seed={self._seed}>"


class _ThreadDefault(Generator):
    """`tg.default_generator`: this thread's generator, seen as a `Generator` (what
    `torch.default_generator` and `torch.manual_seed(s)`'s result are)."""

    def __init__(self) -> None:
        self.device = "cpu"

    def manual_seed(self, seed: int) -> Generator:
        return manual_seed(seed)

    def seed(self) -> int:
        return seed()

    def initial_seed(self) -> int:
        return initial_seed()

    def get_state(self) -> Tensor:
        return get_rng_state()

    def set_state(self, new_state: Tensor) -> Generator:
        generator().bit_generator.state = _state_from("default_generator.set_state", new_state)
        return self

    def _numpy(self) -> np.random.Generator:
        return generator()

    def __repr__(self) -> str:
        return "<tapegrad.default_generator (this thread's generator)>"


default_generator: Generator = _ThreadDefault()


def resolve(what: str, generator_arg: Any) -> np.random.Generator:
    """The NumPy generator a `generator=` argument of function `what` draws from: this
    thread's for None, a `tg.Generator`'s own stream, or a NumPy Generator as it is."""
    if generator_arg is None:
        return generator()
    if isinstance(generator_arg, Generator):
        return generator_arg._numpy()
    if isinstance(generator_arg, np.random.Generator):
        _note_draw()
        return generator_arg
    raise TypeError(
        f"{what}: generator must be a tg.Generator (or a numpy.random.Generator), got "
        f"{type(generator_arg).__name__}"
    )
