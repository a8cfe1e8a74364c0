"""tg.viz.draw: render the graph behind a tensor to SVG/PNG/PDF with Graphviz.

Needs the optional `graphviz` Python package (`pip install -e ".[viz]"` from a checkout, or
`pip install "tapegrad[viz]"`) and the Graphviz `dot` program; `tg.autograd.graph.to_dot`
gives the DOT text without either.

    >>> tg.viz.draw(loss, "graph.svg", params=dict(model.named_parameters()))
    'graph.svg'
"""

from __future__ import annotations

import os

from .autograd.graph import to_dot

__all__ = ["draw"]

_FORMATS = ("svg", "png", "pdf", "dot")


def _graphviz():
    try:
        import graphviz
    except ImportError:
        from .utils.hints import install_hint

        raise ImportError(
            f"tg.viz.draw needs the graphviz package: {install_hint('viz')}; or use "
            "tg.autograd.graph.to_dot(t) for the DOT text"
        ) from None
    return graphviz


def draw(t, path, params=None, format=None, show_tapes=True) -> str:
    """Render the graph that computed `t` into the file `path`.

    Args:
        t: a tensor (or a list of tensors) with a graph.
        path: output file; its extension picks the format unless `format` is given.
        params: optional `{name: tensor}` to label leaves by name.
        format: "svg", "png", "pdf" or "dot".
        show_tapes: label nodes with the tapes that track them.

    Returns:
        The path written.
    """
    path = os.fspath(path)
    fmt = (format or os.path.splitext(path)[1].lstrip(".") or "svg").lower()
    if fmt not in _FORMATS:
        raise ValueError(f"draw: unsupported format {fmt!r}; use one of {_FORMATS}")
    dot = to_dot(t, params=params, show_tapes=show_tapes)
    if fmt == "dot":
        with open(path, "w", encoding="utf-8") as f:
            f.write(dot)
        return path
    graphviz = _graphviz()
    try:
        data = graphviz.Source(dot).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise RuntimeError(
            "tg.viz.draw: the Graphviz 'dot' program was not found on PATH; install Graphviz "
            "(e.g. apt-get install graphviz), or save the DOT text with format='dot'"
        ) from None
    with open(path, "wb") as f:
        f.write(data)
    return path
