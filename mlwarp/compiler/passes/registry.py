"""The pass registry: every mlwarp pass is a small class registered here by name.

`mlwarp-opt --<name>` and the compiler pipeline use the same classes. Options
follow upstream syntax: `warp-unroll-loops{max-unroll=16}`.
"""

from __future__ import annotations

from typing import ClassVar

from mlir import ir


class PassError(Exception):
    """A pass refused its input; the message says why."""


class Pass:
    name: ClassVar[str]
    description: ClassVar[str]
    options: ClassVar[dict] = {}  # option name -> default value (its type is the option's type)

    def __init__(self, **options):
        unknown = set(options) - set(self.options)
        if unknown:
            raise PassError(f"pass '{self.name}' has no option(s) {sorted(unknown)}; "
                            f"options: {sorted(self.options) or 'none'}")
        self.opts = {k: _convert(self.name, k, options.get(k, v), v) for k, v in self.options.items()}

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError


def _convert(pass_name, key, value, default):
    if not isinstance(value, str) or isinstance(default, str):
        return value
    try:
        if isinstance(default, bool):
            if value not in ("true", "false", "1", "0"):
                raise ValueError(value)
            return value in ("true", "1")
        return type(default)(value)
    except ValueError:
        raise PassError(f"pass '{pass_name}': option {key}={value!r} is not a valid {type(default).__name__}")


PASSES: dict[str, type] = {}


def register(cls):
    PASSES[cls.name] = cls
    return cls


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
