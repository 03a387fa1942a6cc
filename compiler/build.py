"""One compile loop for any target's stage table (compiler/targets/): frontend, then each stage in order
(passes, or an artifact: object, shared library, PTX, cubin), into one CompiledKernel record.

Debug builds, and every build under `MLWARP_VERIFY_IR=1` (the tests), verify the IR after the frontend and
after each pass stage (compiler/verify.py). The loop dumps the IR after each IR stage (`MLWARP_DUMP_IR=<dir>` writes
`<prefix>.<stage>.mlir`, the first `<prefix>.warp.mlir`, the frontend's output), times the stages (`MLWARP_TIMINGS`), and prints
the IR after every pass with `MLWARP_PRINT_IR_AFTER_ALL=1` (compiler/pipeline.py). Side tables the
passes leave as module attributes (warp-bounds-check's sites, warp-autodiff's reasons for a kernel
without adjoint) leave the module before its first artifact and travel in the record.

A kernel whose adjoint fails to build still builds: the loop runs the table again on the kernel alone,
in a fresh MLIR context, and the record says why there is no adjoint.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import time
import warnings

from mlir import ir

from mlwarp.core.errors import CompileError

from .array_access import kernel_array_access
from .context import make_context
from .frontend import emit_kernel, get_source
from .lowering.bf16_as_i16 import mark_if_bf16_free
from .passes.autodiff import ADJOINT_ERRORS_ATTR, adjoint_name, mark_no_backward
from .passes.autodiff_jvp import tangent_name
from .passes.bounds_check import SITES_ATTR
from .passes.registry import PassError
from .native.toolchain import RECORD_ATTR as NATIVE_FUNCTIONS_ATTR
from .pipeline import dump_ir, run_passes
from .targets import BuildOptions, stage_table, target_module
from .targets.common import CPU_LANES_ATTR
from .verify import check_module, wanted


class Timings(dict):
    def mark(self, stage, t0):
        self[stage] = self.get(stage, 0.0) + (time.perf_counter() - t0) * 1e3
        return time.perf_counter()


@dataclasses.dataclass
class Build:
    """The state of one kernel's build, which the stages' emit steps read and write."""
    target: str
    name: str  # the kernel's symbol
    module: ir.Module
    options: BuildOptions
    out_dir: str | None
    meta: dict = dataclasses.field(default_factory=dict)  # what emit steps add to the record (file names...)
    files: list = dataclasses.field(default_factory=list)  # the files written into out_dir
    artifacts: dict = dataclasses.field(default_factory=dict)  # stage -> bytes (PTX)
    side_tables: dict = dataclasses.field(default_factory=dict)  # module attribute -> its JSON value
    libraries: list = dataclasses.field(default_factory=list)  # CPU: the libraries the object links
    objects: list = dataclasses.field(default_factory=list)  # CPU: the object files, one per part (object_code.py)
    remaining: list = dataclasses.field(default_factory=list)  # the stages after the one running (for an emit step)
    part_children: list = dataclasses.field(default_factory=list)  # CPU: [(pid, object path)] (entry_parts.py)
    object_path: str | None = None  # CPU: where a part's process writes its object (entry_parts.py)

    def run(self, stages) -> None:
        """Runs `stages` on the module (an emit step that forks runs the stages after it so)."""
        run_table(self, stages)


@dataclasses.dataclass
class CompiledKernel:
    """What a build produced; `meta` is the cache entry's metadata that the runtime reads."""
    target: str
    entry: str
    adj_entry: str | None
    adj_error: str | None
    debug_sites: list | None
    tid_dims: int
    timings_ms: dict
    files: list
    extra: dict  # the target's own keys: "library"; "ptx", "cubin", "arch"

    @property
    def meta(self) -> dict:
        return {**self.extra, "entry": self.entry, "tid_dims": self.tid_dims, "timings_ms": self.timings_ms,
                "files": self.files, "adj_entry": self.adj_entry, "adj_error": self.adj_error,
                "debug_sites": self.debug_sites}


# (the @wp.func_native functions' C++, which the target compiles and links with the kernel: compiler/native/)
SIDE_TABLES = (SITES_ATTR, ADJOINT_ERRORS_ATTR, NATIVE_FUNCTIONS_ATTR)


def pop_side_tables(module: ir.Module) -> dict:
    out = {}
    for attr in SIDE_TABLES:
        if attr in module.operation.attributes:
            out[attr] = json.loads(ir.StringAttr(module.operation.attributes[attr]).value)
            del module.operation.attributes[attr]
    return out


def run_table(build: Build, stages, times: Timings | None = None, dump_prefix: str | None = None) -> None:
    """Runs `stages` on build.module (inside its context)."""
    dump_dir = os.environ.get("MLWARP_DUMP_IR") if dump_prefix else None
    # debug and test builds check the IR after the frontend and each pass stage, until no warp op is left
    verifying = wanted(build.options.debug) and check_module(build.module, "the frontend")
    t = time.perf_counter()
    for index, stage in enumerate(stages):
        if stage.only_if is not None and stage.only_if not in build.module.operation.attributes:
            continue  # (a kernel without tiles skips the tile stages)
        if stage.emit is None:
            if stage.passes:  # ("warp", the frontend's output, has none unless some were inserted there)
                run_passes(build.module, stage.passes)
                if verifying:
                    verifying = check_module(build.module, f"stage '{stage.name}'")
            if stage.name == "warp-opt":  # the kernel inlined and not yet differentiated: what a Tape saves
                build.meta["array_access"] = kernel_array_access(build.module, build.name)
            if dump_dir:
                dump_ir(build.module, dump_dir, dump_prefix, stage.name)
        else:
            if not build.side_tables:  # before the first artifact: LLVM translates the module
                build.side_tables = pop_side_tables(build.module)
            build.remaining = stages[index + 1:]
            if stage.emit(build) is False:  # skipped (a cubin without ptxas)
                t = time.perf_counter()
                continue
        if times is not None:
            t = times.mark(stage.timing, t)


def warn_grad_call(message: str) -> None:
    """Warp's log_warning text, on stderr through the warnings machinery (the contained build forwards it)."""
    warnings.warn(message, UserWarning, stacklevel=2)


def _frontend(target: str, source, arg_types, backward: bool, lanes: int = 1, compiling: bool = True):
    """`compiling`: a build (not an emit_ir), whose frontend output is marked bf16-free where it is."""
    ctx = make_context(target)
    # (Warp's CPU lanes are a CPU build's: a CUDA block's lanes are its threads)
    kir = emit_kernel(source, arg_types, ctx, lanes if target == "cpu" else 1)
    with ctx:
        if not backward:  # the kernel gets no adjoint (enable_backward=False, or a forward-mode build)
            mark_no_backward(kir.module)
        if compiling:
            mark_if_bf16_free(kir.module)
    return ctx, kir


def _frontend_meta(build: Build, kir) -> Build:
    """What the runtime reads of the frontend's output: a module whose tile kernels run Warp's CPU lanes, how many
    per block (the runtime then launches it over blocks, the thread grid unfolded: tid_dims 4); a kernel calling
    functions that read lazily kept data, the needs its launches bring up to date first (runtime/launch_needs.py)."""
    attrs = build.module.operation.attributes
    if CPU_LANES_ATTR in attrs:
        build.meta["cpu_lanes"] = ir.IntegerAttr(attrs[CPU_LANES_ATTR]).value
    if kir.launch_needs:
        build.meta["launch_needs"] = list(kir.launch_needs)
    return build


def compile_kernel(target: str, func, arg_types: dict, out_dir: str, options: BuildOptions,
                   times: Timings | None = None) -> CompiledKernel:
    """Builds `func` for `target` into `out_dir` (in the calling process: drivers wrap this in @contained)."""
    tm = target_module(target)
    times = Timings() if times is None else times
    t = time.perf_counter()
    source = get_source(func)
    ctx, kir = _frontend(target, source, arg_types, options.backward, options.cpu_block_dim)
    if options.adjoint_declared and kir.backward_refusals:  # Warp refuses these when the backward pass is on,
        raise kir.backward_refusals[0]  # also in a forward library built before the adjoint's
    if options.backward:  # wp.grad(f)(x) is forward-only: Warp warns when the kernel has a backward pass
        for message in kir.grad_warnings:
            warn_grad_call(message)
    times.mark("frontend", t)
    stages = stage_table(target, options)
    build = _frontend_meta(Build(target, kir.name, kir.module, options, out_dir), kir)
    adj_error = None
    try:
        with ctx:
            run_table(build, stages, times, tm.dump_prefix(kir.name, options))
    except Exception as e:  # noqa: BLE001
        if options.jvp and isinstance(e, PassError):  # warp-jvp refused the kernel: a user error, named as one
            raise CompileError(f"kernel '{kir.name}' cannot be differentiated in forward mode (wp.jvp): "
                               f"{str(e).strip().splitlines()[0]}") from None
        if not options.backward:
            raise
        # The adjoint must never cost the kernel itself: build the kernel alone (a failure now is the
        # kernel's own and propagates); the adjoint launch reports why there is no adjoint.
        # A fresh context: an exception that left a pass also left MLIR's pass manager inside its
        # multi-threaded section, where the next dialect load aborts the process.
        for name in build.files:
            os.remove(os.path.join(out_dir, name))
        ctx, kir = _frontend(target, source, arg_types, backward=False, lanes=options.cpu_block_dim)
        build = _frontend_meta(Build(target, kir.name, kir.module, options, out_dir), kir)
        with ctx:
            run_table(build, stages, times, tm.dump_prefix(kir.name, options))
        adj_error = f"its adjoint kernel failed to compile: {str(e).strip().splitlines()[0]}"
    if adj_error is None:  # the kernel runs forward; its adjoint launch raises this
        adj_error = build.side_tables.get(ADJOINT_ERRORS_ATTR, {}).get(kir.name)
    sites = build.side_tables.get(SITES_ATTR, []) if options.debug else None
    adj_entry = tm.entry_name(adjoint_name(kir.name)) if options.backward and not adj_error else None
    # an adjoint-only library (the CPU's with_adjoint one) has no entry for the kernel itself: its adjoint's
    # stands in (the kernel's own library runs it forward)
    entry = adj_entry if options.adjoint_only and adj_entry and target == "cpu" else \
        tm.entry_name(tangent_name(kir.name) if options.jvp else kir.name)
    return CompiledKernel(
        target=target, entry=entry, adj_entry=adj_entry,
        adj_error=adj_error, debug_sites=sites, tid_dims=4 if "cpu_lanes" in build.meta else kir.tid_dims,
        timings_ms=dict(times),
        files=build.files, extra=build.meta)


def stage_names(target: str, options: BuildOptions) -> list:
    """The stages kernel.to_mlir can show: the IR stages ("warp" first, the frontend's output), text artifacts."""
    shown = target_module(target).TEXT_ARTIFACTS
    return [s.name for s in stage_table(target, options) if s.emit is None or s.name in shown]


def emit_ir(target: str, func, arg_types: dict, stage: str = "warp", options: BuildOptions | None = None) -> str:
    """The kernel's IR after `stage` of the target's table (or a text artifact: CUDA's "ptx")."""
    options = options or BuildOptions()
    names = stage_names(target, options)
    if stage not in names:
        what = "CUDA stage" if target == "cuda" else "stage"
        raise ValueError(f"unknown {what} {stage!r}; stages: {names}")
    ctx, kir = _frontend(target, get_source(func), arg_types, options.backward, options.cpu_block_dim,
                         compiling=False)
    stages = stage_table(target, options)
    until = [s.name for s in stages].index(stage) + 1
    build = Build(target, kir.name, kir.module, options, None)
    try:
        with ctx:
            run_table(build, stages[:until])
            if stage in build.artifacts:
                return build.artifacts[stage].decode()
            if until and until < len(stages) and stages[until].emit is not None:  # the last IR stage: as compiled
                pop_side_tables(kir.module)
            return str(kir.module)
    finally:
        # This context must be gone before the next compile forks (compiler/contained.py): one that a
        # reference cycle keeps alive until the next collection made the forked child hang.
        del build, kir, ctx
        gc.collect()
