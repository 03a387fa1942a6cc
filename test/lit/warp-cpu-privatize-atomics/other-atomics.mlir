// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-atomics | FileCheck %s

// An add to an invariant address is privatized only when every access the loop makes to that array is
// such an add: an atomic min (max, exchange, ...) into it does not commute with a sum moved to the end
// of the chunk (`add 1.0` then `min 0.5` from every thread ends at 0.5, never at the sum).
// CHECK-LABEL: func.func @add_then_min_cpu
// CHECK-NOT: llvm.alloca
// CHECK: scf.for
// CHECK: llvm.atomicrmw fadd %[[P:.+]], %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: llvm.atomicrmw fmin %[[P]], %{{.+}} monotonic : !llvm.ptr, f32
func.func @add_then_min(%out: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %p = llvm.extractvalue %out[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %c0 = arith.constant 0 : i64
  %a = llvm.getelementptr inbounds %p[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %x = llvm.atomicrmw fadd %a, %one monotonic : !llvm.ptr, f32
  %y = llvm.atomicrmw fmin %a, %half monotonic : !llvm.ptr, f32
  return
}

// The other atomic may sit at another address of the same array (an exchange into out[tid]): still left alone.
// CHECK-LABEL: func.func @add_and_exchange_elsewhere_cpu
// CHECK-NOT: llvm.alloca
// CHECK: llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw xchg %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
func.func @add_and_exchange_elsewhere(%out: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %p = llvm.extractvalue %out[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %c0 = arith.constant 0 : i64
  %first = llvm.getelementptr inbounds %p[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %mine = llvm.getelementptr inbounds %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %one = arith.constant 1 : i32
  %x = llvm.atomicrmw add %first, %one monotonic : !llvm.ptr, i32
  %y = llvm.atomicrmw xchg %mine, %t monotonic : !llvm.ptr, i32
  return
}

// A max into another array does not stop the sum: only accesses to the summed array count.
// CHECK-LABEL: func.func @sum_and_max_of_another_array_cpu
// CHECK: llvm.alloca %{{.+}} x f32
// CHECK: scf.for
// CHECK-NOT: llvm.atomicrmw fadd
// CHECK: llvm.atomicrmw fmax %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: }
// CHECK: scf.if
// CHECK: llvm.atomicrmw fadd
func.func @sum_and_max_of_another_array(%sum: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                                        %top: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %v = arith.sitofp %t : i32 to f32
  %c0 = arith.constant 0 : i64
  %sp = llvm.extractvalue %sum[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %sa = llvm.getelementptr inbounds %sp[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %tp = llvm.extractvalue %top[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ta = llvm.getelementptr inbounds %tp[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x = llvm.atomicrmw fadd %sa, %v monotonic : !llvm.ptr, f32
  %y = llvm.atomicrmw fmax %ta, %v monotonic : !llvm.ptr, f32
  return
}
