// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-serial-copy | FileCheck %s

// An entry with atomics gets `<entry>_serial`: the same loop with each atomicrmw as a plain load, the
// operation and a store (the old value is the load's), for launches on one thread.
// CHECK-LABEL: func.func @histogram_cpu(
// CHECK: llvm.atomicrmw add %[[P:.+]], %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw fmax %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK-LABEL: func.func @histogram_cpu_serial(
// CHECK-NOT: llvm.atomicrmw
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[OLD:.+]] = llvm.load %[[Q:.+]] : !llvm.ptr -> i32
// CHECK-NEXT: %[[NEW:.+]] = arith.addi %[[OLD]], %[[ONE]] : i32
// CHECK-NEXT: llvm.store %[[NEW]], %[[Q]] : i32, !llvm.ptr
// CHECK-NEXT: llvm.store %[[OLD]]
// CHECK: %[[FOLD:.+]] = llvm.load %[[R:.+]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[MAX:.+]] = arith.maxnumf %[[FOLD]], %{{.+}} : f32
// CHECK-NEXT: llvm.store %[[MAX]], %[[R]] : f32, !llvm.ptr
func.func @histogram(%bins: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                     %keys: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                     %peak: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %kp = llvm.extractvalue %keys[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ka = llvm.getelementptr inbounds %kp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %k = llvm.load %ka : !llvm.ptr -> i32
  %k64 = arith.extsi %k : i32 to i64
  %bp = llvm.extractvalue %bins[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ba = llvm.getelementptr inbounds %bp[%k64] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %one = arith.constant 1 : i32
  %old = llvm.atomicrmw add %ba, %one monotonic : !llvm.ptr, i32
  llvm.store %old, %ka : i32, !llvm.ptr
  %pp = llvm.extractvalue %peak[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %f = arith.sitofp %k : i32 to f32
  %m = llvm.atomicrmw fmax %pp, %f monotonic : !llvm.ptr, f32
  return
}

// What it leaves alone: an entry without atomics gets no copy, and functions that are not entries.
// CHECK-LABEL: func.func @scale_cpu(
// CHECK-NOT: func.func @scale_cpu_serial
// CHECK-LABEL: func.func @helper(
// CHECK-NOT: _serial
func.func @scale(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  return
}

func.func @helper(%n: i32) -> i32 {
  return %n : i32
}
