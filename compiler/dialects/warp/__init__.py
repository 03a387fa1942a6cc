"""The `warp` MLIR dialect, defined in IRDL and loaded into a context by `load_dialect`.

Its ops are declared once, in the op table of `ops.py` (operand and result constraints the verifier
checks, attributes, a summary), which also gives the builders their result types and the named
accessors (`views.py`); each builtin of the builtin table is one more op, named when the dialect is
loaded. README.md lists the table.
"""

from .dialect import array_dtype, array_ndim, array_type, is_array_type, is_tile_type, load_dialect, tile_params, tile_type

__all__ = ["array_type", "is_array_type", "array_dtype", "array_ndim", "load_dialect", "tile_type", "is_tile_type",
           "tile_params"]
