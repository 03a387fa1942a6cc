"""The CPU target: warp stages -> LLVM dialect -> object file (LLVM's scalarizer + O3 for the host,
object_code.py) -> kernel.so (ld). The table imports no MLIR (the artifact steps that need it are artifacts.py)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

from .host import host_isas
from ...native.toolchain import RECORD_ATTR as NATIVE_FUNCTIONS_ATTR, compile_cpu_object, host_compiler
from ...passes.registry import (Bf16AsI16, Bf16RoundEachOp, ConvertArraysToLLVM, ConvertBuiltinsToArith,
                                ConvertCompositesToVector, ConvertNativeCalls, CpuBlockLanes, CpuEntry, CpuForwardSums,
                                CpuInterchangeLoops, CpuKeepVectors, CpuSerialCopy, CpuVectorMath, ExpandGeometry,
                                PrivatizeAtomics, PrivatizeScatter, VectorizeGathers, VectorizeTileMatmul)
from ..common import CANONICALIZE_LOWERED, CPU_LINE_INFO, TILES, TILES_ATTR, BuildOptions, Stage, warp_stages

LIBRARY = "kernel.so"
OBJECT = "kernel.o"

TEXT_ARTIFACTS = ("llvm-ir",)  # the artifacts kernel.to_mlir / emit_ir can show


def entry_name(kernel_name: str) -> str:
    """The symbol of a kernel's entry, which warp-cpu-entry makes (for compiler/build.py)."""
    from .cpu_entry import entry_name  # lazy: MLIR (the table is built without it: insert.py, mlwarp-opt)

    return entry_name(kernel_name)


def dump_prefix(kernel_name: str, o: BuildOptions) -> str:
    return kernel_name


LOWER = (ConvertCompositesToVector(), ConvertBuiltinsToArith(), ConvertArraysToLLVM(), CpuEntry(), ConvertNativeCalls(),
         CpuKeepVectors(), CpuInterchangeLoops(), PrivatizeAtomics(), PrivatizeScatter(), CpuSerialCopy(),
         CpuForwardSums(), VectorizeGathers(), CANONICALIZE_LOWERED, "cse")
# bfloat16 arithmetic runs in f32 and rounds back with integer ops: no libgcc helper (__truncsfbf2);
# bfloat16 math (sin, sqrt, ...) too, as Warp's sinf(float(x)): LLVM has no bf16 libm calls
TILES_TO_LLVM = ("expand-strided-metadata", "lower-affine", "finalize-memref-to-llvm")  # the tiles' buffers
TO_LLVM = ("convert-scf-to-cf", "math-extend-to-supported-types{extra-types=f16 target-type=f32}",
           "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
           Bf16RoundEachOp(), "arith-expand{include-bf16=true}", "convert-math-to-llvm", "convert-math-to-libm",
           "convert-vector-to-llvm", "convert-arith-to-llvm", "convert-cf-to-llvm", "convert-func-to-llvm",
           "reconcile-unrealized-casts", Bf16AsI16())


def stages(o: BuildOptions) -> list:
    """The CPU build's stages for these options."""
    if o.no_avx512:  # libmvec's AVX-512 variants take zmm registers, which these functions may not use
        vector_math = CpuVectorMath(isa=",".join(i for i in host_isas() if i != "avx512") or "none")
    else:
        vector_math = CpuVectorMath()
    llvm = TO_LLVM + (vector_math,) + ((CPU_LINE_INFO,) if o.debug else ())
    # the float matmuls become register-blocked outer products before the other linalg ops become loops
    matmul = VectorizeTileMatmul(vector_bits=256) if o.no_avx512 else VectorizeTileMatmul()
    at = TILES.index("convert-linalg-to-loops")
    # Warp's CPU lanes first (a module built for them: warp-cpu-block-lanes), on the warp dialect's tile ops, then
    # the block-wide geometry queries it kept at block level
    tiles = (CpuBlockLanes(), ExpandGeometry(), *TILES[:at], matmul, *TILES[at:])
    lower = tuple(CpuEntry(adjoint_only=True) if isinstance(p, CpuEntry) else
                  PrivatizeScatter(replace_entry=not o.adjoint_atomics) if isinstance(p, PrivatizeScatter) else
                  CpuSerialCopy(private_serves=True) if isinstance(p, CpuSerialCopy) else p
                  for p in LOWER) if o.adjoint_only else LOWER
    return [*warp_stages(o), Stage("tiles", tiles, only_if=TILES_ATTR), Stage("lowered", lower),
            Stage("tiles-to-llvm", TILES_TO_LLVM, only_if=TILES_ATTR), Stage("parts", emit=emit_parts),
            Stage("llvm", llvm),
            Stage("llvm-ir", emit=emit_llvm_ir, timing="llvm"), Stage("object", emit=emit_object, timing="llvm"),
            Stage("library", emit=emit_library, timing="link")]


def emit_llvm_ir(build):
    """The optimised LLVM IR that the object is compiled from, as text (kernel.to_mlir("llvm-ir") only)."""
    from .artifacts import emit_llvm_ir  # lazy: MLIR and LLVM (the table is built without them: insert.py, mlwarp-opt)

    return emit_llvm_ir(build)


def emit_parts(build):
    from .artifacts import emit_parts  # lazy: MLIR (the table is built without it: insert.py, mlwarp-opt)

    return emit_parts(build, os.path.join(build.out_dir, OBJECT) if build.out_dir else None)


def emit_object(build) -> None:
    from .artifacts import emit_object  # lazy: MLIR and LLVM (the table is built without them: insert.py, mlwarp-opt)

    emit_object(build, os.path.join(build.out_dir, OBJECT))


def emit_library(build) -> None:
    objects = build.objects or [os.path.join(build.out_dir, OBJECT)]
    natives = build.side_tables.get(NATIVE_FUNCTIONS_ATTR)
    extra = [compile_cpu_object(natives, build.out_dir)] if natives else []  # the @wp.func_native snippets
    try:
        link(objects, os.path.join(build.out_dir, LIBRARY), build.libraries, extra)
    finally:
        for path in [*objects, *extra]:
            os.remove(path)
    build.meta["library"] = LIBRARY
    build.files.append(LIBRARY)


def has_undefined_symbols(path: str) -> bool:
    """Whether the object file at `path` references a symbol it does not define (True for a file that is
    not a little-endian ELF64 object: then nothing is assumed)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x7fELF\x02\x01":
        return True
    (shoff,), (shentsize, shnum) = struct.unpack_from("<Q", data, 0x28), struct.unpack_from("<HH", data, 0x3A)
    for header in range(shoff, shoff + shnum * shentsize, shentsize):
        if struct.unpack_from("<I", data, header + 4)[0] != 2:  # SHT_SYMTAB
            continue
        (offset, size), (entsize,) = struct.unpack_from("<QQ", data, header + 0x18), \
            struct.unpack_from("<Q", data, header + 0x38)
        for sym in range(offset + entsize, offset + size, entsize):  # (entry 0 is the null symbol)
            name, _, _, section = struct.unpack_from("<IBBH", data, sym)
            if section == 0 and name != 0:  # SHN_UNDEF
                return True
    return False


def link(objects: list, out: str, libraries=(), native_objects=()) -> None:
    """Links the objects into a shared library: with `ld` directly when there is one (a few ms; the
    `cc` driver costs tens of ms more for the same `ld` run), else with `cc` (or $CC). libm only when
    the object calls out (reading libm's symbols is half of a small kernel's link: ~2 of 4.5 ms).
    With `native_objects` (compiled @wp.func_native snippets: C++), the C++ compiler's driver links,
    which knows where its runtime library is."""
    ld = None if os.environ.get("CC") else shutil.which("ld")
    libm = ["-lm"] if libraries or native_objects or any(has_undefined_symbols(obj) for obj in objects) else []
    driver = host_compiler() if native_objects else (ld or os.environ.get("CC", "cc"))
    cmd = [driver, "-shared", "-o", out, *objects, *native_objects, *libm, *libraries]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError(f"mlwarp needs a linker to build CPU kernels; '{cmd[0]}' was not found "
                           f"(install binutils or gcc, or set CC)") from None
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"linking the kernel library failed:\n{e.stderr}") from None
