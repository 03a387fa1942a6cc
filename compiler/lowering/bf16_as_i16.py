"""warp-bf16-as-i16: bfloat16 values become i16 bit patterns in the final LLVM dialect.

Without native bf16 the x86 backend keeps bf16 values promoted to f32 and
stores them through the libgcc helper `__truncsfbf2`, which the JIT cannot
resolve. By this point `arith-emulate-unsupported-floats` computes bf16
arithmetic in f32 and `arith-expand{include-bf16=true}` rounds with integer
ops, so bf16 only travels through loads, stores, selects and bitcasts: the
same bits as i16. Types inside attributes (a GEP's element type) keep bf16,
whose layout equals i16's.
"""

from __future__ import annotations

import functools

from mlir import ir
from mlir.dialects import arith

from ..passes import registry

# On a module the frontend made without any bfloat16 in it (compiler/build.py): no pass adds one later, so the
# two walks below (~130 ms on a 20,000-op adjoint) have nothing to do. Modules without it (mlwarp-opt's input,
# an emit_ir) are walked.
NO_BF16_ATTR = "warp.no_bf16"


def mark_if_bf16_free(module: ir.Module) -> None:
    """Marks `module` (the frontend's output) NO_BF16_ATTR when no bf16 type or attribute appears in it: the
    printed text is searched (13 ms for diffray's 330 KB draw kernel; a Python walk of its types takes longer)."""
    if "bf16" not in str(module):
        module.operation.attributes[NO_BF16_ATTR] = ir.UnitAttr.get()


@functools.lru_cache(maxsize=4096)
def _has_bf16(t: ir.Type) -> bool:
    # (asked of every value's type: each distinct type printed once; a kept type keeps its context alive until
    # it is evicted, so no later context's type meets it)
    return "bf16" in str(t)


def _replace(t: ir.Type) -> ir.Type:
    s = str(t)
    if "bf16" not in s:
        return t
    return ir.Type.parse(s.replace("bf16", "i16"))


class Bf16AsI16(registry.Bf16AsI16):
    def run(self, module):
        if NO_BF16_ATTR in module.attributes:
            return
        def visit(op):
            for r in op.results:
                if _has_bf16(r.type):
                    r.set_type(_replace(r.type))
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        if _has_bf16(a.type):
                            a.set_type(_replace(a.type))
            if op.name == "llvm.func" and "bf16" in str(op.attributes["function_type"]):
                op.attributes["function_type"] = ir.TypeAttr.get(
                    _replace(ir.TypeAttr(op.attributes["function_type"]).value))
            return ir.WalkResult.ADVANCE

        with ir.Location.unknown():
            module.walk(visit, ir.WalkOrder.PRE_ORDER)


class Bf16RoundEachOp(registry.Bf16RoundEachOp):
    def run(self, module):
        if NO_BF16_ATTR in module.attributes:
            return
        wide = []

        def visit(op):
            if op.name in ("arith.extf", "arith.truncf") and \
                    "bf16" in str(op.operands[0].type) + str(op.results[0].type):
                if "fastmath" in op.attributes:
                    del op.attributes["fastmath"]
                if not isinstance(_scalar(op.operands[0].type), ir.F32Type) and \
                        not isinstance(_scalar(op.results[0].type), ir.F32Type):
                    wide.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in wide:
            _through_f32(op)


def _through_f32(op) -> None:
    """bf16 <-> f64 (or f16) goes through f32, as Warp's bfloat16 converts only from and to float:
    arith-expand expands only the f32 conversions, and a bf16 -> f64 extf reached the LLVM dialect on i16."""
    src, dst = op.operands[0], op.results[0]
    with ir.InsertionPoint(op), op.location:
        f32 = ir.F32Type.get()
        if isinstance(src.type, ir.VectorType):
            f32 = ir.VectorType.get(ir.VectorType(src.type).shape, f32)
        first = (arith.ExtFOp if _width(src.type) < 32 else arith.TruncFOp)(f32, src).result
        second = (arith.ExtFOp if _width(dst.type) > 32 else arith.TruncFOp)(dst.type, first).result
    dst.replace_all_uses_with(second)
    op.erase()


def _scalar(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


def _width(t: ir.Type) -> int:
    return ir.FloatType(_scalar(t)).width
