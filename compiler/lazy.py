"""A module proxy that imports on first attribute access.

The builtin table must be importable without MLIR (`import mlwarp` never
imports it), while its lowerings use MLIR's Python dialect modules.
"""

import importlib


class LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


ir = LazyModule("mlir.ir")
arith = LazyModule("mlir.dialects.arith")
math = LazyModule("mlir.dialects.math")
