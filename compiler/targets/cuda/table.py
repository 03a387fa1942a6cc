"""The CUDA target: warp stages -> NVVM for sm_<arch> -> PTX (LLVM NVPTX) -> cubin (ptxas).

The entry folder holds `kernel.ptx` always and `kernel.cubin` when ptxas is found: the runtime
loads the cubin on a device of the same architecture and lets the driver JIT the PTX on a newer one.
The table imports no MLIR (the artifact steps are artifacts.py).
"""

from __future__ import annotations

from ...passes.registry import (ConvertArraysToLLVM, ConvertBuiltinsToArith, ConvertCompositesToVector,
                                ConvertNativeCalls, ConvertTilesToLinalg, GpuCooperativeTiles, GpuKernel,
                                StreamTileReductions)
from ..common import CANONICALIZE_LOWERED, CUDA_LINE_INFO, TILES, TILES_ATTR, BuildOptions, Stage, warp_stages

PTX = "kernel.ptx"
CUBIN = "kernel.cubin"

# The CPU's array and builtin lowerings, with the GPU entry (a gpu.module kernel) in place of the CPU's
TEXT_ARTIFACTS = ("ptx",)  # the artifacts kernel.to_mlir / emit_ir can show


def entry_name(kernel_name: str) -> str:
    """The symbol of a kernel's entry, which warp-gpu-kernel makes (for compiler/build.py)."""
    from .gpu_kernel import entry_name  # lazy: MLIR (the table is built without it: insert.py, mlwarp-opt)

    return entry_name(kernel_name)


def dump_prefix(kernel_name: str, o: BuildOptions) -> str:
    return f"{kernel_name}.sm_{o.arch}"


LOWER = (ConvertCompositesToVector(), ConvertBuiltinsToArith(), ConvertArraysToLLVM(), GpuKernel(), ConvertNativeCalls(),
         CANONICALIZE_LOWERED, "cse")


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
    from .artifacts import emit_ptx_file  # lazy: MLIR (the table is built without it: insert.py, mlwarp-opt)

    emit_ptx_file(build, PTX)


def emit_cubin(build):
    from .artifacts import emit_cubin  # lazy: MLIR (the table is built without it: insert.py, mlwarp-opt)

    return emit_cubin(build, PTX, CUBIN)
