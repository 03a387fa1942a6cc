// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// bfloat16 add/sub/min/max cannot be an atomicrmw: the CPU build carries
// bf16 as i16 in the end (warp-bf16-as-i16) and atomicrmw's float operations
// take no i16. They become a compare-and-swap loop on the bits, returning the
// element that the successful exchange replaced. exch stays an atomicrmw.

// CHECK-LABEL: func.func @bf16_rmw
// CHECK: %[[FIRST:.+]] = llvm.load %[[PTR:.+]] : !llvm.ptr -> bf16
// CHECK: %[[OLDV:.+]] = scf.while (%[[OLD:.+]] = %[[FIRST]]) : (bf16) -> bf16 {
// CHECK:   %[[NEW:.+]] = arith.maxnumf %[[OLD]], %{{.+}} : bf16
// CHECK:   %[[C:.+]] = arith.bitcast %[[OLD]] : bf16 to i16
// CHECK:   %[[N:.+]] = arith.bitcast %[[NEW]] : bf16 to i16
// CHECK:   %[[PAIR:.+]] = llvm.cmpxchg %[[PTR]], %[[C]], %[[N]] monotonic monotonic : !llvm.ptr, i16
// CHECK:   %[[BITS:.+]] = llvm.extractvalue %[[PAIR]][0] : !llvm.struct<(i16, i1)>
// CHECK:   %[[SEEN:.+]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK:   %[[SAME:.+]] = arith.cmpi eq
// CHECK:   %[[RETRY:.+]] = arith.xori %[[SAME]]
// CHECK:   scf.condition(%[[RETRY]]) %[[SEEN]] : bf16
// CHECK: } do {
// CHECK: ^bb0(%[[A:.+]]: bf16):
// CHECK:   scf.yield %[[A]] : bf16
// CHECK: }
// CHECK: arith.addf
// CHECK: llvm.cmpxchg
// CHECK: arith.minnumf
// CHECK: llvm.cmpxchg
// CHECK: llvm.atomicrmw xchg %{{.+}}, %{{.+}} monotonic : !llvm.ptr, bf16
func.func @bf16_rmw(%f: !warp.array<bf16, 1>, %i: i32, %v: bf16) -> bf16 {
  %0 = "warp.atomic"(%f, %v, %i) {kind = "max"} : (!warp.array<bf16, 1>, bf16, i32) -> bf16
  %1 = "warp.atomic"(%f, %v, %i) {kind = "add"} : (!warp.array<bf16, 1>, bf16, i32) -> bf16
  %2 = "warp.atomic"(%f, %v, %i) {kind = "min"} : (!warp.array<bf16, 1>, bf16, i32) -> bf16
  %3 = "warp.atomic"(%f, %v, %i) {kind = "exch"} : (!warp.array<bf16, 1>, bf16, i32) -> bf16
  return %0 : bf16
}
