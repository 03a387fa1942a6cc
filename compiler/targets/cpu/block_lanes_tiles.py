"""warp-cpu-block-lanes' rewrites of tile ops for a block's lanes, before the fission (block_lanes.py): random tiles
drawn per lane (lane_random), whole-tile sums and products folded in Warp's lane order (strided_reductions), and the
identities a partial block's missing lanes read (identity); with the tile-type helpers both modules use."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects.warp import builders as wb
from ...dialects.warp import composite as wc
from ...passes.ir_walk import ops_named


def i32():
    return ir.IntegerType.get_signless(32)

def i64():
    return ir.IntegerType.get_signless(64)

def tile_of(element, *shape) -> ir.Type:
    return ir.Type.parse(f"!warp.tile<{element}, array<i64: {', '.join(map(str, shape))}>>")

def tile_parts(t: ir.Type):
    """(element type text, shape) of a tile type."""
    text = str(t)[len("!warp.tile<"):-1]
    element, dims = text.rsplit(", array<i64:", 1)
    return element, [int(d) for d in dims.rstrip(">").split(",") if d.strip()]

def identity(kind: str, tile_type: ir.Type):
    """A maker of the identity of a reduction or scan {kind} for the tile's elements (None: not one of a scalar
    type, or an arg reduction, whose index a stand-in value could win)."""
    element = ir.Type.parse(tile_parts(tile_type)[0])
    is_float = isinstance(element, (ir.F16Type, ir.F32Type, ir.F64Type))
    is_int = isinstance(element, ir.IntegerType) and element.width > 1
    if kind in ("add", "add_exclusive"):
        if is_float or is_int:
            return lambda: zero(element)
        if str(element).startswith(("!warp.vec<", "!warp.mat<", "!warp.struct<")):  # (a struct sum starts from the
            return lambda: wc.construct(element, [])  # first element, which lane 0 has: the zeros add nothing to it)
        return None
    if kind == "mul" and (is_float or is_int):
        return lambda: arith.ConstantOp(element, 1.0).result if is_float else wb.int_constant(element, 1)
    if kind in ("max", "min"):
        if is_float:
            return lambda: arith.ConstantOp(element, float("-inf") if kind == "max" else float("inf")).result
        if is_int and element.is_unsigned:
            return lambda: wb.int_constant(element, 0 if kind == "max" else (1 << element.width) - 1)
        if is_int:
            bits = element.width
            return lambda: arith.ConstantOp(element, -(1 << (bits - 1)) if kind == "max" else (1 << (bits - 1)) - 1
                                            ).result
    return None

def lane_random(kernel, lanes: int) -> None:
    """tile_randi / tile_randf with `lanes` lanes as Warp's (tile.h tile_randi): lane l draws from its own
    generator, rand_pcg(rng + l), the elements it holds (l, l + lanes, ...) in turn. As tiles: a loop over the lanes
    (min(lanes, n) of them) writing row l of a (rows, k) tile with tile_random(rng + l) of k = ceil(n / lanes)
    draws, transposed (element e = l + j lanes is lane l's j-th draw), its first n elements in the tile's shape."""
    for op in ops_named(kernel.operation, {"warp.tile_random"}):
        result = op.results[0]
        element, shape = tile_parts(result.type)
        n = 1
        for d in shape:
            n *= d
        draws, rows = -(-n // lanes), min(lanes, n)
        random = op.opview
        state, bounds = random.state, random.bounds
        kind = op.attributes["kind"]
        with ir.InsertionPoint(op), op.location:
            grid = wb.create("tile_full", zero(ir.Type.parse(element)),
                             results=[tile_of(element, rows, draws)]).result
            loop = scf.ForOp(index(0), index(rows), index(1), [grid])
            with ir.InsertionPoint(loop.body):
                lane = arith.IndexCastOp(i32(), loop.induction_variable).result
                mine = wb.builtin("add", [state, wb.create("cast", lane, results=[state.type]).result], state.type)
                drawn = wb.create("tile_random", mine, bounds, results=[tile_of(element, draws)],
                                  attributes={"kind": kind}).result
                row = wb.create("tile_reshape", drawn, results=[tile_of(element, 1, draws)]).result
                scf.YieldOp([wb.tile_insert_view(loop.inner_iter_args[0], row, [lane, const(i32(), 0)])])
            flat = wb.create("tile_transpose", loop.results[0], results=[tile_of(element, draws, rows)]).result
            flat = wb.create("tile_reshape", flat, results=[tile_of(element, draws * rows)]).result
            if draws * rows != n:
                flat = wb.tile_view(flat, [const(i32(), 0)], tile_of(element, n))
            if len(shape) > 1:
                flat = wb.create("tile_reshape", flat, results=[result.type]).result
        result.replace_all_uses_with(flat)
        op.erase()

def flat_index(shape) -> ir.Value:
    """The i32 tile of `shape` holding each element's row-major index (whose lane is index % block_dim)."""
    n = 1
    for d in shape:
        n *= d
    index = wb.create("tile_arange", const(i32(), 0), const(i32(), 1), results=[tile_of("i32", n)]).result
    return wb.create("tile_reshape", index, results=[tile_of("i32", *shape)]).result if len(shape) > 1 else index

def strided_reductions(kernel, lanes: int) -> None:
    """A whole-tile sum or product in Warp's order with `lanes` lanes (tile_reduce_impl on the CPU): lane l folds
    the elements l, l + lanes, l + 2 lanes, ... (row-major), then the lanes' partials are folded in lane order. As
    tiles: the first (n // lanes) * lanes elements as rows of `lanes`, reduced along axis 0 (the partials), the last
    n % lanes added to the first partials, then the partials reduced. A tile of at most `lanes` elements keeps its
    one fold (each lane holds one element). Max and min do not depend on the order."""
    for op in ops_named(kernel.operation, {"warp.tile_reduce"}):
        reduce = op.opview
        kind = reduce.kind
        if kind not in ("add", "mul") or reduce.axis != -1:
            continue
        t = reduce.tile
        element, shape = tile_parts(t.type)
        n = 1
        for d in shape:
            n *= d
        if n <= lanes:
            continue
        rows, rest = divmod(n, lanes)
        with ir.InsertionPoint(op), op.location:
            flat = t if len(shape) == 1 else wb.create("tile_reshape", t, results=[tile_of(element, n)]).result
            zero = const(i32(), 0)
            main = flat if not rest else wb.tile_view(flat, [zero], tile_of(element, rows * lanes))
            grid = wb.create("tile_reshape", main, results=[tile_of(element, rows, lanes)]).result
            partials = wb.create("tile_reduce", grid, results=[tile_of(element, lanes)], attributes={
                "kind": ir.StringAttr.get(kind), "axis": ir.IntegerAttr.get(i64(), 0)}).result
            if rest:
                tail = wb.tile_view(flat, [const(i32(), rows * lanes)], tile_of(element, rest))
                head = wb.tile_view(partials, [zero], tile_of(element, rest))
                both = wb.builtin(kind, [head, tail], head.type)
                partials = wb.tile_insert_view(partials, both, [zero])
            total = wb.create("tile_reduce", partials, results=[op.results[0].type], attributes={
                "kind": ir.StringAttr.get(kind), "axis": ir.IntegerAttr.get(i64(), -1)}).result
        op.results[0].replace_all_uses_with(total)
        op.erase()

def index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result

def const(t: ir.Type, n: int) -> ir.Value:
    return arith.ConstantOp(t, n).result

def zero(t: ir.Type) -> ir.Value:
    """The zero of a carrier's element type."""
    if isinstance(t, ir.IntegerType):
        return wb.int_constant(t, 0)
    if isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type, ir.BF16Type)):
        return arith.ConstantOp(t, 0.0).result
    return wc.construct(t, [])
