"""What both targets' tables are made of: stages, the build options that choose them, the warp
stages both run, the passes inserted into every build. Imports no MLIR."""

from __future__ import annotations

import dataclasses
from typing import Callable

from ..passes.registry import (Autodiff, BoundsCheck, CarryTileBuffers, ConvertTilesToLinalg, EraseFusedProducers,
                               ExpandGeometry, GradCalls, HoistTileBuffers, Inline, Jvp, StreamTileReductions,
                               StripAsserts, StructTilesAsBytes, TagFusionProducers, UnrollLoops)

DEFAULT_CUDA_ARCH = 90


@dataclasses.dataclass(frozen=True)
class Stage:
    name: str
    # mlwarp pass objects (passes/registry.py) and upstream pipeline text, one element each (pipeline_text.py prints
    # and parses both); stage_table adds the user's InsertedPass entries
    passes: tuple = ()
    emit: Callable | None = None  # emit(build): writes an artifact into build.out_dir (no passes then)
    timing: str = "passes"  # the MLWARP_TIMINGS entry its time adds to
    only_if: str | None = None  # a module attribute: the stage runs only on modules that carry it (TILES_ATTR)


# Canonicalization of lowered code (arith, vector, llvm): a kernel's body there can be one block of tens of
# thousands of ops (curlnoise of a vec4: 48 lattice corners per octave, inlined). The default top-down driver
# moves each constant it folds or meets to the front of that block, which invalidates the block's op order every
# time: quadratic (30 s for curlnoise 4-d on one core); bottom-up reaches the same fixed point in linear time.
CANONICALIZE_LOWERED = "canonicalize{top-down=false}"

# on a CUDA module with tiles: JSON of how wp.launch_tiled launches it (cuda/cooperative_tiles.py; meta "tile_launch")
TILE_LAUNCH_ATTR = "warp.tiled_launch"
# on a module whose tile kernels run Warp's CPU lanes (wp.config.enable_cpu_blocks): the lanes per block, an i64
# (frontend/tiles.py sets it; warp-cpu-block-lanes reads it)
CPU_LANES_ATTR = "warp.cpu_lanes"
TILES_ATTR = "warp.tiles"  # on a module whose kernels make tiles (frontend/tiles.py): the tile stages run
# Tiles: tensors and linalg, bufferized into stack buffers (a tile of a loop's body hoisted out of the loop, an
# accumulator updated in place), linalg as loops (both targets: a CUDA thread's tiles are its local memory)
TILES = (StreamTileReductions(), ConvertTilesToLinalg(), TagFusionProducers(), "linalg-fuse-elementwise-ops",
         EraseFusedProducers(), StructTilesAsBytes(),
         "one-shot-bufferize{unknown-type-conversion=identity-layout-map allow-return-allocs-from-loops=true}",
         CarryTileBuffers(),
         "func.func(buffer-hoisting)", "func.func(buffer-loop-hoisting)",
         "func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=4194304})", HoistTileBuffers(),
         "convert-linalg-to-loops")


GLOBAL_PASSES: list = []  # compiler/insert.py's insert_pass entries: every kernel's build gets them


def passes_for(options: dict) -> tuple:
    """The passes a build with these kernel options gets: the kernel's, then the global ones."""
    return tuple(options.get("passes", ())) + tuple(GLOBAL_PASSES)


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    """What a kernel's options (Kernel.options) ask of the compiler."""
    debug: bool = False  # options["mode"] == "debug": bounds checks, line information
    backward: bool = True  # an adjoint k_adj next to each kernel (enable_backward, not with jvp)
    # the kernel has a backward pass, whether or not this library holds it (a CPU kernel's forward library
    # leaves it out: kernel.py): the frontend's backward-only refusals are raised
    adjoint_declared: bool = True
    jvp: bool = False  # forward mode: k_jvp instead of k_adj
    no_avx512: bool = False  # the CPU build without AVX-512 (compile_cpu's fallback after an LLVM crash)
    arch: int = DEFAULT_CUDA_ARCH  # CUDA: sm_<arch>
    cubin: bool = True  # CUDA: assemble a cubin with ptxas, where there is one
    inserted: tuple = ()  # compiler/insert.py InsertedPass entries (the kernel's, then the global ones)
    # CPU: Warp's lanes per block for tile kernels (options["cpu_block_dim"]: a launch with
    # wp.config.enable_cpu_blocks and block_dim > 1); 1: one lane per block
    cpu_block_dim: int = 1
    # CPU: a library for the adjoint only (a kernel's with_adjoint library: autodiff/adjoint.py; its own library
    # runs it forward), whose kernels with an adjoint get no entry of their own (warp-cpu-entry{adjoint-only})
    adjoint_only: bool = False
    # CPU adjoint-only library: keep each entry's atomic form beside its `_private` copy (options["adjoint_atomics"]:
    # the library a launch asks for where private copies do not apply); without it such an entry is `_private` only
    adjoint_atomics: bool = False

    @classmethod
    def of(cls, options: dict | None, **extra) -> "BuildOptions":
        options = options or {}
        jvp = bool(options.get("jvp", False))
        return cls(debug=options.get("mode") == "debug", jvp=jvp,
                   backward=bool(options.get("enable_backward", True)) and not jvp,
                   adjoint_declared=bool(options.get("adjoint_declared", options.get("enable_backward", True)))
                   and not jvp,
                   no_avx512=bool(options.get("no_avx512", False)), inserted=passes_for(options),
                   cpu_block_dim=int(options.get("cpu_block_dim", 1)),
                   adjoint_only=bool(options.get("with_adjoint", False)) and not jvp,
                   adjoint_atomics=bool(options.get("adjoint_atomics", False)), **extra)



# Line information from the ops' `file:line:col` locations. The CPU build gets LLVM line tables
# (`.debug_line` in kernel.so). The CUDA build gets `.file`/`.loc` directives only (what nvcc -lineinfo
# emits): with LineTablesOnly, LLVM's NVPTX backend marks the module `.target sm_XX, debug` and writes
# .debug_info sections, which ptxas refuses together with -O3 ("Optimized debugging not supported").
CPU_LINE_INFO = "ensure-debug-info-scope-on-llvm-func{emission-kind=LineTablesOnly}"
CUDA_LINE_INFO = "ensure-debug-info-scope-on-llvm-func{emission-kind=DebugDirectivesOnly}"


def warp_stages(o: BuildOptions, loop_tape_bytes: int | None = None) -> list:
    """The frontend's stage, then the warp -> warp stages both targets run, then a debug build's bounds checks (before
    array lowering). `loop_tape_bytes`: warp-autodiff's per-thread stack budget for loop tapes, when not its default."""
    # "warp": the frontend's output, no passes of its own (a point to insert passes at, and the first dump)
    table = [Stage("warp")]
    # the bodies of wp.grad(f)'s functions first (f's reverse sweep, from f as the frontend emitted it), then @wp.func
    # calls inlined; canonicalize folds constant range bounds before unrolling
    table.append(Stage("warp-opt", (GradCalls(), Inline(), "canonicalize", UnrollLoops(), "canonicalize", "cse")))
    # The derivative stage adds k_jvp (forward mode) or k_adj next to each kernel k; without backward the build
    # marks the kernels warp.no_backward, which warp-autodiff leaves alone (it still unlinks @wp.func_grad
    # functions). warp-inline again: the calls of @wp.func_grad functions warp-autodiff kept (or added).
    options = {} if loop_tape_bytes is None else {"tape_bytes": loop_tape_bytes}
    reverse = Autodiff(keep_reads=True, **options) if o.debug else Autodiff(**options)
    table.append(Stage("autodiff", (Jvp() if o.jvp else reverse, Inline(), ExpandGeometry(), "canonicalize", "cse")))
    # asserts: checked in a debug build (warp-bounds-check), erased in a release one, as Warp's C assert
    table.append(Stage("bounds-check", (BoundsCheck(),)) if o.debug else Stage("asserts", (StripAsserts(),)))
    return table


# The builds whose tables together name every stage: a pass can be inserted at any of their IR stages
STAGE_VARIANTS = (BuildOptions(debug=True), BuildOptions())
