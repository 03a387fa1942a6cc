// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// wp.zeros((2, 3), dtype=float) in a kernel is warp.local_array: 24 bytes allocated once at the top of
// the function, after a stack save that each return restores (the body runs once per thread), zeroed
// where the op was, and a row-major descriptor (shape 2, 3; byte strides 12, 4).

// CHECK-LABEL: func.func @k
// CHECK-NEXT: %[[SP:.+]] = llvm.intr.stacksave : !llvm.ptr
// CHECK: %[[BUF:.+]] = llvm.alloca %{{.+}} x !llvm.array<24 x i8> {alignment = 16 : i64}
// CHECK: "llvm.intr.memset"(%[[BUF]], %{{.+}}, %{{.+}}) <{isVolatile = false}>
// CHECK: %[[D0:.+]] = llvm.insertvalue %[[BUF]], %{{.+}}[0] : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.insertvalue %{{.+}}, %{{.+}}[2, 0]
// CHECK: llvm.load
// CHECK: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: return
func.func @k(%i: i32) -> f32 {
  %a = "warp.local_array"() {shape = array<i64: 2, 3>} : () -> !warp.array<f32, 2>
  %v = "warp.load"(%a, %i, %i) : (!warp.array<f32, 2>, i32, i32) -> f32
  return %v : f32
}

// vec3 elements: 12 bytes each.
// CHECK-LABEL: func.func @vectors
// CHECK: llvm.alloca %{{.+}} x !llvm.array<48 x i8>
func.func @vectors() {
  %a = "warp.local_array"() {shape = array<i64: 4>} : () -> !warp.array<!warp.vec<3, f32>, 1>
  return
}
