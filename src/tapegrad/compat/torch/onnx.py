"""`torch.onnx.export` on `tg.onnx.export` (the optional extra `onnx`).

As PyTorch's exporter (its default `training=TrainingMode.EVAL`), the model is exported in
eval mode and put back in the mode it had. Opset 17 is written (`opset_version=None` means
it); options that only tune PyTorch's own exporter are accepted and change nothing.
The path is `tg.onnx.export`'s: RNN/LSTM/GRU as ONNX operators, and a custom
`torch.autograd.Function`'s static `symbolic(g, *args)` writing its nodes with `g.op`.
"""

from __future__ import annotations

import enum

__all__ = ["TrainingMode", "export", "is_in_onnx_export"]

_exporting = False


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


_NO_EFFECT = {
    "verbose",
    "do_constant_folding",
    "keep_initializers_as_inputs",
    "operator_export_type",
    "export_modules_as_functions",
    "autograd_inlining",
    "dynamo",
    "external_data",
    "report",
    "optimize",
    "verify",
    "profile",
    "dump_exported_program",
    "artifacts_dir",
    "fallback",
    "custom_opsets",
}


def is_in_onnx_export() -> bool:
    """True while `export` traces a model."""
    return _exporting


def export(
    model,
    args,
    f=None,
    export_params: bool = True,
    *,
    training=TrainingMode.EVAL,
    input_names=None,
    output_names=None,
    opset_version=None,
    dynamic_axes=None,
    **options,
):
    """Export `model(*args)` as an ONNX model to `f` (a path or a binary file object)."""
    from ...onnx import OPSET
    from ...onnx import export as tg_export

    unknown = set(options) - _NO_EFFECT
    if unknown:
        raise TypeError(f"torch.onnx.export: unexpected arguments {sorted(unknown)}")
    if f is None:
        raise ValueError(
            "torch.onnx.export: give f, the file (a path or a binary file object) "
            "to write the model to"
        )
    if not export_params:
        raise ValueError(
            "torch.onnx.export: export_params=False (a model without its weights) "
            "is not supported by tapegrad; export with the parameters"
        )
    if training == TrainingMode.TRAINING:
        raise ValueError(
            "torch.onnx.export: training=TrainingMode.TRAINING is not supported "
            "(dropout and batch norm are exported in eval mode)"
        )
    if isinstance(args, tuple) and args and isinstance(args[-1], dict):
        if args[-1]:
            raise ValueError(
                "torch.onnx.export: keyword arguments to the model (a dict at the "
                "end of args) are not supported; pass them positionally"
            )
        args = args[:-1]
    global _exporting
    was_training = getattr(model, "training", False)
    if training == TrainingMode.EVAL and was_training:
        model.eval()
    _exporting = True
    try:
        return tg_export(
            model,
            args,
            f,
            OPSET if opset_version is None else opset_version,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
        )
    finally:
        _exporting = False
        if training == TrainingMode.EVAL and was_training:
            model.train()
