"""warp-stream-tile-reductions: a whole-tile reduction of a tile that is only loaded to be reduced
(`wp.tile_sum(wp.tile_load(a, ...))`, also max, min and product) reads the array in the reduction's loop
instead of copying the tile into a buffer first:

    %t = warp.tile_load(%a, %i)                       %acc = scf.for %k = 0 to N iter_args(%s = init) {
    %r = warp.tile_reduce(%t) {kind = "add",    ->        %v = scf.if (%i + %k < dim(%a)) { warp.load(%a, %i + %k) }
                               axis = -1}                         else { 0 }
                                                          scf.yield warp.add(%s, %v)
                                                      }
                                                      %r = warp.tile_full(%acc)

Each element is the one tile_load would have read (zero past the array's upper extent), UNROLL of them an
iteration of the innermost loop, and they are combined in the same order from the same first value as convert-warp-tiles-to-linalg's reduction (row-major,
Warp's sequential CPU loop), so the result is the same to the bit. The loop is emitted where the load was:
the array is read at the same point of the program.

Why: a block's tile_sum is one chain of dependent additions (the latency of an add per element). As a
copy and a chain, a thread reads each element twice and nothing else overlaps; as a loop of thread-
invariant bounds over the array, warp-cpu-interchange-loops runs the chain of a block of threads in
lockstep, vectorised across the threads (their chains are independent), which is what lets a reduction of
many tiles read at memory speed on the CPU.

Left alone: reductions along an axis, argmax/argmin, tiles of vectors or matrices, and a loaded tile with any
other use (it is needed whole).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, vector

from ..dialects import llvm
from ..dialects.warp import builders as wb
from ..dialects.warp import tile_params
from ..lowering.tile_lowering import (constant_of, element_bytes, inside_array, is_vector_element, load_or_zero,
                                      sum_identity)
from . import registry
from .ir_walk import ops_named

STREAMED_KINDS = ("add", "mul", "max", "min")
# Elements of a row an iteration of the innermost loop reads: a block of threads interchanged around the loop
# (warp-cpu-interchange-loops) then reads 16 consecutive elements of each thread's row a step, its chain in
# registers (1e7 floats on one thread: 14 GB/s one element an iteration, 19 with 16)
UNROLL = 16


def _defining_op(value: ir.Value):
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _scalar(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.FloatType))


def streamable(reduce_op):
    """The tile_load feeding `reduce_op` when the pair can be streamed, else None."""
    kind = ir.StringAttr(reduce_op.attributes["kind"]).value
    if kind not in STREAMED_KINDS or ir.IntegerAttr(reduce_op.attributes["axis"]).value >= 0:
        return None
    load = _defining_op(reduce_op.operands[0])
    if load is None or load.name != "warp.tile_load":
        return None
    if not _scalar(tile_params(load.results[0].type)[0]):
        return None
    uses = list(load.results[0].uses)
    return load if len(uses) == 1 else None


def _unroll(width: int) -> int:
    """Elements a step of the innermost loop: UNROLL, or the largest power of two below it dividing the width."""
    step = UNROLL
    while width % step:
        step //= 2
    return step


def _step_vector(arr, positions, step: int, dtype) -> ir.Value:
    """vector<step x dtype>: the `step` elements of the row from `positions` on, each the one tile_load reads (zero
    past the extent). One vector load when they all lie inside a contiguous row (the usual case), else element
    by element."""
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    row = positions[:-1]
    last = [*row, arith.AddIOp(positions[-1], arith.ConstantOp(i32, step - 1).result).result]
    # the inner stride, from the array's first two elements: the same for every thread and step (hoisted)
    origin = [arith.ConstantOp(i32, 0).result for _ in positions]
    second = [*origin[:-1], arith.ConstantOp(i32, 1).result]
    gap = arith.SubIOp(llvm.ptrtoint(i64, wb.address(arr, second)), llvm.ptrtoint(i64, wb.address(arr, origin)))
    contiguous = arith.CmpIOp(arith.CmpIPredicate.eq, gap.result, constant_of(i64, element_bytes(dtype))).result
    fits = arith.AndIOp(inside_array(arr, last), contiguous).result
    # the element-by-element path is the rare one (a tile's last step past the array's end, a strided view):
    # LLVM places it out of the way of the vector loads (inline between them it halved a tile sum's speed)
    fits = llvm.intr_expect(fits, arith.ConstantOp(fits.type, ir.IntegerAttr.get(fits.type, 1)).result)
    vector_t = ir.VectorType.get([step], dtype)
    version = scf.IfOp(fits, [vector_t], has_else=True)
    with ir.InsertionPoint(version.then_block):
        scf.YieldOp([llvm.load(vector_t, wb.address(arr, positions), alignment=element_bytes(dtype))])
    with ir.InsertionPoint(version.else_block):
        elements = [load_or_zero(arr, [*row, arith.AddIOp(positions[-1], arith.ConstantOp(i32, k).result).result
                                       if k else positions[-1]], dtype) for k in range(step)]
        scf.YieldOp([vector.FromElementsOp(vector_t, elements).result])
    return version.results[0]


def _stream(load, kind: str, row_vectors: bool) -> ir.Value:
    """The reduction of the tile `load` reads, as loops over the array at the insertion point."""
    arr, offsets = load.operands[0], list(load.operands)[1:]
    dtype, shape = tile_params(load.results[0].type)
    i32 = ir.IntegerType.get_signless(32)
    if kind in ("max", "min"):
        acc = load_or_zero(arr, offsets, dtype)  # from the first element, as the tensor reduction
    else:
        acc = sum_identity(dtype) if kind == "add" else constant_of(dtype, 1)

    def nest(d, ivs, carried):
        innermost = d + 1 == len(shape)
        step = _unroll(shape[d]) if innermost else 1
        loop = scf.ForOp(arith.ConstantOp(i32, 0).result, arith.ConstantOp(i32, shape[d]).result,
                         arith.ConstantOp(i32, step).result, [carried])
        with ir.InsertionPoint(loop.body):
            acc = loop.inner_iter_args[0]
            if not innermost:
                acc = nest(d + 1, [*ivs, loop.induction_variable], acc)
            elif row_vectors and step > 1 and is_vector_element(dtype):
                positions = [arith.AddIOp(off, iv).result for off, iv in zip(offsets, [*ivs, loop.induction_variable])]
                elements = _step_vector(arr, positions, step, dtype)
                for k in range(step):  # the elements in order
                    acc = wb.builtin(kind, [acc, vector.ExtractOp(elements, [], [k]).result], dtype)
            else:
                for k in range(step):
                    at = loop.induction_variable if k == 0 else arith.AddIOp(loop.induction_variable,
                                                                             arith.ConstantOp(i32, k).result).result
                    positions = [arith.AddIOp(off, iv).result for off, iv in zip(offsets, [*ivs, at])]
                    acc = wb.builtin(kind, [acc, load_or_zero(arr, positions, dtype)], dtype)
            scf.YieldOp([acc])
        return loop.results[0]

    return nest(0, [], acc)


class StreamTileReductions(registry.StreamTileReductions):
    def run(self, module):
        for reduce_op in ops_named(module, {"warp.tile_reduce"}):
            load = streamable(reduce_op)
            if load is None:
                continue
            kind = ir.StringAttr(reduce_op.attributes["kind"]).value
            with ir.InsertionPoint(load), load.location:
                value = _stream(load, kind, self.row_vectors)
            with ir.InsertionPoint(reduce_op), reduce_op.location:
                tile = wb.create("tile_full", value, results=[reduce_op.results[0].type]).results[0]
            reduce_op.results[0].replace_all_uses_with(tile)
            reduce_op.erase()
            load.erase()
