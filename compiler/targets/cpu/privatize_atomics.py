"""warp-cpu-privatize-atomics: an atomic add to one address for the whole launch (`loss[0] += ...`)
accumulates in a private variable of the CPU entry's thread loop, and the loop adds it once at its end.

Every thread adding into one location makes the cores fight over its cache line (and a float
atomic is a compare-exchange loop); Warp's CPU runtime runs such kernels on one core. Here the
runtime's threads each run a chunk of the launch: the chunk's contributions are summed in a
register (the accumulator is an alloca LLVM promotes; its adds are `reassoc`, so the vectoriser
may split the sum into lanes) and flushed with one atomic add per chunk.

An atomicrmw `add`/`fadd` (f32, f64, i32, i64) inside a thread loop qualifies when its old value is
unused, its address does not change in the loop (computed only from values defined outside it by ops
without memory effects), and the loop touches that array only with such adds (a thread reading it
back sees every earlier thread's contribution on Warp's CPU, which runs threads in order; any other
atomic on it, min/max/exchange/cas, does not commute with a sum moved to the end of the chunk). The flush runs only when the accumulator left its identity (-0.0,
the float identity; 0): an address the loop guarded (debug bounds checks, a branch) is touched
only if the loop touched it. The order of the additions changes, as it does between runs of a
parallel launch with atomics.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import llvm
from ...passes import registry
from ...passes.ir_walk import is_inside, ops_named
from .cpu_entry import cpu_entries

_KINDS = {"fadd": ("f32", "f64"), "add": ("i32", "i64")}
_PURE_PREFIXES = ("arith.", "llvm.getelementptr", "llvm.extractvalue", "llvm.insertvalue", "llvm.mlir.constant",
                  "llvm.mlir.zero", "llvm.mlir.undef", "llvm.mlir.poison", "llvm.bitcast")


def _thread_loops(entry) -> list:
    """The entry's outermost scf.for loops: directly in its body, or in its stride-versioning scf.if."""
    loops = []
    for op in entry.regions[0].blocks[0].operations:
        if op.operation.name == "scf.for":
            loops.append(op.operation)
        elif op.operation.name == "scf.if":
            for region in op.operation.regions:
                for block in region.blocks:
                    loops += [o.operation for o in block.operations if o.operation.name == "scf.for"]
    return loops


def _invariant_chain(value, loop, chain: list) -> bool:
    """True when `value` is the same in every iteration of `loop`; `chain` collects the ops inside the
    loop that compute it (operands first), to clone after the loop."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return not is_inside(owner.owner, loop)
    op = owner.operation if hasattr(owner, "operation") else owner
    if not is_inside(op, loop):
        return True
    if not op.name.startswith(_PURE_PREFIXES) or op.regions and len(op.regions):
        return False
    for operand in op.operands:
        if not _invariant_chain(operand, loop, chain):
            return False
    if op not in chain:
        chain.append(op)
    return True


def _root(ptr):
    """The array a pointer points into: the GEP bases and descriptor fields traced back to the value they
    come from (a kernel parameter, or a struct parameter holding the array)."""
    while True:
        owner = ptr.owner
        if isinstance(owner, ir.Block):
            return ptr
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.name in ("llvm.getelementptr", "llvm.extractvalue"):
            ptr = op.operands[0]
        else:
            return ptr


_MEMORY = {"llvm.load", "llvm.store", "llvm.atomicrmw", "llvm.cmpxchg"}


def _bin_op(rmw) -> str:
    return llvm.AtomicBinOp(ir.IntegerAttr(rmw.attributes["bin_op"]).value).name


def _only_summed_into(root, kind: str, loop) -> bool:
    """No access in `loop` to the array at `root` but atomic adds of `kind` whose old value is unused: a
    thread that read it back would miss its chunk's sum until the flush (Warp's CPU runs threads in order),
    and another atomic (min, max, exchange, ...) would not commute with the sum moved after the loop
    (`add 1.0` then `min 0.5` from every thread must end at 0.5, not at the flushed sum)."""
    for op in ops_named(loop, _MEMORY):
        ptr = op.operands[1] if op.name == "llvm.store" else op.operands[0]
        if _root(ptr) != root:
            continue
        if op.name != "llvm.atomicrmw" or _bin_op(op) != kind or list(op.results[0].uses):
            return False
    return True


class PrivatizeAtomics(registry.PrivatizeAtomics):
    def run(self, module):
        for entry in cpu_entries(module):
            for loop in _thread_loops(entry):
                for rmw in ops_named(loop, {"llvm.atomicrmw"}):
                    self._privatize(entry, loop, rmw)

    def _privatize(self, entry, loop, rmw) -> None:
        kind = _bin_op(rmw)
        ptr, value = rmw.operands[0], rmw.operands[1]
        t = value.type
        if str(t) not in _KINDS.get(kind, ()) or len(list(rmw.results[0].uses)):
            return
        chain = []
        if not _invariant_chain(ptr, loop, chain) or not _only_summed_into(_root(ptr), kind, loop):
            return
        is_float = kind == "fadd"
        bits = ir.IntegerType.get_signless(t.width)
        loc = rmw.location
        with loc:
            with ir.InsertionPoint.at_block_begin(entry.regions[0].blocks[0]):
                one = llvm.mlir_constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1))
                acc = llvm.alloca(ir.Type.parse("!llvm.ptr"), one, ir.TypeAttr.get(t))
            with ir.InsertionPoint(loop):
                identity = self._identity(t, is_float)
                llvm.store(identity, acc)
            with ir.InsertionPoint(rmw):
                old = llvm.load(t, acc)
                if is_float:
                    total = llvm.fadd(old, value, fastmath_flags=ir.Attribute.parse("#llvm.fastmath<reassoc>"))
                else:
                    total = llvm.add(old, value, overflow_flags=ir.Attribute.parse("#llvm.overflow<none>"))
                llvm.store(total, acc)
            with ir.InsertionPoint.after(loop):
                summed = llvm.load(t, acc)
                as_bits = llvm.bitcast(bits, summed) if is_float else summed
                identity_bits = llvm.bitcast(bits, self._identity(t, is_float)) if is_float else \
                    self._identity(t, is_float)
                touched = arith.CmpIOp(arith.CmpIPredicate.ne, as_bits, identity_bits).result
                flush = scf.IfOp(touched, [], has_else=False)
                with ir.InsertionPoint(flush.then_block):
                    mapping = {}
                    for op in chain:
                        clone = op.clone()
                        for n, operand in enumerate(clone.operands):
                            if operand in mapping:
                                clone.operands[n] = mapping[operand]
                        for a, b in zip(op.results, clone.results):
                            mapping[a] = b
                    target = mapping.get(ptr, ptr)
                    moved = rmw.clone()
                    moved.operands[0] = target
                    moved.operands[1] = summed
                    scf.YieldOp([])
        rmw.erase()

    @staticmethod
    def _identity(t, is_float):
        if is_float:
            return llvm.mlir_constant(ir.FloatAttr.get(t, -0.0))
        return llvm.mlir_constant(ir.IntegerAttr.get(t, 0))
