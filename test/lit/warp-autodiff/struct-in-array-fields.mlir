// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// A struct read from an array of structs (`holders[0].values[i]`) has no companion struct: the adjoint of a
// read of one of its array fields goes to the gradient the struct records beside that array
// (warp.struct_field_grad), under a check that its address is not 0 (the array held had no gradient).

// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[H:[^:]+]]: !warp.array<!warp.struct<"Holder", [!warp.array<f32, 1 : i64>]>, 1 : i64>, %[[Y:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: !warp.array<!warp.struct<"Holder", [!warp.array<f32, 1 : i64>]>, 1 : i64>, %[[ADJ_Y:[^:]+]]: !warp.array<f32, 1 : i64>
// CHECK: %[[HOLDER:.+]] = "warp.load"(%[[H]],
// CHECK: %[[G:.+]] = "warp.load"(%[[ADJ_Y]],
// CHECK: %[[GRAD:.+]] = "warp.struct_field_grad"(%[[HOLDER]]) {field = 0 : i64}
// CHECK: %[[ADDRESS:.+]] = "warp.array_data"(%[[GRAD]])
// CHECK: %[[PRESENT:.+]] = arith.cmpi ne, %[[ADDRESS]], %{{.+}} : i64
// CHECK: scf.if %[[PRESENT]] {
// CHECK: "warp.atomic"(%[[GRAD]], %{{.+}}, %{{.+}}) {kind = "add"}
module {
  func.func @k(%h: !warp.array<!warp.struct<"Holder", [!warp.array<f32, 1 : i64>]>, 1 : i64>,
               %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %zero = arith.constant 0 : i32
    %i = "warp.tid"() : () -> i32
    %holder = "warp.load"(%h, %zero) : (!warp.array<!warp.struct<"Holder", [!warp.array<f32, 1 : i64>]>, 1 : i64>, i32) -> !warp.struct<"Holder", [!warp.array<f32, 1 : i64>]>
    %values = "warp.struct_get"(%holder) {field = 0 : i64} : (!warp.struct<"Holder", [!warp.array<f32, 1 : i64>]>) -> !warp.array<f32, 1 : i64>
    %v = "warp.load"(%values, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %twice = "warp.add"(%v, %v) : (f32, f32) -> f32
    "warp.store"(%y, %twice, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
