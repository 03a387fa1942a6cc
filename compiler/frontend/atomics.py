"""wp.atomic_add/sub/min/max/exch/and/or/xor/cas(array, index..., [compare,] value): each returns the
element's old value, as in Warp. `warp.atomic {kind}` carries the operation (unsigned min/max as
"umin"/"umax": integer types lose their signedness before the array lowering), `warp.atomic_cas` the
compare-and-swap."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects.warp import builders as wb
from . import composite_values
from . import types as ft
from .values import Var

# on the warp.load / warp.store of a composite atomic_cas: warp-autodiff and warp-jvp give them no adjoint or
# tangent, as Warp's no-op adj_atomic_cas
NO_ADJOINT_ATTR = "warp.no_adjoint"

KINDS = ("add", "sub", "min", "max", "exch", "and", "or", "xor", "cas")
INTEGER_ONLY = ("and", "or", "xor")
# also on arrays of vectors/matrices/quaternions/transforms, one atomic per component (composites_to_vector.py), as
# Warp's vec.h/mat.h do for add/sub/min/max/and/or/xor; Warp's exch of a composite is its generic `old = *p; *p = v`
# (CPU), which per-component exchanges reproduce for one writer.
COMPONENT_WISE = ("add", "sub", "min", "max", "exch", "and", "or", "xor")

# The scalar types each operation takes, as in Warp (what its CUDA and CPU atomics implement), and how Warp's
# message lists them.
_WIDE = (wt.int32, wt.uint32, wt.int64, wt.uint64, wt.float32, wt.float64)
_SUPPORTED = {
    "add": (_WIDE + (wt.float16, wt.bfloat16), "[u]int32, [u]int64, float16, bfloat16, float32, or float64"),
    "min": (_WIDE + (wt.bfloat16,), "[u]int32, [u]int64, bfloat16, float32, or float64"),
    "cas": (_WIDE, "[u]int32, [u]int64, float32, or float64"),
    "and": (_WIDE[:4], "[u]int32 or [u]int64"),
}
_SUPPORTED.update(sub=_SUPPORTED["add"], max=_SUPPORTED["min"], exch=_SUPPORTED["cas"], **{
    "or": _SUPPORTED["and"], "xor": _SUPPORTED["and"]})


def check_scalar_type(em, node, kind: str, dtype) -> None:
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    allowed, listed = _SUPPORTED[kind]
    if scalar not in allowed:
        raise em.error(node, f"atomic_{kind}() operations only work on arrays with {listed} as the underlying "
                             f"scalar types, but got {wt.type_repr(dtype)} (with scalar type {wt.type_repr(scalar)})", CompileTypeError)


def call(em, node: ast.Call, kind: str):
    values = 2 if kind == "cas" else 1
    if kind not in KINDS:
        raise em.error(node, f"unknown atomic operation 'atomic_{kind}'", CompileError)
    if node.keywords or len(node.args) < 2 + values:
        what = "compare, value" if kind == "cas" else "value"
        raise em.error(node, f"atomic_{kind}(array, index..., {what}) needs an array, indices and {what}")
    index_nodes = node.args[1:-values]
    sub = ast.Subscript(value=node.args[0], slice=ast.Tuple(elts=index_nodes) if len(index_nodes) > 1
                        else index_nodes[0], ctx=ast.Load())
    ast.copy_location(sub, node)
    arr, indices = em.array_access(sub)
    operands = [em.expr(n) for n in node.args[-values:]]
    dtype = arr.type.dtype
    for v in operands:
        if v.type != dtype:
            raise em.error(node, f"atomic_{kind}() value argument type ({ft.name(v.type)}) must be of the same "
                                 f"type as the array ({ft.name(dtype)})", CompileTypeError)
    if not wt.is_scalar(dtype) and (kind not in COMPONENT_WISE + ("cas",) or wt.is_struct(dtype)):
        raise em.error(node, f"atomic_{kind}() on arrays of {ft.name(dtype)} is not supported", CompileTypeError)
    check_scalar_type(em, node, kind, dtype)
    if kind == "cas" and not wt.is_scalar(dtype):
        return _composite_cas(em, arr, indices, operands[0], operands[1], dtype)
    if kind == "cas":
        return Var(wb.atomic_cas(arr.value, operands[0].value, operands[1].value, indices), dtype)
    if kind in ("min", "max") and wt.is_scalar(dtype) and dtype._kind_ == "uint":
        kind = "u" + kind
    return Var(wb.atomic(kind, arr.value, operands[0].value, indices), dtype)


def _composite_cas(em, arr, indices, compare: Var, value: Var, dtype) -> Var:
    """atomic_cas on an array of vectors/matrices/quaternions/transforms: Warp's generic `atomic_cas` template
    (builtin.h, its CPU path): `old = *p; if (old == compare) *p = value; return old;`, the comparison the
    whole value's `==` (every component equal: a NaN component never matches, 0.0 matches -0.0). Like Warp's
    CPU path it is no single hardware compare-and-swap (Warp's CUDA build has no atomicCAS for composites)."""
    loaded = wb.load(arr.value, indices)
    loaded.owner.attributes[NO_ADJOINT_ATTR] = ir.UnitAttr.get()  # Warp: not differentiable (adj_atomic_cas: none)
    old = Var(loaded, dtype)
    n = 1
    for d in wt.inner_shape(dtype):
        n *= d
    same = None
    for k in range(n):
        a, b = composite_values.component(em, old, k), composite_values.component(em, compare, k)
        if wt.is_float(a.type):
            eq = arith.CmpFOp(arith.CmpFPredicate.OEQ, a.value, b.value).result
        else:
            eq = arith.CmpIOp(arith.CmpIPredicate.eq, a.value, b.value).result
        same = eq if same is None else arith.AndIOp(same, eq).result
    branch = scf.IfOp(same)
    with ir.InsertionPoint(branch.then_block):
        wb.store(arr.value, value.value, indices).attributes[NO_ADJOINT_ATTR] = ir.UnitAttr.get()
        scf.YieldOp([])
    return old
