"""The CUDA target: warp stages -> NVVM for sm_<arch> -> PTX (LLVM NVPTX) -> cubin (ptxas).

The entry folder holds `kernel.ptx` always and `kernel.cubin` when ptxas is found: the runtime
loads the cubin on a device of the same architecture and lets the driver JIT the PTX on a newer one.
"""

from __future__ import annotations

import json
import os

from mlir import ir

from .gpu_binary import assemble_cubin, emit_ptx, ptxas_path
from .gpu_kernel import entry_name  # noqa: F401  (the target's entry symbol, for compiler/build.py)
from ...passes.registry import (ConvertArraysToLLVM, ConvertBuiltinsToArith, ConvertCompositesToVector,
                                ConvertTilesToLinalg, GpuCooperativeTiles, GpuKernel, StreamTileReductions)
from ..common import CUDA_LINE_INFO, TILE_LAUNCH_ATTR, TILES, TILES_ATTR, BuildOptions, Stage, warp_stages

PTX = "kernel.ptx"
CUBIN = "kernel.cubin"

# The CPU's array and builtin lowerings, with the GPU entry (a gpu.module kernel) in place of the CPU's
TEXT_ARTIFACTS = ("ptx",)  # the artifacts kernel.to_mlir / emit_ir can show


def dump_prefix(kernel_name: str, o: BuildOptions) -> str:
    return f"{kernel_name}.sm_{o.arch}"


LOWER = (ConvertCompositesToVector(), ConvertBuiltinsToArith(), ConvertArraysToLLVM(), GpuKernel(), "canonicalize",
         "cse")


def stages(o: BuildOptions) -> list:
    """The CUDA build's stages for these options (sm_<o.arch>)."""
    nvvm = (f"nvvm-attach-target{{chip=sm_{o.arch} O=3}}",
            "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-math-to-llvm)", "reconcile-unrealized-casts")
    if o.debug:  # line directives on the gpu.module's llvm.funcs
        nvvm += (CUDA_LINE_INFO,)
    # no loop tapes: a GPU thread's stack is 1 KiB unless the context raises it for every resident thread
    # a whole-tile sum streamed from global memory (warp-stream-tile-reductions) would be read by every lane of
    # a cooperative block: here the tile is loaded once, cooperatively, and reduced from shared memory
    # the tile loads that read a contiguous row with one vector load on the CPU: element by element here
    tiles = tuple(ConvertTilesToLinalg(row_vectors=False) if p == ConvertTilesToLinalg() else p for p in TILES
                  if p != StreamTileReductions())
    # a block's lanes share its tiles (shared memory) and split each tile op, where every kernel of the module
    # allows it (cooperative_tiles.py); the linalg ops it leaves (a module kept one thread per block) become
    # each thread's loops as before
    loops = tiles.index("convert-linalg-to-loops")
    tiles = tiles[:loops] + ("func.func(linalg-generalize-named-ops)", GpuCooperativeTiles()) + tiles[loops:]
    table = [*warp_stages(o, loop_tape_bytes=0), Stage("tiles", tiles, only_if=TILES_ATTR), Stage("lowered", LOWER),
             Stage("tiles-to-llvm", ("gpu.module(expand-strided-metadata,lower-affine)",), only_if=TILES_ATTR),
             Stage("nvvm", nvvm), Stage("ptx", emit=emit_ptx_file, timing="ptx")]
    if o.cubin:
        table.append(Stage("cubin", emit=emit_cubin, timing="ptxas"))
    return table


def emit_ptx_file(build) -> None:
    build.artifacts["ptx"] = ptx = emit_ptx(build.module)
    if build.out_dir is not None:
        with open(os.path.join(build.out_dir, PTX), "wb") as f:
            f.write(ptx)
        build.files.append(PTX)
    build.meta["ptx"] = PTX
    build.meta.setdefault("cubin", None)  # the cubin stage sets it
    build.meta["arch"] = build.options.arch
    # the launch shape wp.launch_tiled uses (warp-gpu-cooperative-tiles): one CUDA block per Warp block, or one
    # thread per block (a module without tiles: no entry)
    if TILE_LAUNCH_ATTR in build.module.operation.attributes:
        build.meta["tile_launch"] = json.loads(ir.StringAttr(build.module.operation.attributes[TILE_LAUNCH_ATTR]).value)


def emit_cubin(build) -> None:
    build.meta["cubin"] = None
    if build.out_dir is None or ptxas_path() is None:  # the runtime lets the driver JIT the PTX
        return False  # nothing done (no timing)
    assemble_cubin(os.path.join(build.out_dir, PTX), build.options.arch, os.path.join(build.out_dir, CUBIN))
    build.files.append(CUBIN)
    build.meta["cubin"] = CUBIN
