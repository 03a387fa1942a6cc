"""An MLIR context with every dialect mlwarp uses, the warp dialect included."""

from mlir import ir

from .builtins import BUILTINS
from .builtins.table import fixed_arity
from .dialects.warp import load_dialect


def make_context() -> ir.Context:
    ctx = ir.Context()
    load_dialect(ctx, builtin_ops={name: fixed_arity(name) for name in BUILTINS})
    return ctx
