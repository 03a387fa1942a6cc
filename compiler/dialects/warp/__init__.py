"""The `warp` MLIR dialect, defined in IRDL and loaded into a context by `load_dialect`.

Core ops (threads, arrays) are listed in `dialect.py`; each builtin of the
builtin table is one more op, named when the dialect is loaded.
"""

from .dialect import array_dtype, array_ndim, array_type, is_array_type, load_dialect

__all__ = ["array_type", "is_array_type", "array_dtype", "array_ndim", "load_dialect"]
