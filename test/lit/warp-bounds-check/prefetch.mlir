// RUN: mlwarp-opt %s --warp-bounds-check | FileCheck %s

// An address only a prefetch reads (core/hints.py's prefetch(a[i])) is a hint, not an access: a prefetch
// cannot fault, so it is not checked (a traversal prefetching past an array's last element is not an error). The
// load of the same element is.
// CHECK: warp.debug_sites = "[{\22op\22: \22load\22
// CHECK-NOT: \22op\22: \22address\22
// CHECK-LABEL: func.func @k(
// CHECK: %[[P:.+]] = "warp.address"(%{{.+}}, %{{.+}})
// CHECK-NEXT: "llvm.intr.prefetch"(%[[P]])
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: "warp.load"

module {
  func.func @k(%a: !warp.array<f32, 1 : i64>, %i: i32) attributes {warp.kernel} {
    %p = "warp.address"(%a, %i) : (!warp.array<f32, 1 : i64>, i32) -> !llvm.ptr
    "llvm.intr.prefetch"(%p) <{cache = 1 : i32, hint = 3 : i32, rw = 0 : i32}> : (!llvm.ptr) -> ()
    %v = "warp.load"(%a, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    return
  }
}
