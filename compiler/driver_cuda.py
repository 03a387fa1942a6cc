"""Compiles one kernel for CUDA: the CUDA target's stage table (compiler/targets/cuda.py: NVVM, PTX,
cubin) through the compile loop (compiler/build.py), in a child process (compiler/contained.py).

A debug build (options["mode"] == "debug") has the CPU debug build's bounds checks (each kernel's
launch struct ends with the error record) and `.loc` line directives, and its site table in the
metadata, as compile_cpu's."""

from __future__ import annotations

from .build import compile_kernel, emit_ir, stage_names
from .contained import contained
from .targets.cuda.gpu_binary import GpuCompileError
from .targets import DEFAULT_CUDA_ARCH, BuildOptions
from .targets.cuda.table import CUBIN, PTX  # noqa: F401  (the files' names in the cache entry)


def cuda_stage_names(options: dict | None = None) -> list:
    return stage_names("cuda", BuildOptions.of(options))


def emit_ir_cuda(func, arg_types: dict, stage: str = "warp", arch: int = DEFAULT_CUDA_ARCH,
                 options: dict | None = None) -> str:
    """The kernel's IR after a CUDA stage, or its PTX for stage "ptx". With options {"mode": "debug"}, the
    debug build's (its stages include "bounds-check")."""
    return emit_ir("cuda", func, arg_types, stage, BuildOptions.of(options, arch=arch, cubin=False))


@contained(lambda args: args[0].__name__)
def compile_cuda(func, arg_types: dict, out_dir: str, arch: int = DEFAULT_CUDA_ARCH, options: dict | None = None,
                 cubin: bool = True) -> dict:
    """Writes kernel.ptx (and kernel.cubin) into `out_dir`; returns the metadata the runtime needs. The
    module also holds the adjoint kernel `<k>_adj_cuda` unless options["enable_backward"] is False."""
    return compile_kernel("cuda", func, arg_types, out_dir, BuildOptions.of(options, arch=arch, cubin=cubin)).meta


__all__ = ["compile_cuda", "emit_ir_cuda", "cuda_stage_names", "GpuCompileError"]
