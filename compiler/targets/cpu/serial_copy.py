"""warp-cpu-serial-copy: each CPU entry with atomics gets a copy `<entry>_serial` whose atomics are plain
read-modify-writes, which the runtime calls when a launch runs on one thread.

An entry whose `<entry>_private` copy (warp-cpu-privatize-scatter) already has every atomic plain (all its atomics
sum into arrays it only sums into: a mass-spring's forces, most adjoints' gradients) gets no `_serial` copy: that
copy would be the same function, and each copy is another full body for LLVM (an adjoint library is mostly its
entries' copies). The runtime then runs `_private` on one thread (runtime/cpu.py: `_serial`, else `_private`).
An adjoint library (`private-serves`) gets no `_serial` copy wherever there is a `_private` one: the atomics that
copy keeps (into struct fields' gradient arrays) stay atomic on one thread, where they cost more but are still
right, and the library is one body fewer (diffray's draw adjoint: three to two).

A launch on one thread has nothing to race with; Warp's CPU atomics are plain too, and a
`lock cmpxchg` loop per float atomic costs several times more. Runs after
warp-cpu-privatize-atomics, so the copy keeps the private accumulators (and only their flush
becomes plain).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...dialects import llvm
from ...passes import registry
from ...passes.ir_walk import ops_named
from .cpu_entry import cpu_entries
from .privatize_scatter import private_name


def serial_name(entry: str) -> str:
    """The copy of an entry with plain read-modify-writes for atomics, for launches on one thread."""
    return f"{entry}_serial"


# atomicrmw kinds and the plain operation a serial run does instead (others stay atomic)
_SERIAL_RMW = {"add": arith.AddIOp, "sub": arith.SubIOp, "fadd": arith.AddFOp, "fsub": arith.SubFOp,
               "max": arith.MaxSIOp, "min": arith.MinSIOp, "umax": arith.MaxUIOp, "umin": arith.MinUIOp,
               "fmax": arith.MaxNumFOp, "fmin": arith.MinNumFOp, "fmaximum": arith.MaximumFOp,
               "fminimum": arith.MinimumFOp, "_and": arith.AndIOp, "_or": arith.OrIOp, "_xor": arith.XOrIOp}


def _serial_changes(rmw) -> bool:
    kind = llvm.AtomicBinOp(ir.IntegerAttr(rmw.attributes["bin_op"]).value).name
    return kind in _SERIAL_RMW or kind == "xchg"


def add_serial_copy(entry, private=None, private_serves: bool = False) -> bool:
    """Clones `entry` as `<entry>_serial` with each atomicrmw as load, op, store (the old value is the
    result, as atomicrmw's). False when the entry has no atomics, or when `private` (its `_private` copy, or
    None) has none this copy would make plain, or is there and `private_serves`: no copy."""
    if not ops_named(entry.operation, {"llvm.atomicrmw"}):
        return False
    if private is not None and (private_serves or
                                not any(_serial_changes(r) for r in ops_named(private, {"llvm.atomicrmw"}))):
        return False
    copy = entry.operation.clone(ip=ir.InsertionPoint.after(entry))
    name = ir.StringAttr(entry.attributes["sym_name"]).value
    copy.attributes["sym_name"] = ir.StringAttr.get(serial_name(name))
    for rmw in ops_named(copy, {"llvm.atomicrmw"}):
        if not _serial_changes(rmw):
            continue
        op = _SERIAL_RMW.get(llvm.AtomicBinOp(ir.IntegerAttr(rmw.attributes["bin_op"]).value).name)
        ptr, value = rmw.operands[0], rmw.operands[1]
        with ir.InsertionPoint(rmw), rmw.location:
            old = llvm.load(value.type, ptr)
            llvm.store(value if op is None else op(old, value).result, ptr)
        rmw.results[0].replace_all_uses_with(old)
        rmw.erase()
    return True


class CpuSerialCopy(registry.CpuSerialCopy):
    def run(self, module):
        functions = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                     for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"}
        for entry in cpu_entries(module):
            name = ir.StringAttr(entry.attributes["sym_name"]).value
            add_serial_copy(entry, functions.get(private_name(name)), self.private_serves)
