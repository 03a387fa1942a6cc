"""The CPU table's artifact steps that need MLIR and LLVM (cpu/table.py calls them): the optimised LLVM IR and the
object file."""

from __future__ import annotations

from mlir import ir

from ...passes.ir_walk import ops_named
from . import entry_parts
from .cpu_vector_math import needed_libraries
from .object_code import optimized_llvm_ir, write_object


def emit_llvm_ir(build):
    """The optimised LLVM IR that the object is compiled from, as text: only for kernel.to_mlir("llvm-ir")
    (emit_ir, which has no output folder); a build skips this stage."""
    if build.out_dir is not None:
        return False
    _restrict_isa(build)
    build.artifacts["llvm-ir"] = optimized_llvm_ir(build.module).encode()


def _restrict_isa(build) -> None:
    if build.options.no_avx512:  # per function: the target machine has the host's features
        for f in ops_named(build.module.operation, {"llvm.func"}):
            f.attributes["target_features"] = ir.Attribute.parse('#llvm.target_features<["-avx512f"]>')


def _declares(module, symbol: str) -> bool:
    return any(op.operation.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == symbol
               for op in module.body.operations)


def emit_object(build, path: str) -> None:
    _restrict_isa(build)
    build.libraries = needed_libraries(build.module)  # libmvec, for warp-cpu-vector-math's calls
    build.meta["vector_libm"] = bool(build.libraries)  # the runtime then cuts launches at CHUNK_ALIGN
    build.meta["prints"] = _declares(build.module, "printf")  # small launches then keep their thread order
    build.objects = write_object(build.module, build.object_path or path)
    if build.part_children:  # the other entries' parts (entry_parts.py)
        entry_parts.finish(build)
    build.meta["object_parts"] = len(build.objects)  # (side by side: entry_parts.py, object_code.py)


def emit_parts(build, path: str) -> bool | None:
    """The stages after this one continue in parts, side by side, for a large library of several entries
    (entry_parts.py); an emit_ir (no output folder) sees the module whole."""
    if build.out_dir is None:
        return False
    entry_parts.split(build, path)
