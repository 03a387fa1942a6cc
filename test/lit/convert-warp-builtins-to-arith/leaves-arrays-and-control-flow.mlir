// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s
// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s --check-prefix=GONE

// The pass lowers builtins wherever they are (inside scf regions too) and
// leaves array ops, thread ids and control flow to the later passes.

// CHECK-LABEL: func.func @k
// CHECK-SAME: attributes {warp.kernel}
// CHECK: %[[T:.+]] = "warp.tid"() : () -> i32
// CHECK: %[[X:.+]] = "warp.load"(%arg0, %[[T]]) : (!warp.array<f32, 1 : i64>, i32) -> f32
// CHECK: %[[C:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : f32
// CHECK: scf.if %[[C]] -> (f32) {
// CHECK:   %[[S:.+]] = math.sqrt %[[X]] : f32
// CHECK:   scf.yield %[[S]] : f32
// CHECK: "warp.store"(%arg0, %{{.+}}, %[[T]])
// CHECK: "warp.atomic"(%arg0, %{{.+}}, %[[T]]) {kind = "add"}
// CHECK: "warp.array_dim"(%arg0) {dim = 0 : i64}
// GONE-NOT: "warp.{{(gt|sqrt)}}"
func.func @k(%a: !warp.array<f32, 1>, %zero: f32) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %x = "warp.load"(%a, %t) : (!warp.array<f32, 1>, i32) -> f32
  %c = "warp.gt"(%x, %zero) : (f32, f32) -> i1
  %r = scf.if %c -> (f32) {
    %s = "warp.sqrt"(%x) : (f32) -> f32
    scf.yield %s : f32
  } else {
    scf.yield %zero : f32
  }
  "warp.store"(%a, %r, %t) : (!warp.array<f32, 1>, f32, i32) -> ()
  %old = "warp.atomic"(%a, %r, %t) {kind = "add"} : (!warp.array<f32, 1>, f32, i32) -> f32
  %n = "warp.array_dim"(%a) {dim = 0 : i64} : (!warp.array<f32, 1>) -> i32
  return
}
