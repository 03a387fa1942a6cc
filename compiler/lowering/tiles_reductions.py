"""convert-warp-tiles-to-linalg's lowerings of the reductions and their adjoints: tile_reduce, tile_reduce_adjoint, tile_scan, tile_sum_to, tile_spread (methods of
TileLowering; the tile table, compiler/tiles/table.py, names each op's)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from ..passes.registry import PassError
from .tile_lowering import (TileLowering, affine_map, as_i32, combine, constant_of, element_of, for_loop, index_const,
                            is_struct, iterator_kinds, parallel_iterators, sum_identity, tensor_type, unravel_index,
                            zero_of)


class ReductionLowering(TileLowering):
    def lower_tile_reduce_composite(self, op):
        """Sums, maxima and minima of vectors and matrices are component-wise (Warp's add, max and min of two):
        reductions over the tile's dimensions of the tensor, its trailing component dimensions kept."""
        kind = ir.StringAttr(op.attributes["kind"]).value
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        if kind not in ("add", "max", "min"):
            raise PassError(f"tile_{kind} of tiles of vectors or matrices is not supported yet")
        tile = op.tile
        shape, _, c = element_of(self.operand_types[0])
        out = tensor_type(self.result_types[0])  # (the reduced tile's shape, components...)
        if is_struct(c):
            if kind != "add":
                raise PassError(f"tile_{kind} of tiles of structs is not supported (Warp adds them field by field)")
            return [self.struct_sum(tile, shape, axis, out)]
        if axis >= 0:
            return [self.reduce_axis(tile, kind, axis, out)]
        rank, extra = len(shape), len(c.shape)
        dims = rank + extra
        components = ir.RankedTensorType.get(list(c.shape), c.dtype)
        if kind == "add":
            init = self.tensor.SplatOp(components, sum_identity(c.dtype), []).result
        else:  # from the first element (max and min are idempotent)
            init = self.generate(components, lambda ivs: self.tensor.ExtractOp(tile, [index_const(0)] * rank +
                                                                                list(ivs)).result)
        maps = [ir.AffineMap.get_identity(dims), affine_map(dims, list(range(rank, dims)))]
        iterators = iterator_kinds(["reduction"] * rank + ["parallel"] * extra)
        folded = self.generic(None, [tile], maps, iterators, init=init,
                              body=lambda a: [wb.builtin(kind, [a[1], a[0]], c.dtype)]).results[0]
        return [self.generate(out, lambda ivs: self.tensor.ExtractOp(folded, list(ivs[1:])).result)]

    def lower_tile_sum_to(self, op):
        """tile_broadcast's adjoint: the sums over the dimensions the broadcast made (leading ones, and size-1
        dimensions it widened), each element added in row-major order; a tile of vectors or matrices component by
        component (its trailing dimensions kept), of structs field by field."""
        shape, dtype, c = element_of(self.operand_types[0])
        source = ir.RankedTensorType(op.tile.type)
        result = tensor_type(op.results[0].type)
        rank, extra = len(shape), source.rank - len(shape)  # the tile's dimensions, then a composite's
        lead = rank - (result.rank - extra)
        kept = [ir.AffineConstantExpr.get(0) if n == 1 and source.shape[lead + k] != 1 else
                ir.AffineDimExpr.get(lead + k) for k, n in enumerate(result.shape[:result.rank - extra])]
        kept += [ir.AffineDimExpr.get(rank + e) for e in range(extra)]
        reduced = {d for d in range(rank) if d < lead or (result.shape[d - lead] == 1 and source.shape[d] != 1)}
        iterators = iterator_kinds(["reduction" if d in reduced else "parallel" for d in range(rank + extra)])
        element = result.element_type
        zero = self.tensor.SplatOp(result, wc.construct(dtype, []) if is_struct(c) else zero_of(element), []).result
        maps = [ir.AffineMap.get_identity(rank + extra), ir.AffineMap.get(rank + extra, 0, kept)]
        add = self.generic(None, [op.tile], maps, iterators, init=zero,
                           body=lambda a: [combine("add", [a[1], a[0]], element)])
        return [add.results[0]]

    lower_tile_sum_to_composite = lower_tile_sum_to

    def struct_sum(self, tile, shape, axis, out):
        """tile_sum of structs (Warp's field-by-field add): from the first element (the fields that do not
        accumulate keep its value, as Warp's), each next one added in row-major order; along `axis` (>= 0) per
        slice, else over the whole tile into a tile of shape (1,)."""
        struct = ir.RankedTensorType(tile.type).element_type

        def fold(at, n):
            return for_loop(index_const(1), index_const(n), [self.tensor.ExtractOp(tile, at(index_const(0))).result],
                            lambda k, acc: [combine("add", [acc[0], self.tensor.ExtractOp(tile, at(k)).result],
                                                    struct)])[0]

        if axis >= 0:
            return self.generate(out, lambda ivs: fold(lambda k: list(ivs[:axis]) + [k] + list(ivs[axis:]),
                                                       shape[axis]))
        n = 1
        for d in shape:
            n *= d
        return self.tensor.FromElementsOp(out, [fold(lambda k: unravel_index(k, list(shape)), n)]).result

    def lower_tile_reduce(self, op):
        kind = ir.StringAttr(op.attributes["kind"]).value
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        tile = op.tile
        source = ir.RankedTensorType(tile.type)
        rank, dtype = source.rank, source.element_type
        if axis >= 0:
            return [self.reduce_axis(tile, kind, axis, tensor_type(op.results[0].type))]
        identity = ir.AffineMap.get_identity(rank)
        to_scalar = ir.AffineMap.get(rank, 0, [])
        iterators = iterator_kinds(["reduction"] * rank)
        out_t = tensor_type(op.results[0].type)
        if kind in ("add", "mul", "max", "min"):
            first = self.tensor.ExtractOp(tile, [index_const(0)] * rank).result if kind in ("max", "min") else \
                (sum_identity(dtype) if kind == "add" else constant_of(dtype, 1))
            init = self.tensor.FromElementsOp(ir.RankedTensorType.get([], dtype), [first]).result
            red = self.generic(None, [tile], [identity, to_scalar], iterators, init=init,
                               body=lambda a: [wb.builtin(kind, [a[1], a[0]], dtype)])
            value = self.tensor.ExtractOp(red.results[0], []).result
        elif kind in ("argmax", "argmin"):
            i32 = ir.IntegerType.get_signless(32)
            first = self.tensor.ExtractOp(tile, [index_const(0)] * rank).result
            inits = [self.tensor.FromElementsOp(ir.RankedTensorType.get([], dtype), [first]).result,
                     self.tensor.FromElementsOp(ir.RankedTensorType.get([], i32), [zero_of(i32)]).result]
            shape = source.shape

            def body(a):
                flat = None
                for d in range(rank):  # the element's flat (row-major) index
                    i = as_i32(self.linalg.IndexOp(d).result)
                    flat = i if flat is None else arith.AddIOp(arith.MulIOp(flat, arith.ConstantOp(
                        i32, shape[d]).result).result, i).result
                better = wb.builtin("gt" if kind == "argmax" else "lt", [a[0], a[1]],
                                    ir.IntegerType.get_signless(1))
                return [arith.SelectOp(better, a[0], a[1]).result, arith.SelectOp(better, flat, a[2]).result]

            red = self.generic(None, [tile], [identity, to_scalar, to_scalar], iterators, init=inits, body=body)
            value = self.tensor.ExtractOp(red.results[1], []).result
        else:
            raise PassError(f"warp.tile_reduce: unknown kind '{kind}'")
        return [self.tensor.FromElementsOp(out_t, [value]).result]

    def reduce_axis(self, tile, kind, axis, out_t):
        """The reduction along `axis` (row-major order along it), into a tensor without that dimension."""
        if kind not in ("add", "mul", "max", "min"):
            raise PassError(f"tile reductions by '{kind}' along an axis are not supported yet")
        source = ir.RankedTensorType(tile.type)
        rank, dtype = source.rank, source.element_type
        if kind in ("max", "min"):  # from the first slice along the axis (max and min are idempotent)
            init = self.generate(out_t, lambda ivs: self.tensor.ExtractOp(
                tile, list(ivs[:axis]) + [index_const(0)] + list(ivs[axis:])).result)
        else:
            init = self.tensor.SplatOp(out_t, sum_identity(dtype) if kind == "add" else constant_of(dtype, 1),
                                       []).result
        maps = [ir.AffineMap.get_identity(rank), affine_map(rank, [d for d in range(rank) if d != axis])]
        iterators = iterator_kinds(["reduction" if d == axis else "parallel" for d in range(rank)])
        return self.generic(None, [tile], maps, iterators, init=init,
                            body=lambda a: [wb.builtin(kind, [a[1], a[0]], dtype)]).results[0]

    def lower_tile_reduce_adjoint(self, op):
        """Max and min: the first extreme's position along the axis for each slice (a loop per slice, a strict
        comparison as tile_argmax's), then a tensor.generate giving each element the slice's adjoint where it is
        that position, else zero. Mul: each element's adjoint times the product of the slice's other elements
        (a loop skipping its own position: exact where an element is zero)."""
        kind = ir.StringAttr(op.attributes["kind"]).value
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        tile, adjoint = op.operands
        source = ir.RankedTensorType(tile.type)
        shape, dtype = list(source.shape), source.element_type
        n = shape[axis]
        # a tile of vectors or matrices: its components are trailing dimensions, each reduced on its own
        rank = len(element_of(self.operand_types[0])[0])
        kept = rank > 1  # the adjoint has the tile's other dimensions (else its tile shape is (1,))

        def at(ivs, k):  # the tile's index with position k along the axis
            return list(ivs[:axis]) + [k] + list(ivs[axis:])

        def reduced(ivs):
            return [iv for d, iv in enumerate(ivs) if d != axis] if kept else [index_const(0)] + list(ivs[rank:])

        if kind in ("max", "min"):
            slice_t = ir.RankedTensorType.get([d for i, d in enumerate(shape) if i != axis] if kept else
                                              [1] + shape[rank:], ir.IndexType.get())

            def position(ivs):
                base = list(ivs) if kept else list(ivs[1:])
                first = self.tensor.ExtractOp(tile, at(base, index_const(0))).result

                def step(k, carried):
                    best, where = carried
                    x = self.tensor.ExtractOp(tile, at(base, k)).result
                    better = wb.builtin("gt" if kind == "max" else "lt", [x, best], ir.IntegerType.get_signless(1))
                    return [arith.SelectOp(better, x, best).result, arith.SelectOp(better, k, where).result]

                return for_loop(index_const(1), index_const(n), [first, index_const(0)], step)[1]

            positions = self.generate(slice_t, position)

            def element(ivs):
                hit = arith.CmpIOp(arith.CmpIPredicate.eq, ivs[axis],
                                   self.tensor.ExtractOp(positions, reduced(ivs)).result).result
                g = self.tensor.ExtractOp(adjoint, reduced(ivs)).result
                return arith.SelectOp(hit, g, zero_of(dtype)).result
        elif kind == "mul":
            def element(ivs):
                def step(k, carried):
                    own = arith.CmpIOp(arith.CmpIPredicate.eq, k, ivs[axis]).result
                    x = self.tensor.ExtractOp(tile, at([iv for d, iv in enumerate(ivs) if d != axis], k)).result
                    factor = arith.SelectOp(own, constant_of(dtype, 1), x).result
                    return [wb.builtin("mul", [carried[0], factor], dtype)]

                others = for_loop(index_const(0), index_const(n), [constant_of(dtype, 1)], step)[0]
                return wb.builtin("mul", [self.tensor.ExtractOp(adjoint, reduced(ivs)).result, others], dtype)
        else:
            raise PassError(f"warp.tile_reduce_adjoint: unknown kind '{kind}'")
        return [self.generate(source, element)]

    lower_tile_reduce_adjoint_composite = lower_tile_reduce_adjoint

    def lower_tile_spread_composite(self, op):
        source, source_t = op.tile, self.operand_types[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        return [self.generate_elements(self.result_types[0], lambda ivs: self.element(
            source, source_t, list(ivs[:axis]) + list(ivs[axis + 1:])))]

    def lower_tile_scan(self, op):
        """A loop over the elements in row-major order carrying the running value."""
        tile = op.tile
        t = ir.RankedTensorType(tile.type)
        kind = ir.StringAttr(op.attributes["kind"]).value
        shape, dtype = t.shape, t.element_type
        total = 1
        for n in shape:
            total *= n

        def at(flat):
            return unravel_index(flat, shape)

        def step(i, state):
            out, running = state
            idx = at(i)
            x = self.tensor.ExtractOp(tile, idx).result
            if kind == "add_exclusive":
                return [self.tensor.InsertOp(running, out, idx).result, wb.builtin("add", [running, x], dtype)]
            first = arith.CmpIOp(arith.CmpIPredicate.eq, i, index_const(0)).result
            op_kind = "add" if kind == "add" else kind
            value = arith.SelectOp(first, x, wb.builtin(op_kind, [running, x], dtype)).result
            return [self.tensor.InsertOp(value, out, idx).result, value]

        init = self.tensor.SplatOp(t, zero_of(dtype), []).result
        return [for_loop(index_const(0), index_const(total), [init, zero_of(dtype)], step)[0]]

    def lower_tile_spread(self, op):
        result = tensor_type(op.results[0].type)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        rank = result.rank
        maps = [affine_map(rank, [d for d in range(rank) if d != axis]), ir.AffineMap.get_identity(rank)]
        return [self.generic(result, [op.tile], maps, parallel_iterators(rank), body=lambda a: [a[0]]).results[0]]
