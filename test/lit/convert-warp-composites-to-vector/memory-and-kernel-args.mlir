// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// A kernel's composite arguments arrive in C layout (!llvm.array) and become
// vectors on entry; array elements are loaded and stored as whole vectors with
// the scalar's alignment (a vec3 is 12 bytes, not the 16 of an aligned
// vector<3xf32>); `a[i] += v` is one atomic add per component.

// CHECK-LABEL: func.func @k
// CHECK-SAME: %[[G:[^:]+]]: !llvm.array<3 x f32>
// CHECK-DAG: %[[G0:.+]] = llvm.extractvalue %[[G]][0] : !llvm.array<3 x f32>
// CHECK-DAG: %[[G2:.+]] = llvm.extractvalue %[[G]][2] : !llvm.array<3 x f32>
// CHECK: %[[GV:.+]] = vector.from_elements %[[G0]], %{{.+}}, %[[G2]] : vector<3xf32>
// CHECK: %[[P:.+]] = "warp.address"(%arg0, %{{.+}}) : (!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, i32) -> !llvm.ptr
// CHECK: %[[X:.+]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[GV]] : vector<3xf32>
// CHECK: %[[Q:.+]] = "warp.address"(%arg0, %{{.+}})
// CHECK: llvm.store %[[S]], %[[Q]] {alignment = 4 : i64} : vector<3xf32>, !llvm.ptr
// CHECK: %[[R:.+]] = "warp.address"(%arg0, %{{.+}})
// CHECK: %[[R0:.+]] = llvm.getelementptr %[[R]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.atomicrmw fadd %[[R0]], %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: %[[R1:.+]] = llvm.getelementptr %[[R]][4] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.atomicrmw fadd %[[R1]]
// CHECK: %[[R2:.+]] = llvm.getelementptr %[[R]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.atomicrmw fadd %[[R2]]
func.func @k(%a: !warp.array<!warp.vec<3, f32>, 1>, %g: !warp.vec<3, f32>) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %x = "warp.load"(%a, %i) : (!warp.array<!warp.vec<3, f32>, 1>, i32) -> !warp.vec<3, f32>
  %s = "warp.add"(%x, %g) : (!warp.vec<3, f32>, !warp.vec<3, f32>) -> !warp.vec<3, f32>
  "warp.store"(%a, %s, %i) : (!warp.array<!warp.vec<3, f32>, 1>, !warp.vec<3, f32>, i32) -> ()
  %old = "warp.atomic"(%a, %g, %i) {kind = "add"} : (!warp.array<!warp.vec<3, f32>, 1>, !warp.vec<3, f32>, i32) -> !warp.vec<3, f32>
  return
}

// A function that is not a kernel (a wp.func) takes and returns vectors as values.
// CHECK-LABEL: func.func @helper(%arg0: vector<2xf64>) -> vector<2xf64>
func.func @helper(%v: !warp.vec<2, f64>) -> !warp.vec<2, f64> {
  return %v : !warp.vec<2, f64>
}
