# REQUIRES: x86-64
# RUN: %PYTHON %s | FileCheck %s
#
# The architecture review's particle kernel, on wp.vec3 arrays as users write it. Its values are LLVM
# vectors (<3 x float>), which LLVM's loop vectoriser refuses; the CPU pipeline scalarises them first
# (object_code.PIPELINE: scalarizer<load-store>, then O3), so the contiguous copy of the thread loop is
# vectorised across threads: each array's stride-3 components are read as one wide load split by
# shuffles (an interleave group of N threads x 3 floats) and written back the same way. The width N is
# the host's (4 with 128-bit vectors, 8 with 256, 16 with 512). LLVM's O3 alone leaves the loop on <3 x float>.
import re

import mlwarp as wp
from mlwarp.compiler.context import make_context
from mlwarp.compiler.targets.cpu.object_code import optimized_llvm_ir
from mlir import ir


@wp.kernel(enable_backward=False)
def step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), gravity: wp.vec3, dt: float,
         restitution: float):
    tid = wp.tid()
    v = vel[tid] + gravity * dt
    p = pos[tid] + v * dt
    if p[1] < 0.0:
        p = wp.vec3(p[0], 0.0, p[2])
        v = wp.vec3(v[0], -v[1] * restitution, v[2])
    pos[tid] = p
    vel[tid] = v


def widths(ir_text: str, pattern: str) -> list:
    return sorted({int(n) for n in re.findall(pattern, ir_text)})


llvm_ir = step.to_mlir("llvm-ir")
entry = llvm_ir[llvm_ir.index("define void @step_cpu("):]
entry = entry[:entry.index("\n}\n")]
loads = [g // 3 for g in widths(entry, r"load <(\d+) x float>") if g % 3 == 0 and g > 3]
stores = [g // 3 for g in widths(entry, r"store <(\d+) x float>") if g % 3 == 0 and g > 3]
print("lanes of the interleaved loads (3 floats each):", loads)
print("lanes of the interleaved stores:", stores)

with make_context():
    plain = optimized_llvm_ir(ir.Module.parse(step.to_mlir("llvm")), "default<O3>")
plain_entry = plain[plain.index("define void @step_cpu("):]
plain_entry = plain_entry[:plain_entry.index("\n}\n")]
print("O3 alone, widest float vector in the entry:", max(widths(plain_entry, r"<(\d+) x float>")))

# CHECK: lanes of the interleaved loads (3 floats each): [{{(4|8|16)(, (8|16))?}}]
# CHECK: lanes of the interleaved stores: [{{(4|8|16)(, (8|16))?}}]
# CHECK: O3 alone, widest float vector in the entry: 3{{$}}
