# RUN: %PYTHON %s | FileCheck %s

# print() calls libc printf with Warp's per-type format (a private constant
# string), then fflush(NULL); floats are promoted to double as C varargs are.
import mlwarp as wp


@wp.kernel
def k(a: wp.array(dtype=float)):
    i = wp.tid()
    print(a[i])
    wp.printf("%d\n", i)


print(k.to_mlir())

# CHECK-DAG: llvm.func @printf(!llvm.ptr, ...) -> i32
# CHECK-DAG: llvm.func @fflush(!llvm.ptr) -> i32
# CHECK-DAG: llvm.mlir.global private constant @[[G:__wp_str_[0-9]+]]("%g\0A\00")
# CHECK-LABEL: func.func @k(
# CHECK: %[[X:.+]] = "warp.load"
# CHECK: %[[D:.+]] = "warp.cast"(%[[X]]) : (f32) -> f64
# CHECK: %[[F:.+]] = llvm.mlir.addressof @[[G]] : !llvm.ptr
# CHECK: llvm.call @printf(%[[F]], %[[D]]) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f64) -> i32
# CHECK: llvm.call @fflush(
# CHECK: llvm.call @printf(%{{.+}}, %{{.+}}) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32) -> i32
