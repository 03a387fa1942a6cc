"""Finding ops in a module: what the passes share (the registry, passes/registry.py, imports no MLIR)."""

from __future__ import annotations

from mlir import ir


def is_inside(op: ir.Operation, root: ir.Operation) -> bool:
    """Whether `op` is `root` or nested in one of its regions."""
    while op is not None:
        if op == root:
            return True
        parent = op.parent
        op = parent if parent is not None and parent.name != "builtin.module" else None
    return False


def ops_named(root: ir.Operation, names) -> list:
    """All ops under `root` whose name is in `names` (a set or a predicate), in pre-order."""
    found = []
    test = names if callable(names) else (lambda n: n in names)

    def visit(op):
        if test(op.name):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def kernels(module: ir.Operation) -> list:
    """The `func.func` ops marked as kernels."""
    return [op for op in ops_named(module, {"func.func"}) if "warp.kernel" in op.attributes]
