"""Finding ops in a module: what the passes share (the registry, passes/registry.py, imports no MLIR)."""

from __future__ import annotations

from mlir import ir

from . import op_finder


def is_inside(op: ir.Operation, root: ir.Operation) -> bool:
    """Whether `op` is `root` or nested in one of its regions."""
    while op is not None:
        if op == root:
            return True
        parent = op.parent
        op = parent if parent is not None and parent.name != "builtin.module" else None
    return False


# ops that live only directly in a symbol table (a module): a search for them need not enter function bodies
_SYMBOL_TABLE_LEVEL = frozenset({"func.func", "llvm.func", "llvm.mlir.global", "gpu.func"})
_SYMBOL_TABLES = frozenset({"builtin.module", "gpu.module"})


def ops_named(root: ir.Operation, names) -> list:
    """All ops under `root` whose name is in `names` (a set or a predicate), in pre-order."""
    if not callable(names) and names and names <= _SYMBOL_TABLE_LEVEL and root.name in _SYMBOL_TABLES:
        # a kernel inlined from a mesh query is ~10,000 ops: a walk calls Python for each (~30 ms a search)
        return _symbols_named(root, names)
    root = root.operation
    if not len(root.regions):  # an op without regions (most of those warp-inline moves): no walk to set up
        return [root] if (names(root.name) if callable(names) else root.name in names) else []
    if not callable(names):
        found = op_finder.find(root, names)  # (a walk in native code: None where its library is missing)
        if found is not None:
            return found
    found = []
    # (called for each op under root: the set's test written out, no lambda between; names bound as locals)
    if callable(names):
        def visit(op, test=names, add=found.append, advance=ir.WalkResult.ADVANCE):
            if test(op.name):
                add(op)
            return advance
    else:
        def visit(op, names=names, add=found.append, advance=ir.WalkResult.ADVANCE):
            if op.name in names:
                add(op)
            return advance

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _symbols_named(table: ir.Operation, names) -> list:
    found = []
    for region in table.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                if op.name in names:
                    found.append(op)
                elif op.name in _SYMBOL_TABLES:
                    found += _symbols_named(op, names)
    return found


def kernels(module: ir.Operation) -> list:
    """The `func.func` ops marked as kernels."""
    return [op for op in ops_named(module, {"func.func"}) if "warp.kernel" in op.attributes]


def innermost_loops(function: ir.Operation) -> list:
    """The scf.for ops under `function` whose bodies hold no loop (scf.for, scf.while) directly."""
    loops = []

    def visit(op):
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit, ir.WalkOrder.POST_ORDER)
    return [loop for loop in loops if not any(o.operation.name in ("scf.for", "scf.while")
                                              for o in loop.regions[0].blocks[0].operations)]


def depends_on_load(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether `value` is computed by ops directly in `loop`'s body from a value loaded there (llvm.load)."""
    pending, seen = [value], set()
    while pending:
        owner = pending.pop().owner
        if isinstance(owner, ir.Block):
            continue
        op = owner.operation
        if op.parent != loop or op in seen:
            continue
        if op.name == "llvm.load":
            return True
        seen.add(op)
        pending.extend(op.operands)
    return False
