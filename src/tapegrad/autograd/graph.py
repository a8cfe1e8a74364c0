"""tg.autograd.graph: look at the graph behind a tensor.

`to_dot(t)` returns Graphviz DOT text (no graphviz package needed): one box per recorded op
(named like `grad_fn.name()`), one ellipse per leaf with its shape (and its name when
`params` maps names to tensors), and the tapes that track each node. Render it with
`tg.viz.draw(t, "graph.svg")` or any Graphviz tool (`dot -Tsvg`).

    >>> w = tg.tensor([1.0, 2.0], requires_grad=True); y = (w * w).sum()
    >>> print(tg.autograd.graph.to_dot(y, params={"w": w}))
    digraph tapegrad { ... }
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..engine.node import ACCUMULATE, Node, leaf_of
from ..engine.state import AMBIENT, RECORD
from ..tensor import Tensor

__all__ = ["to_dot", "tape_names"]


def tape_names(mask: int) -> list[str]:
    """Human names of the tapes in a mask: 'ambient', 'record', 'gm<bit>'."""
    if mask < 0:
        return ["all"]
    names = []
    if mask & AMBIENT:
        names.append("ambient")
    if mask & RECORD:
        names.append("record")
    bit = 2
    rest = mask >> 2
    while rest:
        if rest & 1:
            names.append(f"gm{bit}")
        rest >>= 1
        bit += 1
    return names


def _q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def to_dot(
    t: Tensor | Sequence[Tensor],
    params: Mapping[str, Tensor] | None = None,
    show_tapes: bool = True,
) -> str:
    """Graphviz DOT text of the graph that computed `t` (a tensor or a list of tensors).

    Args:
        t: the output(s) whose history is drawn.
        params: optional `{name: tensor}` (e.g. `dict(model.named_parameters())`) to label
            leaves by name.
        show_tapes: add the tapes tracking each node (ambient, record, gm<bit>) to its label.

    Returns:
        A `digraph` string; edges point from inputs to the op that consumed them.
    """
    roots = [t] if isinstance(t, Tensor) else list(t)
    names: dict[int, str] = {}
    for name, p in (params or {}).items():
        if not isinstance(p, Tensor):
            raise TypeError(f"to_dot: params[{name!r}] is a {type(p).__name__}, not a Tensor")
        names[id(p)] = name
    lines = ["digraph tapegrad {", '  node [fontname="monospace", fontsize=10];', "  rankdir=BT;"]
    ids: dict[int, str] = {}

    def node_id(obj: object) -> str:
        key = id(obj)
        if key not in ids:
            ids[key] = f"n{len(ids)}"
        return ids[key]

    def tapes_line(mask: int) -> str:
        return "\ntapes: " + ",".join(tape_names(mask)) if show_tapes else ""

    seen: set[Node] = set()
    stack: list[Node] = []
    for i, r in enumerate(roots):
        if not isinstance(r, Tensor):
            raise TypeError(f"to_dot: element {i} is a {type(r).__name__}, not a Tensor")
        rid = f"out{i}"
        label = f"output {_shape(r.shape)}\n{r.dtype}"
        lines.append(
            f'  {rid} [label={_q(label)}, shape=box, style=filled, fillcolor="darkolivegreen1"];'
        )
        if r.grad_fn is not None:
            lines.append(f"  {node_id(r.grad_fn)} -> {rid};")
            stack.append(r.grad_fn)
        elif r._tapes:  # a leaf drawn as itself
            leaf_label = _leaf_label(r, names) + tapes_line(r._tapes)
            lines.append(
                f'  leaf{i} [label={_q(leaf_label)}, style=filled, fillcolor="lightblue"];'
            )
            lines.append(f"  leaf{i} -> {rid};")

    while stack:  # iterative: graphs can be very deep
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        nid = node_id(node)
        if node.op is ACCUMULATE:
            leaf = leaf_of(node)
            label = _leaf_label(leaf, names) if leaf is not None else "(freed leaf)"
            if leaf is not None:
                label += tapes_line(leaf._tapes)
            lines.append(f'  {nid} [label={_q(label)}, style=filled, fillcolor="lightblue"];')
            continue
        label = node.name() + tapes_line(node.tapes)
        lines.append(f"  {nid} [label={_q(label)}, shape=box];")
        for child in node.next:
            if child is None:
                continue
            lines.append(f"  {node_id(child)} -> {nid};")
            if child not in seen:
                stack.append(child)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _leaf_label(leaf: Tensor, names: dict[int, str]) -> str:
    name = names.get(id(leaf))
    head = f"{name}\n" if name else ""
    return f"{head}{_shape(leaf.shape)} {leaf.dtype}"
