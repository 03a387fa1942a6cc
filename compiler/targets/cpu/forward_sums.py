"""warp-cpu-forward-sums: in a loop of plain scattered sums (the `_private` and `_serial` copies' read-modify-
writes of atomics, warp-cpu-privatize-scatter and warp-cpu-serial-copy), a sum into the element the previous
sum wrote takes that sum's result from a register instead of reading it back from memory.

A mass-spring's spring s adds its force into particle s and subtracts it from particle s + 1; spring s + 1 then
adds into particle s + 1. On one thread those are a chain through memory: each read waits for the store before
it to be forwarded (~7 cycles on x86 cores, plus the add), so half the springs ran at the chain's pace (a
scatter of 20,000 springs: 35 us, where each sum alone costs 1-2 cycles). With the previous sum's address and
result at hand, the chain is one add per spring:

    old = (address == previous address) ? previous result : load address     (a branch: the load is not run)

Every sum is still stored, in the same order, with the same operands: the results are the same bits. Only the
previous sum is asked (its address equal: nothing came between it and this one), and only in loops that write
memory through no other op (loads and arithmetic around the sums may be anything), so a value taken from a
register is the one memory holds.

A sum is `load p; add/sub (the loaded value first); store p` (float or integer). Sums one after another into
one base address at distinct constant offsets (a vec3's three components) are one group: a group takes its
predecessor's results when both have the same components (offsets and types) and the same base address. The
loop's first group asks the previous iteration's last group, through stack slots LLVM promotes to registers.
A loop is changed only when some group's address depends on a value loaded in the loop (a scattered index):
sums at addresses computed from the thread index alone never meet the previous one, and the branch would keep
LLVM from vectorising the loop.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import llvm
from ...passes import registry
from ...passes.ir_walk import depends_on_load, innermost_loops

SUM_OPS = frozenset({"arith.addf", "arith.subf", "arith.addi", "arith.subi"})
# copies of an entry whose sums are plain (warp-cpu-privatize-scatter, warp-cpu-serial-copy)
PLAIN_SUM_SUFFIXES = ("_private", "_serial")
# ops that write no memory, besides the sums' stores (anything else in a loop leaves it alone)
_READ_ONLY_PREFIXES = ("arith.", "math.", "index.", "ub.", "llvm.mlir.")
_READ_ONLY = frozenset({
    "llvm.load", "llvm.getelementptr", "llvm.extractvalue", "llvm.insertvalue", "llvm.extractelement",
    "llvm.insertelement", "llvm.shufflevector", "llvm.bitcast", "llvm.ptrtoint", "llvm.inttoptr", "llvm.icmp",
    "llvm.fcmp", "llvm.select", "llvm.sext", "llvm.zext", "llvm.trunc", "llvm.intr.assume", "vector.extract",
    "vector.insert", "vector.broadcast", "vector.from_elements", "vector.shuffle", "vector.splat",
    "vector.extractelement", "vector.insertelement", "vector.fma", "vector.reduction", "scf.if", "scf.yield"})


def _op(owner):
    return owner.operation if hasattr(owner, "operation") else owner


def _defining_op(value):
    owner = value.owner
    return None if isinstance(owner, ir.Block) else _op(owner)


class _Sum:
    """One plain read-modify-write: `load`, `combine` (the loaded value its first operand), `store`."""

    def __init__(self, load, combine, store):
        self.load, self.combine, self.store = load, combine, store
        self.ptr = load.operands[0]
        self.base, self.offset = _base_and_offset(self.ptr)
        self.size = _bytes(load.results[0].type)

    @property
    def result(self):
        return self.combine.results[0]


class _Group:
    """Sums one after another into one base address at distinct constant offsets (a vector's components)."""

    def __init__(self, first: _Sum):
        self.sums = [first]

    @property
    def base(self):
        return self.sums[0].base

    def shape(self) -> tuple:
        return tuple((s.offset, str(s.load.results[0].type)) for s in self.sums)

    def accepts(self, s: _Sum) -> bool:
        """Whether `s` sums into the same base, at bytes no sum of the group touches."""
        return s.base == self.base and all(s.offset + s.size <= t.offset or t.offset + t.size <= s.offset
                                           for t in self.sums)


def _bytes(t: ir.Type) -> int:
    """A scalar's size in bytes; a type of no known width counts as overlapping everything."""
    width = getattr(t, "width", None)
    return max(1, width // 8) if isinstance(t, (ir.IntegerType, ir.FloatType)) and width else 1 << 30


def _base_and_offset(ptr):
    """(base pointer, constant byte offset) of a sum's address: `getelementptr base[c]` over i8, else (ptr, 0)."""
    op = _defining_op(ptr)
    if op is not None and op.name == "llvm.getelementptr" and len(op.operands) == 1 and \
            str(ir.TypeAttr(op.attributes["elem_type"]).value) == "i8":
        indices = list(ir.DenseI32ArrayAttr(op.attributes["rawConstantIndices"]))
        if len(indices) == 1:
            return op.operands[0], indices[0]
    return ptr, 0


def _sum_at(ops: list, k: int):
    """The plain sum starting at ops[k], or None."""
    if k + 2 >= len(ops):
        return None
    load, combine, store = ops[k], ops[k + 1], ops[k + 2]
    if load.name != "llvm.load" or combine.name not in SUM_OPS or store.name != "llvm.store":
        return None
    if not (_plain(load) and _plain(store)):
        return None
    if combine.operands[0] != load.results[0] or store.operands[0] != combine.results[0] or \
            store.operands[1] != load.operands[0]:
        return None
    return _Sum(load, combine, store)


def _plain(access) -> bool:
    """Neither volatile nor atomic (llvm.load / llvm.store carry `ordering` 0: not_atomic)."""
    attributes = access.attributes
    return "volatile_" not in attributes and \
        ("ordering" not in attributes or ir.IntegerAttr(attributes["ordering"]).value == 0)


def _writes_only_through(loop, stores: set) -> bool:
    """Whether every op in `loop`'s body (nested too) writes no memory, but for `stores`."""
    clean = True

    def visit(op):
        nonlocal clean
        name = op.name
        if name == "llvm.store":
            ok = op in stores
        else:
            ok = name in _READ_ONLY or name.startswith(_READ_ONLY_PREFIXES)
        if not ok:
            clean = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    for op in loop.regions[0].blocks[0].operations:
        _op(op).walk(visit, ir.WalkOrder.PRE_ORDER)
        if not clean:
            return False
    return True


def _groups(ops: list) -> list:
    groups, k = [], 0
    while k < len(ops):
        s = _sum_at(ops, k)
        if s is None:
            k += 1
            continue
        if groups and groups[-1].accepts(s):
            groups[-1].sums.append(s)
        else:
            groups.append(_Group(s))
        k += 3
    return groups


def _forward(group: _Group, same_address, previous_results: list | None, state_loads=None) -> None:
    """Replaces the group's loads by `scf.if same_address -> previous results else loads`, placed before its
    first load. `state_loads`: instead of `previous_results`, a function giving them (loads of the stack slots,
    built inside the `then` region)."""
    first = group.sums[0].load
    types = [s.load.results[0].type for s in group.sums]
    i8 = ir.IntegerType.get_signless(8)
    ptr_type = group.base.type
    with ir.InsertionPoint(first), first.location:
        branch = scf.IfOp(same_address, types, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp(state_loads() if state_loads else previous_results)
        with ir.InsertionPoint(branch.else_block):
            loaded = []
            for s in group.sums:
                ptr = group.base if s.offset == 0 else llvm.getelementptr(ptr_type, group.base, [], [s.offset], i8)
                loaded.append(llvm.load(s.load.results[0].type, ptr))
            scf.YieldOp(loaded)
    for s, value in zip(group.sums, branch.results):
        s.load.results[0].replace_all_uses_with(value)
        s.load.erase()


def forward_sums(loop, entry_block) -> bool:
    """Forwards the sums of `loop` (an scf.for) where that is safe and may pay; whether it did."""
    body = loop.regions[0].blocks[0]
    ops = [_op(o) for o in body.operations]
    groups = _groups(ops)
    if not groups:
        return False
    if not any(depends_on_load(g.base, loop) for g in groups):
        return False
    if not _writes_only_through(loop, {s.store for g in groups for s in g.sums}):
        return False
    i64 = ir.IntegerType.get_signless(64)
    first, last = groups[0], groups[-1]
    loop_carried = first.shape() == last.shape()
    if loop_carried:  # the last group's address and results, for the next iteration's first group
        with ir.InsertionPoint.at_block_begin(entry_block), loop.location:
            one = arith.ConstantOp(i64, 1).result
            ptr_type = llvm.PointerType.get()
            base_slot = llvm.alloca(ptr_type, one, i64, alignment=8)
            value_slots = [llvm.alloca(ptr_type, one, s.load.results[0].type) for s in last.sums]
        with ir.InsertionPoint(loop), loop.location:
            llvm.store(arith.ConstantOp(i64, 0).result, base_slot)  # no address before the loop's first sum
        with ir.InsertionPoint.after(last.sums[-1].store), loop.location:
            llvm.store(llvm.ptrtoint(i64, last.base), base_slot)
            for s, slot in zip(last.sums, value_slots):
                llvm.store(s.result, slot)
    for k in range(len(groups) - 1, -1, -1):  # last first: the state stores above stay after the last group
        group = groups[k]
        if k == 0:
            if not loop_carried:
                continue
            with ir.InsertionPoint(group.sums[0].load), group.sums[0].load.location:
                previous = llvm.load(i64, base_slot)
                same = arith.CmpIOp(arith.CmpIPredicate.eq, llvm.ptrtoint(i64, group.base), previous).result
            types = [s.load.results[0].type for s in group.sums]
            _forward(group, same, None, lambda: [llvm.load(t, slot) for t, slot in zip(types, value_slots)])
            continue
        before = groups[k - 1]
        if before.shape() != group.shape():
            continue
        with ir.InsertionPoint(group.sums[0].load), group.sums[0].load.location:
            same = arith.CmpIOp(arith.CmpIPredicate.eq, llvm.ptrtoint(i64, group.base),
                                llvm.ptrtoint(i64, before.base)).result
        _forward(group, same, [s.result for s in before.sums])
    return True


class CpuForwardSums(registry.CpuForwardSums):
    def run(self, module):
        for function in module.regions[0].blocks[0].operations:
            function = _op(function)
            if function.name != "func.func" or not function.regions[0].blocks:
                continue
            if not ir.StringAttr(function.attributes["sym_name"]).value.endswith(PLAIN_SUM_SUFFIXES):
                continue
            entry_block = function.regions[0].blocks[0]
            for loop in innermost_loops(function):
                forward_sums(loop, entry_block)
