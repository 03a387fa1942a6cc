"""Which array arguments a kernel reads and writes, and in which order: what a recording wp.Tape needs to
save the values a launch overwrites (python/mlwarp/autodiff/tape.py).

A kernel's adjoint replays its loads without its stores, so it reads its arrays as they are when the adjoint
runs. An array the kernel reads before writing it (`a[i] = a[i] * a[i]`) must then hold its values from before
the launch; one it writes before reading it (`t[i] = x[i]; y[i] = t[i] * t[i]`) the values after it. The
analysis runs on the kernel after warp-opt (its @wp.func calls inlined), walking its ops in program order; a
loop's body is walked twice, as its second iteration's loads follow its first's stores.

An array is named by its path from the kernel's arguments: [k] is argument k, [k, f, ...] the array field f of
the struct argument k (nested structs: more fields); views and slices of an array are the array. Arrays that
are not reached that way (the thread's wp.zeros, an array made from a pointer or taken from a mesh id) are not
the launch's arguments and are left out.
"""

from __future__ import annotations

from mlir import ir

from ..compiler.dialects.warp.rules import SIDE_EFFECTS

# ops that make an array of an array (or of a struct) without touching the elements, or that read only the
# array's descriptor
_DERIVED = frozenset({"warp.view", "warp.slice", "warp.struct_get"})
_DESCRIPTOR_ONLY = frozenset({"warp.array_dim", "warp.array_data", "warp.address"})
_LOOPS = frozenset({"scf.for", "scf.while", "scf.parallel", "scf.forall"})


def _is_array_like(t: ir.Type) -> bool:
    text = str(t)
    return text.startswith("!warp.array") or text.startswith("!warp.struct")


def _path(v: ir.Value, entry: ir.Block):
    """The argument path of the array (or struct) `v`, or None when it is not one of the kernel's arguments."""
    fields = []
    while True:
        if isinstance(v, ir.BlockArgument):
            if v.owner == entry:
                return (v.arg_number, *reversed(fields))
            return None
        op = v.owner
        if op.name in ("warp.view", "warp.slice"):
            v = op.operands[0]
        elif op.name == "warp.struct_get":
            fields.append(ir.IntegerAttr(op.attributes["field"]).value)
            v = op.operands[0]
        else:
            return None


class _Walk:
    def __init__(self, entry: ir.Block, natives=frozenset()):
        self.entry = entry
        self.natives = natives  # the @wp.func_native declarations' symbols: C++ that may read and write
        self.written: set = set()
        self.reads_first: set = set()
        self.reads_after: set = set()

    def op(self, op: ir.Operation) -> None:
        name = op.name
        if name not in _DERIVED and name not in _DESCRIPTOR_ONLY:
            paths = [p for p in (_path(v, self.entry) for v in op.operands if _is_array_like(v.type)) if p is not None]
            if name in SIDE_EFFECTS:
                self.written.update(paths)
            elif name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in self.natives:
                for p in paths:
                    (self.reads_after if self._was_written(p) else self.reads_first).add(p)
                self.written.update(paths)
            else:  # loads, tile loads, anything else handed an array: it may read the elements
                for p in paths:
                    (self.reads_after if self._was_written(p) else self.reads_first).add(p)
        for _ in range(2 if name in _LOOPS else 1):
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        self.op(inner.operation)

    def _was_written(self, path) -> bool:
        # a store into a struct argument's field and a read of the whole struct (or the reverse) meet too
        return any(w[:len(path)] == path or path[:len(w)] == w for w in self.written)


def kernel_array_access(module: ir.Module, name: str) -> dict | None:
    """{"reads_first": paths read before any store into them, "reads_after": paths read after one (a path
    can be in both),
    "writes": paths stored into (stores, atomics, tile stores)}, each a sorted list of paths; None when the
    module has no function `name`."""
    natives = frozenset(ir.StringAttr(op.operation.attributes["sym_name"]).value for op in module.body.operations
                        if op.operation.name == "func.func" and "warp.native" in op.operation.attributes)
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            entry = op.regions[0].blocks[0]
            walk = _Walk(entry, natives)
            for inner in entry.operations:
                walk.op(inner.operation)
            return {"reads_first": sorted(list(p) for p in walk.reads_first),
                    "reads_after": sorted(list(p) for p in walk.reads_after),  # (some read first too)
                    "writes": sorted(list(p) for p in walk.written)}
    return None
