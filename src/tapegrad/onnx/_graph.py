"""A small ONNX graph builder: value names, nodes, initializers and constants."""

from __future__ import annotations

import numpy as np


class Graph:
    def __init__(self, onnx_module) -> None:
        self.onnx = onnx_module
        self.nodes: list = []
        self.initializers: list = []
        self._count = 0
        self._consts: dict = {}  # (dtype, shape, bytes) -> name

    def fresh(self, hint: str = "t") -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def node(self, op_type: str, inputs: list, outputs: list | None = None, **attrs) -> str:
        """Append a node; returns its (first) output name."""
        outputs = outputs or [self.fresh(op_type.lower())]
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), list(outputs), **attrs))
        return outputs[0]

    def initializer(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(
            self.onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)
        )
        return name

    def const(self, array, dtype=None) -> str:
        """A constant (an initializer shared by equal values)."""
        a = np.asarray(array, dtype=dtype)
        key = (a.dtype.str, a.shape, a.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = self.initializer(self.fresh("const"), a)
        return name

    def ints(self, values) -> str:
        return self.const(np.asarray(list(values), dtype=np.int64))
