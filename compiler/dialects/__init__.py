"""mlwarp's dialects: `warp` (IRDL, with Python builders and the op table) and `llvm.py`, builders for the
LLVM dialect ops mlwarp's passes create.

MLIR's bindings import the module `<prefix>.<namespace>` the first time an op or type of a dialect
namespace reaches Python, for each prefix of `dialect_search_modules` in turn until one exists. With this
package first, the `llvm` namespace resolves to llvm.py here instead of `mlir.dialects.llvm` (11-12 ms of
op classes and enums that a compile does not use); every other namespace is not found here and resolves
to `mlir.dialects` as before. Code that imports `mlir.dialects.llvm` itself still gets it, and its op
classes from then on.
"""

from mlir._mlir_libs import _mlir

if __name__ not in _mlir.globals.dialect_search_modules:
    _mlir.globals.dialect_search_modules = [__name__, *_mlir.globals.dialect_search_modules]
