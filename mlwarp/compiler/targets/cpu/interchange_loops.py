"""warp-cpu-interchange-loops: a loop with thread-invariant bounds in a kernel's body (substeps, a
fixed-count iteration, `for s in range(n)`) becomes the outer loop over a block of threads, so that the
loop's body runs as an innermost loop over the threads of the block, which LLVM vectorises.

LLVM vectorises innermost loops only: with the kernel's own loop inside the thread loop, the thread
loop runs scalar (one sin at a time for `for s in range(n): v = v + a * wp.sin(v)`). Each thread's
iterations are independent of the other threads' (Warp's threads run in no defined order), so the
thread loop can be cut in blocks of BLOCK threads and each block run as

    for each thread i of the block: A(i); state[i] = the loop's initial values
    for s in the loop's range:
        for each thread i of the block: state[i] = body(i, s, state[i])      <- vectorised
    for each thread i of the block: C(i, state[i])

where A is what the kernel does before its loop and C what it does after. Values of A that the loop
body or C reads are kept per thread in stack buffers (BLOCK entries each), as is the loop's carried state.
Each thread computes what it did before, in the same order; only the order between threads changes
(a race between threads can resolve differently, as it can on Warp's GPU). Blocks start at the thread
loop's start (a multiple of the runtime's CHUNK_ALIGN, or a row start) and BLOCK divides CHUNK_ALIGN, so a
thread is in a vector body or a remainder whatever the launch's thread count.

The pass leaves alone: a thread loop whose first top-level loop has bounds computed per thread, a loop
with loops inside its body (its body would not be innermost), a while loop, kernels with stack arrays
(wp.zeros in a kernel, adjoint loop tapes: one storage serves every thread in turn), and values of a
type that is not an LLVM type.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm, scf

from ...passes.registry import Pass, ops_named
from .cpu_entry import THREAD_LOOP_ATTR

BLOCK = 256  # threads per block; divides runtime/cpu.py's CHUNK_ALIGN (1024)
_DYNAMIC_INDEX = -2147483648  # llvm.getelementptr's marker for a dynamic index
_STACK_OPS = {"llvm.alloca", "llvm.intr.stacksave", "llvm.intr.stackrestore"}
_PURE_PREFIXES = ("arith.", "llvm.extractvalue", "llvm.mlir.constant")


def _inside(op: ir.Operation, root: ir.Operation) -> bool:
    while op is not None:
        if op == root:
            return True
        parent = op.parent
        op = parent if parent is not None and parent.name != "builtin.module" else None
    return False


def _defined_inside(value: ir.Value, root: ir.Operation) -> bool:
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner  # a block argument: its block's op
    return _inside(op.operation, root)


def _storable(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.FloatType, ir.VectorType)) or str(t).startswith("!llvm.")


def _uses_within(ops, values: set) -> set:
    """The values of `values` that an op of `ops` (or an op nested in one) uses."""
    used = set()

    def visit(op):
        for operand in op.operands:
            if operand in values:
                used.add(operand)
        return ir.WalkResult.ADVANCE

    for op in ops:
        op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return used


def _remap(ops, mapping: dict) -> None:
    def visit(op):
        for n, operand in enumerate(op.operands):
            new = mapping.get(operand)
            if new is not None:
                op.operands[n] = new
        return ir.WalkResult.ADVANCE

    for op in ops:
        op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def _i64(n: int) -> ir.Value:
    t = ir.IntegerType.get_signless(64)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, n)).result


class _Interchange:
    def __init__(self, entry, thread_loop, inner):
        self.entry, self.loop, self.inner = entry, thread_loop, inner
        body = thread_loop.regions[0].blocks[0]
        ops = [op.operation for op in body.operations]
        k = ops.index(inner)
        self.before, self.after = ops[:k], ops[k + 1:-1]  # the terminator stays
        self.tid = body.arguments[0]

    def applies(self) -> bool:
        inner, loop = self.inner, self.loop
        if len(loop.regions[0].blocks[0].arguments) != 1 or list(loop.results):
            return False
        if not all(self._uniform(v) for v in list(inner.operands)[:3]):
            return False  # bounds computed per thread
        if ops_named(inner, {"scf.for", "scf.while"})[1:]:
            return False
        if ops_named(loop, _STACK_OPS) or self._reads_stack_memory():
            return False
        produced = [r for op in self.before for r in op.results]
        self.read_by_loop = _uses_within(list(inner.regions[0].blocks[0].operations), set(produced))
        self.read_after = _uses_within(self.after, set(produced))
        self.spilled = [v for v in produced if v in self.read_by_loop or v in self.read_after]
        carried = [v.type for v in inner.results]
        return all(_storable(t) for t in carried + [v.type for v in self.spilled])

    def _reads_stack_memory(self) -> bool:
        """Whether the thread loop uses memory allocated outside it on the stack (a wp.zeros array: allocated
        once per entry, used by each thread in turn)."""
        found = []

        def visit(op):
            for v in op.operands:
                if isinstance(v.owner, ir.Block):
                    continue
                if v.owner.operation.name == "llvm.alloca" and not _inside(v.owner.operation, self.loop):
                    found.append(v)
            return ir.WalkResult.ADVANCE

        self.loop.walk(visit, ir.WalkOrder.PRE_ORDER)
        return bool(found)

    def _uniform(self, value, hoist: bool = True) -> bool:
        """True when `value` is the same for every thread: defined outside the thread loop, or computed in its
        body by pure ops from such values (a constant the frontend emitted there, `n - 1`), which are then
        moved before the thread loop."""
        if not _defined_inside(value, self.loop):
            return True
        owner = value.owner
        if isinstance(owner, ir.Block):
            return False
        op = owner.operation
        if op.parent != self.loop or not op.name.startswith(_PURE_PREFIXES) or op.regions:
            return False
        if not all(self._uniform(v, hoist=False) for v in op.operands):
            return False
        if hoist:
            for v in op.operands:
                self._uniform(v)
            op.move_before(self.loop)
            self.before.remove(op)
        return True

    def apply(self) -> None:
        loop, inner = self.loop, self.inner
        ptr = ir.Type.parse("!llvm.ptr")
        entry_block = self.entry.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(entry_block), loop.location:
            count = _i64(BLOCK)
            spill_bufs = [llvm.alloca(ptr, count, v.type, alignment=64) for v in self.spilled]
            state_bufs = [llvm.alloca(ptr, count, r.type, alignment=64) for r in inner.results]
        lo, hi = loop.operands[0], loop.operands[1]
        with ir.InsertionPoint(loop), loop.location:
            blocks = scf.ForOp(lo, hi, count)
            with ir.InsertionPoint(blocks.body):
                start = blocks.induction_variable
                stop = arith.MinSIOp(arith.AddIOp(start, count).result, hi).result
                prologue, prologue_end = self._thread_loop(start, stop)
                steps = scf.ForOp(*list(inner.operands)[:3])
                with ir.InsertionPoint(steps.body):
                    body, body_end = self._thread_loop(start, stop)
                    scf.YieldOp([])
                epilogue, epilogue_end = self._thread_loop(start, stop)
                scf.YieldOp([])

        def slot(buf, i, t):
            offset = arith.SubIOp(i, start).result
            return llvm.getelementptr(ptr, buf, [offset], [_DYNAMIC_INDEX], t, no_wrap_flags=0)

        # A: as before, then its values the rest reads and the loop's initial state into the buffers
        for op in self.before:
            op.move_before(prologue_end)
        _remap(self.before, {self.tid: prologue.induction_variable})
        with ir.InsertionPoint(prologue_end), loop.location:
            i = prologue.induction_variable
            for v, buf in zip(self.spilled, spill_bufs):
                llvm.store(v, slot(buf, i, v.type))
            for v, buf in zip(list(inner.operands)[3:], state_bufs):
                llvm.store(v, slot(buf, i, v.type))
        # the loop's body, per thread of the block
        src = inner.regions[0].blocks[0]
        body_ops = [op.operation for op in src.operations]
        step_ops, step_yield = body_ops[:-1], body_ops[-1]
        i = body.induction_variable
        with ir.InsertionPoint(body_end), loop.location:
            mapping = {self.tid: i, src.arguments[0]: steps.induction_variable}
            for a, buf in zip(list(src.arguments)[1:], state_bufs):
                mapping[a] = llvm.load(a.type, slot(buf, i, a.type))
            for v, buf in zip(self.spilled, spill_bufs):
                if v in self.read_by_loop:
                    mapping[v] = llvm.load(v.type, slot(buf, i, v.type))
        for op in step_ops:
            op.move_before(body_end)
        _remap(step_ops + [step_yield], mapping)
        with ir.InsertionPoint(body_end), loop.location:
            for v, buf in zip(list(step_yield.operands), state_bufs):
                llvm.store(v, slot(buf, i, v.type))
        # C: the loop's results and A's values from the buffers
        i = epilogue.induction_variable
        with ir.InsertionPoint(epilogue_end), loop.location:
            mapping = {self.tid: i}
            for r, buf in zip(inner.results, state_bufs):
                mapping[r] = llvm.load(r.type, slot(buf, i, r.type))
            for v, buf in zip(self.spilled, spill_bufs):
                if v in self.read_after:
                    mapping[v] = llvm.load(v.type, slot(buf, i, v.type))
        for op in self.after:
            op.move_before(epilogue_end)
        _remap(self.after, mapping)
        inner.erase()
        loop.erase()

    @staticmethod
    def _thread_loop(start, stop):
        one = _i64(1)
        loop = scf.ForOp(start, stop, one)
        with ir.InsertionPoint(loop.body):
            end = scf.YieldOp([])
        return loop, end


def _first_uniform_loop(thread_loop):
    for op in thread_loop.regions[0].blocks[0].operations:
        if op.operation.name == "scf.for":
            return op.operation
    return None


@dataclass(frozen=True)
class CpuInterchangeLoops(Pass):
    name = "warp-cpu-interchange-loops"
    description = ("A loop with thread-invariant bounds in a kernel becomes the outer loop over blocks of threads, "
                   "its body an innermost loop over the block's threads (vectorisable)")

    def run(self, module):
        for loop in ops_named(module, {"scf.for"}):
            if THREAD_LOOP_ATTR not in loop.attributes:
                continue
            entry = loop.parent
            while entry.name != "func.func":
                entry = entry.parent
            inner = _first_uniform_loop(loop)
            if inner is None:
                continue
            change = _Interchange(entry, loop, inner)
            if change.applies():
                change.apply()
