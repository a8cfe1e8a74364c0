"""In-place writes through a view reach the base's graph (PyTorch's CopySlices).

A view op's result remembers its input and how it was taken (`Tensor._view_of`, set by the
dispatcher). When `apply_inplace` records a change to such a view, the change is already in
the base's storage, but the base's `grad_fn` still describes its old value: a loss computed
from the base afterwards would miss the in-place op's derivative (`b = x * 1;
b[0].mul_(2); b.sum()` gave x the gradient 1 in row 0 instead of 2). `rebase_bases` gives
the base (and each base above it, for a view of a view) a `_write_view` node: the base's
new value is its old value with the view's region replaced by the view's new value, so the
gradient of that region goes to the view's in-place node and the rest to the old base.

    >>> x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> b = x * 1.0
    >>> _ = b[0].mul_(3.0)
    >>> b.sum().backward()
    >>> x.grad.tolist()
    [[3.0, 3.0], [1.0, 1.0]]

The other views of the same storage (siblings of the written view, views of the written
tensor, views of a base written directly) still have a `grad_fn` that reads the old
values: `regenerate_views` takes each of them again from its base's new graph, as PyTorch
regenerates a view's `grad_fn` once its version has moved.

    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> b = x * 1.0
    >>> both, first = b[0:2], b[0:1]
    >>> _ = first.mul_(3.0)
    >>> both.sum().backward()
    >>> x.grad.tolist()
    [3.0, 1.0]
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..engine.versions import live_views
from ..tensor import Tensor, _wrap
from .registry import Op, defop, dispatch, move_retained_grad


@defop(inputs=2, params=("view_op", "view_params"), backward_name="CopySlices")
def _write_view(xp, base, view, *, view_op, view_params):
    # the write already happened (the view shares the base's storage): the node only records
    # where the base's new value comes from
    return base


def _positions(shape: tuple[int, ...], view_op: Op, view_params: dict[str, Any]) -> Any:
    """The flat position in the base of each element of the view (the view op run on the
    base's element numbers), so any view op is handled the same way."""
    return view_op.forward(np, np.arange(int(np.prod(shape))).reshape(shape), **view_params)


@_write_view.vjp
def _(xp, g, *, view_op, view_params, needs):
    where = _positions(tuple(g.shape), view_op, view_params)
    g_base = g_view = None
    if needs[0]:  # the view's region was overwritten: none of the gradient there is the old base's
        keep = np.ones(tuple(g.shape), bool)
        keep.reshape(-1)[where.reshape(-1)] = False
        g_base = xp.where(keep, g, 0.0)
    if needs[1]:
        g_view = g.reshape(-1)[where]
    return g_base, g_view


_write_view.sample(lambda rng: [])  # reached through in-place writes into views only


def check_bases(view: Tensor, active: int) -> None:
    """Before a recorded in-place change to `view`: refuse it when a base it is a view of is
    a leaf that requires grad (the view was taken under no_grad, else the view's own graph
    refuses it): the leaf would stop being a leaf, as PyTorch refuses."""
    link = getattr(view, "_view_of", None)
    while link is not None:
        base = link[0]
        if base.grad_fn is None and base._tapes & active:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad, taken under no_grad(), is being "
                "changed in place with grad mode on; do the change under tg.no_grad() too, "
                "or take the view with grad mode on (then the leaf's in-place rule applies)"
            )
        link = getattr(base, "_view_of", None)


def rebase_bases(view: Tensor) -> None:
    """After a recorded in-place change to `view`: point the `grad_fn` of every base it is a
    view of (transitively) at a node that takes the view's new value."""
    link = getattr(view, "_view_of", None)
    while link is not None:
        base, view_op, view_params = link
        if not isinstance(base._data, np.ndarray) or not np.may_share_memory(
            view._data, base._data
        ):
            return  # a reshape that had to copy is no view: the write never reached the base
        old = _wrap(base._data, base._tapes)  # a shadow: same storage and version counter
        old.grad_fn, old._out_nr, old._vc = base.grad_fn, base._out_nr, base._vc
        result = dispatch(_write_view, old, view, view_op=view_op, view_params=view_params)
        if result.grad_fn is None:
            return
        old_node, old_nr = base.grad_fn, base._out_nr
        base.grad_fn, base._out_nr, base._tapes = result.grad_fn, 0, result._tapes
        move_retained_grad(base, old_node, old_nr)
        view, link = base, getattr(base, "_view_of", None)


def regenerate_views(written: Tensor) -> None:
    """After a recorded in-place change to `written`: give every other live view of its
    storage a `grad_fn` taken from its base's graph as it is now.

    Views are registered oldest first, so a view's base (itself a view) is regenerated
    before it. The bases of `written` were rebased already (`rebase_bases`): they are
    skipped, as is a "view" whose op had to copy (it does not see the write).
    """
    skip = {id(written)}
    link = getattr(written, "_view_of", None)
    while link is not None:
        skip.add(id(link[0]))
        link = getattr(link[0], "_view_of", None)
    counter = written._vc
    views = live_views(counter)
    for view in views:
        if id(view) in skip:
            continue
        base, view_op, view_params = view._view_of
        if not isinstance(base._data, np.ndarray) or not np.may_share_memory(
            view._data, base._data
        ):
            continue
        if base.grad_fn is None and not base._tapes:
            continue  # nothing tracks the base: the view's graph (none) is still right
        fresh = dispatch(view_op, base, **view_params)
        old_node, old_nr = view.grad_fn, view._out_nr
        view.grad_fn, view._out_nr, view._tapes = fresh.grad_fn, 0, fresh._tapes
        move_retained_grad(view, old_node, old_nr)
    # the fresh results registered themselves (and the dead views can go): the live views only
    counter[1:] = [weakref.ref(v) for v in views]
