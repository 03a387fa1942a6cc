// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// A struct tile's element goes to and from its bytes through one 16-byte-aligned stack slot of the function (a
// memref.alloca at its top, shared by every conversion of that size: each stores, then loads at once). An atomic
// add of a struct adds field by field: a float, an int32 and a vec2d's components atomically, a bool field (no
// atomic add) is read and left as it is; the old struct is built of the old fields.

// CHECK-LABEL: func.func @bytes
// CHECK: %[[SLOT:.+]] = memref.alloca() {alignment = 16 : i64} : memref<32xi8>
// CHECK-NOT: memref.alloca
// CHECK: llvm.store %{{.+}}, %[[P1:.+]] {alignment = 16 : i64} : !llvm.struct<(i1, f32, array<2 x f64>, i32)>, !llvm.ptr
// CHECK: llvm.load %[[P1]] {alignment = 16 : i64} : !llvm.ptr -> vector<32xi8>
// CHECK: memref.extract_aligned_pointer_as_index %[[SLOT]]
// CHECK: llvm.store %{{.+}}, %[[P2:.+]] {alignment = 16 : i64} : vector<32xi8>, !llvm.ptr
// CHECK: llvm.load %[[P2]] {alignment = 16 : i64} : !llvm.ptr -> !llvm.struct<(i1, f32, array<2 x f64>, i32)>
!Q = !warp.struct<"Q", [i1, f32, !warp.vec<2, f64>, i32]>
func.func @bytes(%s: !Q) -> !Q {
  %b = "warp.struct_bytes"(%s) : (!Q) -> vector<32xi8>
  %t = "warp.struct_of_bytes"(%b) : (vector<32xi8>) -> !Q
  return %t : !Q
}

// CHECK-LABEL: func.func @atomic
// CHECK: %[[BASE:.+]] = "warp.address"
// CHECK: %[[F0:.+]] = llvm.getelementptr %[[BASE]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i1, f32, array<2 x f64>, i32)>
// CHECK: llvm.load %[[F0]] : !llvm.ptr -> i1
// CHECK: %[[F1:.+]] = llvm.getelementptr %[[BASE]][0, 1]
// CHECK: llvm.atomicrmw fadd %[[F1]], %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: %[[F2:.+]] = llvm.getelementptr %[[BASE]][0, 2]
// CHECK: llvm.getelementptr %[[F2]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.atomicrmw fadd %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f64
// CHECK: llvm.getelementptr %[[F2]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.atomicrmw fadd %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f64
// CHECK: %[[F3:.+]] = llvm.getelementptr %[[BASE]][0, 3]
// CHECK: llvm.atomicrmw add %[[F3]], %{{.+}} monotonic : !llvm.ptr, i32
func.func @atomic(%a: !warp.array<!Q, 1>, %s: !Q, %i: i32) -> !Q {
  %old = "warp.atomic"(%a, %s, %i) {kind = "add"} : (!warp.array<!Q, 1>, !Q, i32) -> !Q
  return %old : !Q
}
