"""warp-cpu-keep-vectors: a module whose CPU entries run a `while` loop in their thread loop, or whose entry
holds more than LARGE_ENTRY_OPS ops, is marked (KEEP_VECTORS_ATTR), and object_code.py then compiles it
without LLVM's scalarizer.

The scalarizer splits every wp.vec/mat/quat value into scalars so that LLVM's loop vectoriser can vectorise
the thread loop across threads. A thread loop holding a data-dependent `while` (a BVH traversal, a hash-grid
walk, a user's convergence loop) is never vectorised: LLVM vectorises innermost countable loops only, and a
thread's while loop is neither. There the split only undoes SIMD code: a 4-wide BVH node's four box tests as
vec4 arithmetic are four packed instructions each, and after the split the SLP vectoriser rebuilds some of
them (1M mesh_query_ray casts on one thread, bench/geometry.py's terrain: 341-346 ms kept, 384-387 ms split;
hash-grid neighbour counts and mesh point/AABB queries the same or faster kept).

A very large body (wp.curlnoise of a vec4: 48 lattice corners an octave, inlined; its adjoint five times that)
is kept too: split and vectorised across threads, LLVM's optimiser and code generator take 4x as long on it
(17 s instead of 4.5 s for curlnoise 4-d's 16,500 ops, tens of seconds for its adjoint) for the sake of a
kernel whose threads each run tens of thousands of instructions anyway.
"""

from __future__ import annotations

from mlir import ir

from ...passes import registry
from ...passes.ir_walk import ops_named
from .cpu_entry import cpu_entries

KEEP_VECTORS_ATTR = "warp.cpu_keep_vectors"
LARGE_ENTRY_OPS = 10000  # the largest kernels of the benchmarks have a few hundred


class CpuKeepVectors(registry.CpuKeepVectors):
    def run(self, module):
        entries = cpu_entries(module)
        if any(ops_named(entry, {"scf.while"}) for entry in entries) or \
                any(_op_count(entry) > LARGE_ENTRY_OPS for entry in entries):
            module.operation.attributes[KEEP_VECTORS_ATTR] = ir.UnitAttr.get()


def _op_count(op) -> int:
    count = 0

    def visit(_):
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return count
