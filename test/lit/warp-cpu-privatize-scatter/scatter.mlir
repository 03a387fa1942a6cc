// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-atomics --warp-cpu-privatize-scatter --warp-cpu-serial-copy | FileCheck %s

// Mass-spring's force scatter: `f` is only summed into (an add at a gathered index, a sub at the thread's
// own). The entry keeps its atomics; `<entry>_private` has plain adds into `f` (the runtime points `f` at a
// private copy per part of a parallel launch). Its table: version 2, the launch struct's size (a constant GEP),
// 3 array rows, flags (SUMS_ONLY, 1: the copy writes nothing but its sums), then per row parameter, byte offset
// (a constant GEP to its field), ndim, type code: f32 (1) for `f`, 0 for the others.
// CHECK-LABEL: func.func @springs_cpu(
// CHECK: llvm.atomicrmw fadd %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: llvm.atomicrmw fsub %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK-LABEL: func.func @springs_cpu_private(
// CHECK-NOT: llvm.atomicrmw
// CHECK: %[[X:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: %[[A:.+]] = llvm.getelementptr inbounds %{{.+}}[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[OLD:.+]] = llvm.load %[[A]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[NEW:.+]] = arith.addf %[[OLD]], %[[X]] : f32
// CHECK-NEXT: llvm.store %[[NEW]], %[[A]] : f32, !llvm.ptr
// CHECK: %[[B:.+]] = llvm.getelementptr inbounds %{{.+}}[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[OLDB:.+]] = llvm.load %[[B]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[NEWB:.+]] = arith.subf %[[OLDB]], %[[X]] : f32
// CHECK-NEXT: llvm.store %[[NEWB]], %[[B]] : f32, !llvm.ptr
// CHECK: llvm.mlir.global external constant @springs_cpu_private_params() {{.*}} : !llvm.array<16 x i64> {
// CHECK: %[[Z:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[VERSION:.+]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: llvm.insertvalue %[[VERSION]], %{{.+}}[0]
// CHECK: %[[SIZE:.+]] = llvm.getelementptr %[[Z]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<4 x i64>,
// CHECK: llvm.ptrtoint %[[SIZE]]
// CHECK: %[[FLAGS:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.insertvalue %[[FLAGS]], %{{.+}}[3]
// CHECK: %[[F:.+]] = llvm.getelementptr %[[Z]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<4 x i64>,
// CHECK: %[[FO:.+]] = llvm.ptrtoint %[[F]]
// CHECK: llvm.insertvalue %[[FO]], %{{.+}}[5]
// CHECK: %[[IDX:.+]] = llvm.getelementptr %[[Z]][0, 2]
// CHECK: llvm.return
func.func @springs(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                   %idx: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                   %v: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %ip = llvm.extractvalue %idx[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ia = llvm.getelementptr inbounds %ip[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %j = llvm.load %ia : !llvm.ptr -> i32
  %j64 = arith.extsi %j : i32 to i64
  %vp = llvm.extractvalue %v[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %va = llvm.getelementptr inbounds %vp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x = llvm.load %va : !llvm.ptr -> f32
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%j64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o1 = llvm.atomicrmw fadd %fa, %x monotonic : !llvm.ptr, f32
  %fb = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o2 = llvm.atomicrmw fsub %fb, %x monotonic : !llvm.ptr, f32
  return
}

// A histogram (i32, code 3) next to an array that also gets an atomic max: only the histogram is private;
// the max stays atomic in the copy (the parts share that array), so the copy is not SUMS_ONLY (flags 0).
// CHECK-LABEL: func.func @histogram_and_peak_cpu_private(
// CHECK: arith.addi
// CHECK: llvm.atomicrmw max %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.mlir.global external constant @histogram_and_peak_cpu_private_params() {{.*}} : !llvm.array<12 x i64> {
// CHECK: %[[NOFLAGS:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.insertvalue %[[NOFLAGS]], %{{.+}}[3]
func.func @histogram_and_peak(%bins: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                              %peak: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %c7 = arith.constant 7 : i64
  %b = arith.remsi %i, %c7 : i64
  %bp = llvm.extractvalue %bins[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ba = llvm.getelementptr inbounds %bp[%b] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %one = arith.constant 1 : i32
  %o1 = llvm.atomicrmw add %ba, %one monotonic : !llvm.ptr, i32
  %pp = llvm.extractvalue %peak[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %pa = llvm.getelementptr inbounds %pp[%b] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %o2 = llvm.atomicrmw max %pa, %t monotonic : !llvm.ptr, i32
  %o3 = llvm.atomicrmw add %pa, %one monotonic : !llvm.ptr, i32
  return
}

// What gets no copy: an array read back (a part's copy holds only its own sum), an atomic whose old value is
// used (a ticket), an array also stored to.
// CHECK-NOT: func.func @read_back_cpu_private
// CHECK-NOT: func.func @ticket_cpu_private
// CHECK-NOT: func.func @stored_cpu_private
func.func @read_back(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                     %out: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %one = arith.constant 1.0 : f32
  %o = llvm.atomicrmw fadd %fa, %one monotonic : !llvm.ptr, f32
  %x = llvm.load %fa : !llvm.ptr -> f32
  %op = llvm.extractvalue %out[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %oa = llvm.getelementptr inbounds %op[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %x, %oa : f32, !llvm.ptr
  return
}

func.func @ticket(%counter: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                  %out: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %c0 = arith.constant 0 : i64
  %cp = llvm.extractvalue %counter[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ca = llvm.getelementptr inbounds %cp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %one = arith.constant 1 : i32
  %n = llvm.atomicrmw add %ca, %one monotonic : !llvm.ptr, i32
  %op = llvm.extractvalue %out[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %oa = llvm.getelementptr inbounds %op[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  llvm.store %n, %oa : i32, !llvm.ptr
  return
}

func.func @stored(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  %one = arith.constant 1.0 : f64
  %o = llvm.atomicrmw fadd %fa, %one monotonic : !llvm.ptr, f64
  %c0 = arith.constant 0 : i64
  %fz = llvm.getelementptr inbounds %fp[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  llvm.store %one, %fz : f64, !llvm.ptr
  return
}
