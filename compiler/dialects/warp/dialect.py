"""IRDL definition of the warp dialect.

Types:
  !warp.array<dtype, ndim>   a strided view of memory, as Warp's array_t

Core ops (operands are unconstrained in IRDL; the builders in builders.py and
the frontend guarantee well-typed IR, and the lowering re-checks):
  warp.tid        () -> (i32 x k)           thread index, k = 1..4 dimensions
  warp.load       (array, i32...) -> dtype  element read
  warp.store      (array, value, i32...)    element write
  warp.address    (array, i32...) -> !llvm.ptr   element address (array lowering)
  warp.atomic     (array, value, i32...) -> dtype  {kind = "add"|...}, returns the old value
  warp.atomic_cas (array, compare, value, i32...) -> dtype  stores value if the element == compare; old value
  warp.array_dim  (array) -> i32            {dim = d}: the extent of dimension d
  warp.view       (array<T, N>, i32 x k) -> array<T, N-k>  the sub-array at the k leading indices (`a[i]`)
  warp.cast       (x) -> y                  numeric conversion with Warp's rules
Builtin ops: one per builtin table entry, warp.<name> (args...) -> result,
named by the caller of `load_dialect` (this module knows no builtins), with
the number of leading operands that may differ in type (`{name: count}`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import irdl

from . import composite  # vec/mat/quat/transform/struct types and their ops

# (name, operand names, variadic-last-operand, result count: int | "variadic")
CORE_OPS = [
    ("tid", [], False, "variadic"),
    ("load", ["array", "indices"], True, 1),
    ("store", ["array", "value", "indices"], True, 0),
    ("address", ["array", "indices"], True, 1),
    ("atomic", ["array", "value", "indices"], True, 1),
    ("atomic_cas", ["array", "compare", "value", "indices"], True, 1),
    ("array_dim", ["array"], False, 1),
    ("view", ["array", "indices"], True, 1),
    ("cast", ["value"], False, 1),
]

def _op_irdl(name, operands, variadic_last, results) -> str:
    lines = [f"  irdl.operation @{name} {{"]
    n = 0
    ops = []
    for i, operand in enumerate(operands):
        lines.append(f"    %{n} = irdl.any")
        ops.append(f"{operand}: {'variadic ' if variadic_last and i == len(operands) - 1 else ''}%{n}")
        n += 1
    if ops:
        lines.append(f"    irdl.operands({', '.join(ops)})")
    if results == "variadic":
        lines.append(f"    %{n} = irdl.any")
        lines.append(f"    irdl.results(results: variadic %{n})")
    elif results:
        res = []
        for i in range(results):
            lines.append(f"    %{n} = irdl.any")
            res.append(f"r{i}: %{n}")
            n += 1
        lines.append(f"    irdl.results({', '.join(res)})")
    lines.append("  }")
    return "\n".join(lines)


def dialect_irdl(builtin_ops) -> str:
    body = [
        "  irdl.type @array {",
        "    %0 = irdl.any",
        '    %1 = irdl.base "#builtin.integer"',
        "    irdl.parameters(dtype: %0, ndim: %1)",
        "  }",
    ]
    body.append(composite.TYPES_IRDL.rstrip("\n"))
    body += [_op_irdl(*op) for op in CORE_OPS + composite.OPS]
    # IRDL unifies the types of a variadic group, so a builtin's leading operands (as many as its shortest
    # overload takes: `mul(vec3, f32)`, `quat_rotate(quat, vec3)`) each get their own constraint.
    fixed = builtin_ops if isinstance(builtin_ops, dict) else {}
    body += [_op_irdl(name, [f"a{k}" for k in range(fixed.get(name, 0))] + ["args"], True, 1)
             for name in sorted(builtin_ops)]
    return "irdl.dialect @warp {\n" + "\n".join(body) + "\n}\n"


def load_dialect(ctx: ir.Context | None = None, builtin_ops=()) -> None:
    """Loads the warp dialect, with one op per name in `builtin_ops`, into `ctx`
    (default: the current context). Idempotent."""
    ctx = ctx or ir.Context.current
    if ctx.is_registered_operation("warp.tid"):
        return
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(dialect_irdl(builtin_ops)))


def array_type(dtype: ir.Type, ndim: int) -> ir.Type:
    return ir.Type.parse(f"!warp.array<{dtype}, {ndim}>")


def is_array_type(t: ir.Type) -> bool:
    return str(t).startswith("!warp.array<")


def _array_params(t: ir.Type):
    inner = str(t)[len("!warp.array<"):-1]
    dtype, ndim = inner.rsplit(",", 1)
    return dtype.strip(), int(ndim.split(":")[0])


def array_dtype(t: ir.Type) -> ir.Type:
    return ir.Type.parse(_array_params(t)[0])


def array_ndim(t: ir.Type) -> int:
    return _array_params(t)[1]
