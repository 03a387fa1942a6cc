// RUN: mlwarp-opt %s --warp-bounds-check | FileCheck %s

// Every load, store and atomic runs under `index <u shape` (one unsigned compare also catches negative
// indices); the failing branch counts into the hidden error record and the first failing thread writes
// site, thread, ndim, indices and shape. A skipped load yields 0.

// CHECK: module attributes {warp.debug_sites = "[{\22op\22: \22load\22, \22arg\22: 0, \22fields\22: [], \22location\22: \22user.py:4:13\22, \22called_from\22: []}, {\22op\22: \22store\22, \22arg\22: 1, \22fields\22: [], \22location\22: \22user.py:5:9\22, \22called_from\22: []}, {\22op\22: \22atomic\22, \22arg\22: 0, \22fields\22: [], \22location\22: \22user.py:6:9\22, \22called_from\22: []}]"}
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:.+]]: !warp.array<f32, 1 : i64>, %[[B:.+]]: !warp.array<i32, 2 : i64>, %[[REC:.+]]: !warp.array<i64, 1 : i64>)
// CHECK-SAME: attributes {warp.bounds_checked, warp.kernel}
// CHECK: %[[T:.+]] = "warp.tid"()
// CHECK: %[[N:.+]] = "warp.array_dim"(%[[A]]) {dim = 0 : i64}
// A negative index counts from the end: it is wrapped before the compare.
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[T]], %{{.+}} : i32
// CHECK: %[[END:.+]] = arith.addi %[[T]], %[[N]] : i32
// CHECK: %[[W:.+]] = arith.select %[[NEG]], %[[END]], %[[T]] : i32
// CHECK: %[[OK:.+]] = arith.cmpi ult, %[[W]], %[[N]] : i32
// CHECK: %[[V:.+]] = scf.if %[[OK]] -> (f32) {
// CHECK-NEXT: %[[L:.+]] = "warp.load"(%[[A]], %[[T]])
// CHECK-NEXT: scf.yield %[[L]] : f32
// CHECK-NEXT: } else {
// CHECK: %[[OLD:.+]] = "warp.atomic"(%[[REC]], %{{.+}}, %{{.+}}) {kind = "add"}
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[OLD]], %{{.+}} : i64
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[SITE0:.+]] = arith.constant 0 : i64
// CHECK: "warp.store"(%[[REC]], %[[SITE0]], %{{.+}})
// the thread's linear index (whatever the launch's shape), not its leading index
// CHECK: "warp.tid"() {warp.linear} : () -> i32
// CHECK: %[[IDX:.+]] = arith.extsi %[[T]] : i32 to i64
// CHECK: "warp.store"(%[[REC]], %[[IDX]], %{{.+}})
// CHECK: %[[SHAPE:.+]] = arith.extsi %[[N]] : i32 to i64
// CHECK: "warp.store"(%[[REC]], %[[SHAPE]], %{{.+}})
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[ZERO]] : f32

// The 2-d store checks both indices against both extents.
// CHECK: %[[D0:.+]] = "warp.array_dim"(%[[B]]) {dim = 0 : i64}
// CHECK: %[[D1:.+]] = "warp.array_dim"(%[[B]]) {dim = 1 : i64}
// CHECK: %[[OK0:.+]] = arith.cmpi ult, %{{.+}}, %[[D0]]
// CHECK: %[[OK1:.+]] = arith.cmpi ult, %{{.+}}, %[[D1]]
// CHECK: %[[OK2:.+]] = arith.andi %[[OK0]], %[[OK1]] : i1
// CHECK: scf.if %[[OK2]] {
// CHECK-NEXT: "warp.store"(%[[B]],

// The atomic's old value comes out of the guard.
// CHECK: %[[OK3:.+]] = arith.cmpi ult
// CHECK: scf.if %[[OK3]] -> (f32) {
// CHECK-NEXT: %[[OLD2:.+]] = "warp.atomic"(%[[A]], %[[V]], %[[T]]) {kind = "add"}
// CHECK-NEXT: scf.yield %[[OLD2]] : f32
// CHECK: return

func.func @k(%a: !warp.array<f32, 1>, %b: !warp.array<i32, 2>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32 loc("user.py":3:9)
  %v = "warp.load"(%a, %t) : (!warp.array<f32, 1>, i32) -> f32 loc("user.py":4:13)
  %c = arith.constant 1 : i32
  "warp.store"(%b, %c, %t, %t) : (!warp.array<i32, 2>, i32, i32, i32) -> () loc("user.py":5:9)
  %o = "warp.atomic"(%a, %v, %t) {kind = "add"} : (!warp.array<f32, 1>, f32, i32) -> f32 loc("user.py":6:9)
  return
}
