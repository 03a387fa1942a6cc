"""warp-gpu-cooperative-tiles: a CUDA block's lanes share its tiles (shared memory) and split each tile op.

Runs on the bufferized tiles (after promote-buffers-to-stack, before convert-linalg-to-loops, linalg ops
generalized): each kernel's tile buffers are `memref.alloca`s, its tile ops `linalg.generic`s, `memref.copy`s and
the tile_store / tile_atomic_add loop nests convert-warp-tiles-to-linalg marks (TILE_WRITE_ATTR). For a module
whose forward kernels all qualify, the pass:

- makes every tile buffer a `memref.global` in address space 3 (shared memory, one per buffer, uninitialised),
  reached through `memref.memory_space_cast` so the ops that carry buffers (scf.for / scf.if) keep their types;
- turns each tile op into a loop over its output elements (the iteration space's parallel dimensions, flattened
  row-major) from the lane index `gpu.thread_id x` in steps of `gpu.block_dim x`; a reduction dimension stays a
  sequential loop inside, in the CPU's order, so every element is summed as on the CPU, by one lane (not a tree:
  the CPU's bits, at the cost of a whole-tile reduction's parallelism). A reduction to one element (tile_sum)
  thus runs on lane 0 alone; a tile_store / tile_atomic_add writes each element once
  per block (not once per lane); a single element (tile_insert) is written by every lane, each its own index and
  value, as Warp's tile_element_assign (the same one from every lane when they agree);
- runs a forward kernel's adjoint (or tangent) on lane 0 of each block alone (LANE_ZERO_ATTR), its tiles whole
  in local memory as on the path of one thread per block: a tape launches it in the forward's shape, and its
  lane-local code reads and clears adjoints, which lanes side by side would race on;
- puts `gpu.barrier` before each such op (no lane overwrites a buffer another lane still reads) and after it (no
  lane reads what another lane has not written yet); canonicalize erases the back-to-back ones.

The lane-local code (everything else) runs on every lane, as in Warp. The kernel is then launched as
`dim + [block_dim]` threads in blocks of exactly block_dim (wp.launch_tiled reads `warp.tiled_launch`, which the
pass sets on the module and the PTX stage copies into the kernel's metadata); warp-gpu-kernel splits the linear
thread index over all four launch dimensions for such a kernel, so wp.tid() gives the block's indices (and the
lane, to a kernel that asks for one index more).

A barrier must be reached by every lane of the block: a tile op under an scf.if or inside an scf.for whose
condition or bounds depend on an atomic's result leaves the module one thread per block; one that depends on
wp.tid()'s index k (k >= 1) is recorded (`lane_divergent_tid_positions`): a tiled launch whose grid has k
dimensions reads the lane there and is refused by wp.launch_tiled. Anything else the pass does not handle (a
tile op of ONE_LANE_ATTR, a buffer allocated in a loop or on the heap, a tile op under scf.while, more
than SHARED_BYTES_LIMIT bytes of tiles) leaves the whole module as it was (the CUDA path of one thread per
block), with the reason in `warp.tiled_launch`. The forward kernels decide for the module (a tape replays the
forward launch's shape for the adjoint).
"""

from __future__ import annotations

import json

from mlir import ir
from mlir.dialects import arith, gpu as _gpu_dialect, memref, scf

from ...dialects.warp import builders as wb
from ...lowering.tile_lowering import TILE_WRITE_ATTR, index_const, unravel_index
from ...lowering.tiles_to_linalg import ONE_LANE_ATTR
from ...passes import registry
from ...passes.ir_walk import kernels
from ..common import TILE_LAUNCH_ATTR, TILES_ATTR

COOPERATIVE_ATTR = "warp.cooperative_tiles"  # on a kernel func.func whose tiles the pass spread over its lanes
LANE_ZERO_ATTR = "warp.lane_zero_tiles"  # on a derived kernel of a cooperative one: its body on lane 0 of each block
DERIVED_ATTRS = ("warp.adjoint_of", "warp.tangent_of")
SHARED_ADDRESS_SPACE = 3
# sm_90's static shared memory per block without cuFuncSetAttribute's opt-in
SHARED_BYTES_LIMIT = 48 * 1024
# ops that may take a tile buffer in the lane-local code: they read it, carry it or view it
_BUFFER_READERS = {"memref.load", "scf.yield", "scf.for", "scf.if", "memref.subview", "memref.expand_shape",
                   "memref.collapse_shape", "memref.cast", "memref.dim", "memref.extract_strided_metadata",
                   "memref.reinterpret_cast", "memref.get_global"}
_CONTROL = {"scf.for", "scf.if"}


class _NotCooperative(Exception):
    """Why a kernel keeps one thread per block."""


def _gpu():
    return _gpu_dialect  # (imported with the module: only CUDA compiles load this pass)


def _constant_int(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _element_bytes(t: ir.Type) -> int:
    for cls in (ir.IntegerType, ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type):
        if isinstance(t, cls):
            return max(1, t.width // 8)
    raise _NotCooperative(f"a tile buffer of {t}")


def _shape_of(v: ir.Value, what: str) -> list:
    t = ir.MemRefType(v.type)
    if not t.has_static_shape:
        raise _NotCooperative(f"{what} of dynamic shape")
    return list(t.shape)


class _Analysis:
    """One kernel: its tile ops (collectives), its tile buffers, and the tid positions its tile ops' control
    flow depends on."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.collectives = []  # (op, its enclosing scf.for / scf.if ops)
        self.buffers = []
        self.shared_bytes = 0
        self.positions = set()
        self._memo = {}  # values walked by lane_sources (each once per kernel: the positions are one union)
        entry = kernel.regions[0].blocks[0]
        self.visit(entry, [], None, entry)
        for _, control in self.collectives:
            for c in control:
                values = [c.operands[0]] if c.name == "scf.if" else list(c.operands)[:3]
                for v in values:
                    self.positions |= self.lane_sources(v)

    def visit(self, block, control, forbidden, entry):
        for op in block.operations:
            op = op.operation
            name = op.name
            # (a memref.store of the lane-local code: tile_insert's element, written by each lane between barriers)
            collective = name in ("linalg.generic", "memref.copy", "memref.store") or TILE_WRITE_ATTR in op.attributes
            if collective:
                if forbidden is not None:
                    raise _NotCooperative(f"a tile operation inside {forbidden}")
                self.check_collective(op)
                self.collectives.append((op, list(control)))
                continue
            if name.startswith("linalg."):
                raise _NotCooperative(f"{name}")
            if name == "memref.alloca":
                # one shared buffer stands for each alloca: in a loop, a buffer of one iteration could still be
                # live (carried) when the next allocates its own
                if any(c.name != "scf.if" for c in control) or forbidden is not None:
                    raise _NotCooperative("a tile buffer allocated inside a loop")
                shape = _shape_of(op.results[0], "a tile buffer")
                size = _element_bytes(ir.MemRefType(op.results[0].type).element_type)
                for n in shape:
                    size *= n
                self.shared_bytes += (size + 15) // 16 * 16
                self.buffers.append(op)
            elif name == "memref.alloc":
                raise _NotCooperative("a tile buffer on the heap")
            elif name not in _BUFFER_READERS and any(isinstance(o.type, ir.MemRefType) for o in op.operands):
                raise _NotCooperative(f"{name} on a tile buffer")
            inner = (list(control) + [op]) if name in _CONTROL and forbidden is None else control
            inner_forbidden = forbidden if name in _CONTROL or not op.regions else (forbidden or name)
            for region in op.regions:
                for b in region.blocks:
                    self.visit(b, inner, inner_forbidden, entry)

    def check_collective(self, op):
        if op.name == "linalg.generic":
            for m in ir.ArrayAttr(op.attributes["indexing_maps"]):
                for e in ir.AffineMapAttr(m).value.results:
                    if not (isinstance(e, ir.AffineDimExpr) or isinstance(e, ir.AffineConstantExpr)):
                        raise _NotCooperative(f"a linalg.generic indexing map {m}")
            maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
            sized = set()
            for o, m in zip(op.operands, maps):
                if isinstance(o.type, ir.MemRefType):
                    _shape_of(o, "a tile operand")
                    sized |= {ir.AffineDimExpr(e).position for e in m.results if isinstance(e, ir.AffineDimExpr)}
            if maps and len(sized) != maps[0].n_dims:  # (each loop's extent: an operand's dimension)
                raise _NotCooperative("a linalg.generic loop without an operand dimension")
        elif op.name == "memref.copy":
            _shape_of(op.operands[1], "a tile copy")
        elif op.name == "scf.for":
            _loop_nest(op)

    def lane_sources(self, v: ir.Value) -> set:
        """The wp.tid() result positions (>= 1: position 0 is never a tiled launch's lane) that `v` depends on,
        walking its operands back (a worklist: a long kernel's chains would overflow Python's recursion); raises
        _NotCooperative where it depends on an atomic's result (a different value on each lane)."""
        found = set()
        stack = [v]
        while stack:
            v = stack.pop()
            if v in self._memo:
                continue
            self._memo[v] = True
            owner = v.owner
            if isinstance(owner, ir.Block):
                parent = owner.owner.operation if hasattr(owner.owner, "operation") else owner.owner
                if parent.name not in ("func.func", "gpu.func"):  # kernel parameters: the same in every lane
                    stack += _inputs(parent)
                continue
            op = owner.operation if hasattr(owner, "operation") else owner
            if op.name == "warp.tid":
                if wb.LINEAR_TID_ATTR in op.attributes:
                    raise _NotCooperative("a tile operation under control flow that depends on the linear thread index")
                if v.result_number >= 1:
                    found.add(v.result_number)
            elif "atomic" in op.name:
                raise _NotCooperative("a tile operation under control flow that depends on an atomic's result")
            else:
                stack += _inputs(op)
        return found


def _inputs(op) -> list:
    """What an op's results (or its regions' arguments) are computed from: its operands and, for an op with
    regions (a loop's carried values, an scf.if's results), what its blocks' terminators yield."""
    found = list(op.operands)
    for region in op.regions:
        for b in region.blocks:
            ops = list(b.operations)
            if ops:
                found += list(ops[-1].operation.operands)
    return found


def _loop_nest(outer) -> list:
    """The perfect nest of scf.for 0..n step 1 loops (n constant) from `outer` (a tile write's)."""
    loops = [outer]
    while True:
        loop = loops[-1]
        if _constant_int(loop.operands[0]) != 0 or _constant_int(loop.operands[2]) != 1 or \
                _constant_int(loop.operands[1]) is None:
            raise _NotCooperative("a tile write loop without constant bounds")
        body = list(loop.regions[0].blocks[0].operations)
        if len(body) == 2 and body[0].operation.name == "scf.for":
            loops.append(body[0].operation)
        else:
            return loops


def _lane_loop(lane, lanes, total: int):
    """scf.for f = lane to total step lanes; returns (loop, its yield)."""
    loop = scf.ForOp(lane, index_const(total), lanes)
    with ir.InsertionPoint(loop.body):
        return loop, scf.YieldOp([])


class _Spread:
    def __init__(self, lane, lanes):
        self.lane, self.lanes = lane, lanes

    def spread(self, op):
        gpu = _gpu()
        with ir.InsertionPoint(op), op.location:
            gpu.BarrierOp()
        if op.name == "linalg.generic":
            self.generic(op)
        elif op.name == "memref.store":
            self.single(op)
        elif op.name == "memref.copy":
            self.copy(op)
        else:
            self.write(op)

    def _after(self, anchor):
        """A barrier right after `anchor` (the op replaced, erased after this, or the lane-0 branch)."""
        gpu = _gpu()
        with ir.InsertionPoint.after(anchor), anchor.location:
            gpu.BarrierOp()

    def copy(self, op):
        src, dst = op.operands[0], op.operands[1]
        shape = _shape_of(dst, "a tile copy")
        total = 1
        for n in shape:
            total *= n
        with ir.InsertionPoint(op), op.location:
            loop, end = _lane_loop(self.lane, self.lanes, total)
            with ir.InsertionPoint(end):
                ivs = unravel_index(loop.induction_variable, shape) if shape else []
                memref.StoreOp(memref.LoadOp(src, ivs).result, dst, ivs)
        self._after(op)
        op.erase()

    def single(self, op):
        """An element the lane-local code writes (tile_insert): every lane writes its own, as Warp's
        tile_element_assign (each lane's index and value: example_tile_block_cholesky's lanes each pad their
        elements); the barrier after it makes every lane's write seen."""
        self._after(op)

    def write(self, op):
        """A tile_store / tile_atomic_add nest: each element once per block, elements spread over the lanes."""
        with ir.InsertionPoint(op), op.location:
            if op.name == "scf.if":  # a tile of one element: lane 0
                only = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, self.lane, index_const(0)).result)
                with ir.InsertionPoint(only.then_block):
                    end = scf.YieldOp([])
                op.move_before(end)
                self._after(only.operation)
                return
            loops = _loop_nest(op)
            shape = [_constant_int(l.operands[1]) for l in loops]
            total = 1
            for n in shape:
                total *= n
            loop, end = _lane_loop(self.lane, self.lanes, total)
            with ir.InsertionPoint(end):
                ivs = unravel_index(loop.induction_variable, shape)
        for l, iv in zip(loops, ivs):
            l.regions[0].blocks[0].arguments[0].replace_all_uses_with(iv)
        for inner in list(loops[-1].regions[0].blocks[0].operations)[:-1]:
            inner.operation.move_before(end)
        self._after(op)
        op.erase()

    def generic(self, op):
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
        reduction = ["reduction" in str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        operands = list(op.operands)
        n_in = segments[0]
        rank = len(reduction)
        sizes = [None] * rank
        for v, m in zip(operands, maps):
            if isinstance(v.type, ir.MemRefType):
                shape = ir.MemRefType(v.type).shape
                for pos, e in enumerate(m.results):
                    if isinstance(e, ir.AffineDimExpr):
                        sizes[ir.AffineDimExpr(e).position] = shape[pos]
        parallel = [d for d in range(rank) if not reduction[d]]
        reduced = [d for d in range(rank) if reduction[d]]
        total = 1
        for d in parallel:
            total *= sizes[d]
        block = op.regions[0].blocks[0]
        with ir.InsertionPoint(op), op.location:
            loop, end = _lane_loop(self.lane, self.lanes, total)
            ivs = [None] * rank
            with ir.InsertionPoint(end):
                for d, iv in zip(parallel, unravel_index(loop.induction_variable, [sizes[d] for d in parallel])):
                    ivs[d] = iv
                inner_end = end
                for d in reduced:  # in the CPU's order: one lane sums each element as convert-linalg-to-loops
                    with ir.InsertionPoint(inner_end):
                        inner = scf.ForOp(index_const(0), index_const(sizes[d]), index_const(1))
                        with ir.InsertionPoint(inner.body):
                            inner_end = scf.YieldOp([])
                    ivs[d] = inner.induction_variable
            with ir.InsertionPoint(inner_end):
                def at(m):
                    return [ivs[ir.AffineDimExpr(e).position] if isinstance(e, ir.AffineDimExpr)
                            else index_const(ir.AffineConstantExpr(e).value) for e in m.results]

                for k, (v, m) in enumerate(zip(operands, maps)):
                    value = memref.LoadOp(v, at(m)).result if isinstance(v.type, ir.MemRefType) else v
                    block.arguments[k].replace_all_uses_with(value)
                marker = index_const(0).owner
        yield_op = None
        for inner in list(block.operations):
            inner = inner.operation
            if inner.name == "linalg.yield":
                yield_op = inner
            elif inner.name == "linalg.index":
                inner.results[0].replace_all_uses_with(ivs[ir.IntegerAttr(inner.attributes["dim"]).value])
                inner.erase()
            else:
                inner.move_before(marker)
        with ir.InsertionPoint(marker), op.location:
            for v, (out, m) in zip(yield_op.operands, list(zip(operands, maps))[n_in:]):
                memref.StoreOp(v, out, at(m))
        marker.erase()
        self._after(op)
        op.erase()


def _share_buffers(kernel_name: str, buffers, module_body) -> None:
    """Each tile buffer a memref.global of address space 3, used through a cast back to the default space."""
    space = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), SHARED_ADDRESS_SPACE)
    for n, alloca in enumerate(buffers):
        t = ir.MemRefType(alloca.results[0].type)
        with alloca.location:
            shared = ir.MemRefType.get(list(t.shape), t.element_type, memory_space=space)
        name = f"__tile_shared_{kernel_name}_{n}"
        with ir.InsertionPoint.at_block_begin(module_body), alloca.location:
            memref.GlobalOp(name, ir.TypeAttr.get(shared), sym_visibility="private",
                            initial_value=ir.UnitAttr.get(), alignment=16)
        with ir.InsertionPoint(alloca), alloca.location:
            g = memref.GetGlobalOp(shared, name).result
            generic = memref.MemorySpaceCastOp(t, g).result
        alloca.results[0].replace_all_uses_with(generic)
        alloca.erase()


def _on_lane_zero(kernel) -> None:
    """The whole body of a derived kernel (the adjoint or tangent of a cooperative one, launched in the same shape
    by a tape) on lane 0 of each block: one thread per block computes its tiles whole, in local memory, as on the
    path of one thread per block. Its lane-local code reads and clears adjoints (adj = out.grad[i]; out.grad[i] = 0),
    which lanes running it side by side would race on."""
    entry = kernel.regions[0].blocks[0]
    ops = list(entry.operations)
    gpu = _gpu()
    with ir.InsertionPoint.at_block_begin(entry), kernel.location:
        lane = gpu.ThreadIdOp(gpu.Dimension.x).result
        only = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, lane, index_const(0)).result)
        with ir.InsertionPoint(only.then_block):
            end = scf.YieldOp([])
    for op in ops[:-1]:  # (the func.return stays)
        op.operation.move_before(end)
    kernel.attributes[LANE_ZERO_ATTR] = ir.UnitAttr.get()


class GpuCooperativeTiles(registry.GpuCooperativeTiles):
    def run(self, module):
        if TILES_ATTR not in module.attributes:
            return
        found = kernels(module)
        if not found:
            return
        forward = [k for k in found if not any(a in k.attributes for a in DERIVED_ATTRS)]
        derived = [k for k in found if any(a in k.attributes for a in DERIVED_ATTRS)]
        plans, reason = [], None
        if ONE_LANE_ATTR in module.attributes:
            reason = f"{ir.StringAttr(module.attributes[ONE_LANE_ATTR]).value} assumes one lane per block"
        elif not forward:
            reason = "no forward kernel"
        else:
            try:
                for k in forward:
                    name = ir.StringAttr(k.attributes["sym_name"]).value
                    try:
                        plans.append((name, _Analysis(k)))
                    except _NotCooperative as e:
                        raise _NotCooperative(f"kernel '{name}': {e}") from None
                shared = max(p.shared_bytes for _, p in plans)
                if shared > SHARED_BYTES_LIMIT:
                    raise _NotCooperative(f"{shared} bytes of tiles in shared memory (more than "
                                          f"{SHARED_BYTES_LIMIT})")
            except _NotCooperative as e:
                reason = str(e)
        if reason is not None:
            module.attributes[TILE_LAUNCH_ATTR] = ir.StringAttr.get(json.dumps(
                {"cooperative": False, "reason": reason}))
            return
        gpu = _gpu()
        body = module.regions[0].blocks[0]
        positions = set()
        for name, plan in plans:
            k = plan.kernel
            entry = k.regions[0].blocks[0]
            with ir.InsertionPoint.at_block_begin(entry), k.location:
                lane = gpu.ThreadIdOp(gpu.Dimension.x).result
                lanes = gpu.BlockDimOp(gpu.Dimension.x).result
            spread = _Spread(lane, lanes)
            for op, _ in plan.collectives:
                spread.spread(op)
            _share_buffers(name, plan.buffers, body)
            k.attributes[COOPERATIVE_ATTR] = ir.UnitAttr.get()
            positions |= plan.positions
        for k in derived:
            _on_lane_zero(k)
        module.attributes[TILE_LAUNCH_ATTR] = ir.StringAttr.get(json.dumps(
            {"cooperative": True, "shared_bytes": max(p.shared_bytes for _, p in plans),
             "lane_divergent_tid_positions": sorted(positions)}))
