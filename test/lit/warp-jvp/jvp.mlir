// RUN: mlwarp-opt %s --warp-jvp | FileCheck %s
// Forward mode: k_jvp(args..., tan_args...) runs the kernel (with its stores) and carries the tangent
// of each float value; a loop carries the tangent of its state as one more iter_arg.

// CHECK-LABEL: func.func @k_jvp(
// CHECK-SAME: %[[X:[^:]+]]: !warp.array<f32, 1 : i64>, %[[Y:[^:]+]]: !warp.array<f32, 1 : i64>, %[[N:[^:]+]]: i32, %[[A:[^:]+]]: f32,
// CHECK-SAME: %[[TX:[^:]+]]: !warp.array<f32, 1 : i64>, %[[TY:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: i32, %[[TA:[^:]+]]: f32)
// CHECK-SAME: warp.tangent_of = "k"
// CHECK: %[[X0:.+]] = "warp.load"(%[[X]], %[[I:[^)]+]])
// CHECK: %[[T0:.+]] = "warp.load"(%[[TX]], %[[I]])
// CHECK: %[[R:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[S:.+]] = %[[X0]], %[[TS:.+]] = %[[T0]]) -> (f32, f32)
// d(s * a) = ts * a + ta * s
// CHECK: %[[M:.+]] = "warp.mul"(%[[S]], %[[A]])
// CHECK: "warp.mul"(%[[A]], %[[TS]])
// CHECK: "warp.mul"(%[[S]], %[[TA]])
// d sin(s) = cos(s) * ts
// CHECK: "warp.cos"(%[[S]])
// CHECK: scf.yield
// the store of the value and of its tangent
// CHECK: "warp.store"(%[[Y]], %[[R]]#0, %[[I]])
// CHECK: "warp.store"(%[[TY]], %[[R]]#1, %[[I]])
module {
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>, %n: i32, %a: f32) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %x0 = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %v = scf.for %k = %c0 to %n step %c1 iter_args(%s = %x0) -> (f32) : i32 {
      %m = "warp.mul"(%s, %a) : (f32, f32) -> f32
      %t = "warp.sin"(%s) : (f32) -> f32
      %u = "warp.add"(%m, %t) : (f32, f32) -> f32
      scf.yield %u : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
