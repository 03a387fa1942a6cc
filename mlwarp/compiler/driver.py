"""Compiles one kernel for the CPU: frontend -> stages -> object (LLVM) -> shared library (ld)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import warnings

_import_started = time.perf_counter()
from mlir import ir  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402  (loads libMLIR: the import cost of a compile)

from mlwarp.core.errors import CompilerWarning  # noqa: E402

from .contained import CompilerCrash, contained, crash_reason
from .context import make_context
from .frontend import emit_kernel, get_source
from .lowering.cpu_entry import entry_name
from .lowering.cpu_vector_math import host_isas, needed_libraries
from .passes.autodiff import adjoint_name, mark_no_backward, take_adjoint_errors
from .passes.autodiff_jvp import tangent_name
from .passes.bounds_check import debug_stages, pop_debug_sites
from .passes.registry import ops_named
from .pipeline import CPU_STAGES, run_stages

# Importing MLIR and the compiler happens once per process, on the first compile: that
# compile reports it as its "import" stage.
_import_ms = [(time.perf_counter() - _import_started) * 1e3]

LIBRARY = "kernel.so"


class Timings(dict):
    def mark(self, stage, t0):
        self[stage] = (time.perf_counter() - t0) * 1e3
        return time.perf_counter()


def emit_ir(func, arg_types: dict, stage: str = "warp") -> str:
    """The kernel's IR after `stage`: "warp" (the frontend's output) or a CPU_STAGES name."""
    names = ["warp"] + [s for s, _ in CPU_STAGES]
    if stage not in names:
        raise ValueError(f"unknown stage {stage!r}; stages: {names}")
    ctx = make_context()
    kir = emit_kernel(get_source(func), arg_types, ctx)
    with ctx:
        run_stages(kir.module, CPU_STAGES[:names.index(stage)])
        return str(kir.module)


def emit_for_build(func, arg_types: dict, options: dict | None):
    """The frontend step of a CPU or CUDA build: (source, ctx, kernel IR, jvp, backward), the kernel
    marked to get no adjoint when the build is forward-mode or has enable_backward=False."""
    source = get_source(func)
    ctx = make_context()
    kir = emit_kernel(source, arg_types, ctx)
    jvp = (options or {}).get("jvp", False)
    backward = (options or {}).get("enable_backward", True) and not jvp
    if not backward:
        with ctx:
            mark_no_backward(kir.module)
    return source, ctx, kir, jvp, backward


def jvp_stages(stages):
    """A forward-mode build's stages: warp-jvp (k_jvp) where the others run warp-autodiff (k_adj)."""
    return [(n, ["warp-jvp" if p == "warp-autodiff" else p for p in ps]) for n, ps in stages]


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
    t = time.perf_counter()
    times = Timings()
    if _import_ms:
        times["import"] = _import_ms.pop()
    source, ctx, kir, jvp, backward = emit_for_build(func, arg_types, options)
    t = times.mark("frontend", t)
    with ctx:
        debug = (options or {}).get("mode") == "debug"  # bounds checks, line tables
        stages = debug_stages(CPU_STAGES) if debug else CPU_STAGES
        if jvp:  # a forward-mode library: k_jvp instead of k_adj
            stages = jvp_stages(stages)
        no_avx512 = (options or {}).get("no_avx512", False)
        if no_avx512:  # libmvec's AVX-512 variants take zmm registers, which these functions may not use
            isas = ",".join(i for i in host_isas() if i != "avx512") or "none"
            stages = [(n, [("warp-cpu-vector-math", {"isa": isas}) if p == "warp-cpu-vector-math" else p for p in ps])
                      for n, ps in stages]
        try:
            run_stages(kir.module, stages, dump_prefix=kir.name)
            adj_error = take_adjoint_errors().get(kir.name)  # the kernel runs forward; its adjoint launch raises this
            debug_sites = pop_debug_sites(kir.module.operation) if debug else None
            t = times.mark("passes", t)
            engine, libraries = _engine(kir.module, no_avx512)
        except Exception as e:  # noqa: BLE001
            if not backward:
                raise
            # The adjoint must never cost the kernel itself: build the kernel alone (a failure now is the
            # kernel's own and propagates); the adjoint launch reports why there is no adjoint.
            take_adjoint_errors()
            # A fresh context: an exception that left a pass also left MLIR's pass manager inside its
            # multi-threaded section, where the next dialect load aborts the process.
            ctx = make_context()
            with ctx:
                kir = emit_kernel(source, arg_types, ctx)
                mark_no_backward(kir.module)
                run_stages(kir.module, stages, dump_prefix=kir.name)
                debug_sites = pop_debug_sites(kir.module.operation) if debug else None
                t = times.mark("passes", t)
                engine, libraries = _engine(kir.module, no_avx512)
            adj_error = f"its adjoint kernel failed to compile: {str(e).strip().splitlines()[0]}"
        obj = os.path.join(out_dir, "kernel.o")
        engine.dump_to_object_file(obj)
        t = times.mark("llvm", t)
    link(obj, os.path.join(out_dir, LIBRARY), libraries)
    os.remove(obj)
    times.mark("link", t)
    entry = entry_name(tangent_name(kir.name) if jvp else kir.name)
    return {"library": LIBRARY, "entry": entry, "tid_dims": kir.tid_dims, "timings_ms": dict(times),
            "adj_entry": entry_name(adjoint_name(kir.name)) if backward and not adj_error else None,
            "adj_error": adj_error, "debug_sites": debug_sites}


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
