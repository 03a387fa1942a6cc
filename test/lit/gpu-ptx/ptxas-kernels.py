# RUN: %PYTHON %s %t
# RUN: %ptxas -arch=sm_90 %t.blend.ptx -o %t.blend.cubin
# RUN: %ptxas -arch=sm_90 %t.histogram.ptx -o %t.histogram.cubin
# RUN: cat %t.blend.ptx %t.histogram.ptx | FileCheck %s
#
# Kernels through the whole CUDA path (frontend -> warp -> gpu/NVVM -> PTX); the
# PTX is assembled by ptxas for sm_90. One entry per kernel, the launch struct as
# its one by-value parameter, libdevice math linked in (no .extern), global atomics.
import sys

import mlwarp as wp
from mlwarp.launching import cuda_compile


@wp.kernel
def blend(x: wp.array(dtype=wp.float32, ndim=2), y: wp.array(dtype=wp.float32, ndim=2), t: wp.float32):
    i, j = wp.tid()
    y[i, j] = wp.exp(x[i, j]) * t + wp.cos(y[i, j]) * (1.0 - t)


@wp.kernel
def histogram(values: wp.array(dtype=wp.int32), bins: wp.array(dtype=wp.int32)):
    i = wp.tid()
    wp.atomic_add(bins, values[i] % 16, 1)


for k in (blend, histogram):
    with open(f"{sys.argv[1]}.{k.key}.ptx", "w") as out:
        out.write(cuda_compile.to_mlir(k, "ptx", 90))

# CHECK-NOT: .extern
# CHECK: .target sm_90
# CHECK: .visible .entry blend_cuda(
# CHECK-NEXT: .param .align 8 .b8 blend_cuda_param_0[{{[0-9]+}}]
# CHECK-NEXT: )
# CHECK-DAG: mov.u32 {{.*}}%ctaid.x;
# CHECK-DAG: ld.global.b32
# CHECK-DAG: st.global.b32
# The adjoint kernel (warp-autodiff) is in the same module; array reads become atomic adds.
# CHECK: .visible .entry blend_adj_cuda(
# CHECK: atom.global.add.f32
# CHECK: .visible .entry histogram_cuda(
# CHECK: {{(atom|red)}}.global.add.u32
