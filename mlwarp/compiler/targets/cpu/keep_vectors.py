"""warp-cpu-keep-vectors: a module whose CPU entries run a `while` loop in their thread loop is marked
(KEEP_VECTORS_ATTR), and object_code.py then compiles it without LLVM's scalarizer.

The scalarizer splits every wp.vec/mat/quat value into scalars so that LLVM's loop vectoriser can vectorise
the thread loop across threads. A thread loop holding a data-dependent `while` (a BVH traversal, a hash-grid
walk, a user's convergence loop) is never vectorised: LLVM vectorises innermost countable loops only, and a
thread's while loop is neither. There the split only undoes SIMD code: a 4-wide BVH node's four box tests as
vec4 arithmetic are four packed instructions each, and after the split the SLP vectoriser rebuilds some of
them (1M mesh_query_ray casts on one thread, bench/geometry.py's terrain: 341-346 ms kept, 384-387 ms split;
hash-grid neighbour counts and mesh point/AABB queries the same or faster kept).
"""

from __future__ import annotations

from mlir import ir

from ...passes import registry
from ...passes.ir_walk import ops_named
from .cpu_entry import cpu_entries

KEEP_VECTORS_ATTR = "warp.cpu_keep_vectors"


class CpuKeepVectors(registry.CpuKeepVectors):
    def run(self, module):
        if any(ops_named(entry, {"scf.while"}) for entry in cpu_entries(module)):
            module.operation.attributes[KEEP_VECTORS_ATTR] = ir.UnitAttr.get()
