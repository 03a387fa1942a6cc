"""The CPU target: warp stages -> LLVM dialect -> object file (LLVM at O3 for the host) -> kernel.so (ld)."""

from __future__ import annotations

import os
import shutil
import subprocess

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from .cpu_entry import entry_name  # noqa: F401  (the target's entry symbol, for compiler/build.py)
from .cpu_vector_math import host_isas, needed_libraries
from ...passes.registry import ops_named
from ..common import CPU_LINE_INFO, BuildOptions, Stage, warp_stages

LIBRARY = "kernel.so"
OBJECT = "kernel.o"

TEXT_ARTIFACTS = ()  # the artifacts kernel.to_mlir / emit_ir can show


def dump_prefix(kernel_name: str, o: BuildOptions) -> str:
    return kernel_name


LOWER = ("convert-warp-composites-to-vector", "convert-warp-builtins-to-arith", "convert-warp-arrays-to-llvm",
         "warp-cpu-entry", "warp-cpu-privatize-atomics", "warp-cpu-serial-copy", "canonicalize", "cse")
# bfloat16 arithmetic runs in f32 and rounds back with integer ops: no libgcc helper (__truncsfbf2);
# bfloat16 math (sin, sqrt, ...) too, as Warp's sinf(float(x)): LLVM has no bf16 libm calls
TO_LLVM = ("convert-scf-to-cf", "math-extend-to-supported-types{extra-types=f16 target-type=f32}",
           "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
           "warp-bf16-round-each-op", "arith-expand{include-bf16=true}", "convert-math-to-llvm", "convert-math-to-libm",
           "convert-vector-to-llvm", "convert-arith-to-llvm", "convert-cf-to-llvm", "convert-func-to-llvm",
           "reconcile-unrealized-casts", "warp-bf16-as-i16")


def stages(o: BuildOptions) -> list:
    """The CPU build's stages for these options."""
    if o.no_avx512:  # libmvec's AVX-512 variants take zmm registers, which these functions may not use
        vector_math = ("warp-cpu-vector-math", {"isa": ",".join(i for i in host_isas() if i != "avx512") or "none"})
    else:
        vector_math = "warp-cpu-vector-math"
    llvm = TO_LLVM + (vector_math,) + ((CPU_LINE_INFO,) if o.debug else ())
    return [*warp_stages(o), Stage("lowered", LOWER), Stage("llvm", llvm),
            Stage("object", emit=emit_object, timing="llvm"), Stage("library", emit=emit_library, timing="link")]


def emit_object(build) -> None:
    engine, build.libraries = _engine(build.module, build.options.no_avx512)
    engine.dump_to_object_file(os.path.join(build.out_dir, OBJECT))


def emit_library(build) -> None:
    obj = os.path.join(build.out_dir, OBJECT)
    link(obj, os.path.join(build.out_dir, LIBRARY), build.libraries)
    os.remove(obj)
    build.meta["library"] = LIBRARY
    build.files.append(LIBRARY)


def _engine(module, no_avx512=False):
    """LLVM at O3 for the host (less AVX-512 with `no_avx512`); the JIT resolves the vector math functions
    (warp-cpu-vector-math) in libmvec, which the library then links."""
    if no_avx512:
        for f in ops_named(module.operation, {"llvm.func"}):
            f.attributes["target_features"] = ir.Attribute.parse('#llvm.target_features<["-avx512f"]>')
    libraries = needed_libraries(module)
    return ExecutionEngine(module, opt_level=3, enable_pic=True, shared_libs=libraries), libraries


def link(obj: str, out: str, libraries=()) -> None:
    """Links the object into a shared library: with `ld` directly when there is one (a few ms; the
    `cc` driver costs tens of ms more for the same `ld` run), else with `cc` (or $CC)."""
    ld = None if os.environ.get("CC") else shutil.which("ld")
    cmd = [ld or os.environ.get("CC", "cc"), "-shared", "-o", out, obj, "-lm", *libraries]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError(f"mlwarp needs a linker to build CPU kernels; '{cmd[0]}' was not found "
                           f"(install binutils or gcc, or set CC)") from None
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"linking the kernel library failed:\n{e.stderr}") from None
