"""`mx.sym.var`: named placeholders, the one piece of MXNet's symbol API the facade has.

tapegrad runs eagerly and builds no symbol graphs, so a `Symbol` here is only a name.
Code that hands one to a HybridBlock gets what MXNet gives for symbols mixed with arrays
(a ValueError), and an error saying no graph is built for symbols alone. Saved graphs are
`HybridBlock.export`'s files, loaded with `gluon.SymbolBlock.imports`.

    >>> mx.sym.var("data").list_arguments()
    ['data']
"""

from __future__ import annotations

from .._facade import unsupported

__all__ = ["Symbol", "var", "Variable"]

_NO_GRAPHS = (
    "symbols do not exist in tapegrad (it runs eagerly); write the model with mx.np / "
    "mx.gluon, and load a saved graph with gluon.SymbolBlock.imports"
)


class Symbol:
    """A named graph input (`mx.sym.var("data")`); it takes part in no computation."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"mx.sym.var: the name must be a string, got {type(name).__name__}")
        self.name = name

    def list_arguments(self) -> list:
        return [self.name]

    def list_inputs(self) -> list:
        return [self.name]

    def list_outputs(self) -> list:
        return [self.name]

    def __repr__(self) -> str:
        return f"<Symbol {self.name}>"

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"Symbol {self.name!r}: {_NO_GRAPHS}")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __call__ = _refuse


def var(name: str, **kwargs) -> Symbol:
    """A placeholder named `name` (MXNet's attributes `shape=`, `dtype=`... are ignored)."""
    return Symbol(name)


Variable = var


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported("the MXNet facade (mx.sym)", name, _NO_GRAPHS)
