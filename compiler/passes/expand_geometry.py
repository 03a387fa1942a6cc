"""warp-expand-geometry: the geometry query ops (dialects/warp/geometry_ops.py) as warp and scf ops.

A structure's id is the address of its descriptor, int64 words laid out as core/geometry.py says
(a float word read as f32 at index 2k); the descriptor's array addresses become `warp.array_from_ptr`
arrays, so what this pass builds is ordinary warp IR that both targets lower. The hash-grid ops follow
Warp 1.19's hashgrid.h step for step:

  hash_grid_query       the query box's cell range (hash_grid_cell_coord: floor, saturated; at most dim cells
                        per axis), computed in the point's precision (f16 / f32 / f64, the grid's inverse cell
                        width stored for it), and the first cell's [start, end) in the sorted point ids; a
                        grouped query on a grid built with groups narrows each cell's range to its group's
                        points (two binary searches of the sorted positions' groups, as uint32)
  hash_grid_query_next  a candidate left in the current cell range is taken at once (an scf.if: one compare and
                        one load, the common case); a used-up range goes on in an scf.while over cells (x fastest,
                        then y, then z) until one has points left or the range is exhausted; then the point id,
                        the index out-parameter (unchanged when nothing is found) and the advanced state
  hash_grid_point_id    point_ids[index] (-1 when the grid was never built or reserved)

Two departures in how, not what: an ungrouped query whose x range lies inside the grid (0 <= x_start <= x_end < dim_x,
the common case) walks whole rows, not cells: the row's cells are consecutive cell indices, so their points
are one range of the sorted ids [cell_starts[first], cell_ends[last]) (empty cells hold the empty range at
their place: build_kernels.grid_ranges), met in Warp's order (x fastest) with a third of the steps, each
one cell hash and two loads; its state keeps x at x_end. The quick path first (Warp's hashgrid.h order too): with
the range test behind the cell walk's loop, each candidate paid the walk's checks and LLVM kept the query state and
the descriptor's words on the stack; example_dem's contact kernel (65,536 points, ~340 candidates each) took
144 ms on one core against Warp's 68, 69 ms after. A grid never built starts its queries with an empty range. A
cell coordinate's `mod dim` divides only when it is outside [0, dim) (an scf.if, not an idiv per axis and step).
Other queries (wrapping in x) step cell by cell as Warp does. (A prefetch of the point a few ids ahead made sparse
grids' queries ~10% faster and dense ones ~40% slower, its address computed and a descriptor word read per
candidate: example_dem's 15 points a cell; gone.)

It runs after warp-autodiff (the queries carry no derivative: integer states and results), so the adjoint's
forward replay gets the same expansion. A block-wide query's ops in a module built for Warp's CPU lanes (marked
wb.BLOCK_LEVEL_ATTR) are left to the pass's second run, after warp-cpu-block-lanes has kept them at block level."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math, scf

from mlwarp.core import geometry as layout

from ..dialects.warp import views
from ..dialects.warp import builders as wb
from ..lowering.patterns import UNMATCHED, lower_ops
from . import registry
from .ir_walk import ops_named

HG = {name: k for k, name in enumerate(layout.HASH_GRID_QUERY_FIELDS)}
INT_MAX, INT_MIN = 2**31 - 1, -(2**31)


def i32():
    return ir.IntegerType.get_signless(32)


def i64():
    return ir.IntegerType.get_signless(64)


def c32(v: int) -> ir.Value:
    return arith.ConstantOp(i32(), v).result


def cf32(v: float) -> ir.Value:
    f = ir.F32Type.get()
    return arith.ConstantOp(f, ir.FloatAttr.get(f, v)).result


def select(c, a, b) -> ir.Value:
    return arith.SelectOp(c, a, b).result


def icmp(pred: str, a, b) -> ir.Value:
    return arith.CmpIOp(getattr(arith.CmpIPredicate, pred), a, b).result


def fcmp(pred: str, a, b) -> ir.Value:
    return arith.CmpFOp(getattr(arith.CmpFPredicate, pred), a, b).result


class Descriptor:
    """The words of the descriptor at a ui64 id."""

    def __init__(self, structure_id: ir.Value, words: int):
        self.address = wb.cast(structure_id, i64())
        self.ints = wb.array_from_ptr(self.address, [c32(words)], i64())
        self._floats = None
        self.words = words

    def word(self, k: int) -> ir.Value:
        return wb.load(self.ints, [c32(k)])

    def word32(self, k: int) -> ir.Value:
        return arith.TruncIOp(i32(), self.word(k)).result

    def float(self, k: int) -> ir.Value:
        if self._floats is None:
            self._floats = wb.array_from_ptr(self.address, [c32(2 * self.words)], ir.F32Type.get())
        return wb.load(self._floats, [c32(2 * k)])

    def scalar(self, k: int, t: ir.Type) -> ir.Value:
        """Word k read as a float of type t (f16: the word's low 16 bits, f32: its low half, f64: the word)."""
        per_word = 64 // t.width
        return wb.load(wb.array_from_ptr(self.address, [c32(per_word * self.words)], t), [c32(per_word * k)])

    def array(self, k: int, length: ir.Value, dtype: ir.Type) -> ir.Value:
        return wb.array_from_ptr(self.word(k), [length], dtype)


def cell_coord(v: ir.Value) -> ir.Value:
    """hash_grid_cell_coord(float) on the host: floor, INT_MAX - 1 at or above 2^31, INT_MIN below -2^31,
    0 for NaN (fptosi of an out-of-range value is poison, but a select that does not pick it is not)."""
    c = math.FloorOp(v).result
    as_int = arith.FPToSIOp(i32(), c).result
    low = select(fcmp("OLT", c, cf32(-2147483648.0)), c32(INT_MIN), c32(0))
    mid = select(fcmp("OGE", c, cf32(-2147483648.0)), as_int, low)
    return select(fcmp("OGE", c, cf32(2147483648.0)), c32(INT_MAX - 1), mid)


def cell_coord_f64(v: ir.Value) -> ir.Value:
    """hash_grid_cell_coord(double) on the host: as the float one, but INT_MAX - 1 from 2^31 - 2 on (a double holds
    2^31 - 1, which must not become INT_MAX)."""
    f64 = ir.F64Type.get()
    bound = lambda x: arith.ConstantOp(f64, ir.FloatAttr.get(f64, x)).result  # noqa: E731
    c = math.FloorOp(v).result
    as_int = arith.FPToSIOp(i32(), c).result
    low = select(fcmp("OLT", c, bound(-2147483648.0)), c32(INT_MIN), c32(0))
    mid = select(fcmp("OGE", c, bound(-2147483648.0)), as_int, low)
    return select(fcmp("OGE", c, bound(2147483646.0)), c32(INT_MAX - 1), mid)


def cell_coord_of(v: ir.Value) -> ir.Value:
    """hash_grid_cell_coord of a query's precision (a half is converted to float first, as Warp's)."""
    if isinstance(v.type, ir.F64Type):
        return cell_coord_f64(v)
    if isinstance(v.type, ir.F16Type):
        v = arith.ExtFOp(ir.F32Type.get(), v).result
    return cell_coord(v)


INV_WORDS = {16: layout.HG_CELL_WIDTH_INV_F16, 32: layout.HG_CELL_WIDTH_INV, 64: layout.HG_CELL_WIDTH_INV_F64}


def query_end(start, end, dim) -> ir.Value:
    """At most `dim` cells per axis: int64(end) - int64(start) >= dim ? start + dim - 1 : end."""
    wide = lambda x: arith.ExtSIOp(i64(), x).result  # noqa: E731
    span = arith.SubIOp(wide(end), wide(start)).result
    capped = arith.AddIOp(start, arith.SubIOp(dim, c32(1)).result).result
    return select(icmp("sge", span, wide(dim)), capped, end)


class HashGrid:
    """The grid's descriptor words a query needs."""

    def __init__(self, structure_id: ir.Value):
        self.d = Descriptor(structure_id, layout.HG_WORDS)
        self.dims = [self.d.word32(k) for k in (layout.HG_DIM_X, layout.HG_DIM_Y, layout.HG_DIM_Z)]

    def wrap(self, v, dim) -> ir.Value:
        """v mod dim (in [0, dim)); the division only for a v outside [0, dim) (an scf.if: a branch
        that the common, inside-the-grid case predicts, not an idiv per cell)."""
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, v, dim).result
        branch = scf.IfOp(inside, [i32()], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([v])
        with ir.InsertionPoint(branch.else_block):
            r = arith.RemSIOp(v, dim).result
            scf.YieldOp([select(icmp("slt", r, c32(0)), arith.AddIOp(r, dim).result, r)])
        return branch.result

    def group_range(self, grouped, group, start, end) -> tuple:
        """hash_grid_query_set_cell's narrowing of a cell's [start, end) to `group`'s points where `grouped`: two
        binary searches of the sorted positions' groups, compared as uint32 (Warp's lower bounds of the keys
        (cell, group) and (cell, group) + 1)."""
        branch = scf.IfOp(icmp("ne", grouped, c32(0)), [i32(), i32()], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            capacity = self.d.word32(layout.HG_NUM_POINTS)
            groups = self.d.array(layout.HG_GROUPS, select(icmp("sgt", capacity, c32(1)), capacity, c32(1)), i32())
            first = _lower_bound(groups, start, end, lambda g: icmp("ult", g, group))
            scf.YieldOp([first, _lower_bound(groups, first, end, lambda g: icmp("ule", g, group))])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([start, end])
        return branch.results[0], branch.results[1]

    def has_groups(self) -> ir.Value:
        return icmp("ne", self.d.word(layout.HG_HAS_GROUPS), arith.ConstantOp(i64(), 0).result)

    def cell_range(self, x, y, z, x_lo=None) -> tuple:
        """hash_grid_query_set_cell: [cell_starts[cell], cell_ends[cell]) of the cell at (x, y, z) mod dims; with
        x_lo (a row walk: 0 <= x_lo <= x < dim_x), the cells x_lo..x of that row as one range (the sorted ids of
        consecutive cells are contiguous, empty cells included: build_kernels.grid_ranges)."""
        dx, dy, dz = self.dims
        lo = x if x_lo is None else x_lo
        cx, cy, cz = self.wrap(lo, dx), self.wrap(y, dy), self.wrap(z, dz)
        plane = arith.MulIOp(dx, dy).result
        cell = arith.AddIOp(arith.AddIOp(arith.MulIOp(cz, plane).result, arith.MulIOp(cy, dx).result).result,
                            cx).result
        last = cell if x_lo is None else arith.AddIOp(cell, arith.SubIOp(x, x_lo).result).result
        cells = arith.MulIOp(plane, dz).result
        starts = self.d.array(layout.HG_CELL_STARTS, cells, i32())
        ends = self.d.array(layout.HG_CELL_ENDS, cells, i32())
        return wb.load(starts, [cell]), wb.load(ends, [last])

    def rowwise(self, x_start, x_end) -> ir.Value:
        """Whether a query walks whole rows: its x range inside the grid (0 <= x_start <= x_end < dim_x), so
        the row's cells x_start..x_end are consecutive cells, their points one range of the sorted ids, met
        in the order of Warp's cell-by-cell walk (x fastest). The state then keeps x at x_end."""
        inside = arith.AndIOp(icmp("sge", x_start, c32(0)), icmp("sle", x_start, x_end)).result
        return arith.AndIOp(inside, icmp("slt", x_end, self.dims[0])).result

    def built(self) -> ir.Value:
        return icmp("ne", self.d.word(layout.HG_CAPACITY), arith.ConstantOp(i64(), 0).result)

    def point_ids(self) -> ir.Value:
        capacity = self.d.word32(layout.HG_CAPACITY)
        length = select(icmp("sgt", capacity, c32(1)), capacity, c32(1))  # (one slot even when never built)
        return self.d.array(layout.HG_POINT_IDS, length, i32())


def _lower_bound(values, lo, hi, before) -> ir.Value:
    """The first position in [lo, hi) whose value is not `before` (a predicate false from some position on)."""
    loop = scf.WhileOp([i32(), i32()], [lo, hi])
    head = loop.before.blocks.append(i32(), i32())
    body = loop.after.blocks.append(i32(), i32())
    with ir.InsertionPoint(head):
        scf.ConditionOp(icmp("slt", head.arguments[0], head.arguments[1]), list(head.arguments))
    with ir.InsertionPoint(body):
        a, b = body.arguments
        mid = arith.AddIOp(a, arith.DivSIOp(arith.SubIOp(b, a).result, c32(2)).result).result
        left = before(wb.load(values, [mid]))
        scf.YieldOp([select(left, arith.AddIOp(mid, c32(1)).result, a), select(left, b, mid)])
    return loop.results[0]


def field(q, name) -> ir.Value:
    return wb.create("struct_get", q, attributes={"field": wb._i64_attr(HG[name])}, results=[_field_type(q, name)]).result


def _field_type(q, name) -> ir.Type:
    return ir.IntegerType.get_unsigned(64) if name == "grid" else i32()


def set_fields(q, **values) -> ir.Value:
    for name, v in values.items():
        q = wb.create("struct_set", q, v, attributes={"field": wb._i64_attr(HG[name])}).result
    return q


def hash_grid_query(op) -> ir.Value:
    grid = HashGrid(op.id)
    t = op.max_dist.type  # the query's precision: Warp's arithmetic in it, each operation rounded to it
    inv = grid.d.scalar(INV_WORDS[t.width], t)
    r = op.max_dist
    p = [wb.create("extract", op.point, [c32(k)], results=[t]).result for k in range(3)]
    starts = [cell_coord_of(arith.MulFOp(arith.SubFOp(c, r).result, inv).result) for c in p]
    ends = [query_end(s, cell_coord_of(arith.MulFOp(arith.AddFOp(c, r).result, inv).result), d)
            for s, c, d in zip(starts, p, grid.dims)]
    grouped = arith.ExtUIOp(i32(), arith.AndIOp(icmp("ne", op.grouped, c32(0)), grid.has_groups()).result).result
    rows = arith.AndIOp(grid.rowwise(starts[0], ends[0]), icmp("eq", grouped, c32(0))).result
    x = select(rows, ends[0], starts[0])
    ci, ce = grid.group_range(grouped, op.group, *grid.cell_range(x, starts[1], starts[2], x_lo=starts[0]))
    ce = select(grid.built(), ce, ci)  # a grid never built: an empty first range (next's quick path needs no check)
    q = wb.create("construct", [], results=[op.query.type]).result  # (zero; IRDL unifies a variadic group's types)
    values = [op.id, *starts, *ends, x, *starts[1:], ci, ce, op.group, grouped]
    return set_fields(q, **dict(zip(layout.HASH_GRID_QUERY_FIELDS, values)))


def hash_grid_query_next(op) -> list:
    """Warp's hash_grid_query_next: a candidate left in the current range is taken at once (the branch a dense grid's
    loop takes ~15 times a cell: one compare, one load, the state's cell_index advanced); only a used-up range walks
    on to the next cell with points (_next_cell). The descriptor's words are read before that branch, where they are
    read on every call: the loop around the query loads them once (LLVM hoists them out of it)."""
    q0 = op.query
    grid = HashGrid(field(q0, "grid"))
    built = grid.built()
    ids = grid.point_ids()
    i1 = ir.IntegerType.get_signless(1)
    ci = field(q0, "cell_index")
    branch = scf.IfOp(icmp("slt", ci, field(q0, "cell_end")), [i1, q0.type, i32()], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([arith.ConstantOp(i1, 1).result, set_fields(q0, cell_index=arith.AddIOp(ci, c32(1)).result),
                     wb.load(ids, [ci])])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(_next_cell(grid, built, ids, q0, op.index))
    return list(branch.results)


def _next_cell(grid, built, ids, q0, index) -> list:
    """hash_grid_query_next once the current range is used up: the scf.while over the next cells until one has
    points or the query's range is exhausted; (found, the advanced state, the point id or `index` unchanged)."""
    i1 = ir.IntegerType.get_signless(1)
    false = arith.ConstantOp(i1, 0).result
    types = [q0.type, i1]
    loop = scf.WhileOp(types, [q0, false])
    before = loop.before.blocks.append(*types)
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(before):
        q, exhausted = before.arguments
        empty = icmp("sge", field(q, "cell_index"), field(q, "cell_end"))
        true = arith.ConstantOp(i1, 1).result
        go = arith.AndIOp(arith.AndIOp(built, empty).result, arith.XOrIOp(exhausted, true).result).result
        scf.ConditionOp(go, [q, exhausted])
    with ir.InsertionPoint(after):
        q, _ = after.arguments
        one = c32(1)
        x_start, x_end = field(q, "x_start"), field(q, "x_end")
        grouped = field(q, "grouped")
        rows = arith.AndIOp(grid.rowwise(x_start, x_end), icmp("eq", grouped, c32(0))).result  # (then x is x_end)
        x = arith.AddIOp(field(q, "x"), one).result
        wrap_x = icmp("sgt", x, x_end)
        x = select(wrap_x, select(rows, x_end, x_start), x)
        y = select(wrap_x, arith.AddIOp(field(q, "y"), one).result, field(q, "y"))
        wrap_y = icmp("sgt", y, field(q, "y_end"))
        y = select(wrap_y, field(q, "y_start"), y)
        z = select(wrap_y, arith.AddIOp(field(q, "z"), one).result, field(q, "z"))
        done = icmp("sgt", z, field(q, "z_end"))
        ci, ce = grid.group_range(grouped, field(q, "group"),  # (a wrapped cell: in range even past the end)
                                  *grid.cell_range(x, y, z, x_lo=select(rows, x_start, x)))
        ci = select(done, field(q, "cell_index"), ci)
        ce = select(done, field(q, "cell_end"), ce)
        scf.YieldOp([set_fields(q, x=x, y=y, z=z, cell_index=ci, cell_end=ce), done])
    q, exhausted = loop.results
    ci = field(q, "cell_index")
    true = arith.ConstantOp(i1, 1).result
    found = arith.AndIOp(arith.AndIOp(built, arith.XOrIOp(exhausted, true).result).result,
                         icmp("slt", ci, field(q, "cell_end"))).result
    point = wb.load(ids, [select(found, ci, c32(0))])
    q = set_fields(q, cell_index=select(found, arith.AddIOp(ci, c32(1)).result, ci))
    return [found, q, select(found, point, index)]


def hash_grid_point_id(op) -> ir.Value:
    grid = HashGrid(op.id)
    built = grid.built()
    point = wb.load(grid.point_ids(), [select(built, op.index, c32(0))])
    return select(built, point, c32(-1))


# -- wp.Bvh ---------------------------------------------------------------------------------------------
BV = {name: k for k, (name, _) in enumerate(layout.BVH_QUERY_FIELDS)}
BV_TYPES = dict(layout.BVH_QUERY_FIELDS)
KIND_OF_NAME = {name: kind for kind, name in layout.BVH_QUERY_NAMES.items()}


def f32():
    return ir.F32Type.get()


def bfield(q, name) -> ir.Value:
    """A field of a BVH query; a float field is stored as its bits in an i32 (no derivative: core/geometry.py)."""
    t = ir.IntegerType.get_unsigned(64) if BV_TYPES[name] == "ui64" else i32()
    v = wb.create("struct_get", q, attributes={"field": wb._i64_attr(BV[name])}, results=[t]).result
    return arith.BitcastOp(f32(), v).result if BV_TYPES[name] == "f32" else v


def bset(q, **values) -> ir.Value:
    for name, v in values.items():
        if BV_TYPES[name] == "f32":
            v = arith.BitcastOp(i32(), v).result
        q = wb.create("struct_set", q, v, attributes={"field": wb._i64_attr(BV[name])}).result
    return q


def fmin(a, b):  # Warp's min(a, b): a < b ? a : b
    return select(fcmp("OLT", a, b), a, b)


def fmax(a, b):
    return select(fcmp("OGT", a, b), a, b)


def bool_and(*xs):
    r = xs[0]
    for x in xs[1:]:
        r = arith.AndIOp(r, x).result
    return r


def bool_or(*xs):
    r = xs[0]
    for x in xs[1:]:
        r = arith.OrIOp(r, x).result
    return r


def bool_not(x):
    return arith.XOrIOp(x, arith.ConstantOp(x.type, 1).result).result


class Tree:
    def __init__(self, structure_id: ir.Value):
        self.d = Descriptor(structure_id, layout.BVH_WORDS)
        self.num_nodes = self.d.word32(layout.BVH_NUM_NODES)
        self.num_items = self.d.word32(layout.BVH_NUM_ITEMS)
        nodes = select(icmp("sgt", self.num_nodes, c32(1)), self.num_nodes, c32(1))
        items = select(icmp("sgt", self.num_items, c32(1)), self.num_items, c32(1))
        three = c32(3)
        self.node_lowers = self.d.array(layout.BVH_NODE_LOWERS, arith.MulIOp(nodes, three).result, f32())
        self.node_uppers = self.d.array(layout.BVH_NODE_UPPERS, arith.MulIOp(nodes, three).result, f32())
        self.skip = self.d.array(layout.BVH_SKIP, nodes, i32())
        self.start = self.d.array(layout.BVH_PRIM_START, nodes, i32())
        self.end = self.d.array(layout.BVH_PRIM_END, nodes, i32())
        self.primitives = self.d.array(layout.BVH_PRIMITIVES, items, i32())
        self.item_lowers = self.d.array(layout.BVH_ITEM_LOWERS, arith.MulIOp(items, three).result, f32())
        self.item_uppers = self.d.array(layout.BVH_ITEM_UPPERS, arith.MulIOp(items, three).result, f32())

    @staticmethod
    def vec(arr, k) -> list:
        base = arith.MulIOp(k, c32(3)).result
        return [wb.load(arr, [arith.AddIOp(base, c32(j)).result]) for j in range(3)]


def box_test(kind, q, lo, hi, max_dist) -> ir.Value:
    """Warp's bvh_query_test of one kind (None: dispatch on the query's kind field) for the box [lo, hi]."""
    if kind is None:
        tests = {k: box_test(k, q, lo, hi, max_dist) for k in layout.BVH_QUERY_NAMES}
        kf = bfield(q, "kind")
        r = tests[layout.BVH_AABB]
        for k in (layout.BVH_RAY, layout.BVH_CAPSULE, layout.BVH_SPHERE):
            r = select(icmp("eq", kf, c32(k)), tests[k], r)
        return r
    a = [bfield(q, f"a{j}") for j in range(3)]
    b = [bfield(q, f"b{j}") for j in range(3)]
    if kind == layout.BVH_AABB:
        return bool_not(bool_or(*(fcmp("OGT", a[j], hi[j]) for j in range(3)),
                                *(fcmp("OLT", b[j], lo[j]) for j in range(3))))
    if kind == layout.BVH_SPHERE:
        zero = cf32(0.0)
        dist = None
        for j in range(3):
            dj = fmax(fmax(arith.SubFOp(lo[j], a[j]).result, arith.SubFOp(a[j], hi[j]).result), zero)
            sq = arith.MulFOp(dj, dj).result
            dist = sq if dist is None else arith.AddFOp(dist, sq).result
        return fcmp("OLE", dist, bfield(q, "radius_sq"))
    if kind == layout.BVH_RAY:  # intersect_ray_aabb(start, rcp_dir): hit and not (t >= max_dist)
        lmin = lmax = None
        for j in range(3):
            l1 = arith.MulFOp(arith.SubFOp(lo[j], a[j]).result, b[j]).result
            l2 = arith.MulFOp(arith.SubFOp(hi[j], a[j]).result, b[j]).result
            if lmin is None:
                lmin, lmax = fmin(l1, l2), fmax(l1, l2)
            else:
                lmin, lmax = fmax(fmin(l1, l2), lmin), fmin(fmax(l1, l2), lmax)
        hit = bool_and(fcmp("OGE", lmax, cf32(0.0)), fcmp("OGE", lmax, lmin))
        return bool_and(hit, bool_not(fcmp("OGE", lmin, max_dist)))
    # capsule: intersect_ray_aabb_robust against the box inflated by the radius; not (t > max_dist)
    r = bfield(q, "radius")
    d = [bfield(q, f"d{j}") for j in range(3)]
    lmin, lmax = cf32(-3.4028234663852886e38), cf32(3.4028234663852886e38)
    outside = None
    for j in range(3):
        loj, hij = arith.SubFOp(lo[j], r).result, arith.AddFOp(hi[j], r).result
        parallel = fcmp("OEQ", d[j], cf32(0.0))
        out = bool_and(parallel, bool_or(fcmp("OLT", a[j], loj), fcmp("OGT", a[j], hij)))
        outside = out if outside is None else bool_or(outside, out)
        l1 = arith.MulFOp(arith.SubFOp(loj, a[j]).result, b[j]).result
        l2 = arith.MulFOp(arith.SubFOp(hij, a[j]).result, b[j]).result
        lmin = select(parallel, lmin, fmax(fmin(l1, l2), lmin))
        lmax = select(parallel, lmax, fmin(fmax(l1, l2), lmax))
    hit = bool_and(bool_not(outside), fcmp("OGE", lmax, cf32(0.0)), fcmp("OGE", lmax, lmin))
    return bool_and(hit, bool_not(fcmp("OGT", lmin, max_dist)))


def _bvh_query(kind):
    def lower(op) -> ir.Value:
        tree = Tree(op.id)
        q = wb.create("construct", [], results=[op.query.type]).result
        p = op.lower if kind == layout.BVH_AABB else op.center if kind == layout.BVH_SPHERE else op.start
        first = [wb.create("extract", p, [c32(j)], results=[f32()]).result for j in range(3)]
        values = {"bvh": op.id, "kind": c32(kind), "bounds_nr": c32(-1), "prim_cur": c32(0), "prim_end": c32(0)}
        values.update({f"a{j}": first[j] for j in range(3)})
        if kind in (layout.BVH_AABB, layout.BVH_RAY, layout.BVH_CAPSULE):
            second = op.upper if kind == layout.BVH_AABB else op.dir
            v = [wb.create("extract", second, [c32(j)], results=[f32()]).result for j in range(3)]
            if kind == layout.BVH_AABB:
                values.update({f"b{j}": v[j] for j in range(3)})
            else:  # rcp_dir, as Warp: 1 / dir
                values.update({f"b{j}": arith.DivFOp(cf32(1.0), v[j]).result for j in range(3)})
                values.update({f"d{j}": v[j] for j in range(3)})
        if kind in (layout.BVH_SPHERE, layout.BVH_CAPSULE):
            radius = fmax(op.radius, cf32(0.0))
            values.update(radius=radius, radius_sq=arith.MulFOp(radius, radius).result)
        if kind == layout.BVH_SPHERE:
            values.update({f"b{j}": first[j] for j in range(3)})
        root = op.root
        has_nodes = icmp("sgt", tree.num_nodes, c32(0))
        start = select(icmp("slt", root, c32(0)), c32(0), root)
        stop = wb.load(tree.skip, [select(has_nodes, start, c32(0))])
        values.update(node=start, stop=select(has_nodes, stop, c32(0)))
        return bset(q, **values)
    return lower


def bvh_query_next(op) -> list:
    q0 = op.query
    name = str(q0.type).split('"')[1]
    kind = KIND_OF_NAME.get(name)  # None: the erased BvhQuery, dispatched on its kind
    tree = Tree(bfield(q0, "bvh"))
    max_dist = op.max_dist
    i1 = ir.IntegerType.get_signless(1)
    false = arith.ConstantOp(i1, 0).result
    types = [q0.type, i1, i32()]
    loop = scf.WhileOp(types, [q0, false, op.index])
    before = loop.before.blocks.append(*types)
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(before):
        q, found, index = before.arguments
        more = bool_or(icmp("slt", bfield(q, "prim_cur"), bfield(q, "prim_end")),
                       icmp("slt", bfield(q, "node"), bfield(q, "stop")))
        scf.ConditionOp(bool_and(bool_not(found), more), [q, found, index])
    with ir.InsertionPoint(after):
        q, _, index = after.arguments
        cur = bfield(q, "prim_cur")
        in_leaf = icmp("slt", cur, bfield(q, "prim_end"))
        branch = scf.IfOp(in_leaf, types, has_else=True)
        with ir.InsertionPoint(branch.then_block):  # the next item of a packed leaf, by its own box
            item = wb.load(tree.primitives, [cur])
            hit = box_test(kind, q, Tree.vec(tree.item_lowers, item), Tree.vec(tree.item_uppers, item), max_dist)
            scf.YieldOp([bset(q, prim_cur=arith.AddIOp(cur, c32(1)).result), hit, select(hit, item, index)])
        with ir.InsertionPoint(branch.else_block):  # the next node in preorder
            n = bfield(q, "node")
            hit = box_test(kind, q, Tree.vec(tree.node_lowers, n), Tree.vec(tree.node_uppers, n), max_dist)
            start, end = wb.load(tree.start, [n]), wb.load(tree.end, [n])
            leaf = icmp("sge", start, c32(0))
            nxt = select(bool_and(hit, bool_not(leaf)), arith.AddIOp(n, c32(1)).result, wb.load(tree.skip, [n]))
            hit_leaf = bool_and(hit, leaf)
            single = bool_and(hit_leaf, icmp("eq", arith.SubIOp(end, start).result, c32(1)))
            packed = bool_and(hit_leaf, bool_not(single))
            item = wb.load(tree.primitives, [select(single, start, c32(0))])
            q2 = bset(q, node=nxt, prim_cur=select(packed, start, bfield(q, "prim_cur")),
                      prim_end=select(packed, end, bfield(q, "prim_end")))
            scf.YieldOp([q2, single, select(single, item, index)])
        scf.YieldOp(list(branch.results))
    q, found, index = loop.results
    q = bset(q, bounds_nr=select(found, index, bfield(q, "bounds_nr")))
    return [found, q, index]


LOWERINGS = {
    "warp.bvh_query_aabb": _bvh_query(layout.BVH_AABB),
    "warp.bvh_query_ray": _bvh_query(layout.BVH_RAY),
    "warp.bvh_query_sphere": _bvh_query(layout.BVH_SPHERE),
    "warp.bvh_query_capsule": _bvh_query(layout.BVH_CAPSULE),
    "warp.bvh_query_next": bvh_query_next,
    "warp.hash_grid_query": hash_grid_query,
    "warp.hash_grid_query_next": hash_grid_query_next,
    "warp.hash_grid_point_id": hash_grid_point_id,
}


class ExpandGeometry(registry.ExpandGeometry):
    def run(self, module):
        if not ops_named(module, set(LOWERINGS)):
            return
        lower_ops(module, {getattr(views, _view_name(k)): _unless_block_level(f) for k, f in LOWERINGS.items()})


def _unless_block_level(lower):
    """A block-wide query's op in a module built for CPU lanes (wb.BLOCK_LEVEL_ATTR) waits for warp-cpu-block-lanes,
    which keeps it out of the lane loops and drops the mark; this pass runs again after it."""
    def lower_or_wait(op):
        return UNMATCHED if wb.BLOCK_LEVEL_ATTR in op.operation.attributes else lower(op)

    return lower_or_wait


def _view_name(op_name: str) -> str:
    return "".join(w.capitalize() for w in op_name[len("warp."):].split("_")) + "Op"
