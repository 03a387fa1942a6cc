"""warp-autodiff's adjoints of composite values: construct / extract / insert of vectors, matrices,
quaternions, transforms, struct fields, casts and selects. ReverseBuilder (autodiff.py) mixes CompositeAdjoints in."""

from __future__ import annotations

from mlir.dialects import arith

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from .autodiff_ir import i32_const, is_diff, zero


class CompositeAdjoints:
    """The reverse of composite-value ops (`self`: the ReverseBuilder)."""

    # -- composite values: construct / extract / insert, struct fields ----------------------
    def op_warp_construct(self, op, mapping, adj):
        out = op.opview.composite
        if out not in adj:
            return
        c = wc.composite(out.type)
        for k, e in enumerate(op.opview.elements):
            if c.kind == "struct":
                self.accumulate(adj, e, wc.struct_get(adj[out], k, e.type))
            else:
                idx = divmod(k, c.shape[1]) if c.kind == "mat" else (k,)
                self.accumulate(adj, e, wc.extract(adj[out], [i32_const(i) for i in idx], e.type))

    def op_warp_extract(self, op, mapping, adj):
        extract = op.opview
        out = extract.element
        if out in adj:
            src = extract.aggregate
            idx = self.indices(op, mapping)
            self.accumulate(adj, src, wc.insert(zero(src.type), adj[out], idx))

    def op_warp_insert(self, op, mapping, adj):
        insert = op.opview
        out = insert.updated
        if out in adj:
            src, elem = insert.aggregate, insert.element
            idx = self.indices(op, mapping)
            self.accumulate(adj, src, wc.insert(adj[out], zero(elem.type), idx))
            self.accumulate(adj, elem, wc.extract(adj[out], idx, elem.type))

    def op_warp_struct_get(self, op, mapping, adj):
        get = op.opview
        out = get.element
        if out in adj:
            src = get.aggregate
            self.accumulate(adj, src, wc.struct_set(zero(src.type), get.field, adj[out]))

    def op_warp_struct_set(self, op, mapping, adj):
        set_ = op.opview
        out = set_.updated
        if out in adj:
            src, elem = set_.aggregate, set_.element
            if not is_diff(elem.type):  # an int or array field (arrays' adjoints are companions): no adjoint
                self.accumulate(adj, src, adj[out])
                return
            self.accumulate(adj, src, wc.struct_set(adj[out], set_.field, zero(elem.type)))
            self.accumulate(adj, elem, wc.struct_get(adj[out], set_.field, elem.type))

    def op_warp_cast(self, op, mapping, adj):
        src, out = op.opview.input, op.opview.output
        if out in adj and is_diff(src.type):
            self.accumulate(adj, src, wb.cast(adj[out], src.type))

    def op_arith_select(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            c = mapping.get(op.operands[0], op.operands[0])
            z = zero(out.type)
            self.accumulate(adj, op.operands[1], arith.SelectOp(c, adj[out], z).result)
            self.accumulate(adj, op.operands[2], arith.SelectOp(c, z, adj[out]).result)
