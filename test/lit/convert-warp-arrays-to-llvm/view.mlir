// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// `a[i]` of a 3-d array is warp.view: a 2-d descriptor whose data pointer is
// the address of a[i, 0, 0] and whose shape and strides are a's last two.

// CHECK-LABEL: func.func @view_row
// CHECK-SAME: (%[[A:.+]]: !llvm.struct<(ptr, array<3 x i64>, array<3 x i64>)>, %[[I:.+]]: i32)
// CHECK: %[[U:.+]] = llvm.mlir.undef : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[DATA:.+]] = llvm.extractvalue %[[A]][0]
// CHECK: %[[S0:.+]] = llvm.extractvalue %[[A]][2, 0]
// CHECK: %[[OFF:.+]] = arith.muli %{{.+}}, %[[S0]] overflow<nsw> : i64
// CHECK: %[[P:.+]] = llvm.getelementptr inbounds %[[DATA]][%[[OFF]]]
// CHECK: %[[V0:.+]] = llvm.insertvalue %[[P]], %[[U]][0]
// CHECK: llvm.extractvalue %[[A]][1, 1]
// CHECK: llvm.insertvalue %{{.+}}[1, 0]
// CHECK: llvm.extractvalue %[[A]][2, 1]
// CHECK: llvm.insertvalue %{{.+}}[2, 0]
// CHECK: llvm.extractvalue %[[A]][1, 2]
// CHECK: llvm.insertvalue %{{.+}}[1, 1]
// CHECK: llvm.extractvalue %[[A]][2, 2]
// CHECK: %[[ROW:.+]] = llvm.insertvalue %{{.+}}[2, 1]
// The load through the view uses the view's own strides.
// CHECK: llvm.extractvalue %[[ROW]][0]
// CHECK: llvm.extractvalue %[[ROW]][2, 0]
// CHECK: llvm.extractvalue %[[ROW]][2, 1]
// CHECK: llvm.load
func.func @view_row(%a: !warp.array<f32, 3>, %i: i32) -> f32 {
  %r = "warp.view"(%a, %i) : (!warp.array<f32, 3>, i32) -> !warp.array<f32, 2>
  %0 = "warp.load"(%r, %i, %i) : (!warp.array<f32, 2>, i32, i32) -> f32
  return %0 : f32
}

// A view that an scf.if yields (`r = a[0]`, then `r = a[1]` in a branch) is a
// descriptor there too.
// CHECK-LABEL: func.func @view_through_if
// CHECK: scf.if %{{.+}} -> (!llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>)
// CHECK-NOT: !warp.array
func.func @view_through_if(%a: !warp.array<f32, 2>, %c: i1, %i: i32) -> f32 {
  %r = scf.if %c -> (!warp.array<f32, 1>) {
    %0 = "warp.view"(%a, %i) : (!warp.array<f32, 2>, i32) -> !warp.array<f32, 1>
    scf.yield %0 : !warp.array<f32, 1>
  } else {
    %1 = "warp.view"(%a, %i) : (!warp.array<f32, 2>, i32) -> !warp.array<f32, 1>
    scf.yield %1 : !warp.array<f32, 1>
  }
  %2 = "warp.load"(%r, %i) : (!warp.array<f32, 1>, i32) -> f32
  return %2 : f32
}
