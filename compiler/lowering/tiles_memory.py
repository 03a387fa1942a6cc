"""convert-warp-tiles-to-linalg's lowerings of the tile ops that read and write arrays: tile_load, tile_store, tile_atomic_add, tile_load_indexed, tile_store_indexed (methods of
TileLowering; the tile table, compiler/tiles/table.py, names each op's)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, vector

from ..dialects import llvm
from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from .tile_lowering import (ROW_VECTOR_MAX, TileLowering, as_i32, component_indices, constant_of, element_bytes,
                            element_of, for_loop, index_const, inside_array, is_struct, is_vector_element,
                            load_or_zero, loop_nest, mark_write, tensor_type, zero_of)


def _read(op) -> bool:
    """Whether anything reads the op's results (tile_atomic_add's previous values)."""
    return any(True for r in op.results for _ in r.uses)


class MemoryLowering(TileLowering):
    def lower_tile_load_composite(self, op):
        arr, offsets = op.array, list(op.offsets)
        dtype = element_of(self.result_types[0])[1]

        def element_at(ivs):
            positions = [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            branch = scf.IfOp(inside_array(arr, positions), [dtype], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([wb.load(arr, positions)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([wc.construct(dtype, [])])
            return branch.results[0]

        return [self.generate_elements(self.result_types[0], element_at)]

    def _store_like(self, op, write):
        arr, tile, offsets = op.array, op.tile, list(op.offsets)
        tile_t = self.operand_types[1]
        made = []

        def store(ivs):
            positions = [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            branch = scf.IfOp(inside_array(arr, positions))
            made.append(branch)
            with ir.InsertionPoint(branch.then_block):
                write(arr, self.element(tile, tile_t, ivs), positions)
                scf.YieldOp([])

        mark_write(loop_nest(element_of(tile_t)[0], store) or made[0], op.name)
        return []

    def lower_tile_store_composite(self, op):
        return self._store_like(op, lambda arr, v, pos: wb.store(arr, v, pos))

    def lower_tile_atomic_add_composite(self, op):
        if _read(op):
            return [self._atomic_add_previous(op)]
        return self._store_like(op, lambda arr, v, pos: wb.atomic("add", arr, v, pos))

    def _atomic_add_previous(self, op) -> ir.Value:
        """tile_atomic_add whose result is read: the nest's loops carry the tile of the values each atomic
        returned (zero past the array's upper extent, where nothing is added). Not a write nest (TILE_WRITE_ATTR):
        a loop carrying a tensor is one lane's (the tile table's `spreads_unread`)."""
        arr, tile, offsets = op.array, op.tile, list(op.offsets)
        tile_t = self.operand_types[1]

        def previous(ivs):
            positions = [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            return inside_array(arr, positions), positions, \
                lambda: wb.atomic("add", arr, self.element(tile, tile_t, ivs), positions)

        return self._previous_nest(tile_t, previous)

    @staticmethod
    def _load_then_store(arr, value, positions) -> ir.Value:
        old = wb.load(arr, positions)
        wb.store(arr, value, positions)
        return old

    def _previous_nest(self, tile_t, previous) -> ir.Value:
        """A loop nest over the tile carrying the tile of what each element's write returns: `previous(ivs)` gives
        (whether the element is written, its array position, the write returning the old value); zero where
        nothing is written."""
        shape, dtype, c = element_of(tile_t)
        result = tensor_type(tile_t)
        whole = c is None or is_struct(c)  # one element of the tensor
        components = [()] if whole else component_indices(c)

        def nest(ivs, carried):
            if len(ivs) < len(shape):
                return for_loop(index_const(0), index_const(shape[len(ivs)]), [carried],
                                lambda iv, inner: nest([*ivs, iv], inner[0]))
            inside, _, write = previous(ivs)
            branch = scf.IfOp(inside, [dtype], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([write()])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([wc.construct(dtype, []) if c is not None else zero_of(dtype)])
            old = branch.results[0]
            for k in components:
                part = old if whole else wc.extract(old, [as_i32(index_const(j)) for j in k], c.dtype)
                carried = self.tensor.InsertOp(part, carried, [*ivs, *(index_const(j) for j in k)]).result
            return [carried]

        empty = self.tensor.EmptyOp(list(result.shape), result.element_type).result
        return nest([], empty)[0]

    def lower_tile_load(self, op):
        arr, offsets = op.array, list(op.offsets)
        return [self.checked_load(arr, offsets, tensor_type(op.results[0].type))]

    def checked_load(self, arr, offsets, result):
        """Element i is arr[offsets + i], or zero past the array's upper extent. A tile wholly inside the
        array (the usual case) takes a branch without per-element checks, whose copy LLVM vectorises."""
        dtype = result.element_type
        inside_all = None
        for d, off in enumerate(offsets):
            end = arith.AddIOp(off, constant_of(off.type, result.shape[d])).result
            fits = arith.CmpIOp(arith.CmpIPredicate.sle, end, wb.array_dim(arr, d)).result
            inside_all = fits if inside_all is None else arith.AndIOp(inside_all, fits).result
        rank, width = len(offsets), result.shape[len(offsets) - 1]
        i64 = ir.IntegerType.get_signless(64)
        if width > 1:  # rows contiguous in memory (the inner stride is one element): loads LLVM can vectorise
            first = [*offsets[:-1], offsets[-1]]
            second = [*offsets[:-1], arith.AddIOp(offsets[-1], constant_of(offsets[-1].type, 1)).result]
            step = arith.SubIOp(llvm.ptrtoint(i64, wb.address(arr, second)),
                                llvm.ptrtoint(i64, wb.address(arr, first))).result
            contiguous = arith.CmpIOp(arith.CmpIPredicate.eq, step,
                                      constant_of(i64, element_bytes(dtype))).result
            inside_all = arith.AndIOp(inside_all, contiguous).result

        def row_element(ivs):
            positions = [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            if width == 1:
                return wb.load(arr, positions)
            start = llvm.ptrtoint(i64, wb.address(arr, [*positions[:-1], offsets[-1]]))
            row = wb.array_from_ptr(start, [constant_of(ir.IntegerType.get_signless(32), width)], dtype)
            return wb.load(row, [as_i32(ivs[rank - 1])])

        version = scf.IfOp(inside_all, [result], has_else=True)
        with ir.InsertionPoint(version.then_block):
            if self.row_vectors and 1 < width <= ROW_VECTOR_MAX and rank <= 2 and is_vector_element(dtype):
                scf.YieldOp([self.vector_rows(arr, offsets, result)])
            else:
                scf.YieldOp([self.generate(result, row_element)])
        with ir.InsertionPoint(version.else_block):
            scf.YieldOp([self.guarded_load(arr, offsets, result)])
        return version.results[0]

    def vector_rows(self, arr, offsets, result):
        """The tile of a 1-d or 2-d array whose rows are contiguous, one vector load a row (each row written
        into the tile by vector.transfer_write)."""
        dtype, rank = result.element_type, len(offsets)
        width = result.shape[-1]
        row_t = ir.VectorType.get([width], dtype)
        identity = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))
        in_bounds = ir.ArrayAttr.get([ir.BoolAttr.get(True)])

        def row(r, state):
            positions = [arith.AddIOp(as_i32(r), offsets[0]).result] if rank == 2 else []
            v = llvm.load(row_t, wb.address(arr, [*positions, offsets[-1]]), alignment=element_bytes(dtype))
            at = [r, index_const(0)] if rank == 2 else [index_const(0)]
            return [vector.transfer_write(result, v, state[0], at, identity, in_bounds)]

        empty = self.tensor.EmptyOp(list(result.shape), dtype).result
        return for_loop(index_const(0), index_const(result.shape[0] if rank == 2 else 1), [empty], row)[0]

    def guarded_load(self, arr, offsets, result):
        dtype = result.element_type

        def element(ivs):
            return load_or_zero(arr, [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)], dtype)

        return self.generate(result, element)

    def lower_tile_store(self, op):
        arr, tile, offsets = op.array, op.tile, list(op.offsets)
        made = []

        def store(ivs):
            positions = [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            inside = None
            for d, p in enumerate(positions):
                below = arith.CmpIOp(arith.CmpIPredicate.slt, p, wb.array_dim(arr, d)).result
                inside = below if inside is None else arith.AndIOp(inside, below).result
            branch = scf.IfOp(inside)
            made.append(branch)
            with ir.InsertionPoint(branch.then_block):
                wb.store(arr, self.tensor.ExtractOp(tile, ivs).result, positions)
                scf.YieldOp([])

        mark_write(loop_nest(ir.RankedTensorType(tile.type).shape, store) or made[0], op.name)
        return []

    def _indexed_positions(self, op, indices, offsets, ivs):
        """Positions of tile element `ivs` for an indexed load/store along the op's axis, and i1: inside the array
        on both sides (a negative index is a padding sentinel)."""
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        arr = op.array
        positions = []
        for d, (iv, off) in enumerate(zip(ivs, offsets)):
            rel = self.tensor.ExtractOp(indices, [iv]).result if d == axis else as_i32(iv)
            positions.append(arith.AddIOp(rel, off).result)
        inside = inside_array(arr, positions)
        zero = arith.ConstantOp(ir.IntegerType.get_signless(32), 0).result
        for p in positions:
            inside = arith.AndIOp(inside, arith.CmpIOp(arith.CmpIPredicate.sge, p, zero).result).result
        return positions, inside

    def lower_tile_load_indexed(self, op):
        arr, indices, offsets = op.array, op.indices, list(op.offsets)
        result_t = self.result_types[0]
        dtype = element_of(result_t)[1]

        def element_at(ivs):
            positions, inside = self._indexed_positions(op, indices, offsets, ivs)
            branch = scf.IfOp(inside, [dtype], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([wb.load(arr, positions)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([wc.construct(dtype, []) if wc.composite(dtype) else zero_of(dtype)])
            return branch.results[0]

        return [self.generate_elements(result_t, element_at)]

    lower_tile_load_indexed_composite = lower_tile_load_indexed

    def lower_tile_store_indexed(self, op):
        arr, indices, tile, offsets = op.array, op.indices, op.tile, list(op.offsets)
        tile_t = self.operand_types[2]
        atomic = ir.IntegerAttr(op.attributes["atomic"]).value
        if _read(op):  # tile_atomic_add_indexed's previous values
            def previous(ivs):
                positions, inside = self._indexed_positions(op, indices, offsets, ivs)
                return inside, positions, lambda: wb.atomic("add", arr, self.element(tile, tile_t, ivs), positions) \
                    if atomic else self._load_then_store(arr, self.element(tile, tile_t, ivs), positions)
            return [self._previous_nest(tile_t, previous)]

        def store(ivs):
            positions, inside = self._indexed_positions(op, indices, offsets, ivs)
            branch = scf.IfOp(inside)
            with ir.InsertionPoint(branch.then_block):
                value = self.element(tile, tile_t, ivs)
                if atomic:
                    wb.atomic("add", arr, value, positions)
                else:
                    wb.store(arr, value, positions)
                scf.YieldOp([])

        loop_nest(element_of(tile_t)[0], store)
        return []

    lower_tile_store_indexed_composite = lower_tile_store_indexed

    def lower_tile_atomic_add(self, op):
        if _read(op):
            return [self._atomic_add_previous(op)]
        arr, tile, offsets = op.array, op.tile, list(op.offsets)
        made = []

        def add(ivs):
            positions = [arith.AddIOp(as_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            inside = None
            for d, p in enumerate(positions):
                below = arith.CmpIOp(arith.CmpIPredicate.slt, p, wb.array_dim(arr, d)).result
                inside = below if inside is None else arith.AndIOp(inside, below).result
            branch = scf.IfOp(inside)
            made.append(branch)
            with ir.InsertionPoint(branch.then_block):
                wb.atomic("add", arr, self.tensor.ExtractOp(tile, ivs).result, positions)
                scf.YieldOp([])

        mark_write(loop_nest(ir.RankedTensorType(tile.type).shape, add) or made[0], op.name)
        return []
