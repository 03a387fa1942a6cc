// RUN: mlwarp-opt %s --warp-struct-tiles-as-bytes | FileCheck %s

// A tensor of structs (a struct tile after convert-warp-tiles-to-linalg) becomes a tensor of the structs' bytes
// (vector<K x i8>, K the C layout's size: f32 + vec3f = 16); a struct entering it (tensor.insert, a generate's
// or a linalg body's yield) goes in as its bytes, one read from it (tensor.extract, a linalg body's argument) comes
// back as the struct. Loops carrying the tile only change type.

// CHECK-LABEL: func.func @tile
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<4xvector<16xi8>>
// CHECK: %[[GEN:.+]] = tensor.generate
// CHECK:   %[[B:.+]] = "warp.struct_bytes"(%{{.+}}) : (!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>) -> vector<16xi8>
// CHECK:   tensor.yield %[[B]] : vector<16xi8>
// CHECK: } : tensor<4xvector<16xi8>>
// CHECK: linalg.generic {{.+}} ins(%[[GEN]] : tensor<4xvector<16xi8>>) outs(%[[EMPTY]] : tensor<4xvector<16xi8>>)
// CHECK: ^bb0(%[[IN:.+]]: vector<16xi8>, %{{.+}}: vector<16xi8>):
// CHECK:   %[[S:.+]] = "warp.struct_of_bytes"(%[[IN]]) : (vector<16xi8>) -> !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>
// CHECK:   %[[SB:.+]] = "warp.struct_bytes"(%[[S]])
// CHECK:   linalg.yield %[[SB]] : vector<16xi8>
// CHECK: scf.for {{.+}} iter_args(%[[T:.+]] = %{{.+}}) -> (tensor<4xvector<16xi8>>)
// CHECK:   %[[E:.+]] = tensor.extract %[[T]][%{{.+}}] : tensor<4xvector<16xi8>>
// CHECK:   %[[ES:.+]] = "warp.struct_of_bytes"(%[[E]])
// CHECK:   %[[EB:.+]] = "warp.struct_bytes"(%[[ES]])
// CHECK:   tensor.insert %[[EB]] into %[[T]][%{{.+}}] : tensor<4xvector<16xi8>>
// CHECK: %[[LAST:.+]] = "warp.struct_of_bytes"
// CHECK: return %[[LAST]]
func.func @tile(%s: !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>, %n: index) -> !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
  %gen = tensor.generate {
  ^bb0(%i: index):
    tensor.yield %s : !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>
  } : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
  %mapped = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%gen : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>) outs(%empty : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>) {
  ^bb0(%in: !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>, %out: !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>):
    linalg.yield %in : !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>
  } -> tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %mapped) -> (tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>) {
    %e = tensor.extract %t[%c0] : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
    %u = tensor.insert %e into %t[%c1] : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
    scf.yield %u : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
  }
  %last = tensor.extract %r[%c1] : tensor<4x!warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>>
  return %last : !warp.struct<"P", [f32, !warp.vec<3 : i64, f32>]>
}
