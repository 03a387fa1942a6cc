"""convert-warp-builtins-to-arith: every builtin op and warp.cast becomes arith/math ops,
by the lowering in the builtin table; unsigned integer types then become signless."""

from __future__ import annotations

from mlir import ir


from ..builtins import BUILTINS
from ..builtins.scalar import lower_cast
from ..dialects.warp import array_dtype, array_ndim, array_type, is_array_type
from ..passes import registry
from ..passes.ir_walk import ops_named


def signless(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.IntegerType) and not t.is_signless:
        return ir.IntegerType.get_signless(t.width)
    if is_array_type(t):
        return array_type(signless(array_dtype(t)), array_ndim(t))
    if isinstance(t, ir.MemRefType):  # a tile's buffer (bufferized tiles of unsigned ints)
        element = signless(t.element_type)
        if element != t.element_type:
            return ir.MemRefType.get(t.shape, element, t.layout, t.memory_space, loc=ir.Location.unknown())
    elif isinstance(t, ir.VectorType):
        element = signless(t.element_type)
        if element != t.element_type:
            return ir.VectorType.get(t.shape, element, loc=ir.Location.unknown())
    return t


def erase_signedness(root: ir.Operation) -> None:
    # a type -> its signless form, or None where that is itself (a module's ~20,000 values have a few dozen types)
    replacing: dict = {}

    def replacement(t):
        if t not in replacing:
            new = signless(t)
            replacing[t] = None if new == t else new
        return replacing[t]

    def visit(op):
        for r in op.results:
            new = replacement(r.type)
            if new is not None:
                r.set_type(new)
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    new = replacement(a.type)
                    if new is not None:
                        a.set_type(new)
        if op.name == "memref.global":
            t = ir.TypeAttr(op.attributes["type"]).value
            if signless(t) != t:
                op.attributes["type"] = ir.TypeAttr.get(signless(t))
        if op.name == "func.func":
            ft = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [signless(t) for t in ft.inputs], [signless(t) for t in ft.results]))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)


class ConvertBuiltinsToArith(registry.ConvertBuiltinsToArith):
    def run(self, module):
        names = {f"warp.{n}" for n in BUILTINS} | {"warp.cast"}
        for op in ops_named(module, names):
            with ir.InsertionPoint(op), op.location:
                rt = op.results[0].type
                if op.name == "warp.cast":
                    new = lower_cast(op.opview.input, rt)
                else:  # a builtin of the builtin table: positional operands
                    new = BUILTINS[op.name[len("warp."):]].lower(list(op.operands), rt)
            if new.type != rt and signless(new.type) == signless(rt):
                new.set_type(rt)  # keep `ui32` until erase_signedness: lowerings of the users read it
            op.results[0].replace_all_uses_with(new)
            op.erase()
        erase_signedness(module)
