"""Passes as data: the one registry of every mlwarp pass, declared here, implemented in its own module.

A pass is a frozen dataclass: a ClassVar `name` (its `mlwarp-opt --<name>` flag), `description` and
`implementation` (the module that runs it), and one typed field per option, with its default. An
option's name is its field's with `-` for `_` (`max_unroll` is `max-unroll`). `Pass.parse(options)`
builds one from upstream syntax's strings (`warp-unroll-loops{max-unroll=16}`), checking each value
against its field's type; `str(p)` prints it back the same way (compiler/pass_text.py prints and
parses whole pipelines). A pass without options is a plain subclass of `Pass` (it inherits the
frozen dataclass, fields and all: none): the decorator would cost ~0.35 ms of code generation at
import, every cold compile.

The declarations below are what the stage tables (compiler/targets/) hold and what pipeline text
parses to; they import no MLIR. Each pass's module subclasses its declaration with `run(self, module)`
(the class of the same name in `implementation`), imported on first use by `pass_class(name)`:
building a table imports none of them (the tile passes alone cost ~100 ms). Nothing registers itself
when its module is imported: a new pass is one declaration here, added to `DECLARED`
(test/python/test_pass_registry.py checks that every entry loads, implements its declaration and
round-trips its options). The IR helpers the passes share (`ops_named`, `kernels`, `is_inside`) are
passes/ir_walk.py.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import ClassVar

from mlwarp.core.config import config


class PassError(Exception):
    """A pass refused its input; the message says why."""


@dataclasses.dataclass(frozen=True)
class Pass:
    name: ClassVar[str]
    description: ClassVar[str]
    implementation: ClassVar[str]  # the module whose class of the same name runs it

    @classmethod
    def option_fields(cls) -> dict:
        """option name (`max-unroll`) -> its dataclasses.Field."""
        return {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}

    @classmethod
    def parse(cls, options: dict | None = None) -> "Pass":
        """The pass with these options ({option name: value}, a value as text or already typed)."""
        fields = cls.option_fields()
        options = dict(options or {})
        unknown = set(options) - set(fields)
        if unknown:
            raise PassError(f"pass '{cls.name}' has no option(s) {sorted(unknown)}; "
                            f"options: {sorted(fields) or 'none'}")
        return cls(**{fields[k].name: _convert(cls.name, k, v, _field_type(cls, fields[k]))
                      for k, v in options.items()})

    def options(self) -> dict:
        """{option name: value} of the options that differ from their defaults."""
        return {k: getattr(self, f.name) for k, f in self.option_fields().items()
                if getattr(self, f.name) != _default(f)}

    def __str__(self) -> str:
        text = " ".join(f"{k}={_show(v)}" for k, v in self.options().items())
        return f"{self.name}{{{text}}}" if text else self.name

    def run(self, module) -> None:
        raise NotImplementedError(f"pass '{self.name}' is a declaration: run implemented(pass) instead")


_TYPES = {"int": int, "bool": bool, "str": str, "float": float}


def _field_type(cls, field) -> type:
    t = field.type  # a string under `from __future__ import annotations`
    return _TYPES[t] if isinstance(t, str) else t


def _default(field):
    if field.default is not dataclasses.MISSING:
        return field.default
    return field.default_factory()


def _show(value) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f'"{text}"' if " " in text else text  # (pipeline text quotes a value with spaces)


def _convert(pass_name, key, value, want: type):
    if isinstance(value, want) and not (want is int and isinstance(value, bool)):
        return value
    if not isinstance(value, str):
        raise PassError(f"pass '{pass_name}': option {key}={value!r} is not a valid {want.__name__}")
    if want is str:
        return value
    try:
        if want is bool:
            if value not in ("true", "false", "1", "0"):
                raise ValueError(value)
            return value in ("true", "1")
        return want(value)
    except ValueError:
        raise PassError(f"pass '{pass_name}': option {key}={value!r} is not a valid {want.__name__}") from None


# warp-autodiff's default: a loop's reverse keeps up to this many bytes of carried state per thread on the stack
# (one tape entry per iteration); longer loops keep checkpoints and re-run segments (LoopReverse.taped_reverse_loop)
TAPE_BYTES = 64 * 1024


# -- the passes, by name ---------------------------------------------------------------------------------------

class ConvertArraysToLLVM(Pass):
    name = "convert-warp-arrays-to-llvm"
    implementation = "mlwarp.compiler.lowering.arrays_to_llvm"
    description = "Lower warp arrays to descriptor structs and array ops to LLVM address arithmetic and memory ops"


class ConvertBuiltinsToArith(Pass):
    name = "convert-warp-builtins-to-arith"
    implementation = "mlwarp.compiler.lowering.builtins_to_arith"
    description = "Lower warp builtin ops and warp.cast to arith/math (table-driven); make integer types signless"


class ConvertCompositesToVector(Pass):
    name = "convert-warp-composites-to-vector"
    implementation = "mlwarp.compiler.lowering.composites_to_vector"
    description = ("Lower warp vec/mat/quat/transform values to 1-D vectors and structs to LLVM structs; lower "
                   "their builtins (table-driven), component ops, memory ops and kernel arguments")


class ConvertNativeCalls(Pass):
    name = "convert-warp-native-calls"
    implementation = "mlwarp.compiler.lowering.native_calls_to_llvm"
    description = ("Lower calls of @wp.func_native declarations to llvm.call of their C++ entry points (each "
                   "operand and result by the address of a stack slot)")


@dataclasses.dataclass(frozen=True)
class ConvertTilesToLinalg(Pass):
    name = "convert-warp-tiles-to-linalg"
    implementation = "mlwarp.compiler.lowering.tiles_to_linalg"
    description = "Lower warp tiles to tensors and their ops to linalg.generic / tensor ops (bufferized after)"
    # a tile_load inside an array with contiguous rows reads each row with one vector load (the CPU); off:
    # element by element (CUDA, whose pipeline does not lower vector transfers)
    row_vectors: bool = True


@dataclasses.dataclass(frozen=True)
class Autodiff(Pass):
    name = "warp-autodiff"
    implementation = "mlwarp.compiler.passes.autodiff"
    description = ("Reverse-mode AD: for each kernel k add k_adj(args..., adj_args..., consumed, own_grads) (forward replay, "
                   "then the reverse sweep with the builtin table's derivative rules; loops from a tape of their states)")
    strict: bool = False  # fail on a kernel that cannot be differentiated, instead of keeping the reason
    # a loop tape's stack budget per thread; 0: recompute each iteration's state from the loop start (O(n^2),
    # no memory: GPU threads have a small stack)
    tape_bytes: int = TAPE_BYTES
    # keep the replay's unused array reads (a debug build: their bounds checks fire as in Warp's adjoint, which
    # replays the forward reads); off, they are erased with the other dead replay values
    keep_reads: bool = False


class Bf16AsI16(Pass):
    name = "warp-bf16-as-i16"
    implementation = "mlwarp.compiler.lowering.bf16_as_i16"
    description = "Carry bfloat16 values as i16 bit patterns in the LLVM dialect (no soft-float helpers)"


class Bf16RoundEachOp(Pass):
    name = "warp-bf16-round-each-op"
    implementation = "mlwarp.compiler.lowering.bf16_as_i16"
    description = ("After arith-emulate-unsupported-floats: drop `contract` from its bf16<->f32 conversions, so "
                   "folding keeps them and each operation rounds to bfloat16, as Warp's do")


class BoundsCheck(Pass):
    name = "warp-bounds-check"
    implementation = "mlwarp.compiler.passes.bounds_check"
    description = "Guard every array access with a bounds check, and check every assert, reporting the first " \
                  "failure in a hidden error-record parameter (debug mode)"


class CpuBlockLanes(Pass):
    name = "warp-cpu-block-lanes"
    implementation = "mlwarp.compiler.targets.cpu.block_lanes"
    description = ("Run each kernel of a module built for Warp's CPU lanes (warp.cpu_lanes = B) over its block's B "
                   "lanes: loops over the lanes between the cooperative tile operations, per-lane values in tiles")


@dataclasses.dataclass(frozen=True)
class CpuEntry(Pass):
    name = "warp-cpu-entry"
    implementation = "mlwarp.compiler.targets.cpu.cpu_entry"
    description = ("Wrap each kernel in a CPU entry point looping over a range of linear thread indices (adjoint-only: "
                   "not a kernel with an adjoint in the module, which is erased)")
    # a library for the adjoints only (the CPU's with_adjoint libraries: the kernel's own library runs it forward):
    # a kernel k next to its adjoint k_adj gets no entry and is erased
    adjoint_only: bool = False


class CpuInterchangeLoops(Pass):
    name = "warp-cpu-interchange-loops"
    implementation = "mlwarp.compiler.targets.cpu.interchange_loops"
    description = ("Loops with thread-invariant bounds in a kernel run once per block of threads, the per-thread "
                   "work between them as innermost loops over the block's threads (vectorisable)")


class CpuKeepVectors(Pass):
    name = "warp-cpu-keep-vectors"
    implementation = "mlwarp.compiler.targets.cpu.keep_vectors"
    description = ("Mark a module whose CPU entries hold a while loop computing on SIMD-shaped vectors (vec4, not "
                   "vec3), or a very large body without a while loop, or a module with tiles (unless its lanes run "
                   "while loops with no SIMD-shaped vector about): it keeps its vectors (no LLVM scalarizer)")


class PrivatizeAtomics(Pass):
    name = "warp-cpu-privatize-atomics"
    implementation = "mlwarp.compiler.targets.cpu.privatize_atomics"
    description = ("Sum atomic adds to a loop-invariant address in a private accumulator of the CPU thread "
                   "loop, flushed with one atomic add after the loop")


@dataclasses.dataclass(frozen=True)
class PrivatizeScatter(Pass):
    name = "warp-cpu-privatize-scatter"
    implementation = "mlwarp.compiler.targets.cpu.privatize_scatter"
    description = ("Add `<entry>_private`, a copy of each CPU entry whose atomics on arrays it only sums into "
                   "are plain, and the table of those parameters, for launches with per-part copies (replace-entry: "
                   "the entry itself becomes `<entry>_private`, no atomic form is left)")
    # an adjoint library's: its atomic entry runs only where private copies cannot (an array over the runtime's
    # limit, or overlapping another), and is most of a third of the library's compile; the runtime runs
    # `_private` on one thread there and asks for the library with atomics (autodiff/adjoint.py)
    replace_entry: bool = False


@dataclasses.dataclass(frozen=True)
class CpuSerialCopy(Pass):
    name = "warp-cpu-serial-copy"
    implementation = "mlwarp.compiler.targets.cpu.serial_copy"
    description = ("Add `<entry>_serial`, a copy of each CPU entry with atomics as plain read-modify-writes (none "
                   "where `<entry>_private` already has every atomic plain: the runtime runs that one; private-serves: "
                   "none where there is a `<entry>_private`)")
    # an adjoint library's: `_private` runs its one-thread launches even where it keeps atomics (into the gradient
    # arrays of struct fields); each copy is another full body for LLVM, and an adjoint runs once a backward pass
    private_serves: bool = False


class CpuForwardSums(Pass):
    name = "warp-cpu-forward-sums"
    implementation = "mlwarp.compiler.targets.cpu.forward_sums"
    description = ("In a loop of plain scattered sums (`_private` / `_serial` copies), a sum into the element the "
                   "previous sum wrote takes its result from a register, not back through memory")


class VectorizeGathers(Pass):
    name = "warp-cpu-vectorize-gathers"
    implementation = "mlwarp.compiler.targets.cpu.vectorize_gathers"
    description = ("A thread loop gathering vecN values through loaded indices into stack buffers runs 8 threads a "
                   "step, each thread's vector loaded whole and the 8 transposed (the module keeps its vectors)")


@dataclasses.dataclass(frozen=True)
class CpuVectorMath(Pass):
    name = "warp-cpu-vector-math"
    implementation = "mlwarp.compiler.targets.cpu.cpu_vector_math"
    description = ("Replace libm intrinsics by calls carrying libmvec vector variants, so LLVM can vectorise "
                   "loops that call them (CPU)")
    isa: str = "host"  # host, none, or a comma-separated list of ISAS


@dataclasses.dataclass(frozen=True)
class VectorizeTileMatmul(Pass):
    name = "warp-cpu-vectorize-tile-matmul"
    implementation = "mlwarp.compiler.targets.cpu.vectorize_tile_matmul"
    description = ("Tile and vectorise float tile_matmul generics (warp.tile_matmul) into register-blocked "
                   "outer products: upstream linalg tiling, vectorisation and vector lowering (CPU)")
    vector_bits: int = 0  # the vector registers' width: 0 for the host's (512 with AVX-512F, else 256)


class WarpCse(Pass):
    name = "warp-cse"
    implementation = "mlwarp.compiler.passes.warp_cse"
    description = "Merge repeated pure warp ops and erase unused ones (the op table's effects)"


class ExpandGeometry(Pass):
    name = "warp-expand-geometry"
    implementation = "mlwarp.compiler.passes.expand_geometry"
    description = "Geometry queries (warp.hash_grid_query, ...) as loads from the structure's descriptor and scf loops"


class GpuCooperativeTiles(Pass):
    name = "warp-gpu-cooperative-tiles"
    implementation = "mlwarp.compiler.targets.cuda.cooperative_tiles"
    description = ("Spread each kernel's tile ops over its CUDA block's lanes (strided loops, gpu.barrier between), "
                   "its tiles in shared memory; or leave the module one thread per block (warp.tiled_launch says which)")


class GpuKernel(Pass):
    name = "warp-gpu-kernel"
    implementation = "mlwarp.compiler.targets.cuda.gpu_kernel"
    description = ("Wrap each kernel in a gpu.func (grid-stride loop over the linear thread index, bounded by the "
                   "launch size) inside a gpu.module")


class GradCalls(Pass):
    name = "warp-grad-calls"
    implementation = "mlwarp.compiler.passes.grad_calls"
    description = ("Body of each function marked warp.grad_of = @f (wp.grad(f)): f's forward replay, then its reverse "
                   "sweep with the results' adjoints seeded to ones (or f's @wp.func_grad adjoint)")


class CarryTileBuffers(Pass):
    name = "warp-carry-tile-buffers"
    implementation = "mlwarp.compiler.passes.carry_tile_buffers"
    description = ("A loop that hands a new tile buffer to its next iteration copies it into the buffer it carries: "
                   "no heap buffer per iteration")


class StructTilesAsBytes(Pass):
    name = "warp-struct-tiles-as-bytes"
    implementation = "mlwarp.compiler.passes.struct_tiles_as_bytes"
    description = ("Tiles of structs (tensors of !warp.struct) become tensors of the structs' bytes, vector<K x i8>, "
                   "before bufferization")


class HoistTileBuffers(Pass):
    name = "warp-hoist-tile-buffers"
    implementation = "mlwarp.compiler.passes.hoist_tile_buffers"
    description = ("Move stack tile buffers allocated inside loops and branches to the top of their function, "
                   "unless an iteration carries them on")


class Inline(Pass):
    name = "warp-inline"
    implementation = "mlwarp.compiler.passes.inline"
    description = "Inline calls of private functions (@wp.func) into their callers and erase those functions"


class Jvp(Pass):
    name = "warp-jvp"
    implementation = "mlwarp.compiler.passes.autodiff_jvp"
    description = ("Forward-mode AD: for each kernel k add k_jvp(args..., tan_args...), the forward computation "
                   "with the tangents of its values (the builtin table's rules)")


@dataclasses.dataclass(frozen=True)
class StreamTileReductions(Pass):
    name = "warp-stream-tile-reductions"
    implementation = "mlwarp.compiler.passes.stream_tile_reductions"
    description = "Whole-tile add/mul/max/min reductions of a tile only loaded to be reduced read the array in " \
                  "the reduction's loop (no tile buffer; the same elements in the same order)"
    # a step's elements of a contiguous row as one vector load (the CPU); off: element by element (for a target
    # whose pipeline does not lower vector ops; CUDA does not run this pass: its lanes load a tile cooperatively)
    row_vectors: bool = True


class TagFusionProducers(Pass):
    name = "warp-tag-fusion-producers"
    implementation = "mlwarp.compiler.passes.fused_producers"
    description = ("Tag each linalg.generic whose results only linalg.generic ops read (before "
                   "linalg-fuse-elementwise-ops: the producers it may fuse)")


class EraseFusedProducers(Pass):
    name = "warp-erase-fused-producers"
    implementation = "mlwarp.compiler.passes.fused_producers"
    description = ("Erase a tagged linalg.generic whose readers all took a copy of its body "
                   "(linalg-fuse-elementwise-ops): its effects already happen in them, once")


class StripAsserts(Pass):
    name = "warp-strip-asserts"
    implementation = "mlwarp.compiler.passes.strip_asserts"
    description = "Erase warp.assert (a release build: Warp checks asserts in debug builds only)"


@dataclasses.dataclass(frozen=True)
class UnrollLoops(Pass):
    name = "warp-unroll-loops"
    implementation = "mlwarp.compiler.passes.unroll"
    description = "Unroll scf.for loops with constant bounds and at most max-unroll iterations (Warp's rule)"
    max_unroll: int = dataclasses.field(default_factory=lambda: int(config.max_unroll))  # read when built


DECLARED: dict[str, type] = {cls.name: cls for cls in (
    ConvertArraysToLLVM, ConvertBuiltinsToArith, ConvertCompositesToVector, ConvertNativeCalls, ConvertTilesToLinalg,
    Autodiff,
    Bf16AsI16, Bf16RoundEachOp, BoundsCheck, CpuBlockLanes, CpuEntry, CpuInterchangeLoops, CpuKeepVectors,
    PrivatizeAtomics, PrivatizeScatter, CpuSerialCopy, CpuForwardSums, VectorizeGathers, CpuVectorMath, VectorizeTileMatmul, WarpCse, ExpandGeometry,
    EraseFusedProducers, GpuCooperativeTiles, GpuKernel, GradCalls, CarryTileBuffers, HoistTileBuffers, StructTilesAsBytes, Inline, Jvp, StreamTileReductions,
    StripAsserts, TagFusionProducers, UnrollLoops)}

# name -> (module, class name) of each pass's implementation
PASSES: dict[str, tuple[str, str]] = {name: (cls.implementation, cls.__name__) for name, cls in sorted(DECLARED.items())}


def pass_class(name: str) -> type | None:
    """The implementation class of mlwarp pass `name` (its module imported now if need be), or None: not ours
    (an upstream pass)."""
    where = PASSES.get(name)
    if where is None:
        return None
    module, cls_name = where
    return getattr(importlib.import_module(module), cls_name)


def declared(name: str) -> type | None:
    """The class whose instances stand for pass `name` in tables and parsed pipelines (its declaration, MLIR-free;
    a pass listed in PASSES without one: its class), or None: not ours."""
    if name in DECLARED:
        return DECLARED[name]
    return pass_class(name) if name in PASSES else None


def implemented(p: Pass) -> Pass:
    """`p` as its implementation's instance, same options: the object whose run() rewrites the IR."""
    cls = pass_class(p.name)
    if isinstance(p, cls):
        return p
    return cls(**{f.name: getattr(p, f.name) for f in dataclasses.fields(p)})
