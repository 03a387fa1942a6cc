// RUN: mlwarp-opt %s --warp-bounds-check | FileCheck %s

// A debug build: a warp.assert whose condition is false reports into the error record like an out-of-bounds
// access (the first failing thread claims it, later ones count), its site of op "assert" holding the statement's
// text; the kernel goes on past it (Warp's debug build aborts the process there, mlwarp raises after the launch).

// CHECK: warp.debug_sites = "[{\22op\22: \22assert\22, \22arg\22: -1, \22fields\22: [], \22message\22: \22assert a[i] >= 0.0\22, \22location\22: \22k.py:4:5\22, \22called_from\22: []}, {\22op\22: \22load\22
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[REC:[^:]+]]: !warp.array<i64, 1 : i64>)
// CHECK: %[[OK:.+]] = "warp.ge"
// CHECK: %[[BAD:.+]] = arith.xori %[[OK]], %{{.+}} : i1
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[OLD:.+]] = "warp.atomic"(%[[REC]], %{{.+}}, %{{.+}}) {kind = "add"}
// CHECK: arith.cmpi eq, %[[OLD]]
// CHECK: }
// CHECK-NOT: warp.assert
// CHECK: "warp.store"
func.func @k(%a: !warp.array<f32, 1>, %i: i32) attributes {warp.kernel} {
  %x = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  %zero = arith.constant 0.0 : f32
  %ok = "warp.ge"(%x, %zero) : (f32, f32) -> i1
  "warp.assert"(%ok) {message = "assert a[i] >= 0.0"} : (i1) -> () loc("k.py":4:5)
  "warp.store"(%a, %x, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return
}
