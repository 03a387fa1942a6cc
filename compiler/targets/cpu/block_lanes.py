"""warp-cpu-block-lanes: Warp's CPU lanes (wp.config.enable_cpu_blocks) as loops over each block's lanes.

With `block_dim` B > 1 and enable_cpu_blocks, Warp runs a CPU block's B lanes as cooperative fibers: the
lane-local code runs once per lane, a tile operation once per block, and the lanes meet at barriers. A module
built for B lanes (the frontend's `warp.cpu_lanes = B`) is launched over blocks (its record's `cpu_lanes`: the
runtime passes the block count and the thread grid's dims), and this pass makes each kernel body one block's
work, by loop fission at the cooperative operations (as POCL and MCUDA do for GPU kernels on CPUs):

- each maximal stretch of lane-local ops between cooperative ones becomes `scf.for lane = 0 to active` (active:
  the block's lanes inside the launch, B except in a partial last block), the lanes in order, as Warp's fibers
  run between barriers;
- a tile operation (an op with tile operands or results, other than tile_extract / tile_insert) and
  `warp.tile_sync` (the frontend's barrier around stack and scatter operations, erased here) are cooperative:
  they run once per block, between the loops;
- a value a stretch computes and a later one (or a tile operation) uses is kept per lane in a tile of B elements
  (a "carrier": element `lane` written at the end of the lane's iteration, read back as tile_extract); a tile
  operation reads the first participating lane's value (Warp's operands of cooperative ops are uniform);
- a tile a stretch updates with tile_insert (a scatter, a stack push, `wp.tile(x)`'s elements) is block-shared:
  the loop carries it from lane to lane, so each lane sees the updates of the lanes before it, as fibers do;
- `wp.tid()` is the block's base thread plus the lane, split over the launch's dims (`warp.launch_dim`);
  `warp.lane_index` is the loop's lane;
- an `scf.if` holding cooperative ops on a lane value (an early `return` before a tile operation: its lanes leave
  the block) runs once per block when any lane takes it, its stretches only on the lanes that do (Warp: a lane
  that returned takes no part in later cooperative operations); one on a block-level value (a kernel argument)
  and an `scf.for` holding cooperative ops run once per block (the bounds: the first participating lane's), their
  bodies fissioned in turn;
- a pure op of block-level operands stays out of the lane loops (a branch on it is uniform); an array (a view) a
  later stretch uses is cloned there, a tile cannot hold it;
- a partial block's missing lanes own tile elements too (element e is lane e % B's): a reduction or scan reads
  the identity there, a tile_store leaves the array as it was, a tile_atomic_add adds zero (Warp's CPU
  semantics); whole-tile sums and products fold in Warp's lane order (strided partials per lane, then the lanes');
  random tiles draw each lane's elements from the lane's own generator, as Warp's;
- in an adjoint, the lanes' adjoints of a tile element they read (warp-autodiff's tile_insert into a fresh zero
  tile) add up.

- a block-wide BVH query (wp.tile_bvh_query_aabb / _ray, tile_bvh_query_next: ops the frontend marks
  wb.BLOCK_LEVEL_ATTR) is one query per block: its ops run between the lane loops, on the first lane's operands,
  and the `scf.while` of `while wp.tile_query_valid(q)` runs once per block (its condition and the query it
  carries are block-level), its regions fissioned; the item is element 0 of the block's tile, as Warp's CPU
  gives it (the marks dropped here: warp-expand-geometry's second run lowers the ops).

Refused with the kernel's name and line: a cooperative op inside a loop carrying a lane value, or inside an
scf.while whose condition or carried values are lane values, or under a lane-dependent scf.if with results or
an else part; a lane value of a type a tile cannot hold
(unsigned ints, structs) kept across a cooperative op. (The adjoint of a tile element several lanes add to,
tile_scatter_add's, leaves the tile's adjoint as it is: warp-autodiff's accumulated().)
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...builtins.tile_table import TILE_OPS
from ...dialects.warp import builders as wb
from ...dialects.warp.ops import BY_NAME  # (structural ops and geometry queries: not builtins)
from ...passes import registry
from ...passes.registry import PassError
from ...passes.ir_walk import kernels, ops_named
from ..common import CPU_LANES_ATTR
from .block_lanes_tiles import (const as _const, flat_index as _flat_index, i32 as _i32, i64 as _i64,
                                identity as _identity, index as _index, lane_random as _lane_random,
                                strided_reductions as _strided_reductions, tile_of as _tile_of,
                                tile_parts as _tile_parts, zero as _zero)

# the tile ops a lane runs on its own: one element read or written (a block-shared tile threaded from lane to lane)
_LANE_TILE_OPS = frozenset(f"warp.{op.name}" for op in TILE_OPS.values() if op.per_lane)  # (the tile table's)
_DERIVED_ATTRS = ("warp.adjoint_of", "warp.tangent_of")


def _is_tile_type(t: ir.Type) -> bool:
    return str(t).startswith("!warp.tile<")


def _where(op) -> str:
    """`file:line` of an op's location (what the user's kernel says), or ''."""
    text = str(op.location)
    if '"' in text:
        parts = text.split('"')
        tail = parts[2].lstrip(":").split(":")
        if tail and tail[0].isdigit():
            return f"{parts[1]}:{tail[0]}"
    return ""


def _i1():
    return ir.IntegerType.get_signless(1)


def _held(t: ir.Type) -> ir.Type:
    """A carrier's element type for lane values of `t`: a bool as a byte (memory holds no i1)."""
    return ir.IntegerType.get_signless(8) if t == _i1() else t


def _hold(v: ir.Value) -> ir.Value:
    return arith.ExtUIOp(_held(v.type), v).result if v.type == _i1() else v


def _read(carrier: ir.Value, lane: ir.Value, t: ir.Type) -> ir.Value:
    """Lane `lane`'s value (of type `t`) in a carrier."""
    x = wb.create("tile_extract", carrier, [lane], results=[_held(t)]).result
    return arith.TruncIOp(t, x).result if t == _i1() else x


# the warp dialect's own ops whose results depend on their operands only (no memory read, no state); the builtin
# table's ops (warp.add, warp.sin, ...) are such too, the geometry queries (they read memory) are not
_PURE_WARP = {"warp.view", "warp.slice", "warp.array_dim", "warp.array_data", "warp.array_from_ptr", "warp.cast",
              "warp.construct", "warp.extract", "warp.insert", "warp.struct_get", "warp.struct_set",
              "warp.struct_field_grad", "warp.address"}
_LLVM_VALUES = {"llvm.mlir.addressof", "llvm.mlir.constant", "llvm.mlir.zero"}  # (a message's string: expect_eq)


def _clonable(op) -> bool:
    """A pure op: its results depend on its operands only (cloned where a later stretch uses them, or left at
    block level when its operands are)."""
    name = op.name
    if op.regions or not len(op.results):
        return False
    if name.startswith(("arith.", "math.")) or name in _LLVM_VALUES or name in _PURE_WARP:
        return True
    if name.startswith("warp."):
        return name[len("warp."):] not in BY_NAME
    return False


def _is_zero(op) -> bool:
    """Whether `op` makes a zero (a constant 0, or warp.construct of no operand: a zero composite)."""
    if op.name == "warp.construct":
        return not list(op.operands)
    if op.name != "arith.constant":
        return False
    value = op.attributes["value"]
    try:
        return ir.FloatAttr(value).value == 0.0
    except ValueError:
        try:
            return ir.IntegerAttr(value).value == 0
        except ValueError:
            return False


def _carries(t: ir.Type) -> bool:
    """Whether a tile can hold per-lane values of `t` (the frontend's tile element types)."""
    if isinstance(t, ir.IntegerType):
        return True
    if isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type)):
        return True
    return str(t).startswith(("!warp.vec<", "!warp.mat<", "!warp.quat<"))


def _drop_block_level(op):
    if wb.BLOCK_LEVEL_ATTR in op.attributes:
        del op.attributes[wb.BLOCK_LEVEL_ATTR]
    return ir.WalkResult.ADVANCE


def _op(op):
    """The ir.Operation of an op or op view (None stays None)."""
    return getattr(op, "operation", op)


class _Lanes:
    """One kernel's fission."""

    def __init__(self, kernel, lanes: int, derived: bool = False):
        self.kernel = kernel
        self.lanes = lanes
        self.derived = derived  # an adjoint (or tangent) kernel
        self.name = ir.StringAttr(kernel.attributes["sym_name"]).value
        self.carriers = {}  # lane value -> the tile of B elements holding it (after its stretch's loop)
        # lane values a tile cannot hold (arrays: views of a kernel argument): their op, cloned where they are used
        # (its operands read from their carriers, or cloned in turn)
        self.remat = {}

    def refuse(self, op, what: str):
        where = _where(op)
        raise PassError(f"kernel '{self.name}'{' at ' + where if where else ''}: {what} is not supported with "
                        f"Warp's CPU lanes (wp.config.enable_cpu_blocks, block_dim={self.lanes})")

    # -- classification ------------------------------------------------------------------------------------
    def is_cooperative(self, op) -> bool:
        """Whether the op runs once per block: a tile operation, a barrier, or an op holding one. (Not cached by
        op: the pass erases ops, and MLIR reuses their memory for new ones.)"""
        op = op.operation
        name = op.name
        if name == "warp.tile_sync" or wb.BLOCK_LEVEL_ATTR in op.attributes:
            return True
        if op.regions and name != "warp.tile_map":
            return any(self.is_cooperative(inner) for region in op.regions for b in region.blocks
                       for inner in b.operations)
        if name in _LANE_TILE_OPS or name in ("scf.yield", "scf.condition"):  # (a yield moves tiles)
            return False
        return any(_is_tile_type(v.type) for v in list(op.operands) + list(op.results))

    def only_barriers(self, op) -> bool:
        """Whether the op's only block-level ops are barriers (warp.tile_sync), whatever its regions hold."""
        for region in op.regions:
            for b in region.blocks:
                for inner in b.operations:
                    inner = inner.operation
                    if inner.name == "warp.tile_sync":
                        continue
                    if inner.regions and inner.name != "warp.tile_map":
                        if not self.only_barriers(inner):
                            return False
                    elif self.is_cooperative(inner):
                        return False
        return True

    # -- the kernel ----------------------------------------------------------------------------------------
    def run(self):
        entry = self.kernel.regions[0].blocks[0]
        tids = ops_named(self.kernel.operation, {"warp.tid"})
        with ir.InsertionPoint.at_block_begin(entry), self.kernel.location:
            block = wb.create("tid", results=[_i32()])
            block.attributes[wb.LINEAR_TID_ATTR] = ir.UnitAttr.get()
            dims = [arith.ExtSIOp(_i64(), wb.create("launch_dim", results=[_i32()], attributes={
                "dim": ir.IntegerAttr.get(_i64(), d)}).result).result for d in range(4)]
            total = dims[0]
            for d in dims[1:]:
                total = arith.MulIOp(total, d).result
            lanes64 = _const(_i64(), self.lanes)
            self.base = arith.MulIOp(arith.ExtSIOp(_i64(), block.result).result, lanes64).result
            active = arith.MinSIOp(arith.SubIOp(total, self.base).result, lanes64).result
            self.active = arith.IndexCastOp(ir.IndexType.get(), active).result
            self.dims = dims
            self.active32 = arith.TruncIOp(_i32(), active).result
        for tid in tids:
            self.replace_tid(tid)
        self.partial_blocks()
        _strided_reductions(self.kernel, self.lanes)
        _lane_random(self.kernel, self.lanes)
        if self.derived:
            self.sum_contributions()
        setup_end = _op(self.active32.owner)
        body, seen = [], False
        for op in entry.operations:  # (the kernel's ops: those after the setup above)
            op = op.operation
            if seen and op.name != "func.return":
                body.append(op)
            seen = seen or op == setup_end
        with self.kernel.location:
            self.region(entry, body, None)
        self.kernel.operation.walk(_drop_block_level)  # (kept at block level: warp-expand-geometry's second run
                                                       # lowers those ops)

    # -- a partial block: the elements of its missing lanes take no part ----------------------------------------
    def partial_blocks(self) -> None:
        """Warp's tiles in a block with fewer lanes than block_dim: element e (row-major) belongs to lane
        e % block_dim, and a missing lane's elements take no part in a tile operation. Their reductions and scans
        read the operation's identity there (which leaves the others' fold as it is), a tile_store leaves the array
        as it was there, a tile_atomic_add adds zero; other operations compute them (nothing reads them). In a full
        block the tiles are used as they are."""
        for op in ops_named(self.kernel.operation, {"warp.tile_reduce", "warp.tile_scan", "warp.tile_store",
                                                    "warp.tile_atomic_add"}):
            name = op.name
            if name in ("warp.tile_reduce", "warp.tile_scan"):
                kind = ir.StringAttr(op.attributes["kind"]).value
                t = op.operands[0]
                with ir.InsertionPoint(op), op.location:
                    fill = _identity(kind, t.type)
                    if fill is not None:
                        op.operands[0] = self.owned(t, fill)
            else:
                t = op.operands[1]
                with ir.InsertionPoint(op), op.location:
                    if name == "warp.tile_store":  # (what the array holds there: written back as it was)
                        array, offsets = op.operands[0], list(op.operands)[2:]
                        op.operands[1] = self.owned(t, None, lambda: wb.create(
                            "tile_load", array, offsets, results=[t.type]).result)
                    else:
                        fill = _identity("add", t.type)
                        if fill is not None:
                            op.operands[1] = self.owned(t, fill)

    def owned(self, t, fill, other=None) -> ir.Value:
        """`t` in a full block; in a partial one, its missing lanes' elements replaced by fill() (or by those of the
        tile other() makes)."""
        partial = arith.CmpIOp(arith.CmpIPredicate.slt, self.active, _index(self.lanes)).result
        branch = scf.IfOp(partial, [t.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            inputs = [_flat_index(_tile_parts(t.type)[1]), t] + ([other()] if other is not None else [])
            m = wb.tile_map(inputs, [t.type])
            body = m.regions[0].blocks[0]
            with ir.InsertionPoint(body):
                e, x = body.arguments[0], body.arguments[1]
                lane = arith.RemSIOp(e, _const(_i32(), self.lanes)).result
                present = arith.CmpIOp(arith.CmpIPredicate.slt, lane, self.active32).result
                instead = body.arguments[2] if other is not None else fill()
                ir.Operation.create("gpu.yield", operands=[arith.SelectOp(present, x, instead).result])
            scf.YieldOp([m.results[0]])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([t])
        return branch.results[0]

    def replace_tid(self, tid) -> None:
        """wp.tid(): the thread (the block's base + the lane) split over the launch's dims, its leading indices."""
        with ir.InsertionPoint(tid), tid.location:
            lane = arith.ExtSIOp(_i64(), wb.create("lane_index", results=[_i32()]).result).result
            thread = arith.AddIOp(self.base, lane).result
            count = len(tid.results)
            if wb.LINEAR_TID_ATTR in tid.attributes:
                indices = [thread]
            else:
                rest = thread
                for d in range(count, 4):
                    rest = arith.DivSIOp(rest, self.dims[d]).result
                indices = []
                for d in range(count - 1, 0, -1):
                    indices.append(arith.RemSIOp(rest, self.dims[d]).result)
                    rest = arith.DivSIOp(rest, self.dims[d]).result
                indices = [rest] + list(reversed(indices))
            narrow = [arith.TruncIOp(_i32(), v).result for v in indices]
        for r, v in zip(tid.results, narrow):
            r.replace_all_uses_with(v)
        tid.operation.erase()

    # -- one block of ops (the kernel's, or a cooperative scf.if's) ---------------------------------------------
    def region(self, block, ops, mask):
        """Fission of `ops` (the block's, without its terminator); `mask`: the carrier of the condition that lets a
        lane into this region (None: every active lane)."""
        stretch, pending = [], set()  # the stretch being gathered, and its ops' results
        for op in ops:
            op = op.operation
            if self.uniform(op, pending):  # the same on every lane: a block-level value (before the stretch)
                if stretch:
                    op.move_before(stretch[0])
                continue
            if self.is_cooperative(op) and op.name == "scf.if" and self.only_barriers(op) and (
                    op.operands[0] in pending or op.operands[0] in self.carriers or op.operands[0] in self.remat):
                # a lane-dependent branch whose only block-level ops are barriers (Warp's WP_TILE_SYNC after an
                # element write, `if lane == 0: t[i] = x`): some lanes skip them, so they order nothing; the
                # branch is lane-local code, its lanes' writes in lane order
                for inner in ops_named(op, {"warp.tile_sync"}):
                    inner.erase()
            if not self.is_cooperative(op):
                stretch.append(op)
                pending.update(op.results)
                continue
            if stretch:
                self.stretch(stretch, mask)
                stretch, pending = [], set()
            self.cooperative_op(op, mask)
        if stretch:
            self.stretch(stretch, mask)

    def uniform(self, op, pending) -> bool:
        """A pure op of block-level operands (a kernel argument, a constant, a tile operation's result): it gives
        every lane the same value, so it stays out of the lane loops (a branch on it is uniform)."""
        return not self.is_cooperative(op) and _clonable(op) and all(
            v not in pending and v not in self.carriers and v not in self.remat for v in op.operands)

    def first_lane(self, mask) -> ir.Value:
        """The first lane taking part (whose values a tile operation reads): 0, or the mask's first lane."""
        if mask is None:
            return _const(_i32(), 0)
        loop = scf.ForOp(_index(0), self.active, _index(1), [_const(_i32(), -1)])
        with ir.InsertionPoint(loop.body):
            lane = arith.IndexCastOp(_i32(), loop.induction_variable).result
            taken = _read(mask, lane, _i1())
            found = loop.inner_iter_args[0]
            none = arith.CmpIOp(arith.CmpIPredicate.eq, found, _const(_i32(), -1)).result
            scf.YieldOp([arith.SelectOp(arith.AndIOp(none, taken).result, lane, found).result])
        return arith.MaxSIOp(loop.results[0], _const(_i32(), 0)).result  # (no lane: the region does not run)

    def cooperative_op(self, op, mask):
        name = op.name
        if name == "warp.tile_sync":
            op.erase()
            return
        if name == "scf.if":
            self.branch(op, mask)
            return
        if name == "scf.for":
            self.loop(op, mask)
            return
        if name == "scf.while":
            self.while_loop(op, mask)
            return
        if wb.BLOCK_LEVEL_ATTR in op.attributes:  # a block-wide geometry query's op: once per block, as it is
            self.uniform_operands(op, mask)
            return
        if op.regions and name != "warp.tile_map":
            self.refuse(op, f"a tile operation inside a loop ({name})")
        op = self.lane_operands(op, mask)
        if mask is not None and not list(op.results):  # a tile write: only when some lane reached it (a tile
            with ir.InsertionPoint(op), op.location:  # computation runs either way: it has no effect)
                only = scf.IfOp(self.any_lane(mask))
                with ir.InsertionPoint(only.then_block):
                    end = scf.YieldOp([])
            op.move_before(end)

    def lane_operands(self, op, mask):
        """A tile operation with lane values among its operands, as Warp's lanes run it: each lane computes the
        elements it owns (element e, row-major, is lane e % B's) with its own operands (tile_full(a[lane]): element
        e holds lane e % B's value; a tile_store at a lane's offset writes that lane's elements there). When every
        participating lane holds the same operands (a tiled launch's block indices: the common case) that is the op
        run once, on the first lane's: a test of the lanes' values picks that path at run time. Otherwise the op runs
        once per lane on the lane's operands, each result's elements taken from their owners' runs (a store writes
        only the lane's elements: the others are what the array holds there). Returns the op that now stands where
        `op` stood (the scf.if choosing between the two)."""
        varying = [k for k, v in enumerate(op.operands) if v in self.carriers]
        stores = op.name in ("warp.tile_store", "warp.tile_atomic_add")
        # (a tile_atomic_add's previous values merged from the lanes' runs only when something reads them)
        results = [r for r in op.results if not stores or any(True for _ in r.uses)]
        if not varying or not (stores or results) or not all(_is_tile_type(r.type) for r in results):
            self.uniform_operands(op, mask)
            return op
        with ir.InsertionPoint(op), op.location:
            first = self.first_lane(mask)
            values = [op.operands[k] for k in varying]
            firsts = [self.lane_value(v, first) for v in values]
            same = self.lanes_agree(values, firsts, mask)
            choice = scf.IfOp(same, [r.type for r in results], has_else=True)
            with ir.InsertionPoint(choice.else_block):
                scf.YieldOp(self.per_lane(op, mask, stores, results))
            with ir.InsertionPoint(choice.then_block):
                once = scf.YieldOp(results)
        for r, chosen in zip(results, choice.results):
            r.replace_all_uses_with(chosen)
        for k, r in enumerate(results):  # (the yield of the uniform path was among the uses)
            once.operands[k] = r
        op.move_before(once)
        for k, v in zip(varying, firsts):
            op.operands[k] = v
        self.uniform_operands(op, mask, first)
        return choice.operation

    def lanes_agree(self, values, firsts, mask) -> ir.Value:
        """Whether every participating lane holds the first one's values (`firsts`), an i1."""
        loop = scf.ForOp(_index(0), self.active, _index(1), [_const(_i1(), 1)])
        with ir.InsertionPoint(loop.body):
            lane = arith.IndexCastOp(_i32(), loop.induction_variable).result
            agree = None
            for v, theirs in zip(values, firsts):
                same = wb.builtin("eq", [self.lane_value(v, lane), theirs], _i1())
                agree = same if agree is None else arith.AndIOp(agree, same).result
            if mask is not None:  # (a lane outside the region: no say)
                left = arith.XOrIOp(_read(mask, lane, _i1()), _const(_i1(), 1)).result
                agree = arith.OrIOp(agree, left).result
            scf.YieldOp([arith.AndIOp(loop.inner_iter_args[0], agree).result])
        return loop.results[0]

    def per_lane(self, op, mask, stores, results) -> list:
        """`op` once per participating lane on the lane's operands, at the insertion point; its results' elements
        from their owners' runs (the results as values; a store writes only each lane's own elements)."""
        shaped = op.operands[1].type if stores else op.results[0].type
        element, shape = _tile_parts(shaped)
        owners = wb.tile_map([_flat_index(shape)], [_tile_of("i32", *shape)])
        body = owners.regions[0].blocks[0]
        with ir.InsertionPoint(body):
            ir.Operation.create("gpu.yield", operands=[arith.RemSIOp(body.arguments[0], _const(_i32(), self.lanes)).result])
        owner = owners.results[0]
        merged = [wb.create("tile_full", _zero(ir.Type.parse(_tile_parts(r.type)[0])), results=[r.type]).result
                  for r in results]
        loop = scf.ForOp(_index(0), self.active, _index(1), merged)
        with ir.InsertionPoint(loop.body):
            lane = arith.IndexCastOp(_i32(), loop.induction_variable).result
            states = list(loop.inner_iter_args)
            if mask is not None:
                only = scf.IfOp(_read(mask, lane, _i1()), [t.type for t in states], has_else=True)
                with ir.InsertionPoint(only.else_block):
                    scf.YieldOp(states)
                scf.YieldOp(list(only.results))
                where = ir.InsertionPoint(only.then_block)
            else:
                where = ir.InsertionPoint(loop.body)
            with where:
                operands = [self.lane_value(v, lane) if v in self.carriers or v in self.remat else v
                            for v in op.operands]
                if stores:  # the lane's elements; elsewhere what the array holds (a store) or zero (an add)
                    t = operands[1]
                    other = wb.create("tile_load", operands[0], operands[2:], results=[t.type]).result \
                        if op.name == "warp.tile_store" else wb.create(
                            "tile_full", _zero(ir.Type.parse(element)), results=[t.type]).result
                    operands[1] = self.select_owned(owner, lane, t, other)
                clone = op.clone()
                for k, v in enumerate(operands):
                    clone.operands[k] = v
                scf.YieldOp([self.select_owned(owner, lane, r, state) for r, state in zip(clone.results, states)])
        return list(loop.results)

    @staticmethod
    def select_owned(owner, lane, mine, other) -> ir.Value:
        """`mine`'s elements where `owner` (each element's lane) is `lane`, `other`'s elsewhere."""
        m = wb.tile_map([owner, mine, other], [mine.type])
        body = m.regions[0].blocks[0]
        with ir.InsertionPoint(body):
            own = arith.CmpIOp(arith.CmpIPredicate.eq, body.arguments[0], lane).result
            ir.Operation.create("gpu.yield", operands=[arith.SelectOp(own, body.arguments[1], body.arguments[2]).result])
        return m.results[0]

    def uniform_operands(self, op, mask, first=None):
        """A block-level op's operands that are lane values: the first participating lane's (`first`, when the
        caller has found it)."""
        for k, v in enumerate(list(op.operands)):
            if v in self.carriers or v in self.remat:
                with ir.InsertionPoint(op), op.location:
                    if first is None:
                        first = self.first_lane(mask)
                    op.operands[k] = self.lane_value(v, first)

    def lane_value(self, v, lane) -> ir.Value:
        """Lane `lane`'s value of the lane value `v` (of an earlier stretch), at the insertion point: its carrier's
        element, or its op cloned here."""
        carrier = self.carriers.get(v)
        if carrier is not None:
            return _read(carrier, lane, v.type)
        template, operands = self.remat[v]
        read = [self.lane_value(x, lane) if x in self.carriers or x in self.remat else x
                for x in operands]  # (before the clone, which reads them)
        clone = template.clone()
        for k, x in enumerate(read):
            clone.operands[k] = x
        return clone.results[v.result_number]

    def any_lane(self, mask) -> ir.Value:
        loop = scf.ForOp(_index(0), self.active, _index(1), [_const(ir.IntegerType.get_signless(1), 0)])
        with ir.InsertionPoint(loop.body):
            lane = arith.IndexCastOp(_i32(), loop.induction_variable).result
            taken = _read(mask, lane, _i1())
            scf.YieldOp([arith.OrIOp(loop.inner_iter_args[0], taken).result])
        return loop.results[0]

    def loop(self, op, mask):
        """A cooperative scf.for: it runs once per block, its bounds the first lane's, its body fissioned (a loop
        whose carried values are tiles: block-level)."""
        for v in list(op.results):
            if not _is_tile_type(v.type):
                self.refuse(op, "a tile operation inside a loop that carries a lane value")
        self.uniform_operands(op, mask)
        body = op.regions[0].blocks[0]
        self.region(body, list(body.operations)[:-1], mask)

    def while_loop(self, op, mask):
        """A cooperative scf.while (a block-wide query's `while wp.tile_query_valid(q)`): it runs once per block,
        its carried values' first values the first lane's, both regions fissioned; what it carries and its
        condition must be block-level (a lane value there would make the lanes' loops differ)."""
        self.uniform_operands(op, mask)
        for region in op.regions:
            block = region.blocks[0]
            self.region(block, list(block.operations)[:-1], mask)
            for v in block.operations[-1].operands:
                if v in self.carriers or v in self.remat:
                    self.refuse(op, "a tile operation inside a while loop whose condition or carried values "
                                    "differ between lanes")

    def branch(self, op, mask):
        """A cooperative scf.if: uniform (its condition a block-level value: both branches fissioned, its results
        tiles) or lane-dependent (its lanes the region's mask from now on; no results, no else part)."""
        cond = op.operands[0]
        carrier = self.carriers.get(cond)
        regions = [r.blocks[0] for r in op.regions if r.blocks]
        if carrier is None and cond not in self.remat:  # uniform
            for v in op.results:
                if not _is_tile_type(v.type):
                    self.refuse(op, "a tile operation under a branch that yields a lane value")
            for block in regions:
                self.region(block, list(block.operations)[:-1], mask)
                for v in block.operations[-1].operands:
                    if v in self.carriers or v in self.remat:
                        self.refuse(op, "a tile operation under a branch that yields a lane value")
            return
        if list(op.results):
            self.refuse(op, "a tile operation under a lane-dependent branch that has results")
        if len(regions) > 1 and len(list(regions[1].operations)) > 1:
            self.refuse(op, "a tile operation under a lane-dependent branch with an else part")
        then = regions[0]
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = self.any_lane(carrier)
        self.region(then, list(then.operations)[:-1], carrier)

    # -- a stretch of lane-local ops ---------------------------------------------------------------------
    def stretch(self, ops, mask):
        inside = set(ops)

        def top(op):
            """The op of the stretch that holds `op` (itself, or an ancestor), or None."""
            op = _op(op)
            while op is not None and op not in inside:
                if op.name == "func.func":
                    return None
                op = _op(op.parent)
            return op

        def defined_inside(v) -> bool:
            owner = v.owner
            if isinstance(owner, ir.Block):
                return top(owner.owner) is not None
            return top(owner) is not None

        def outside_uses(v):
            return [(_op(u.owner), u.operand_number) for u in v.uses if top(u.owner) is None]

        def first_of(v):
            return _op(v.owner) if not isinstance(v.owner, ir.Block) else ops[0]

        # block-shared tiles the stretch updates, grouped by the tile they start from; lane values used after it
        roots, finals, outs, needed = {}, {}, [], []
        for op in ops:
            for r in op.results:
                if _is_tile_type(r.type):
                    root = self.root(r, defined_inside, op)
                    roots[r] = (root, outside_uses(r))
                    finals[root] = r  # (the last update in program order)
                else:
                    uses = outside_uses(r)
                    if uses:
                        needed.append((r, uses))
        # lane values used after it: kept in carriers, or (arrays) cloned where used, with what their ops read
        handled = set()
        while needed:
            r, uses = needed.pop(0)
            if r in handled:
                continue
            handled.add(r)
            if _carries(r.type):
                outs.append((r, uses))
                continue
            owner = _op(r.owner) if not isinstance(r.owner, ir.Block) else None
            if owner is None or not _clonable(owner):
                self.refuse(first_of(r), f"a lane value of type {r.type} kept across a tile operation")
            self.remat[r] = (owner, list(owner.operands))  # (its operands as they are now: the stretch's loop
            needed += [(x, []) for x in owner.operands if defined_inside(x)]  # reads earlier ones per lane)
        threaded = list(finals)
        inside_root_uses = [[(_op(u.owner), u.operand_number) for u in root.uses if top(u.owner) is not None]
                            for root in threaded]
        first_op = ops[0]
        with ir.InsertionPoint(first_op), first_op.location:
            inits = [wb.create("tile_full", _zero(_held(v.type)), results=[_tile_of(_held(v.type), self.lanes)]).result
                     for v, _ in outs]
            loop = scf.ForOp(_index(0), self.active, _index(1), threaded + inits)
            with ir.InsertionPoint(loop.body):
                lane = arith.IndexCastOp(_i32(), loop.induction_variable).result
                states = list(loop.inner_iter_args)
                if mask is not None:  # only the lanes that took the branch into this region
                    taken = _read(mask, lane, _i1())
                    only = scf.IfOp(taken, [t.type for t in states], has_else=True)
                    with ir.InsertionPoint(only.else_block):
                        scf.YieldOp(states)
                    scf.YieldOp(list(only.results))
                    body = only.then_block
                else:
                    body = loop.body
            with ir.InsertionPoint(body):
                end = scf.YieldOp([])
        for op in ops:
            op.move_before(end)
        # inside: a threaded tile is the lane before's; warp.lane_index is the loop's lane
        for state, uses in zip(states, inside_root_uses):
            for user, k in uses:
                user.operands[k] = state
        for op in ops:  # lane values of the stretches before: this lane's element of their carriers
            def read(inner):
                for k, v in enumerate(list(inner.operands)):
                    if v in self.carriers or v in self.remat:
                        with ir.InsertionPoint(inner), inner.location:
                            inner.operands[k] = self.lane_value(v, lane)
                return ir.WalkResult.ADVANCE

            op.walk(read, ir.WalkOrder.PRE_ORDER)
        for op in ops:
            for li in ops_named(op, {"warp.lane_index"}):
                index = li.results[0]
                outs = [(lane if v == index else v, uses) for v, uses in outs]
                index.replace_all_uses_with(lane)
                li.erase()
        with ir.InsertionPoint(end), end.location:
            written = [wb.create("tile_insert", state, _hold(v), [lane], results=[state.type]).result
                       for state, (v, _) in zip(states[len(threaded):], outs)]
            scf.YieldOp([finals[r] for r in threaded] + written)
        end.erase()
        results = list(loop.results)
        # after: a threaded tile's updates are the loop's result; a lane value its carrier's element
        at = {root: result for root, result in zip(threaded, results)}
        for value, (root, uses) in roots.items():
            for user, k in uses:
                user.operands[k] = at[root]
        for (v, _), carrier in zip(outs, results[len(threaded):]):
            # (read where used: a later stretch reads its lane's element, a tile operation the first lane's)
            self.carriers[v] = carrier

    def sum_contributions(self) -> None:
        """In an adjoint: warp-autodiff writes a lane's adjoint of a tile element it read (t[i], wp.untile) into a
        fresh zero tile, `tile_insert(zeros, adj, i)`, then adds that tile to the tile's adjoint. Threaded from lane
        to lane, those writes would overwrite each other where lanes read the same element; as additions
        (`tile_insert(z, z[i] + adj, i)`) the tile holds the sum of the lanes' contributions, which is the adjoint."""
        for insert in ops_named(self.kernel.operation, {"warp.tile_insert"}):
            z = insert.operands[0]
            owner = z.owner
            if isinstance(owner, ir.Block) or _op(owner).name != "warp.tile_full" or len(list(z.uses)) != 1:
                continue
            fill = _op(owner).operands[0].owner
            if isinstance(fill, ir.Block) or not _is_zero(_op(fill)):
                continue
            value, indices = insert.operands[1], list(insert.operands)[2:]
            with ir.InsertionPoint(insert), insert.location:
                old = wb.create("tile_extract", z, indices, results=[value.type]).result
                insert.operands[1] = wb.builtin("add", [old, value], value.type)

    def root(self, v, defined_inside, op):
        """The block-level tile that the stretch's tile value `v` updates (through tile_insert, branches, loops)."""
        while defined_inside(v):
            owner = v.owner
            if isinstance(owner, ir.Block):
                parent = _op(owner.owner)
                if parent.name != "scf.for" or v.arg_number == 0:
                    self.refuse(op, "a tile carried by a lane-local loop")
                v = parent.operands[3 + v.arg_number - 1]
                continue
            owner = _op(owner)
            if owner.name == "warp.tile_insert":
                v = owner.operands[0]
            elif owner.name == "scf.if":
                v = owner.regions[0].blocks[0].operations[-1].operands[v.result_number]
            elif owner.name == "scf.for":
                v = owner.operands[3 + v.result_number]
            else:
                self.refuse(op, f"a tile made by {owner.name} in lane-local code")
        return v


class CpuBlockLanes(registry.CpuBlockLanes):
    def run(self, module):
        if CPU_LANES_ATTR not in module.attributes:
            return
        lanes = ir.IntegerAttr(module.attributes[CPU_LANES_ATTR]).value
        for k in kernels(module):
            _Lanes(k, lanes, derived=any(a in k.attributes for a in _DERIVED_ATTRS)).run()
