// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-atomics | FileCheck %s
// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-atomics --warp-cpu-serial-copy | FileCheck %s --check-prefix=SERIAL

// `loss[0] += v` from every thread: the thread loop sums into a private accumulator (an alloca
// holding -0.0, the float identity) with reassociable adds, and one atomic add after the loop
// flushes it, only if the loop added anything.
// CHECK-LABEL: func.func @loss_cpu
// CHECK: %[[ACC:.+]] = llvm.alloca %{{.+}} x f32
// CHECK: %[[ID:.+]] = llvm.mlir.constant(-0.000000e+00 : f32) : f32
// CHECK: llvm.store %[[ID]], %[[ACC]]
// CHECK: scf.for
// CHECK-NOT: llvm.atomicrmw
// CHECK: %[[OLD:.+]] = llvm.load %[[ACC]] : !llvm.ptr -> f32
// CHECK: %[[NEW:.+]] = llvm.fadd %[[OLD]], %{{.+}} {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// CHECK: llvm.store %[[NEW]], %[[ACC]]
// CHECK: }
// CHECK: %[[SUM:.+]] = llvm.load %[[ACC]] : !llvm.ptr -> f32
// CHECK: %[[TOUCHED:.+]] = arith.cmpi ne
// CHECK: scf.if %[[TOUCHED]] {
// CHECK:   %[[P:.+]] = llvm.getelementptr
// CHECK:   llvm.atomicrmw fadd %[[P]], %[[SUM]] monotonic : !llvm.ptr, f32
// CHECK: }

// warp-cpu-serial-copy runs after: the one-thread copy keeps the accumulator, its flush is plain.
// SERIAL-LABEL: func.func @loss_cpu_serial
// SERIAL: llvm.alloca
// SERIAL: scf.for
// SERIAL: llvm.fadd %{{.+}}, %{{.+}} {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// SERIAL: scf.if
// SERIAL-NOT: llvm.atomicrmw
// SERIAL: arith.addf
// SERIAL: llvm.store
func.func @loss(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                %loss: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %xp = llvm.extractvalue %x[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %xa = llvm.getelementptr inbounds %xp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %xa : !llvm.ptr -> f32
  %lp = llvm.extractvalue %loss[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %c0 = arith.constant 0 : i64
  %la = llvm.getelementptr inbounds %lp[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %old = llvm.atomicrmw fadd %la, %v monotonic : !llvm.ptr, f32
  return
}

// What it leaves alone: an address that moves with the thread (a histogram bin read from
// memory), an atomic whose old value is used, and kinds other than add.
// CHECK-LABEL: func.func @histogram_cpu
// CHECK-NOT: llvm.alloca
// CHECK: llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: %[[USED:.+]] = llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.store %[[USED]]
// CHECK: llvm.atomicrmw max %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
func.func @histogram(%bins: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                     %keys: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %kp = llvm.extractvalue %keys[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ka = llvm.getelementptr inbounds %kp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %k = llvm.load %ka : !llvm.ptr -> i32
  %k64 = arith.extsi %k : i32 to i64
  %bp = llvm.extractvalue %bins[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ba = llvm.getelementptr inbounds %bp[%k64] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %one = arith.constant 1 : i32
  %a = llvm.atomicrmw add %ba, %one monotonic : !llvm.ptr, i32
  %c0 = arith.constant 0 : i64
  %first = llvm.getelementptr inbounds %bp[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %b = llvm.atomicrmw add %first, %one monotonic : !llvm.ptr, i32
  llvm.store %b, %ka : i32, !llvm.ptr
  %c = llvm.atomicrmw max %first, %k monotonic : !llvm.ptr, i32
  return
}

// A kernel that reads the array it sums into (here: right after adding) keeps its atomics: privatized,
// a thread would not see the sums of the earlier threads of its chunk.
// CHECK-LABEL: func.func @count_and_read_cpu
// CHECK-NOT: llvm.alloca
// CHECK: llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.load
func.func @count_and_read(%counter: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                          %seen: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %cp = llvm.extractvalue %counter[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %c0 = arith.constant 0 : i64
  %ca = llvm.getelementptr inbounds %cp[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %one = arith.constant 1 : i32
  %a = llvm.atomicrmw add %ca, %one monotonic : !llvm.ptr, i32
  %now = llvm.load %ca : !llvm.ptr -> i32
  %sp = llvm.extractvalue %seen[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %sa = llvm.getelementptr inbounds %sp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  llvm.store %now, %sa : i32, !llvm.ptr
  return
}
