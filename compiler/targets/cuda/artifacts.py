"""The CUDA table's artifact steps (cuda/table.py calls them): PTX from the NVVM module (LLVM NVPTX), the cubin
from the PTX (ptxas)."""

from __future__ import annotations

import json
import os

from mlir import ir

from ..common import TILE_LAUNCH_ATTR
from ...native.toolchain import RECORD_ATTR as NATIVE_FUNCTIONS_ATTR, compile_ptx, native_entry_points, splice_ptx
from .gpu_binary import assemble_cubin, check_ptx, emit_ptx, ptxas_path


def emit_ptx_file(build, name: str) -> None:
    natives = build.side_tables.get(NATIVE_FUNCTIONS_ATTR)
    entries = native_entry_points(natives) if natives else frozenset()
    ptx = emit_ptx(build.module, entries)
    if natives:  # the @wp.func_native snippets, compiled by nvcc, joined to the kernel's PTX
        ptx = splice_ptx(ptx, compile_ptx(natives, build.options.arch), entries)
        check_ptx(ptx)
    build.artifacts["ptx"] = ptx
    if build.out_dir is not None:
        with open(os.path.join(build.out_dir, name), "wb") as f:
            f.write(ptx)
        build.files.append(name)
    build.meta["ptx"] = name
    build.meta.setdefault("cubin", None)  # the cubin stage sets it
    build.meta["arch"] = build.options.arch
    # the launch shape wp.launch_tiled uses (warp-gpu-cooperative-tiles): one CUDA block per Warp block, or one
    # thread per block (a module without tiles: no entry)
    if TILE_LAUNCH_ATTR in build.module.operation.attributes:
        build.meta["tile_launch"] = json.loads(ir.StringAttr(build.module.operation.attributes[TILE_LAUNCH_ATTR]).value)


def emit_cubin(build, ptx: str, cubin: str):
    build.meta["cubin"] = None
    if build.out_dir is None or ptxas_path() is None:  # the runtime lets the driver JIT the PTX
        return False  # nothing done (no timing)
    assemble_cubin(os.path.join(build.out_dir, ptx), build.options.arch, os.path.join(build.out_dir, cubin))
    build.files.append(cubin)
    build.meta["cubin"] = cubin
