"""warp-cpu-interchange-loops: loops with thread-invariant bounds in a kernel's body (substeps, a fixed-count
iteration, `for s in range(n)`, an adjoint's replay, tape and reverse loops) run once per block of threads,
each stretch of per-thread work between them as an innermost loop over the threads of the block, which
LLVM vectorises.

LLVM vectorises innermost loops only: with the kernel's own loop inside the thread loop, the thread loop
runs scalar (one sin at a time for `for s in range(n): v = v + a * wp.sin(v)`). Each thread's work is
independent of the other threads' (Warp's threads run in no defined order), so the thread loop can be
cut in blocks of threads and the control flow that is the same for every thread hoisted above the
threads:

    for each thread i of the block: S0(i); state[i] = the loop's initial values
    for s in the loop's range (the same for every thread):
        for each thread i of the block: state[i] = body(i, s, state[i])      <- vectorised
    for each thread i of the block: S1(i, state[i])

recursively for loops inside such loops. Values one stretch makes and another reads are kept per thread
in stack buffers (one entry per thread of the block; a vector's, one per lane), as is each loop's carried
state. A warp.stack_array
made at the thread loop's top level (an adjoint's loop tape) becomes one allocation for the block, the
threads' arrays interleaved (element j of thread t at j * block + t), so accesses to it are consecutive
across threads too.

A body that scatters (atomics at per-thread addresses: a mass-spring's forces) is cut the same way before
its first such atomic, when what precedes reads no array the rest writes: the gathers and arithmetic run
for the block first, vectorised, then the atomics (uncut, their possible conflicts keep LLVM from
vectorising any of the body).

Each thread computes what it did before, in the same order; only the order between threads changes (a
race between threads can resolve differently, as it can on Warp's GPU). Blocks start at the thread loop's
start (a multiple of the runtime's CHUNK_ALIGN, or a row start) and their size is a power of two that
divides CHUNK_ALIGN and depends only on the launch's arguments, so a thread is in a vector body or a
remainder whatever the launch's thread count.

The pass leaves alone: thread loops without a loop of thread-invariant bounds at their top level; loops
whose bounds differ per thread, while loops and branches (they run per thread, whole, inside a stretch);
kernels with wp.zeros arrays (allocated once, used by each thread in turn) or stack arrays made inside a
branch or loop; values of a type that is not an LLVM type.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math, scf

from ...dialects import llvm
from ...passes import registry
from ...passes.ir_walk import is_inside, ops_named
from .cpu_entry import THREAD_LOOP_ATTR

BLOCK = 256  # threads per block; divides runtime/cpu.py's CHUNK_ALIGN (1024)
# with a load in a uniform loop whose address is not consecutive across threads (each thread walks its own
# stretch of an array: a tile's sum, a matrix row), the threads of a block read as many streams at once, a page
# apart or more: 256 of them miss the TLB at every step (0.6 GB/s summing 4096-element rows), 16 stay in it
STRIDED_BLOCK = 16
# lanes of a vector a thread loads and takes apart lane by lane that go to their lane-major buffer as a block's
# squares transposed in registers (_loads_lanes)
TRANSPOSED_LANES = (4, 8, 16)
# with stack arrays, a block has fewer threads when their arrays would take more than this
STACK_ARRAY_BUDGET = 256 << 10  # in L2 with the rest of a block's buffers
_DYNAMIC_INDEX = -2147483648  # llvm.getelementptr's marker for a dynamic index
_PURE_PREFIXES = ("arith.", "math.", "llvm.extractvalue", "llvm.mlir.constant")
# what the scatter's addresses are made of after the cut (the descriptor's data pointer, the element's address);
# the index arithmetic before them (the wrap of a negative index, the scaling by the stride) stays before the cut,
# vectorised with the gathers, and the scatter reads the byte offset from its buffer
_ADDRESS_PREFIXES = ("llvm.getelementptr", "llvm.extractvalue", "llvm.mlir.constant", "arith.constant")
_STACK_OPS = {"llvm.alloca", "llvm.intr.stacksave", "llvm.intr.stackrestore"}
_ORIGINAL = "warp.interchange.original"  # on the thread loop's ops while the pass runs


def _op_of(value: ir.Value):
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _storable(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.FloatType, ir.VectorType)) or str(t).startswith("!llvm.")


def _walk_operands(ops, fn) -> None:
    def visit(op):
        for n, operand in enumerate(op.operands):
            fn(op, n, operand)
        return ir.WalkResult.ADVANCE

    for op in ops:
        op.walk(visit, ir.WalkOrder.PRE_ORDER)


def _i64(n: int) -> ir.Value:
    t = ir.IntegerType.get_signless(64)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, n)).result


class _StackArray:
    """A lowered warp.stack_array at the thread loop's top level (arrays_to_llvm.lower_stack_array): a stack
    save, an alloca of `count` elements of `elem` bytes, the descriptor (ptr, [count], [elem]), the restore
    before the thread loop's yield."""

    def __init__(self, save, alloca, stride_insert, restore, elem):
        self.save, self.alloca, self.stride_insert, self.restore, self.elem = save, alloca, stride_insert, restore, elem

    @staticmethod
    def match(save, body_ops):
        restores = [u.owner.operation for u in save.results[0].uses]
        if len(restores) != 1 or restores[0].name != "llvm.intr.stackrestore" or restores[0] not in body_ops:
            return None
        k = body_ops.index(save)
        alloca = next((o for o in body_ops[k + 1:k + 4] if o.name == "llvm.alloca"), None)
        if alloca is None:
            return None
        elem_t = str(ir.TypeAttr(alloca.attributes["elem_type"]).value)
        if not (elem_t.startswith("!llvm.array<") and elem_t.endswith(" x i8>")):
            return None
        elem = int(elem_t[len("!llvm.array<"):].split(" ")[0])
        desc = alloca
        for _ in range(3):  # [0] = the data, [1, 0] = the count, [2, 0] = the stride
            uses = [u.owner.operation for u in desc.results[0].uses]
            if len(uses) != 1 or uses[0].name != "llvm.insertvalue":
                return None
            desc = uses[0]
        stride = _op_of(desc.operands[1])
        if stride is None or stride.name != "arith.constant" or ir.IntegerAttr(stride.attributes["value"]).value != elem:
            return None
        return _StackArray(save, alloca, desc, restores[0], elem)


class _Interchange:
    def __init__(self, entry, thread_loop):
        self.entry, self.loop = entry, thread_loop
        self.body = thread_loop.regions[0].blocks[0]
        self.tid = self.body.arguments[0]
        self.ptr = ir.Type.parse("!llvm.ptr")
        for op in ops_named(thread_loop, lambda n: True):  # a mark, not a set: moved ops get new Python objects
            op.attributes[_ORIGINAL] = ir.UnitAttr.get()
        self.uniform = set()
        self.split = None
        self.lane_rows = set()  # vectors taken apart lane by lane in a later stretch (_loads_lanes)

    # -- legality ------------------------------------------------------------------------------------
    def applies(self) -> bool:
        loop = self.loop
        _erase_dead_loops(loop)
        if len(self.body.arguments) != 1 or list(loop.results):
            return False
        shared = self._stack_memory_users()
        if shared is None:
            return False
        ops = [op.operation for op in self.body.operations][:-1]
        self.stack_arrays = []
        for op in ops:
            if op.name == "llvm.intr.stacksave":
                sa = _StackArray.match(op, ops)
                if sa is None:
                    return False
                self.stack_arrays.append(sa)
        handled = {o for sa in self.stack_arrays for o in (sa.save, sa.alloca, sa.restore)}
        if any(o not in handled for o in ops_named(loop, _STACK_OPS)):
            return False  # a stack array inside a branch or loop of the body
        self.top = [o for o in ops if o not in handled]
        if not all(self._is_uniform_chain(sa.alloca.operands[0], self.body) for sa in self.stack_arrays):
            return False
        self.split = self._scatter_split()
        if self.split is None and not any(self._is_uniform_loop(o) for o in self.top):
            return False
        if not all(self._in_one_stretch(users) for users in shared):
            return False
        steps = {}  # (one walk of the def chains for all the loads)
        self.strided = any(not self._consecutive(load, steps) for o in self.top if self._is_uniform_loop(o)
                           for load in ops_named(o, {"llvm.load"}))
        # (a constant of any type is uniform: it is hoisted, never kept per thread)
        return all(_storable(v.type) for o in ops_named(loop, lambda n: True) if o != loop and o.name != "arith.constant"
                   for v in o.results)

    def _scatter_split(self):
        """Where to cut a body that scatters (atomics at addresses that differ per thread: a mass-spring's
        `wp.atomic_add(f, i, force)`): before the first top-level op holding such an atomic, when the ops before
        it read no array that the ops from it on write. Cut there, the computation before runs for the whole
        block first (vectorised: gathers, arithmetic) and the scatter after it; uncut, the scatter's possible
        conflicts keep LLVM from vectorising any of the body. The addresses the scatter writes are made after
        the cut (a pointer kept in a buffer would hide the array from warp-cpu-privatize-scatter), from the byte
        offsets computed before it: the index's wrap and scaling vectorised, not redone per atomic in the
        scatter's scalar loop (mass-spring's springs on one thread 119 -> 98 us).
        None: no cut."""
        varies = {}
        for k, op in enumerate(self.top):
            if any(self._varies(a.operands[0], varies) for a in ops_named(op, {"llvm.atomicrmw"})):
                break
        else:
            return None
        before, after = self.top[:k], self.top[k:]
        for op in reversed(list(before)):  # the address ops only the scatter reads move after the cut
            if op.name.startswith(_ADDRESS_PREFIXES) and not op.regions and \
                    all(any(is_inside(u.owner.operation, a) for a in after) for r in op.results for u in r.uses):
                before.remove(op)
                after.insert(0, op)
        if not ops_named_all(before, {"llvm.load"}):
            return None  # nothing gathered before the scatter: nothing to gain
        written = {_root(o.operands[0] if o.name == "llvm.atomicrmw" else o.operands[1])
                   for o in ops_named_all(after, {"llvm.store", "llvm.atomicrmw"})}
        read = {_root(o.operands[0]) for o in ops_named_all(before, {"llvm.load"})}
        if None in written or None in read or written & read or \
                ops_named_all(before, {"llvm.store", "llvm.atomicrmw"}):
            return None
        self.top = before + after
        return after[0]

    def _varies(self, value, memo) -> bool:
        """Whether `value` can differ between the threads (it depends on the thread index)."""
        known = memo.get(value)
        if known is not None:
            return known
        if value == self.tid:
            result = True
        elif _ORIGINAL not in self._def_op(value).attributes:
            result = False
        else:
            op = _op_of(value)
            result = op is None or bool(op.regions) or any(self._varies(v, memo) for v in op.operands)
        memo[value] = result
        return result

    def _stack_memory_users(self):
        """For each buffer allocated on the stack outside the thread loop that it uses (a tile's buffer,
        allocated once per entry and used by each thread in turn: a reduction's tile of shape (1,) on its way
        to an atomic), the top-level ops of the body that use it; None when the loop uses a wp.zeros array
        (llvm.alloca: a thread's array, whose element a thread may keep across the loops)."""
        users, refused = {}, []

        def visit(op, n, v):
            owner = _op_of(v)
            if owner is None or owner.name not in ("llvm.alloca", "memref.alloca") or is_inside(owner, self.loop):
                return
            if owner.name == "llvm.alloca":
                refused.append(v)
                return
            top = op
            while top.parent.operation != self.loop.operation:
                top = top.parent.operation
            users.setdefault(v, []).append(top)

        _walk_operands([self.loop], visit)
        return None if refused else list(users.values())

    def _in_one_stretch(self, users) -> bool:
        """Whether these top-level ops run in one stretch of per-thread work (each thread then stores and
        reads the buffer before the next thread does): none is a uniform loop, none lies between them, and
        the scatter's cut does not either."""
        at = sorted(self.top.index(u) for u in users)
        between = self.top[at[0]:at[-1] + 1]
        if any(self._is_uniform_loop(o) for o in between):
            return False
        return self.split is None or self.split not in between[1:]

    def _is_uniform_chain(self, value, block, memo=None) -> bool:
        """`value` is the same for every thread: defined outside the thread loop, uniform already (a hoisted
        value, the induction variable of a loop that runs for the whole block), or made from such values by
        pure ops still in `block` (the region being emitted: ops of a stretch not emitted yet, which can still
        move; None: none)."""
        memo = {} if memo is None else memo
        known = memo.get(value)
        if known is not None:
            return known
        if value in self.uniform or _ORIGINAL not in self._def_op(value).attributes:
            result = True
        else:
            op = _op_of(value)
            result = (op is not None and block is not None and op.block == block and not op.regions
                      and op.name.startswith(_PURE_PREFIXES)
                      and all(self._is_uniform_chain(v, block, memo) for v in op.operands))
        memo[value] = result
        return result

    def _def_op(self, value):
        owner = value.owner
        return owner.owner.operation if isinstance(owner, ir.Block) else owner.operation

    def _is_uniform_loop(self, op) -> bool:
        """A loop of thread-invariant bounds that may run more than once (a loop of one trip, as over a tile of
        shape (1,) on its way to an atomic, is per-thread work like any other op: nothing to interchange)."""
        if op.name != "scf.for":
            return False
        bounds = [_constant(v) for v in list(op.operands)[:3]]
        if None not in bounds and bounds[2] > 0 and bounds[1] - bounds[0] <= bounds[2]:
            return False
        memo = {}
        return all(self._is_uniform_chain(v, op.block, memo) for v in list(op.operands)[:3])

    # -- the rewrite ---------------------------------------------------------------------------------
    def apply(self) -> None:
        loop = self.loop
        entry_block = self.entry.regions[0].blocks[0]
        self.buffer_ip = ir.InsertionPoint.at_block_begin(entry_block)
        self.home = {}  # value -> ("spill" | "state", buffer) or ("stack", _StackArray)
        self.dead = []
        with self.buffer_ip, loop.location:
            self.most = _i64(STRIDED_BLOCK if self.strided else BLOCK)  # a block's most threads (_block_size)
        lo, hi = loop.operands[0], loop.operands[1]
        with ir.InsertionPoint(loop), loop.location:
            for sa in self.stack_arrays:
                self._hoist(sa.alloca.operands[0], self.top)
            size = self._block_size()
            blocks = scf.ForOp(lo, hi, size)
            with ir.InsertionPoint(blocks.body):
                self.start = blocks.induction_variable
                self.stop = arith.MinSIOp(arith.AddIOp(self.start, size).result, hi).result
                saved = llvm.intr_stacksave(self.ptr) if self.stack_arrays else None
                for sa in self.stack_arrays:
                    count = arith.MulIOp(sa.alloca.operands[0], size).result
                    sa.block_buffer = llvm.alloca(self.ptr, count, ir.TypeAttr(sa.alloca.attributes["elem_type"]).value,
                                                  alignment=64)
                    sa.block_stride = arith.MulIOp(_i64(sa.elem), size).result
                    sa.stride_insert.operands[1] = sa.block_stride
                    self.home[sa.alloca.results[0]] = ("stack", sa)
                    # rebuilt in each loop over threads, not kept: an address LLVM sees is consecutive across threads
                    self.home[sa.stride_insert.results[0]] = ("descriptor", sa)
                self._region(self.top)
                if saved is not None:
                    llvm.intr_stackrestore(saved)
                scf.YieldOp([])
        outermost = [op for op in self.dead if not any(o != op and is_inside(op, o) for o in self.dead)]
        for op in reversed(outermost):  # an inner one goes with its outer one; a later one may use an earlier one
            op.erase()
        for sa in self.stack_arrays:
            sa.restore.erase()
            sa.alloca.erase()
            sa.save.erase()
        loop.erase()
        for op in ops_named(self.entry, lambda n: True):  # the hoisted ones included
            if _ORIGINAL in op.attributes:
                del op.attributes[_ORIGINAL]

    def _region(self, ops, tail=None) -> None:
        """Emits `ops` (a region's, in order) at the current insertion point, which is at block level: uniform
        loops as loops, the stretches between them as loops over the block's threads. `tail`: (values, buffers)
        to store per thread at the end (a loop body's yielded values into its state)."""
        stretch = []
        for op in ops:
            if self.split is not None and op == self.split:  # the scatter after the rest (_scatter_split)
                self._per_thread(stretch)
                stretch = []
            if self._is_uniform_loop(op):
                for v in list(op.operands)[:3]:
                    self._hoist(v, stretch)
                self._per_thread(stretch)
                stretch = []
                self._uniform_loop(op)
            else:
                stretch.append(op)
                if self.strided and self._loads_lanes(op):
                    self.lane_rows.add(op.results[0])
                    self._per_thread(stretch)
                    stretch = []
        self._per_thread(stretch, tail)

    def _loads_lanes(self, op) -> bool:
        """Whether `op` reads a vector from memory that is only taken apart lane by lane (a streamed reduction's
        step: 16 consecutive elements of a thread's row). The stretch is cut after it: the vector goes to its
        buffer lane-major (lane k of the block's threads side by side), so the lanes' uses, in the next
        stretch, read consecutive slots across threads and vectorise (kept together, each thread's lanes
        are a sequence of scalar extracts, and a load a lane across threads a gather)."""
        if len(op.results) != 1 or not ops_named(op, {"llvm.load"}):
            return False
        t = op.results[0].type
        if not isinstance(t, ir.VectorType) or ir.VectorType(t).rank != 1:
            return False
        lanes, element = ir.VectorType(t).shape[0], _bytes(ir.VectorType(t).element_type)
        if lanes not in TRANSPOSED_LANES or element not in (4, 8):
            return False
        uses = [u.owner.operation for u in op.results[0].uses]
        return bool(uses) and all(u.name == "vector.extract" and len(u.operands) == 1 for u in uses)

    def _hoist(self, value, pending) -> None:
        """Moves the pure ops among `pending` that make the uniform `value` to the current insertion point."""
        if value in self.uniform or _ORIGINAL not in self._def_op(value).attributes:
            return
        op = _op_of(value)
        for v in op.operands:
            self._hoist(v, pending)
        marker = _i64(0).owner
        op.move_before(marker)
        marker.erase()
        pending.remove(op)
        self.uniform.update(op.results)

    def _buffer(self, t):
        """A value's slots for the block's threads; a vector's as one array per lane (its lanes' slots consecutive
        across threads, so the vectorised thread loop reads and writes them with plain vector loads and stores:
        one array of vectors is a stride-16 scatter for a vec3)."""
        with self.buffer_ip, self.loop.location:
            if isinstance(t, ir.VectorType) and t.rank == 1 and not t.scalable:
                lanes = t.shape[0]
                count = arith.MulIOp(self.most, _i64(lanes)).result
                return _Lanes(llvm.alloca(self.ptr, count, t.element_type, alignment=64), lanes, t.element_type)
            return llvm.alloca(self.ptr, self.most, t, alignment=64)

    def _slot(self, buf, i, t, lane: int = 0):
        offset = arith.SubIOp(i, self.start).result
        if lane:
            offset = arith.AddIOp(offset, arith.MulIOp(self.most, _i64(lane)).result).result
        return llvm.getelementptr(self.ptr, buf, [offset], [_DYNAMIC_INDEX], t, no_wrap_flags=0)

    def _store(self, value, buf, i) -> None:
        if isinstance(buf, _Lanes):
            for lane in range(buf.lanes):
                element = llvm.extractelement(value, _i64(lane))
                llvm.store(element, self._slot(buf.ptr, i, buf.element_type, lane))
        else:
            llvm.store(value, self._slot(buf, i, value.type))

    def _load(self, t, buf, i) -> ir.Value:
        if isinstance(buf, _Lanes):
            vector = llvm.mlir_undef(t)
            for lane in range(buf.lanes):
                element = llvm.load(buf.element_type, self._slot(buf.ptr, i, buf.element_type, lane))
                vector = llvm.insertelement(vector, element, _i64(lane))
            return vector
        return llvm.load(t, self._slot(buf, i, t))

    def _thread_loop(self):
        tl = scf.ForOp(self.start, self.stop, _i64(1))
        with ir.InsertionPoint(tl.body):
            end = scf.YieldOp([])
        return tl, end

    def _load_homes(self, ops, i, mapping, extra=()) -> None:
        """Loads, at the current insertion point, the values `ops` (and `extra`) read that live in buffers."""
        wanted = []

        def visit(op, n, v):
            if v in self.home and v not in mapping:
                wanted.append(v)
                mapping[v] = None

        _walk_operands(ops, visit)
        for v in extra:
            if v in self.home and v not in mapping:
                wanted.append(v)
                mapping[v] = None
        for v in wanted:
            kind, where = self.home[v]
            if kind in ("stack", "descriptor"):
                offset = arith.MulIOp(arith.SubIOp(i, self.start).result, _i64(where.elem)).result
                i8 = ir.IntegerType.get_signless(8)
                data = llvm.getelementptr(self.ptr, where.block_buffer, [offset], [_DYNAMIC_INDEX], i8,
                                          no_wrap_flags=0)
                if kind == "stack":
                    mapping[v] = data
                else:
                    desc = llvm.insertvalue(llvm.mlir_undef(v.type), data, [0])
                    desc = llvm.insertvalue(desc, where.alloca.operands[0], [1, 0])
                    mapping[v] = llvm.insertvalue(desc, where.block_stride, [2, 0])
            else:
                mapping[v] = self._load(v.type, where, i)

    @staticmethod
    def _remap(ops, mapping) -> None:
        def replace(op, n, v):
            new = mapping.get(v)
            if new is not None:
                op.operands[n] = new

        _walk_operands(ops, replace)

    def _per_thread(self, stretch, tail=None) -> None:
        """A loop over the block's threads running `stretch` (its ops that are the same for every thread go
        before it); its values read elsewhere go to buffers, and `tail`'s values into theirs."""
        kept = []
        marker = _i64(0).owner
        for op in stretch:
            if op.name.startswith(_PURE_PREFIXES) and not op.regions and \
                    all(self._is_uniform_chain(v, None) for v in op.operands):
                op.move_before(marker)
                self.uniform.update(op.results)
            else:
                kept.append(op)
        marker.erase()
        stretch[:] = kept
        if not stretch and not tail:
            return
        loaded = None if tail else self._square_of(stretch)
        if loaded is not None:
            self._squares(stretch, loaded)
            return
        tl, end = self._thread_loop()
        i = tl.induction_variable
        mapping = {self.tid: i}
        with ir.InsertionPoint(end), self.loop.location:
            self._load_homes(stretch, i, mapping, extra=tail[0] if tail else ())
        for op in stretch:
            op.move_before(end)
        self._remap(stretch, mapping)
        with ir.InsertionPoint(end), self.loop.location:
            for op in stretch:
                for r in op.results:
                    if r in self.home:
                        continue
                    readers = [u.owner.operation for u in r.uses]
                    if tail:  # the yield goes: the tail stores its values
                        readers = [o for o in readers if o != tail[2]]
                    if any(not is_inside(o, tl.operation) for o in readers):
                        buf = self._buffer(r.type)
                        self._store(r, buf, i)
                        self.home[r] = ("spill", buf)
            if tail:
                for v, buf in zip(tail[0], tail[1]):
                    value = mapping.get(v) or (i if v == self.tid else v)
                    self._store(value, buf, i)

    def _square_of(self, stretch):
        """The vector a stretch loads for each thread and nothing else (its other values are read in it only; it
        writes nothing), when the next stretch takes it apart lane by lane (_loads_lanes): the stretch then runs
        for a square of threads at once (_squares). Else None."""
        made = [r for op in stretch for r in op.results if r in self.lane_rows]
        if len(made) != 1 or ops_named_all(stretch, _EFFECTS):
            return None
        for op in stretch:
            for r in op.results:
                if r != made[0] and any(not any(is_inside(u.owner.operation, o) for o in stretch) for u in r.uses):
                    return None
        return made[0]

    def _squares(self, stretch, value) -> None:
        """The stretch making `value` (_square_of) for each `lanes` threads of the block, unrolled, its vectors
        transposed in registers into `value`'s lane-major buffer (lanes * log2(lanes) two-vector shuffles: a
        shuffle for ~4 elements where storing lane by lane is a store an element, and no buffer between); the
        block's last threads that fill no square run it in a loop, storing lane by lane."""
        vector_t = ir.VectorType(value.type)
        lanes, align = vector_t.shape[0], _bytes(vector_t.element_type)
        buf = self._buffer(value.type)
        squares = scf.ForOp(self.start, self.stop, _i64(lanes))
        with ir.InsertionPoint(squares.body), self.loop.location:
            first = squares.induction_variable
            full = arith.CmpIOp(arith.CmpIPredicate.sle, arith.AddIOp(first, _i64(lanes)).result, self.stop).result
            branch = scf.IfOp(full, has_else=True)
            with ir.InsertionPoint(branch.then_block):
                rows = []
                for t in range(lanes):
                    thread = arith.AddIOp(first, _i64(t)).result if t else first
                    mapping = {self.tid: thread}
                    self._load_homes(stretch, thread, mapping)
                    for op in stretch:
                        copy = op.clone()
                        self._remap([copy], mapping)
                        mapping.update(zip(op.results, copy.results))
                    rows.append(mapping[value])
                for lane, column in enumerate(_transposed(rows, vector_t)):
                    llvm.store(column, self._slot(buf.ptr, first, vector_t.element_type, lane), alignment=align)
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                rest = scf.ForOp(first, self.stop, _i64(1))
                with ir.InsertionPoint(rest.body):
                    end = scf.YieldOp([])
                i = rest.induction_variable
                mapping = {self.tid: i}
                with ir.InsertionPoint(end):
                    self._load_homes(stretch, i, mapping)
                for op in stretch:
                    op.move_before(end)
                self._remap(stretch, mapping)
                with ir.InsertionPoint(end):
                    self._store(value, buf, i)
                scf.YieldOp([])
            scf.YieldOp([])
        self.home[value] = ("spill", buf)

    def _uniform_loop(self, op) -> None:
        """`op`, a loop whose bounds are uniform: its carried values in per-thread buffers, its body a region."""
        src = op.regions[0].blocks[0]
        inits = list(op.operands)[3:]
        state = [self._buffer(r.type) for r in op.results]
        if inits:  # the initial values into the state buffers
            tl, end = self._thread_loop()
            i = tl.induction_variable
            with ir.InsertionPoint(end), self.loop.location:
                mapping = {}
                self._load_homes([], i, mapping, extra=inits)
                for v, buf in zip(inits, state):
                    value = mapping.get(v) or (i if v == self.tid else v)
                    self._store(value, buf, i)
        lo, hi, step = list(op.operands)[:3]
        outer = scf.ForOp(lo, hi, step)
        with ir.InsertionPoint(outer.body), op.location:
            src.arguments[0].replace_all_uses_with(outer.induction_variable)
            self.uniform.add(outer.induction_variable)
            for a, buf in zip(list(src.arguments)[1:], state):
                self.home[a] = ("state", buf)
            body = [o.operation for o in src.operations]
            yielded = list(body[-1].operands)
            # the carried values for the next iteration, stored by the body's last stretch: a thread reads its
            # state in the stretches before, and its own slot only
            self._region(body[:-1], (yielded, state, body[-1]) if yielded else None)
            scf.YieldOp([])
        for r, buf in zip(op.results, state):
            self.home[r] = ("state", buf)
        self.dead.append(op)  # its results are read through the buffers; it goes once no op refers to them

    def _consecutive(self, load, steps) -> bool:
        """Whether the load's address is the same for every thread or one element further a thread."""
        step = self._thread_step(load.operands[0], steps)
        return step is not None and step in (0, _bytes(load.results[0].type))

    def _thread_step(self, value, memo):
        """How much `value` grows from one thread to the next (bytes for an address), None when not known to be
        a constant amount. The induction variable of a loop whose bounds are the same for every thread (an
        adjoint's reverse loop over a tape inside a uniform loop too) and values from outside the thread loop do
        not grow."""
        if value in memo:
            return memo[value]
        memo[value] = None  # (a cycle through a loop's carried values: not known)
        op = _op_of(value)
        if value == self.tid:
            step = 1
        elif op is None:
            holder = value.owner.owner
            holder = holder.operation if isinstance(holder, ir.OpView) else holder
            first = value.owner.arguments[0] if len(value.owner.arguments) else None
            step = 0 if value == first and holder.name == "scf.for" and \
                all(self._thread_step(b, memo) == 0 for b in list(holder.operands)[:3]) else None
        elif _ORIGINAL not in op.attributes:
            step = 0
        elif op.regions:
            step = None
        else:
            steps = [self._thread_step(v, memo) for v in op.operands]
            constants = [_constant(v) for v in op.operands]
            step = None
            if None in steps:
                pass
            elif op.name in ("arith.trunci", "arith.extsi", "arith.extui", "arith.index_cast"):
                step = steps[0]
            elif op.name == "arith.addi":
                step = steps[0] + steps[1]
            elif op.name == "arith.subi":
                step = steps[0] - steps[1]
            elif op.name == "arith.muli" and (constants[0] is not None or constants[1] is not None):
                step = steps[0] * constants[1] if constants[1] is not None else steps[1] * constants[0]
            elif op.name == "llvm.getelementptr" and len(op.operands) == 2:
                scale = _bytes(ir.TypeAttr(op.attributes["elem_type"]).value)
                step = None if scale is None else steps[0] + steps[1] * scale
            elif not any(steps):
                step = 0  # made of values the same for every thread
        memo[value] = step
        return step

    def _block_size(self) -> ir.Value:
        """BLOCK (STRIDED_BLOCK when a uniform loop's loads walk per-thread stretches), or with stack arrays the
        largest power of two <= that whose arrays fit STACK_ARRAY_BUDGET."""
        size = _i64(STRIDED_BLOCK if self.strided else BLOCK)
        if not self.stack_arrays:
            return size
        per_thread = _i64(1)
        for sa in self.stack_arrays:
            per_thread = arith.AddIOp(per_thread, arith.MulIOp(sa.alloca.operands[0], _i64(sa.elem)).result).result
        fit = arith.MaxSIOp(arith.DivSIOp(_i64(STACK_ARRAY_BUDGET), per_thread).result, _i64(1)).result
        fit = arith.MinSIOp(fit, size).result
        floor_log2 = arith.SubIOp(_i64(63), math.CountLeadingZerosOp(fit).result).result
        return arith.ShLIOp(_i64(1), floor_log2).result


def _transposed(rows, vector_t) -> list:
    """The columns of the square matrix whose rows are `rows` (n vectors of n lanes, n a power of two): at each
    scale b (n/2, ..., 2, 1) the off-diagonal b x b blocks of each 2b x 2b block swap places, i.e. bit b of an
    element's row and of its column are exchanged; after every scale, row and column are."""
    n = len(rows)
    rows = list(rows)
    b = n // 2
    while b:
        for i in range(n):
            if i & b:
                continue
            low = [j if not j & b else n + j - b for j in range(n)]
            high = [j + b if not j & b else n + j for j in range(n)]
            rows[i], rows[i + b] = (llvm.shufflevector(vector_t, rows[i], rows[i + b], low),
                                    llvm.shufflevector(vector_t, rows[i], rows[i + b], high))
        b //= 2
    return rows


@dataclass(frozen=True)
class _Lanes:
    """A vector value's buffer: lane k of thread slot t at element k * (the block's most threads) + t."""
    ptr: ir.Value
    lanes: int
    element_type: ir.Type


def _constant(value: ir.Value):
    """The integer `value` is, through a descriptor's fields (an array's stride fixed at the entry), else None."""
    op = _op_of(value)
    if op is not None and op.name == "llvm.extractvalue":
        position = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
        container = _op_of(op.operands[0])
        while container is not None and container.name == "llvm.insertvalue":
            if list(ir.DenseI64ArrayAttr(container.attributes["position"])) == position:
                return _constant(container.operands[1])
            container = _op_of(container.operands[0])
        return None
    if op is None or op.name not in ("arith.constant", "llvm.mlir.constant"):
        return None
    attr = op.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _bytes(t: ir.Type):
    """The size of a scalar or vector of them in memory, None for other types."""
    if isinstance(t, ir.VectorType):
        element = _bytes(ir.VectorType(t).element_type)
        return None if element is None else element * ir.VectorType(t).shape[0] if ir.VectorType(t).rank == 1 \
            else None
    if isinstance(t, ir.FloatType):
        return ir.FloatType(t).width // 8
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).width % 8 == 0:
        return ir.IntegerType(t).width // 8
    return None


def ops_named_all(ops, names) -> list:
    return [found for op in ops for found in ops_named(op, names)]


def _root(pointer):
    """The array descriptor an address points into (its data pointer's GEP chain), None when not one."""
    while True:
        op = _op_of(pointer)
        if op is None:
            return None
        if op.name == "llvm.getelementptr":
            pointer = op.operands[0]
            continue
        if op.name == "llvm.extractvalue" and list(ir.DenseI64ArrayAttr(op.attributes["position"])) == [0]:
            return op.operands[0]
        return None


# ops with an effect beyond their results: a stretch holding one runs in a loop over threads, in their order
_EFFECTS = {"llvm.store", "llvm.atomicrmw", "llvm.cmpxchg", "llvm.call", "func.call", "llvm.intr.memcpy",
            "llvm.intr.memset"}

# ops a dead loop may hold: no effect but their results (loads read memory nothing in the loop writes)
_NO_EFFECT = _PURE_PREFIXES + ("llvm.load", "llvm.getelementptr", "llvm.insertvalue", "llvm.mlir.undef", "scf.yield",
                               "scf.for", "scf.if", "llvm.mlir.poison", "llvm.mlir.zero")


def _erase_dead_loops(root) -> None:
    """Erases the loops under `root` whose results nothing reads and whose bodies have no effect (an adjoint's
    replay of a loop whose value only a skipped store took): canonicalize would, after this pass, but a
    loop this pass rewrote keeps its state in buffers and is no longer dead."""
    changed = True
    while changed:
        changed = False
        for op in ops_named(root, {"scf.for"}):
            if op == root or any(list(r.uses) for r in op.results):
                continue
            if all(o.name.startswith(_NO_EFFECT) for o in ops_named(op, lambda n: True) if o != op):
                op.erase()
                changed = True
                break


class CpuInterchangeLoops(registry.CpuInterchangeLoops):
    def run(self, module):
        for loop in [op for op in ops_named(module, {"scf.for"}) if THREAD_LOOP_ATTR in op.attributes]:
            entry = loop.parent
            while entry.name != "func.func":
                entry = entry.parent
            change = _Interchange(entry, loop)
            if change.applies():
                change.apply()
            else:
                for op in ops_named(loop, lambda n: True):
                    del op.attributes[_ORIGINAL]
