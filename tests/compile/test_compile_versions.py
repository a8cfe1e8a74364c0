"""A compiled function's backward reads what its forward kept: an input it saved (not only
the inputs it differentiates) and an output whose storage it reads. Changing one of them
in place before the backward raises at every call, as eager's version check does (the
first call is eager's own graph; the replays used the changed values silently)."""

from __future__ import annotations

import warnings

import numpy as np

import tapegrad as tg

_MODIFIED = "modified by an inplace operation"


def _calls(fn, make_args, change, calls=4):
    """Per call: the error message of the backward after `change(args, result)`, or the grads."""
    compiled = tg.compile(fn)
    out = []
    for _ in range(calls):
        args = make_args()
        y = compiled(*args)
        change(args, y)
        try:
            y.sum().backward()
            out.append([a.grad.numpy().tolist() for a in args if a.requires_grad])
        except RuntimeError as e:
            out.append(str(e))
    return out


def _w_and_x():
    return (tg.tensor(np.ones(5), requires_grad=True), tg.tensor(np.linspace(0.0, 1.0, 5)))


def test_an_input_saved_for_another_inputs_gradient_is_version_checked():
    def change(args, y):
        args[1].mul_(0.0)  # x: no gradient of its own, but w's gradient is x

    for result in _calls(lambda w, x: w * x, _w_and_x, change):
        assert isinstance(result, str) and _MODIFIED in result


def test_an_output_the_backward_reads_is_version_checked():
    def change(args, y):
        with tg.no_grad():
            y.mul_(0.0)  # exp's gradient is its output

    for result in _calls(lambda w, x: (w * 2.0).exp(), _w_and_x, change):
        assert isinstance(result, str) and _MODIFIED in result


def test_changing_what_the_backward_does_not_read_still_differentiates():
    def change(args, y):
        with tg.no_grad():
            y.add_(1.0)  # mul's gradient reads x, not the output

    want = [[float(v) for v in np.linspace(0.0, 1.0, 5)]]
    for result in _calls(lambda w, x: w * x, _w_and_x, change):
        assert result == want


def test_an_unchanged_call_differentiates_as_eager():
    x = np.linspace(0.0, 1.0, 5)
    for result in _calls(lambda w, x: (w * x).exp(), _w_and_x, lambda a, y: None):
        np.testing.assert_allclose(result[0], x * np.exp(x), rtol=1e-12)


def test_a_write_into_a_view_inside_the_traced_call_reaches_the_base_as_in_eager():
    # the tracing call runs eagerly; its view results must remember their base (CopySlices)
    def f(x):
        b = x * 1.0
        b[0].mul_(3.0)
        return b

    compiled = tg.compile(f)
    for _ in range(3):
        x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # it runs eagerly: an in-place change inside
            compiled(x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [[3.0, 3.0], [1.0, 1.0]])
