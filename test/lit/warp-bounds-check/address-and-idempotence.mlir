// RUN: mlwarp-opt %s --warp-bounds-check --warp-bounds-check | FileCheck %s

// warp.address is reported but not skipped (its user does the access); a callsite location (an inlined
// function) names the callee's line first and its callers after it; a second run adds nothing.

// CHECK: warp.debug_sites = "[{\22op\22: \22address\22, \22arg\22: 0, \22fields\22: [], \22location\22: \22f.py:2:5\22, \22called_from\22: [\22k.py:9:3\22]}]"
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:[^:]+]]: !warp.array<f64, 1 : i64>, %[[I:[^:]+]]: i32, %[[REC:[^:]+]]: !warp.array<i64, 1 : i64>)
// CHECK-NOT: !warp.array<i64, 1 : i64>, %{{.+}}: !warp.array<i64, 1 : i64>
// CHECK: %[[OK:.+]] = arith.cmpi ult, %{{.+}}
// CHECK: %[[BAD:.+]] = arith.xori %[[OK]], %{{.+}} : i1
// CHECK: scf.if %[[BAD]] {
// CHECK: "warp.atomic"(%[[REC]]
// CHECK: }
// CHECK: %{{.+}} = "warp.address"(%[[A]], %[[I]])
// CHECK-NOT: "warp.atomic"
// CHECK: return

// Functions without the warp.kernel attribute are left alone.
// CHECK-LABEL: func.func @helper(%{{.+}}: !warp.array<f32, 1 : i64>)
// CHECK-NOT: scf.if
// CHECK: return

func.func @k(%a: !warp.array<f64, 1>, %i: i32) attributes {warp.kernel} {
  %0 = "warp.array_dim"(%a) {dim = 0 : i64} : (!warp.array<f64, 1>) -> i32
  %p = "warp.address"(%a, %i) : (!warp.array<f64, 1>, i32) -> !llvm.ptr loc(callsite("f.py":2:5 at "k.py":9:3))
  return
}

func.func @helper(%a: !warp.array<f32, 1>) {
  %c = arith.constant 0 : i32
  %v = "warp.load"(%a, %c) : (!warp.array<f32, 1>, i32) -> f32
  return
}
