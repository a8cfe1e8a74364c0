"""`functional_call`: run a module with some of its parameters and buffers replaced."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..nn.module import Module
    from ..tensor import Tensor

# a parameter's or buffer's dotted name -> (the module holding it, its table, its name there)
Slots = dict[str, tuple["Module", str, str]]

__all__ = ["functional_call"]


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call `module(*args, **kwargs)` with the tensors of `parameter_and_buffer_dicts` in
    place of its parameters and buffers of the same (dotted) names; the module is left as it
    was afterwards, even when the call raises. Gradients flow to the given tensors, which is
    what `tg.func.grad` over parameters needs.

    Args:
        module: a `tg.nn.Module`.
        parameter_and_buffer_dicts: a dict `{"layer.weight": tensor, ...}`, or a tuple of
            dicts (merged; a name may appear in only one of them).
        args: one positional argument, or a tuple of them.
        kwargs: keyword arguments of the call.
        tie_weights: a replaced tensor also replaces every name tied to the same parameter.
        strict: every parameter and buffer must be given.

    >>> model = tg.nn.Linear(2, 1); x = tg.ones(1, 2)
    >>> params = {k: tg.ones_like(v) for k, v in model.named_parameters()}
    >>> tg.func.functional_call(model, params, (x,)).item()   # 1*1 + 1*1 + bias 1
    3.0
    """
    merged: dict[str, Tensor]
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = dict(parameter_and_buffer_dicts)
    else:
        merged = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"functional_call: {k!r} appeared in multiple dictionaries; behavior "
                        "of functional call is ambiguous"
                    )
                merged[k] = v
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs

    slots = _named_slots(module)
    if tie_weights:
        merged = _tie(module, merged, slots)
    unknown = [k for k in merged if k not in slots]
    missing = [k for k in slots if k not in merged]
    if strict and (unknown or missing):
        raise RuntimeError(
            f"functional_call got unexpected keys {unknown} and missing keys {missing}; pass "
            "every parameter and buffer of the module (or strict=False)"
        )
    if unknown:
        raise AttributeError(
            f"functional_call: the module has no parameter or buffer named {unknown[0]!r}; "
            f"its names are {sorted(slots)[:8]}{'...' if len(slots) > 8 else ''}"
        )
    with _swapped(slots, merged):
        return module(*args, **kwargs)


def _named_slots(module: Module) -> Slots:
    """Every parameter and buffer name (tied ones under each of their names) -> (owner
    module, table, attribute name)."""
    slots: Slots = {}
    for prefix, mod in module.named_modules(remove_duplicate=False):
        for table in ("_parameters", "_buffers"):
            for name, value in mod.__dict__[table].items():
                if value is not None:
                    slots[(prefix + "." if prefix else "") + name] = (mod, table, name)
    return slots


def _tie(module: Module, merged: dict[str, Tensor], slots: Slots) -> dict[str, Tensor]:
    groups: dict[int, list[str]] = {}
    for key, (mod, table, name) in slots.items():
        groups.setdefault(id(mod.__dict__[table][name]), []).append(key)
    out = dict(merged)
    for keys in groups.values():
        given = [k for k in keys if k in merged]
        if not given:
            continue
        if len({id(merged[k]) for k in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {given}, which are tied; "
                "consider using tie_weights=False"
            )
        for k in keys:
            out.setdefault(k, merged[given[0]])
    return out


@contextlib.contextmanager
def _swapped(slots: Slots, values: dict[str, Tensor]) -> Iterator[None]:
    saved: list[tuple[Module, str, str, Any]] = []
    try:
        for key, value in values.items():
            mod, table, name = slots[key]
            saved.append((mod, table, name, mod.__dict__[table][name]))
            mod.__dict__[table][name] = value
        yield
    finally:
        for mod, table, name, old in reversed(saved):
            mod.__dict__[table][name] = old
