"""warp-struct-tiles-as-bytes: tiles of structs (tensors of `!warp.struct` elements, as convert-warp-tiles-to-linalg
makes them) become tensors of the structs' bytes, `vector<K x i8>` of each struct's C layout, before
one-shot-bufferize: a memref holds only builtin element types (an `!llvm.struct` or `!warp.struct` is refused), and
a struct's fields of different types do not fit one scalar tensor as a vector's components do.

Where an element enters or leaves such a tensor (tensor.extract, tensor.insert, tensor.splat, the yield of a
tensor.generate, a linalg body's arguments and yield) the struct is converted with `warp.struct_of_bytes` /
`warp.struct_bytes`, which convert-warp-composites-to-vector lowers through a stack slot; LLVM then reads the
fields the body uses straight from the buffer. Everything else (loops and branches carrying the tiles, the
tensors' shapes, copies) only changes type."""

from __future__ import annotations

from mlir import ir

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import registry
from .ir_walk import ops_named

# ops whose operands include an element of a tile tensor (the struct goes in as its bytes)
_ELEMENT_IN = {"tensor.insert", "tensor.splat", "tensor.yield", "linalg.yield", "tensor.from_elements"}
_LINALG_BODIES = ("linalg.",)  # ops whose body's arguments are their tensors' elements


def _is_struct(t: ir.Type) -> bool:
    c = wc.composite(t)
    return c is not None and c.kind == "struct"


def bytes_type(struct: ir.Type) -> ir.Type:
    size = wc.storage_layout(struct)[0]
    return ir.VectorType.get([size], ir.IntegerType.get_signless(8))


def _bytes_tensor(t: ir.Type):
    """The byte tensor standing for a tensor of structs, else None."""
    if isinstance(t, ir.RankedTensorType) and _is_struct(t.element_type):
        return ir.RankedTensorType.get(list(t.shape), bytes_type(t.element_type))
    return None


def _as_struct(value: ir.Value, struct: ir.Type, ip) -> None:
    """`value` now holds bytes: its readers get the struct back (warp.struct_of_bytes at `ip`)."""
    uses = [(u.owner, u.operand_number) for u in value.uses]
    with ip:
        back = wb.create("struct_of_bytes", value, results=[struct]).result
    for owner, k in uses:
        owner.operands[k] = back


def retype(root) -> None:
    tensors, elements_out, block_args, elements_in = [], [], [], []

    def visit(op):
        for r in op.results:
            if _bytes_tensor(r.type) is not None:
                tensors.append(r)
            elif op.name == "tensor.extract" and _is_struct(r.type):
                elements_out.append(r)
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    if _bytes_tensor(a.type) is not None:
                        tensors.append(a)
                    elif op.name.startswith(_LINALG_BODIES) and _is_struct(a.type):
                        block_args.append(a)
        if op.name in _ELEMENT_IN:
            elements_in.extend((op, k) for k, v in enumerate(op.operands) if _is_struct(v.type))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    for v in tensors:
        v.set_type(_bytes_tensor(v.type))
    for r in elements_out:
        struct = r.type
        r.set_type(bytes_type(struct))
        with r.owner.location:
            _as_struct(r, struct, ir.InsertionPoint.after(r.owner))
    for a in block_args:
        struct = a.type
        a.set_type(bytes_type(struct))
        block = a.owner
        with ir.Location.unknown():
            _as_struct(a, struct, ir.InsertionPoint.at_block_begin(block))
    for op, k in elements_in:
        v = op.operands[k]
        with ir.InsertionPoint(op), op.location:
            op.operands[k] = wb.create("struct_bytes", v, results=[bytes_type(v.type)]).result


class StructTilesAsBytes(registry.StructTilesAsBytes):
    def run(self, module):
        with module.location:
            for fn in ops_named(module, {"func.func", "gpu.func"}):
                retype(fn)
