"""warp-cpu-keep-vectors: a module with a CPU entry whose thread loop runs a `while` loop computing on
SIMD-shaped vectors (a power-of-two lane count of SIMD_BITS or more: vec4, quat, mat44, vec2d), or with an
entry without a while loop that holds more than LARGE_ENTRY_OPS ops, is marked (KEEP_VECTORS_ATTR), and
object_code.py then compiles it without LLVM's scalarizer.

The scalarizer splits every wp.vec/mat/quat value into scalars so that LLVM's loop vectoriser can vectorise
the thread loop across threads. A thread loop holding a data-dependent `while` (a BVH traversal, a hash-grid
walk, a user's convergence loop) is never vectorised: LLVM vectorises innermost countable loops only, and a
thread's while loop is neither. There the split undoes SIMD code: a 4-wide BVH node's four box tests as vec4
arithmetic are four packed instructions each, and after the split the SLP vectoriser rebuilds some of them
(1M mesh_query_ray casts on one thread, bench/geometry.py's terrain: 341-346 ms kept, 384-387 ms split).
A while loop whose vector math is 3-lane (vec3: a closest-point traversal, a hash-grid walk) is split all the
same: LLVM keeps a vec3 as a 4-lane register with a dead lane, its dot products as shuffles and horizontal
adds, its min/max as chains of selects, where split scalars schedule freely (20,000 mesh_query_point_no_sign
on a 16,128-triangle sphere, one thread: 9.5 us a query kept, 4.9 split, Warp 4.4; mesh_query_point with its
three sign rays 10.0 -> 5.7, Warp 5.1; hash-grid neighbour counts the same either way).

A very large body (wp.curlnoise of a vec4: 48 lattice corners an octave, inlined; its adjoint five times that)
is kept too: split and vectorised across threads, LLVM's optimiser and code generator take 4x as long on it
(17 s instead of 4.5 s for curlnoise 4-d's 16,500 ops, tens of seconds for its adjoint) for the sake of a
kernel whose threads each run tens of thousands of instructions anyway. An entry with a while loop is not
vectorised across threads, so its size does not count.

A module with tiles is marked unless its entries run while loops and compute on no SIMD-shaped vector
anywhere (object_code.py says why tile modules keep their vectors: a tile matmul's register blocks are
vector.fma on them): a per-lane traversal in a tile_map is the while loops above (example_tile_mcgp's
sphere_walk, each lane a walk of mesh_query_point: 1.28 s CPU kept, 0.98 split, Warp 0.95).
"""

from __future__ import annotations

from mlir import ir

from ...passes import registry
from ...passes.ir_walk import ops_named
from ..common import TILES_ATTR
from .cpu_entry import cpu_entries

KEEP_VECTORS_ATTR = "warp.cpu_keep_vectors"
LARGE_ENTRY_OPS = 10000  # the largest kernels of the benchmarks have a few hundred
SIMD_BITS = 128  # an SSE register, the narrowest the host has
ARITHMETIC_DIALECTS = ("arith.", "math.", "vector.fma")  # (vector.fma: a tile matmul's register blocks)


class CpuKeepVectors(registry.CpuKeepVectors):
    def run(self, module):
        entries = cpu_entries(module)
        if TILES_ATTR in module.operation.attributes:
            keep = not any(ops_named(entry, {"scf.while"}) for entry in entries) or \
                any(_computes_simd_vectors(entry) for entry in entries)
        else:
            keep = any(_keeps_vectors(entry) for entry in entries)
        if keep:
            module.operation.attributes[KEEP_VECTORS_ATTR] = ir.UnitAttr.get()


def _keeps_vectors(entry) -> bool:
    """An entry whose while loops compute SIMD-shaped vectors, or a very large entry without a while loop (one
    with a while loop is not vectorised across threads, split or not: its compile time stays, the adjoint of
    a kernel with three mesh_query_point traversals, 12,000 ops, compiles in the same time split or kept)."""
    loops = ops_named(entry, {"scf.while"})
    if loops:
        return any(_computes_simd_vectors(loop) for loop in loops)
    return _op_count(entry) > LARGE_ENTRY_OPS


def _is_simd_shaped(t: ir.Type) -> bool:
    """A vector of a power-of-two lane count filling at least an SSE register (vector<4xf32>, vector<2xf64>,
    vector<16xf32>), not a vec3's vector<3xf32> or a vec2's 64 bits."""
    if not isinstance(t, ir.VectorType):
        return False
    lanes = 1
    for d in t.shape:
        lanes *= d
    width = getattr(t.element_type, "width", 0)
    return lanes >= 2 and lanes & (lanes - 1) == 0 and lanes * width >= SIMD_BITS


def _computes_simd_vectors(root) -> bool:
    """Whether arithmetic under `root` (a while loop, an entry: its regions, nested ops included) reads or makes
    a SIMD-shaped vector (loads and constants aside: a vec4 loaded to be taken apart is not SIMD code)."""
    found = False

    def visit(op):
        nonlocal found
        name = op.name
        if name.startswith(ARITHMETIC_DIALECTS) and name != "arith.constant" and (
                any(_is_simd_shaped(v.type) for v in op.operands) or any(_is_simd_shaped(r.type) for r in op.results)):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _op_count(op) -> int:
    count = 0

    def visit(_):
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return count
