"""Python kernels -> warp dialect."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from .codegen import KernelEmitter
from .functions import Program
from .source import Source, get_source
from .types import from_annotation


@dataclass
class KernelIR:
    module: ir.Module
    name: str
    tid_dims: int
    backward_refusals: list  # CompileErrors for the adjoint only (Program.backward_refusals)
    grad_warnings: list = ()  # Warp's warnings for wp.grad calls in a kernel with a backward pass (grad_call.py)
    launch_needs: tuple = ()  # what its launches bring up to date first (Program.launch_needs)


def emit_kernel(source: Source, arg_types: dict, ctx: ir.Context, lanes: int = 1) -> KernelIR:
    """Emits `source`'s function as a `func.func` with the `warp.kernel` attribute in a new module; `lanes`: Warp's
    CPU lanes per block (Program.lanes)."""
    with ctx, ir.Location.file(source.filename, source.first_line, 1):
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            emitter = KernelEmitter(source, arg_types, Program(lanes=lanes))
            emitter.emit_kernel()
    return KernelIR(module, source.name, emitter.tid_dims, emitter.program.backward_refusals,
                    emitter.program.grad_warnings, tuple(sorted(emitter.program.launch_needs)))


__all__ = ["KernelIR", "emit_kernel", "get_source", "from_annotation", "Source"]
