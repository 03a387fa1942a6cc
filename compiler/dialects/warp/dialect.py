"""IRDL definition of the warp dialect, generated from the op table (`ops.OPS`).

Types:
  !warp.array<dtype, ndim>   a strided view of memory, as Warp's array_t
  !warp.vec<N, T>, !warp.mat<R, C, T>, !warp.quat<T>, !warp.transform<T>, !warp.struct<"Name", [T...]>
                             the composites (their Python side: composite.py)
  !warp.tile<T, array<i64: M, N>>  a Warp tile: a value of T elements of a constant shape

Ops: `ops.OPS` declares each op's operands and results with real constraints (an array operand is a
`!warp.array`, indices are i32, a load's result is the array's dtype, ...) and the verifier checks
them on every op; `ops.table_markdown()` prints the table. Builtin ops: one per builtin table entry,
warp.<name> (args...) -> value, named by the caller of `load_dialect` (this module knows no
builtins), with the number of leading operands that may differ in type (`{name: count}`).
"""

from __future__ import annotations

import functools

from mlir import ir
from mlir.dialects import irdl

from . import views
from .ops import OPS, builtin_op, irdl_text

# !warp.array, then the composites (their Python side: composite.py)
TYPES_IRDL = """
  irdl.type @array {
    %0 = irdl.any
    %1 = irdl.base "#builtin.integer"
    irdl.parameters(dtype: %0, ndim: %1)
  }
  irdl.type @vec {
    %0 = irdl.base "#builtin.integer"
    %1 = irdl.any
    irdl.parameters(length: %0, dtype: %1)
  }
  irdl.type @mat {
    %0 = irdl.base "#builtin.integer"
    %1 = irdl.base "#builtin.integer"
    %2 = irdl.any
    irdl.parameters(rows: %0, cols: %1, dtype: %2)
  }
  irdl.type @quat {
    %0 = irdl.any
    irdl.parameters(dtype: %0)
  }
  irdl.type @transform {
    %0 = irdl.any
    irdl.parameters(dtype: %0)
  }
  irdl.type @tile {
    %0 = irdl.any
    %1 = irdl.base "#builtin.dense_array"
    irdl.parameters(dtype: %0, shape: %1)
  }
  irdl.type @struct {
    %0 = irdl.any
    %1 = irdl.any
    irdl.parameters(name: %0, fields: %1)
  }
"""


def dialect_irdl(builtin_ops) -> str:
    fixed = builtin_ops if isinstance(builtin_ops, dict) else {}
    return _dialect_irdl(tuple((name, fixed.get(name, 0)) for name in sorted(builtin_ops)))


@functools.cache
def _dialect_irdl(builtins: tuple) -> str:  # every context of a process loads the same text: made once
    body = [TYPES_IRDL.strip("\n"), irdl_text(OPS + [builtin_op(name, fixed) for name, fixed in builtins])]
    return "irdl.dialect @warp {\n" + "\n".join(body) + "\n}\n"


def load_dialect(ctx: ir.Context | None = None, builtin_ops=()) -> None:
    """Loads the warp dialect, with one op per name in `builtin_ops`, into `ctx`
    (default: the current context). Idempotent."""
    ctx = ctx or ir.Context.current
    if ctx.is_registered_operation("warp.tid"):
        return
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(dialect_irdl(builtin_ops)))
    views.register()


def array_type(dtype: ir.Type, ndim: int) -> ir.Type:
    return ir.Type.parse(f"!warp.array<{dtype}, {ndim}>")


@functools.lru_cache(maxsize=4096)
def dialect_type_text(t: ir.Type) -> str:
    """A dialect type's text, printed once (passes ask about the same few types thousands of times, and a
    struct's text is long); a cached type keeps its context alive until it is evicted."""
    return str(t)


def _text(t: ir.Type) -> str:
    # builtin and LLVM types come back as their own Python classes; warp's (IRDL) types as plain ir.Type
    return dialect_type_text(t) if type(t) is ir.Type else ""


def is_array_type(t: ir.Type) -> bool:
    return _text(t).startswith("!warp.array<")


def _array_params(t: ir.Type):
    inner = _text(t)[len("!warp.array<"):-1]
    dtype, ndim = inner.rsplit(",", 1)
    return dtype.strip(), int(ndim.split(":")[0])


def array_dtype(t: ir.Type) -> ir.Type:
    return ir.Type.parse(_array_params(t)[0])


def array_ndim(t: ir.Type) -> int:
    return _array_params(t)[1]


def tile_type(dtype: ir.Type, shape) -> ir.Type:
    return ir.Type.parse(f"!warp.tile<{dtype}, array<i64: {', '.join(str(int(d)) for d in shape)}>>")


def is_tile_type(t: ir.Type) -> bool:
    return _text(t).startswith("!warp.tile<")


def tile_params(t: ir.Type):
    """(dtype, shape) of a !warp.tile type."""
    inner = _text(t)[len("!warp.tile<"):-1]
    dtype, shape = inner.rsplit(", array<i64:", 1)
    return ir.Type.parse(dtype.strip()), tuple(int(d) for d in shape.rstrip(">").split(","))
