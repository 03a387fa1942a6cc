"""Builders for the LLVM dialect ops mlwarp's passes create, with the signatures of
`mlir.dialects.llvm`'s generated ones (`llvm.load(type, ptr, alignment=4)`, ...).

Why not `mlir.dialects.llvm` itself: importing it defines ~1,000 op classes and ~60 enums (11-12 ms,
the largest single import of a cold compile after libMLIR), and a kernel needs ~25 ops. Each builder
here creates the op generically, with the attribute dictionary the generated builder would pass
(the same C API call, so the same op); test/python/test_llvm_builders.py checks each against the
generated builder's op and the enum values below against `mlir.dialects.llvm`'s.

The types (`PointerType`, `StructType`) are the C++ extension's, which is cheap to load.
"""

from __future__ import annotations

from enum import IntEnum

from mlir import ir
from mlir._mlir_libs._mlirDialectsLLVM import PointerType, StructType  # noqa: F401  (re-exported)


class AtomicBinOp(IntEnum):
    """`#llvm.atomic_bin_op` values (LLVM's AtomicRMWInst::BinOp order, as MLIR's LLVMEnums.td)."""
    xchg = 0
    add = 1
    sub = 2
    _and = 3
    nand = 4
    _or = 5
    _xor = 6
    max = 7
    min = 8
    umax = 9
    umin = 10
    fadd = 11
    fsub = 12
    fmax = 13
    fmin = 14
    uinc_wrap = 15
    udec_wrap = 16
    usub_cond = 17
    usub_sat = 18
    fmaximum = 19
    fminimum = 20


class AtomicOrdering(IntEnum):
    not_atomic = 0
    unordered = 1
    monotonic = 2
    acquire = 4
    release = 5
    acq_rel = 6
    seq_cst = 7


def _i64_attr(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def _type_attr(t) -> ir.Attribute:
    return t if isinstance(t, ir.Attribute) else ir.TypeAttr.get(t)


def _create(name: str, results=(), operands=(), attributes=None, loc=None, ip=None) -> ir.Operation:
    return ir.Operation.create(name, results=list(results), operands=list(operands),
                               attributes=attributes or {}, loc=loc, ip=ip)


def _value(op: ir.Operation) -> ir.Value:
    return op.result


# -- aggregates and vectors ------------------------------------------------------------------------
def mlir_undef(res, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.mlir.undef", [res], loc=loc, ip=ip))


def mlir_zero(res, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.mlir.zero", [res], loc=loc, ip=ip))


def mlir_constant(value, *, loc=None, ip=None) -> ir.Value:
    """A constant of a typed attribute's type (as mlir.dialects.llvm's hand-written mlir_constant)."""
    return _value(_create("llvm.mlir.constant", [value.type], attributes={"value": value}, loc=loc, ip=ip))


def mlir_addressof(res, global_name, *, loc=None, ip=None) -> ir.Value:
    name = global_name if isinstance(global_name, ir.Attribute) else ir.FlatSymbolRefAttr.get(global_name)
    return _value(_create("llvm.mlir.addressof", [res], attributes={"global_name": name}, loc=loc, ip=ip))


def insertvalue(container, value, position, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.insertvalue", [container.type], [container, value],
                          {"position": ir.DenseI64ArrayAttr.get(list(position))}, loc, ip))


def extractvalue(res, container, position, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.extractvalue", [res], [container],
                          {"position": ir.DenseI64ArrayAttr.get(list(position))}, loc, ip))


def insertelement(vector, value, position, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.insertelement", [vector.type], [vector, value, position], loc=loc, ip=ip))


def extractelement(vector, position, *, loc=None, ip=None) -> ir.Value:
    element = ir.VectorType(vector.type).element_type
    return _value(_create("llvm.extractelement", [element], [vector, position], loc=loc, ip=ip))


def intr_expect(val, expected, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.intr.expect", [val.type], [val, expected], loc=loc, ip=ip))


def intr_prefetch(addr, rw: int, hint: int, cache: int, *, loc=None, ip=None) -> ir.Operation:
    i32 = ir.IntegerType.get_signless(32)
    return _create("llvm.intr.prefetch", [], [addr], {"rw": ir.IntegerAttr.get(i32, rw),
                                                      "hint": ir.IntegerAttr.get(i32, hint),
                                                      "cache": ir.IntegerAttr.get(i32, cache)}, loc, ip)


def shufflevector(res, v1, v2, mask, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.shufflevector", [res], [v1, v2], {"mask": ir.DenseI32ArrayAttr.get(list(mask))},
                          loc, ip))


# -- memory ----------------------------------------------------------------------------------------
def alloca(res, array_size, elem_type, *, alignment=None, loc=None, ip=None) -> ir.Value:
    attributes = {"elem_type": _type_attr(elem_type)}
    if alignment is not None:
        attributes["alignment"] = _i64_attr(alignment)
    return _value(_create("llvm.alloca", [res], [array_size], attributes, loc, ip))


def load(res, addr, *, alignment=None, loc=None, ip=None) -> ir.Value:
    attributes = {} if alignment is None else {"alignment": _i64_attr(alignment)}
    return _value(_create("llvm.load", [res], [addr], attributes, loc, ip))


def store(value, addr, *, alignment=None, loc=None, ip=None) -> ir.Operation:
    attributes = {} if alignment is None else {"alignment": _i64_attr(alignment)}
    return _create("llvm.store", [], [value, addr], attributes, loc, ip)


def getelementptr(res, base, dynamic_indices, raw_constant_indices, elem_type, no_wrap_flags=0, *,
                  loc=None, ip=None) -> ir.Value:
    """(`no_wrap_flags` is accepted, as by the generated builder, and left at its default: none.)"""
    return _value(_create("llvm.getelementptr", [res], [base, *dynamic_indices],
                          {"rawConstantIndices": ir.DenseI32ArrayAttr.get(list(raw_constant_indices)),
                           "elem_type": _type_attr(elem_type)}, loc, ip))


def atomicrmw(bin_op, ptr, val, ordering, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.atomicrmw", [val.type], [ptr, val],
                          {"bin_op": _i64_attr(bin_op), "ordering": _i64_attr(ordering)}, loc, ip))


def cmpxchg(ptr, cmp, val, success_ordering, failure_ordering, *, loc=None, ip=None) -> ir.Value:
    pair = StructType.get_literal([val.type, ir.IntegerType.get_signless(1)])
    return _value(_create("llvm.cmpxchg", [pair], [ptr, cmp, val],
                          {"success_ordering": _i64_attr(success_ordering),
                           "failure_ordering": _i64_attr(failure_ordering)}, loc, ip))


def intr_stacksave(res, *, loc=None, ip=None) -> ir.Value:
    return _value(_create("llvm.intr.stacksave", [res], loc=loc, ip=ip))


def intr_stackrestore(ptr, *, loc=None, ip=None) -> ir.Operation:
    return _create("llvm.intr.stackrestore", [], [ptr], loc=loc, ip=ip)


def intr_memset(dst, val, len, is_volatile, *, loc=None, ip=None) -> ir.Operation:  # noqa: A002 (as generated)
    return _create("llvm.intr.memset", [], [dst, val, len],
                   {"isVolatile": ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(bool(is_volatile)))},
                   loc, ip)


def intr_trap(*, loc=None, ip=None) -> ir.Operation:
    return _create("llvm.intr.trap", loc=loc, ip=ip)


def intr_assume(cond, op_bundle_operands, op_bundle_sizes, *, loc=None, ip=None) -> ir.Operation:
    if op_bundle_operands or op_bundle_sizes:
        raise NotImplementedError("llvm.intr.assume with operand bundles: no pass of mlwarp makes one")
    return _create("llvm.intr.assume", [], [cond], {"op_bundle_sizes": ir.DenseI32ArrayAttr.get([])}, loc, ip)


# -- casts and arithmetic --------------------------------------------------------------------------
def _cast(name):
    def build(res, arg, *, loc=None, ip=None) -> ir.Value:
        return _value(_create(name, [res], [arg], loc=loc, ip=ip))
    build.__name__ = name.removeprefix("llvm.")
    return build


bitcast = _cast("llvm.bitcast")
addrspacecast = _cast("llvm.addrspacecast")
ptrtoint = _cast("llvm.ptrtoint")
inttoptr = _cast("llvm.inttoptr")


def fadd(lhs, rhs, *, fastmath_flags=None, loc=None, ip=None) -> ir.Value:
    attributes = {} if fastmath_flags is None else {"fastmathFlags": fastmath_flags}
    return _value(_create("llvm.fadd", [lhs.type], [lhs, rhs], attributes, loc, ip))


def add(lhs, rhs, overflow_flags=None, *, loc=None, ip=None) -> ir.Value:
    """(`overflow_flags`, a property rather than an attribute, is accepted and left at none, as by the
    generated builder.)"""
    return _value(_create("llvm.add", [lhs.type], [lhs, rhs], loc=loc, ip=ip))


# -- calls and functions ---------------------------------------------------------------------------
def call(result, callee_operands, op_bundle_operands, op_bundle_sizes, *, var_callee_type=None, callee=None,
         loc=None, ip=None):
    """The call's result, or the op for a call returning nothing (as the generated builder)."""
    attributes = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(callee_operands), len(op_bundle_operands)]),
                  "op_bundle_sizes": ir.DenseI32ArrayAttr.get(list(op_bundle_sizes))}
    if var_callee_type is not None:
        attributes["var_callee_type"] = _type_attr(var_callee_type)
    if callee is not None:
        attributes["callee"] = callee if isinstance(callee, ir.Attribute) else ir.FlatSymbolRefAttr.get(callee)
    op = _create("llvm.call", [] if result is None else [result], [*callee_operands, *op_bundle_operands],
                 attributes, loc, ip)
    return op.result if result is not None else op


def declare_function(sym_name: str, function_type, *, sym_visibility=None, loc=None, ip=None) -> ir.Operation:
    """An `llvm.func` without a body (a declaration), as `LLVMFuncOp(name, type, sym_visibility=...)`."""
    attributes = {"sym_name": ir.StringAttr.get(sym_name), "function_type": _type_attr(function_type)}
    if sym_visibility is not None:
        attributes["sym_visibility"] = ir.StringAttr.get(sym_visibility)
    return ir.Operation.create("llvm.func", attributes=attributes, regions=1, loc=loc, ip=ip)
