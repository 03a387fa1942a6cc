"""convert-warp-native-calls: each call of a @wp.func_native declaration (frontend/native_calls.py) becomes an
`llvm.call` of its C++ entry point (compiler/native/source.py) with mlwarp's calling convention:

  every operand stored in a stack slot of its lowered type (a scalar; a vector, whose components are the C++
  value's in order; an array's descriptor), and passed by the slot's address; a return value's slot last;
  after the call, the results read back from the slots the declaration's `warp.native_readback` names (an
  operand's index; -1: the return slot): a wp.ref[T] parameter's final value, an adjoint.

The slots are static allocas in the entry block of the function holding the call. Runs after the arrays are descriptors and the composites vectors (the call's operands
and the declaration's type are lowered), and after the entry passes (the call may sit in a gpu.module); the
`func.func` declarations become `llvm.func` ones taking pointers.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..dialects import llvm
from ..passes import registry
from ..passes.ir_walk import ops_named
from ..passes.registry import PassError

NATIVE_ATTR = "warp.native"
READBACK_ATTR = "warp.native_readback"


def _ptr():
    return ir.Type.parse("!llvm.ptr")


def _one():
    i64 = ir.IntegerType.get_signless(64)
    return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, 1)).result


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _entry_block(op) -> ir.Block:
    """The entry block of the function (func.func, gpu.func, llvm.func) that holds `op`."""
    parent = op.parent
    while parent.name not in ("func.func", "gpu.func", "llvm.func"):
        parent = parent.parent
    return parent.regions[0].blocks[0]


def _lower_call(call, decl) -> None:
    readback = list(ir.DenseI64ArrayAttr(decl.attributes[READBACK_ATTR]))
    ftype = ir.FunctionType(ir.TypeAttr(decl.attributes["function_type"]).value)
    types = [v.type for v in call.operands] + ([ftype.results[0]] if -1 in readback else [])
    # static slots in the entry block (the thread loop's, after the entry passes): every call writes its
    # operands' slots before it reads any, so one set per call site serves every thread
    with ir.InsertionPoint.at_block_begin(_entry_block(call.operation)), call.location:
        slots = [llvm.alloca(_ptr(), _one(), t) for t in types]
    with ir.InsertionPoint(call), call.location:
        for v, slot in zip(call.operands, slots):
            llvm.store(v, slot)
        llvm.call(None, slots, [], [], callee=ir.FlatSymbolRefAttr.get(_symbol(decl)))
        values = [llvm.load(r.type, slots[-1] if k == -1 else slots[k]) for k, r in zip(readback, call.results)]
    for r, v in zip(call.results, values):
        r.replace_all_uses_with(v)
    call.erase()


class ConvertNativeCalls(registry.ConvertNativeCalls):
    def run(self, module):
        decls = {}
        for f in ops_named(module, {"func.func"}):
            if NATIVE_ATTR in f.attributes:
                if f.regions[0].blocks:
                    raise PassError(f"native function @{_symbol(f)} has a body; expected a declaration")
                decls[_symbol(f)] = f
        if not decls:
            return
        for call in ops_named(module, {"func.call"}):
            decl = decls.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
            if decl is not None:
                _lower_call(call, decl)
        for name, f in decls.items():
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            count = len(ftype.inputs) + (1 if -1 in list(ir.DenseI64ArrayAttr(f.attributes[READBACK_ATTR])) else 0)
            with ir.InsertionPoint(f), f.location:
                d = llvm.declare_function(name, ir.Type.parse(f"!llvm.func<void ({', '.join(['ptr'] * count)})>"))
            d.attributes[NATIVE_ATTR] = ir.UnitAttr.get()
            f.erase()
