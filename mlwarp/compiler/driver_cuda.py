"""Compiles one kernel for CUDA: frontend -> CUDA stages -> PTX (LLVM NVPTX) -> cubin (ptxas).

The entry folder holds `kernel.ptx` always and `kernel.cubin` when ptxas is
found: the runtime loads the cubin on a device of the same architecture and
lets the driver JIT the PTX on a newer one.

A debug build (options["mode"] == "debug") runs the CPU debug build's stages
(passes/bounds_check.py: warp-bounds-check before array lowering, so each
kernel's launch struct ends with the error record; `.loc` line directives) and
puts the site table into the metadata as compile_cpu does."""

from __future__ import annotations

import os
import time

from .contained import contained
from .context import make_context
from .driver import Timings, emit_for_build, jvp_stages
from .frontend import emit_kernel, get_source
from .lowering.gpu_binary import GpuCompileError, assemble_cubin, emit_ptx, ptxas_path
from .lowering.gpu_kernel import entry_name
from .passes.autodiff import adjoint_name, take_adjoint_errors
from .passes.autodiff_jvp import tangent_name
from .passes.bounds_check import debug_stages, pop_debug_sites
from .pipeline import DEFAULT_CUDA_ARCH, cuda_stages, run_stages

PTX = "kernel.ptx"
CUBIN = "kernel.cubin"


def build_stages(arch: int = DEFAULT_CUDA_ARCH, options: dict | None = None) -> list:
    """The stages of a CUDA build with these kernel options: a debug build's bounds checks and line
    directives (as compile_cpu's debug build), a forward-mode build's warp-jvp."""
    stages = cuda_stages(arch)
    if (options or {}).get("mode") == "debug":
        stages = debug_stages(stages)
    if (options or {}).get("jvp", False):  # a forward-mode module: k_jvp instead of k_adj (as compile_cpu)
        stages = jvp_stages(stages)
    return stages


def cuda_stage_names(options: dict | None = None) -> list:
    return ["warp"] + [s for s, _ in build_stages(DEFAULT_CUDA_ARCH, options)] + ["ptx"]


def emit_ir_cuda(func, arg_types: dict, stage: str = "warp", arch: int = DEFAULT_CUDA_ARCH,
                 options: dict | None = None) -> str:
    """The kernel's IR after a CUDA stage, or its PTX for stage "ptx". With options {"mode": "debug"}, the
    debug build's (its stages include "bounds-check")."""
    names = cuda_stage_names(options)
    if stage not in names:
        raise ValueError(f"unknown CUDA stage {stage!r}; stages: {names}")
    debug = (options or {}).get("mode") == "debug"
    ctx = make_context()
    kir = emit_kernel(get_source(func), arg_types, ctx)
    with ctx:
        stages = build_stages(arch, {"mode": "debug"} if debug else None)
        run_stages(kir.module, stages[:names.index(stage)] if stage != "ptx" else stages)
        if debug and stage in ("nvvm", "ptx"):
            pop_debug_sites(kir.module.operation)
        if stage == "ptx":
            return emit_ptx(kir.module).decode()
        return str(kir.module)


@contained(lambda args: args[0].__name__)
def compile_cuda(func, arg_types: dict, out_dir: str, arch: int = DEFAULT_CUDA_ARCH, options: dict | None = None,
                 cubin: bool = True) -> dict:
    """Writes kernel.ptx (and kernel.cubin) into `out_dir`; returns the metadata the runtime needs. The
    module also holds the adjoint kernel `<k>_adj_cuda` unless options["enable_backward"] is False."""
    t = time.perf_counter()
    times = Timings()
    _, ctx, kir, jvp, backward = emit_for_build(func, arg_types, options)
    t = times.mark("frontend", t)
    debug = (options or {}).get("mode") == "debug"  # bounds checks, line directives
    with ctx:
        run_stages(kir.module, build_stages(arch, options), dump_prefix=f"{kir.name}.sm_{arch}")
        adj_error = take_adjoint_errors().get(kir.name)  # the kernel runs forward; its adjoint launch raises this
        debug_sites = pop_debug_sites(kir.module.operation) if debug else None
        t = times.mark("passes", t)
        ptx = emit_ptx(kir.module)
        t = times.mark("ptx", t)
    ptx_path = os.path.join(out_dir, PTX)
    with open(ptx_path, "wb") as f:
        f.write(ptx)
    files = [PTX]
    if cubin and ptxas_path() is not None:
        assemble_cubin(ptx_path, arch, os.path.join(out_dir, CUBIN))
        files.append(CUBIN)
        times.mark("ptxas", t)
    entry = entry_name(tangent_name(kir.name) if jvp else kir.name)
    return {"ptx": PTX, "cubin": CUBIN if CUBIN in files else None, "entry": entry, "arch": arch,
            "tid_dims": kir.tid_dims, "timings_ms": dict(times), "files": files,
            "adj_entry": entry_name(adjoint_name(kir.name)) if backward and not adj_error else None,
            "adj_error": adj_error, "debug_sites": debug_sites}


__all__ = ["compile_cuda", "emit_ir_cuda", "cuda_stage_names", "GpuCompileError"]
