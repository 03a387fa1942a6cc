# RUN: %PYTHON %s %t
# RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
# RUN: FileCheck %s < %t.ptx
#
# print / wp.printf / wp.expect_eq on the GPU: the frontend's libc printf calls become
# gpu.printf in warp-gpu-kernel, then calls of the driver's vprintf (the only extern
# the PTX may name); fflush has no device counterpart and is dropped.
import sys

import mlwarp as wp
from mlwarp.launching import cuda_compile


@wp.kernel
def report(a: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    print(a[i])
    print(n > 2)  # %s with a pointer to "True" or "False": the strings get device copies
    wp.printf("i=%d n=%d\n", i, n)
    wp.expect_eq(n, 3)


with open(f"{sys.argv[1]}.ptx", "w") as out:
    out.write(cuda_compile.to_mlir(report, "ptx", 90))

# CHECK: .extern .func  (.param .b32 func_retval0) vprintf
# CHECK-NOT: .extern
# CHECK-NOT: fflush
# CHECK-DAG: .global .align 1 .b8 {{[A-Za-z_]+[0-9]+}}[4] = {37, 103, 10};
# CHECK-DAG: .global .align 1 .b8 {{[A-Za-z_]+[0-9]+}}[4] = {37, 115, 10};
# CHECK-DAG: .global .align 1 .b8 {{[A-Za-z_]+[0-9]+}}[5] = {84, 114, 117, 101};
# CHECK-DAG: .global .align 1 .b8 {{[A-Za-z_]+[0-9]+}}[11] = {105, 61, 37, 100, 32, 110, 61, 37, 100, 10};
# CHECK: .visible .entry report_cuda(
# CHECK: call.uni (retval0), vprintf, (param0, param1);
