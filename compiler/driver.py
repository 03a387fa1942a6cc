"""Compiles one kernel for the CPU: the CPU target's stage table (compiler/targets/cpu.py) through the
compile loop (compiler/build.py), in a child process (compiler/contained.py)."""

from __future__ import annotations

import gc
import time
import warnings

_import_started = time.perf_counter()
# The import makes some 100,000 objects (MLIR's bindings, the compiler's tables), all kept: the collector's passes
# over them were ~5 ms of a cold process's first compile. (The compile processes freeze them: contained.py.)
_collecting = gc.isenabled()
gc.disable()
try:
    from mlir.execution_engine import ExecutionEngine  # noqa: F401  (loads libMLIR: the import cost of a compile)

    from mlwarp.core.errors import CompilerWarning

    from .build import Timings, compile_kernel, emit_ir as _emit_ir
    from .contained import CompilerCrash, contained, crash_reason
    from .context import prepare_context
    from .passes import op_finder
    from .targets.cpu import object_code
    from .targets.cpu.host import host_isas
    from .targets import BuildOptions
    from .targets.cpu.table import LIBRARY  # noqa: F401  (the library's file name in the cache entry)
finally:
    if _collecting:
        gc.enable()

# What each compile process would set up first is set up here, once, and the forks inherit it: LLVM's C API library
# (loaded, its signatures declared, the X86 target initialised: ~11 ms a compile process), the host's target
# machine, a context with mlwarp's dialects (compiler/context.py prepare_context), and the passes' native op finder.
object_code.prepare()
prepare_context("cpu")
op_finder.prepare(object_code.write_object)

# Importing MLIR and the compiler happens once per process, on the first compile: that
# compile reports it as its "import" stage.
_import_ms = [(time.perf_counter() - _import_started) * 1e3]


def emit_ir(func, arg_types: dict, stage: str = "warp", options: dict | None = None) -> str:
    """The kernel's IR after `stage`: "warp" (the frontend's output) or a stage of the CPU table."""
    return _emit_ir("cpu", func, arg_types, stage, BuildOptions.of(options))


def compile_cpu(func, arg_types: dict, out_dir: str, options: dict | None = None) -> dict:
    """Writes `kernel.so` into `out_dir` (in a child process: compiler/contained.py); returns the metadata the
    runtime needs to launch it (see _compile_cpu)."""
    try:
        try:
            return _compile_cpu(func, arg_types, out_dir, options)
        except CompilerCrash as crash:
            # LLVM's X86 backend has asserted on AVX-512 code for some vector patterns (a shuffle combine, on
            # the adjoint of a float32 mat44 * vec4): build this kernel for the host without AVX-512.
            if "avx512" not in host_isas() or (options or {}).get("no_avx512"):
                raise
            meta = _compile_cpu(func, arg_types, out_dir, {**(options or {}), "no_avx512": True})
            warnings.warn(f"kernel '{func.__name__}' was built without AVX-512: LLVM crashed compiling it for this "
                          f"CPU ({crash_reason(crash.compiler_output) or crash})", CompilerWarning, stacklevel=2)
            return meta
    finally:
        _import_ms.clear()  # the first compile reports the import; the child that took it is gone


@contained(lambda args: args[0].__name__)
def _compile_cpu(func, arg_types: dict, out_dir: str, options: dict | None = None) -> dict:
    """Writes `kernel.so` into `out_dir`; returns the metadata the runtime needs to launch it.
    The library also holds the adjoint entry `<k>_adj_cpu` unless options["enable_backward"] is False;
    with options["jvp"], the entry is the forward-mode kernel `<k>_jvp_cpu` instead (and no adjoint)."""
    times = Timings()
    if _import_ms:
        times["import"] = _import_ms.pop()
    return compile_kernel("cpu", func, arg_types, out_dir, BuildOptions.of(options), times).meta
