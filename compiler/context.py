"""An MLIR context with every dialect mlwarp uses, the warp dialect included."""

import sys
import types

from mlir import ir

from .builtins import BUILTINS
from .builtins.table import fixed_arity
from .dialects.warp import load_dialect


# The bindings import `mlir.dialects.<namespace>` whenever they wrap an op or type of a dialect, and
# retry a failed import each time: ~140 failing imports (each a sys.path scan) per compile for `warp`,
# which has no Python module there. An empty one ends that.
sys.modules.setdefault("mlir.dialects.warp", types.ModuleType("mlir.dialects.warp"))


def make_context() -> ir.Context:
    ctx = ir.Context()
    load_dialect(ctx, builtin_ops={name: fixed_arity(name) for name in BUILTINS})
    return ctx
