"""A small ONNX graph builder: value names, nodes, initializers and constants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class Graph:
    def __init__(self, onnx_module: Any, opset: int) -> None:
        self.onnx = onnx_module
        self.opset = opset
        self.nodes: list[Any] = []  # onnx.NodeProto
        self.initializers: list[Any] = []  # onnx.TensorProto
        self.domains: set[str] = set()  # custom operator domains a node used
        self.taken: set[str] = set()  # graph inputs, outputs and initializers
        self._count = 0
        self._consts: dict[tuple[str, tuple[int, ...], bytes], str] = {}

    def fresh(self, hint: str = "t") -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def unique(self, name: str) -> str:
        """`name`, or `name_`... if a graph input, output or initializer has it already."""
        while name in self.taken:
            name = name + "_"
        return name

    def node(
        self,
        op_type: str,
        inputs: Sequence[str | None],
        outputs: list[str] | None = None,
        **attrs: Any,
    ) -> str:
        """Append a node; returns its (first) output name. A None input is an absent
        optional one (ONNX's empty name)."""
        outputs = outputs or [self.fresh(op_type.lower())]
        names = ["" if i is None else i for i in inputs]
        self.nodes.append(self.onnx.helper.make_node(op_type, names, list(outputs), **attrs))
        return outputs[0]

    def initializer(self, name: str, array: np.ndarray[Any, Any]) -> str:
        self.taken.add(name)
        self.initializers.append(
            self.onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)
        )
        return name

    def const(self, array: Any, dtype: Any = None) -> str:
        """A constant (an initializer shared by equal values)."""
        a = np.asarray(array, dtype=dtype)
        key = (a.dtype.str, a.shape, a.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = self.initializer(self.fresh("const"), a)
        return name

    def ints(self, values: Any) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64))
