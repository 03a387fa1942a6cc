// RUN: mlwarp-opt %s --warp-bounds-check | FileCheck %s

// An array reached through struct fields is reported as parameter 0, field path [0]; a skipped load of a
// composite element yields the zero value (warp.construct without operands).

// CHECK: warp.debug_sites = "[{\22op\22: \22load\22, \22arg\22: 0, \22fields\22: [0], \22location\22: \22user.py:7:9\22, \22called_from\22: []}]"
// CHECK-LABEL: func.func @k(
// CHECK: %[[POS:.+]] = "warp.struct_get"(%arg0) {field = 0 : i64}
// CHECK: %[[N:.+]] = "warp.array_dim"(%[[POS]]) {dim = 0 : i64}
// CHECK: scf.if %{{.+}} -> (!warp.vec<3 : i64, f32>) {
// CHECK-NEXT: "warp.load"(%[[POS]],
// CHECK: } else {
// CHECK: %[[ZERO:.+]] = "warp.construct"() : () -> !warp.vec<3 : i64, f32>
// CHECK-NEXT: scf.yield %[[ZERO]] : !warp.vec<3 : i64, f32>

func.func @k(%c: !warp.struct<"Cloud", [!warp.array<!warp.vec<3, f32>, 1>, f32]>, %i: i32) attributes {warp.kernel} {
  %pos = "warp.struct_get"(%c) {field = 0 : i64} : (!warp.struct<"Cloud", [!warp.array<!warp.vec<3, f32>, 1>, f32]>) -> !warp.array<!warp.vec<3, f32>, 1>
  %v = "warp.load"(%pos, %i) : (!warp.array<!warp.vec<3, f32>, 1>, i32) -> !warp.vec<3, f32> loc("user.py":7:9)
  return
}
