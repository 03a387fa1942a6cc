"""Passes as data, and the one registry of every mlwarp pass.

A pass is a frozen dataclass: a ClassVar `name` (its `mlwarp-opt --<name>` flag) and
`description`, and one typed field per option, with its default. A pass without options is a plain
subclass of `Pass` (it inherits the frozen dataclass, fields and all: none): the decorator would cost
~0.35 ms of code generation at import, every cold compile. An option's name is
its field's with `-` for `_` (`max_unroll` is `max-unroll`). `Pass.parse(options)`
builds one from upstream syntax's strings (`warp-unroll-loops{max-unroll=16}`),
checking each value against its field's type; `str(p)` prints it back the same way.

`PASSES` lists every pass by name with where its class lives (module, class name);
`pass_class(name)` imports it on first use. Nothing registers itself when its module
is imported: a new pass is one line here (test/python/test_pass_registry.py checks
that every entry loads, names itself as listed and round-trips its options).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import ClassVar

from mlir import ir


class PassError(Exception):
    """A pass refused its input; the message says why."""


@dataclasses.dataclass(frozen=True)
class Pass:
    name: ClassVar[str]
    description: ClassVar[str]

    @classmethod
    def option_fields(cls) -> dict:
        """option name (`max-unroll`) -> its dataclasses.Field."""
        return {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}

    @classmethod
    def parse(cls, options: dict | None = None) -> "Pass":
        """The pass with these options ({option name: value}, a value as text or already typed)."""
        fields = cls.option_fields()
        options = dict(options or {})
        unknown = set(options) - set(fields)
        if unknown:
            raise PassError(f"pass '{cls.name}' has no option(s) {sorted(unknown)}; "
                            f"options: {sorted(fields) or 'none'}")
        return cls(**{fields[k].name: _convert(cls.name, k, v, _field_type(cls, fields[k]))
                      for k, v in options.items()})

    def options(self) -> dict:
        """{option name: value} of the options that differ from their defaults."""
        return {k: getattr(self, f.name) for k, f in self.option_fields().items()
                if getattr(self, f.name) != _default(f)}

    def __str__(self) -> str:
        text = " ".join(f"{k}={_show(v)}" for k, v in self.options().items())
        return f"{self.name}{{{text}}}" if text else self.name

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError


_TYPES = {"int": int, "bool": bool, "str": str, "float": float}


def _field_type(cls, field) -> type:
    t = field.type  # a string under `from __future__ import annotations`
    return _TYPES[t] if isinstance(t, str) else t


def _default(field):
    if field.default is not dataclasses.MISSING:
        return field.default
    return field.default_factory()


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _convert(pass_name, key, value, want: type):
    if isinstance(value, want) and not (want is int and isinstance(value, bool)):
        return value
    if not isinstance(value, str):
        raise PassError(f"pass '{pass_name}': option {key}={value!r} is not a valid {want.__name__}")
    if want is str:
        return value
    try:
        if want is bool:
            if value not in ("true", "false", "1", "0"):
                raise ValueError(value)
            return value in ("true", "1")
        return want(value)
    except ValueError:
        raise PassError(f"pass '{pass_name}': option {key}={value!r} is not a valid {want.__name__}") from None


# name -> (module, class name). Sorted by name.
PASSES: dict[str, tuple[str, str]] = {
    "convert-warp-arrays-to-llvm": ("mlwarp.compiler.lowering.arrays_to_llvm", "ConvertArraysToLLVM"),
    "convert-warp-builtins-to-arith": ("mlwarp.compiler.lowering.builtins_to_arith", "ConvertBuiltinsToArith"),
    "convert-warp-composites-to-vector": ("mlwarp.compiler.lowering.composites_to_vector", "ConvertCompositesToVector"),
    "convert-warp-native-calls": ("mlwarp.compiler.lowering.native_calls_to_llvm", "ConvertNativeCalls"),
    "convert-warp-tiles-to-linalg": ("mlwarp.compiler.lowering.tiles_to_linalg", "ConvertTilesToLinalg"),
    "warp-autodiff": ("mlwarp.compiler.passes.autodiff", "Autodiff"),
    "warp-bf16-as-i16": ("mlwarp.compiler.lowering.bf16_as_i16", "Bf16AsI16"),
    "warp-bf16-round-each-op": ("mlwarp.compiler.lowering.bf16_as_i16", "Bf16RoundEachOp"),
    "warp-bounds-check": ("mlwarp.compiler.passes.bounds_check", "BoundsCheck"),
    "warp-cse": ("mlwarp.compiler.passes.warp_cse", "WarpCse"),
    "warp-cpu-entry": ("mlwarp.compiler.targets.cpu.cpu_entry", "CpuEntry"),
    "warp-cpu-block-lanes": ("mlwarp.compiler.targets.cpu.block_lanes", "CpuBlockLanes"),
    "warp-cpu-interchange-loops": ("mlwarp.compiler.targets.cpu.interchange_loops", "CpuInterchangeLoops"),
    "warp-cpu-keep-vectors": ("mlwarp.compiler.targets.cpu.keep_vectors", "CpuKeepVectors"),
    "warp-cpu-privatize-atomics": ("mlwarp.compiler.targets.cpu.privatize_atomics", "PrivatizeAtomics"),
    "warp-cpu-privatize-scatter": ("mlwarp.compiler.targets.cpu.privatize_scatter", "PrivatizeScatter"),
    "warp-cpu-serial-copy": ("mlwarp.compiler.targets.cpu.serial_copy", "CpuSerialCopy"),
    "warp-cpu-vector-math": ("mlwarp.compiler.targets.cpu.cpu_vector_math", "CpuVectorMath"),
    "warp-cpu-vectorize-tile-matmul": ("mlwarp.compiler.targets.cpu.vectorize_tile_matmul", "VectorizeTileMatmul"),
    "warp-expand-geometry": ("mlwarp.compiler.passes.expand_geometry", "ExpandGeometry"),
    "warp-gpu-cooperative-tiles": ("mlwarp.compiler.targets.cuda.cooperative_tiles", "GpuCooperativeTiles"),
    "warp-gpu-kernel": ("mlwarp.compiler.targets.cuda.gpu_kernel", "GpuKernel"),
    "warp-grad-calls": ("mlwarp.compiler.passes.grad_calls", "GradCalls"),
    "warp-hoist-tile-buffers": ("mlwarp.compiler.passes.hoist_tile_buffers", "HoistTileBuffers"),
    "warp-inline": ("mlwarp.compiler.passes.inline", "Inline"),
    "warp-jvp": ("mlwarp.compiler.passes.autodiff_jvp", "Jvp"),
    "warp-stream-tile-reductions": ("mlwarp.compiler.passes.stream_tile_reductions", "StreamTileReductions"),
    "warp-strip-asserts": ("mlwarp.compiler.passes.strip_asserts", "StripAsserts"),
    "warp-unroll-loops": ("mlwarp.compiler.passes.unroll", "UnrollLoops"),
}


def pass_class(name: str) -> type | None:
    """The class of mlwarp pass `name` (imported now if need be), or None: not ours (an upstream pass)."""
    where = PASSES.get(name)
    if where is None:
        return None
    module, cls_name = where
    return getattr(importlib.import_module(module), cls_name)


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
