"""`torch.jit.trace` on `tg.compile`; TorchScript (`script`) is not supported.

`trace(fn, example_inputs)` runs `fn` once on the example (tracing it, as PyTorch does) and
returns the compiled callable; later calls with the same signature replay, a new signature
traces again (PyTorch's trace would silently reuse the first one).
"""

from __future__ import annotations

from ._compile import compile as _compile

__all__ = ["script", "trace"]


def trace(func, example_inputs=None, *, check_trace=True, strict=True, **options):
    """Trace `func` (a Module or function) on `example_inputs` (a tensor or a tuple)."""
    compiled = _compile(func)
    if example_inputs is not None:
        args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
        compiled(*args)
    return compiled


def script(obj, *args, **kwargs):
    raise RuntimeError(
        "torch.jit.script: TorchScript is not supported by tapegrad; use torch.jit.trace or "
        "torch.compile, which trace and replay the function"
    )
