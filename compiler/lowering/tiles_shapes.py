"""convert-warp-tiles-to-linalg's lowerings of tiles made, mapped, reshaped and viewed: tile_full, tile_arange, tile_random, tile_extract, tile_insert, tile_map, tile_transpose, tile_broadcast, tile_reshape, tile_view, tile_insert_view, tile_gather, tile_gather_add (methods of
TileLowering; the tile table, compiler/tiles/table.py, names each op's)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from .tile_lowering import (TileLowering, affine_map, affine_maps, clone_into, component_indices, element_of, is_struct,
                            for_loop, index_const, parallel_iterators, ravel_index, tensor_type, unravel_index,
                            view_positions, wrapped_index)


class ShapeLowering(TileLowering):
    def lower_tile_full_composite(self, op):
        return [self.generate_elements(self.result_types[0], lambda ivs: op.value)]

    def lower_tile_extract_composite(self, op):
        tile, indices = op.tile, list(op.indices)
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        return [self.element(tile, self.operand_types[0], idx)]

    def lower_tile_insert_composite(self, op):
        tile, value, indices = op.tile, op.value, list(op.indices)
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        c = element_of(self.operand_types[0])[2]
        if is_struct(c):  # one opaque element
            return [self.tensor.InsertOp(value, tile, idx).result]
        out = tile
        for p in component_indices(c):
            part = wc.extract(value, [arith.ConstantOp(ir.IntegerType.get_signless(32), k).result for k in p], c.dtype)
            out = self.tensor.InsertOp(part, out, idx + [index_const(k) for k in p]).result
        return [out]

    def lower_tile_map_composite(self, op):
        """One tensor.generate per result, each with a copy of the body computing the element."""
        source = op.regions[0].blocks[0]
        inputs = list(op.operands)
        body = [o.operation for o in source.operations]
        results = []
        for j, result_t in enumerate(self.result_types):
            def element_at(ivs, j=j):
                mapping = {arg: self.element(v, t, ivs) for arg, v, t in zip(source.arguments, inputs,
                                                                              self.operand_types)}
                clone_into(body[:-1], mapping)
                value = body[-1].operands[j]  # gpu.yield's
                return mapping.get(value, value)

            results.append(self.generate_elements(result_t, element_at))
        return results

    def lower_tile_map(self, op):
        """The body moves into a linalg.generic's (its block arguments the tiles' elements, then the outputs')."""
        results = [tensor_type(r.type) for r in op.results]
        rank = results[0].rank
        inits = [self.tensor.EmptyOp(list(r.shape), r.element_type).result for r in results]
        identity = ir.AffineMap.get_identity(rank)
        inputs = list(op.operands)
        generic = self.linalg.GenericOp(results, inputs, inits, affine_maps(*[identity] * (len(inputs) + len(inits))),
                                        parallel_iterators(rank))
        types = [ir.RankedTensorType(v.type).element_type for v in inputs] + [r.element_type for r in results]
        block = generic.regions[0].blocks.append(*types)
        source = op.regions[0].blocks[0]
        for old, new in zip(source.arguments, block.arguments):
            old.replace_all_uses_with(new)
        yield_op = None
        with ir.InsertionPoint(block):
            marker = index_const(0).owner  # (the bindings move an op before another, not to a block's end)
            for inner in list(source.operations):
                inner = inner.operation
                if inner.name == "gpu.yield":
                    yield_op = inner
                else:
                    inner.move_before(marker)
            self.linalg.YieldOp(list(yield_op.operands))
        marker.erase()
        return list(generic.results)

    def lower_tile_full(self, op):
        result = tensor_type(op.results[0].type)
        return [self.tensor.SplatOp(result, op.value, []).result]

    def lower_tile_arange(self, op):
        result = tensor_type(op.results[0].type)
        start, step = op.operands
        dtype = result.element_type

        def element(ivs):
            i64 = arith.IndexCastOp(ir.IntegerType.get_signless(64), ivs[0]).result
            i = arith.SIToFPOp(dtype, i64).result if isinstance(dtype, ir.FloatType) else \
                arith.TruncIOp(dtype, i64).result if ir.IntegerType(dtype).width < 64 else i64
            return wb.builtin("add", [start, wb.builtin("mul", [i, step], dtype)], dtype)

        return [self.generate(result, element)]

    def lower_tile_extract(self, op):
        tile, indices = op.tile, list(op.indices)
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        return [self.tensor.ExtractOp(tile, idx).result]

    def lower_tile_insert(self, op):
        tile, value, indices = op.tile, op.value, list(op.indices)
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        return [self.tensor.InsertOp(value, tile, idx).result]

    def lower_tile_broadcast_composite(self, op):
        source, source_t = op.tile, self.operand_types[0]
        src_shape, out_shape = element_of(source_t)[0], element_of(self.result_types[0])[0]
        lead = len(out_shape) - len(src_shape)

        def element_at(ivs):
            idx = [index_const(0) if n == 1 and out_shape[lead + k] != 1 else ivs[lead + k] for k, n in enumerate(src_shape)]
            return self.element(source, source_t, idx)

        return [self.generate_elements(self.result_types[0], element_at)]

    def lower_tile_transpose_composite(self, op):
        source, source_t = op.tile, self.operand_types[0]
        return [self.generate_elements(self.result_types[0], lambda ivs: self.element(source, source_t, ivs[::-1]))]

    # -- views: regions of the tensors, element by element (tensor.generate: bufferized in place, where an
    # extract_slice / insert_slice would bufferize to strided memref copies, a runtime call) ------------------
    def lower_tile_view(self, op):
        """tile_view: element (.., j_k, ..) of the view is the tile's at offset_d + step_d * j_k over the kept
        dimensions (step_d != 0), at offset_d where a dimension is dropped (step_d == 0)."""
        tile, tile_t = op.tile, self.operand_types[0]
        offsets = [arith.IndexCastOp(ir.IndexType.get(), o).result for o in op.offsets]
        steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))

        def element_at(ivs):
            return self.element(tile, tile_t, view_positions(offsets, steps, ivs))

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_view_composite = lower_tile_view

    def lower_tile_insert_view(self, op):
        """tile_insert_view: the element at `ivs` is the part's where `ivs` lies in the view (each kept dimension
        offset_d + step_d * j for a j inside the part, each dropped one at its offset), else the tile's."""
        tile, part, tile_t, part_t = op.tile, op.part, self.operand_types[0], self.operand_types[1]
        offsets = [arith.IndexCastOp(ir.IndexType.get(), o).result for o in op.offsets]
        steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))
        part_shape = list(element_of(part_t)[0])

        def element_at(ivs):
            inside = None
            local = []
            extents = iter(part_shape)
            for i, o, step in zip(ivs, offsets, steps):
                rel = arith.SubIOp(i, o).result
                if step == 0:
                    ok = arith.CmpIOp(arith.CmpIPredicate.eq, rel, index_const(0)).result
                elif step == 1:
                    ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, rel, index_const(0)).result,
                                      arith.CmpIOp(arith.CmpIPredicate.slt, rel, index_const(next(extents))).result).result
                    local.append(rel)
                else:
                    j = arith.DivSIOp(rel, index_const(step)).result
                    exact = arith.CmpIOp(arith.CmpIPredicate.eq, arith.MulIOp(j, index_const(step)).result, rel).result
                    ok = arith.AndIOp(exact, arith.AndIOp(
                        arith.CmpIOp(arith.CmpIPredicate.sge, j, index_const(0)).result,
                        arith.CmpIOp(arith.CmpIPredicate.slt, j, index_const(next(extents))).result).result).result
                    local.append(j)
                inside = ok if inside is None else arith.AndIOp(inside, ok).result
            branch = scf.IfOp(inside, [element_of(tile_t)[1]], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([self.element(part, part_t, local)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([self.element(tile, tile_t, ivs)])
            return branch.results[0]

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_insert_view_composite = lower_tile_insert_view

    def lower_tile_gather(self, op):
        """tile_gather: element (.., k, ..) is the tile's at (.., indices[k], ..) along the axis, a negative index
        counted from the end."""
        tile, indices, tile_t = op.tile, op.indices, self.operand_types[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        extent = element_of(tile_t)[0][axis]

        def element_at(ivs):
            at = list(ivs)
            at[axis] = wrapped_index(self.tensor.ExtractOp(indices, [ivs[axis]]).result, extent)
            return self.element(tile, tile_t, at)

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_gather_composite = lower_tile_gather

    def lower_tile_gather_add(self, op):
        """tile_gather_add: the tile plus, at each position i along the axis, the part's slices k whose index
        indices[k] is i (wrapped), added in k's order."""
        tile, part, indices = op.tile, op.part, op.indices
        tile_t, part_t = self.operand_types[0], self.operand_types[1]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        extent = element_of(tile_t)[0][axis]
        count = element_of(part_t)[0][axis]
        dtype = element_of(tile_t)[1]

        def element_at(ivs):
            def step(k, carried):
                hit = arith.CmpIOp(arith.CmpIPredicate.eq, wrapped_index(
                    self.tensor.ExtractOp(indices, [k]).result, extent), ivs[axis]).result
                branch = scf.IfOp(hit, [dtype], has_else=True)
                with ir.InsertionPoint(branch.then_block):
                    at = list(ivs)
                    at[axis] = k
                    scf.YieldOp([wb.builtin("add", [carried[0], self.element(part, part_t, at)], dtype)])
                with ir.InsertionPoint(branch.else_block):
                    scf.YieldOp([carried[0]])
                return [branch.results[0]]

            return for_loop(index_const(0), index_const(count), [self.element(tile, tile_t, ivs)], step)[0]

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_gather_add_composite = lower_tile_gather_add

    # -- random tiles ----------------------------------------------------------------------------------------
    def lower_tile_random(self, op):
        """Warp's tile_randi / tile_randf on one lane (native tile.h): s = rand_pcg(state), then a loop over the
        elements in row-major order, each advancing s = rand_pcg(s) (rand.h: randi, randf and their ranges)."""
        kind = ir.StringAttr(op.attributes["kind"]).value
        state, bounds = op.state, list(op.bounds)
        t = tensor_type(self.result_types[0])
        shape, dtype = list(t.shape), t.element_type
        i32 = ir.IntegerType.get_signless(32)
        total = 1
        for n in shape:
            total *= n

        def c(n):
            return arith.ConstantOp(i32, n - (1 << 32) if n >= 1 << 31 else n).result

        def pcg(x):
            b = arith.AddIOp(arith.MulIOp(x, c(747796405)).result, c(2891336453)).result
            shift = arith.AddIOp(arith.ShRUIOp(b, c(28)).result, c(4)).result
            mixed = arith.MulIOp(arith.XOrIOp(arith.ShRUIOp(b, shift).result, b).result, c(277803737)).result
            return arith.XOrIOp(arith.ShRUIOp(mixed, c(22)).result, mixed).result

        def at(flat):
            return unravel_index(flat, shape)

        def value_of(s):
            if kind == "randi":
                if not bounds:
                    return s
                lo, hi = bounds
                return arith.AddIOp(arith.RemUIOp(s, arith.SubIOp(hi, lo).result).result, lo).result
            u = arith.MulFOp(arith.UIToFPOp(dtype, arith.ShRUIOp(s, c(8)).result).result,
                             arith.ConstantOp(dtype, 1.0 / 16777216.0).result).result
            if not bounds:
                return u
            lo, hi = bounds
            return arith.AddFOp(arith.MulFOp(arith.SubFOp(hi, lo).result, u).result, lo).result

        def step(i, carried):
            out, s = carried
            s = pcg(s)
            return [self.tensor.InsertOp(value_of(s), out, at(i)).result, s]

        init = self.tensor.EmptyOp(shape, dtype).result
        state = wb.cast(state, i32)  # the uint32 state's bits (warp.cast: same width)
        return [for_loop(index_const(0), index_const(total), [init, pcg(state)], step)[0]]

    def lower_tile_reshape(self, op):
        return [self.reshape(op)]

    def lower_tile_reshape_composite(self, op):
        return [self.reshape(op)]

    def reshape(self, op):
        """Element i of the result (row-major) is element i of the source."""
        source, source_t, result_t = op.tile, self.operand_types[0], self.result_types[0]
        src_shape, out_shape = element_of(source_t)[0], element_of(result_t)[0]

        def element_at(ivs):
            return self.element(source, source_t, unravel_index(ravel_index(ivs, out_shape), src_shape))

        return self.generate_elements(result_t, element_at)

    def lower_tile_transpose(self, op):
        result = tensor_type(op.results[0].type)
        maps = [affine_map(2, [1, 0]), ir.AffineMap.get_identity(2)]
        return [self.generic(result, [op.tile], maps, parallel_iterators(2), body=lambda a: [a[0]]).results[0]]

    def lower_tile_broadcast(self, op):
        result = tensor_type(op.results[0].type)
        source = ir.RankedTensorType(op.tile.type)
        rank, lead = result.rank, result.rank - source.rank
        exprs = [ir.AffineConstantExpr.get(0) if n == 1 and result.shape[lead + k] != 1 else ir.AffineDimExpr.get(lead + k)
                 for k, n in enumerate(source.shape)]
        maps = [ir.AffineMap.get(rank, 0, exprs), ir.AffineMap.get_identity(rank)]
        return [self.generic(result, [op.tile], maps, parallel_iterators(rank), body=lambda a: [a[0]]).results[0]]
