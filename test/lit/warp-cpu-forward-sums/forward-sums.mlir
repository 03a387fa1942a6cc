// RUN: mlwarp-opt %s --warp-cpu-forward-sums | FileCheck %s

// A scatter loop of a `_private` copy: each thread adds a vec3 into element a[t] and subtracts it from b[t]
// (three plain sums a group). A group whose address equals the previous group's takes that group's results
// instead of loading: the second group asks the first (same iteration), the first asks the previous
// iteration's second through stack slots (zeroed address before the loop).
// CHECK-LABEL: func.func @springs_cpu_private(
// CHECK: %[[BASE_SLOT:.+]] = llvm.alloca %{{.+}} x i64 {alignment = 8 : i64}
// CHECK: %[[X_SLOT:.+]] = llvm.alloca %{{.+}} x f32
// CHECK: %[[Y_SLOT:.+]] = llvm.alloca %{{.+}} x f32
// CHECK: %[[Z_SLOT:.+]] = llvm.alloca %{{.+}} x f32
// CHECK: llvm.store %{{.+}}, %[[BASE_SLOT]] : i64, !llvm.ptr
// CHECK-NEXT: scf.for
// CHECK: %[[P:.+]] = llvm.getelementptr inbounds %{{.+}}[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[LAST:.+]] = llvm.load %[[BASE_SLOT]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[PI:.+]] = llvm.ptrtoint %[[P]] : !llvm.ptr to i64
// CHECK-NEXT: %[[SAME:.+]] = arith.cmpi eq, %[[PI]], %[[LAST]] : i64
// CHECK-NEXT: %[[OLD:.+]]:3 = scf.if %[[SAME]] -> (f32, f32, f32) {
// CHECK-NEXT:   llvm.load %[[X_SLOT]]
// CHECK-NEXT:   llvm.load %[[Y_SLOT]]
// CHECK-NEXT:   llvm.load %[[Z_SLOT]]
// CHECK-NEXT:   scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT:   llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT:   %[[P4:.+]] = llvm.getelementptr %[[P]][4]
// CHECK-NEXT:   llvm.load %[[P4]] : !llvm.ptr -> f32
// CHECK-NEXT:   %[[P8:.+]] = llvm.getelementptr %[[P]][8]
// CHECK-NEXT:   llvm.load %[[P8]] : !llvm.ptr -> f32
// CHECK-NEXT:   scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[AX:.+]] = arith.addf %[[OLD]]#0, %{{.+}} : f32
// CHECK-NEXT: llvm.store %[[AX]], %[[P]]
// CHECK: %[[AY:.+]] = arith.addf %[[OLD]]#1
// CHECK: %[[AZ:.+]] = arith.addf %[[OLD]]#2
// CHECK: %[[Q:.+]] = llvm.getelementptr inbounds %{{.+}}[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: %[[QI:.+]] = llvm.ptrtoint %[[Q]] : !llvm.ptr to i64
// CHECK-NEXT: %[[PI2:.+]] = llvm.ptrtoint %[[P]] : !llvm.ptr to i64
// CHECK-NEXT: %[[SAME2:.+]] = arith.cmpi eq, %[[QI]], %[[PI2]] : i64
// CHECK-NEXT: %[[OLD2:.+]]:3 = scf.if %[[SAME2]] -> (f32, f32, f32) {
// CHECK-NEXT:   scf.yield %[[AX]], %[[AY]], %[[AZ]] : f32, f32, f32
// CHECK-NEXT: } else {
// CHECK: %[[SX:.+]] = arith.subf %[[OLD2]]#0
// CHECK: %[[SY:.+]] = arith.subf %[[OLD2]]#1
// CHECK: %[[SZ:.+]] = arith.subf %[[OLD2]]#2
// CHECK-NEXT: llvm.store %[[SZ]]
// CHECK-NEXT: %[[QL:.+]] = llvm.ptrtoint %[[Q]] : !llvm.ptr to i64
// CHECK-NEXT: llvm.store %[[QL]], %[[BASE_SLOT]] : i64, !llvm.ptr
// CHECK-NEXT: llvm.store %[[SX]], %[[X_SLOT]]
// CHECK-NEXT: llvm.store %[[SY]], %[[Y_SLOT]]
// CHECK-NEXT: llvm.store %[[SZ]], %[[Z_SLOT]]
// CHECK-NEXT: }
func.func @springs_cpu_private(%f: !llvm.ptr, %a: !llvm.ptr, %b: !llvm.ptr, %fs: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %c12 = arith.constant 12 : i64
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ap = llvm.getelementptr inbounds %a[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %i = llvm.load %ap : !llvm.ptr -> i64
    %bp = llvm.getelementptr inbounds %b[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %j = llvm.load %bp : !llvm.ptr -> i64
    %fp = llvm.getelementptr inbounds %fs[%t] : (!llvm.ptr, i64) -> !llvm.ptr, vector<3xf32>
    %v = llvm.load %fp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %vx = vector.extract %v[0] : f32 from vector<3xf32>
    %vy = vector.extract %v[1] : f32 from vector<3xf32>
    %vz = vector.extract %v[2] : f32 from vector<3xf32>
    %io = arith.muli %i, %c12 : i64
    %p = llvm.getelementptr inbounds %f[%io] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %x0 = llvm.load %p : !llvm.ptr -> f32
    %x1 = arith.addf %x0, %vx : f32
    llvm.store %x1, %p : f32, !llvm.ptr
    %p4 = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, i8
    %y0 = llvm.load %p4 : !llvm.ptr -> f32
    %y1 = arith.addf %y0, %vy : f32
    llvm.store %y1, %p4 : f32, !llvm.ptr
    %p8 = llvm.getelementptr %p[8] : (!llvm.ptr) -> !llvm.ptr, i8
    %z0 = llvm.load %p8 : !llvm.ptr -> f32
    %z1 = arith.addf %z0, %vz : f32
    llvm.store %z1, %p8 : f32, !llvm.ptr
    %jo = arith.muli %j, %c12 : i64
    %q = llvm.getelementptr inbounds %f[%jo] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %u0 = llvm.load %q : !llvm.ptr -> f32
    %u1 = arith.subf %u0, %vx : f32
    llvm.store %u1, %q : f32, !llvm.ptr
    %q4 = llvm.getelementptr %q[4] : (!llvm.ptr) -> !llvm.ptr, i8
    %w0 = llvm.load %q4 : !llvm.ptr -> f32
    %w1 = arith.subf %w0, %vy : f32
    llvm.store %w1, %q4 : f32, !llvm.ptr
    %q8 = llvm.getelementptr %q[8] : (!llvm.ptr) -> !llvm.ptr, i8
    %s0 = llvm.load %q8 : !llvm.ptr -> f32
    %s1 = arith.subf %s0, %vz : f32
    llvm.store %s1, %q8 : f32, !llvm.ptr
  }
  return
}

// One group a thread (a histogram's bin count): it asks the previous iteration's group.
// CHECK-LABEL: func.func @histogram_cpu_serial(
// CHECK: scf.for
// CHECK: %[[OLDB:.+]] = scf.if %{{.+}} -> (i32) {
// CHECK: %[[NEWB:.+]] = arith.addi %[[OLDB]], %{{.+}} : i32
// CHECK-NEXT: llvm.store %[[NEWB]]
// CHECK-NEXT: llvm.ptrtoint
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.store %[[NEWB]]
func.func @histogram_cpu_serial(%bins: !llvm.ptr, %keys: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %one = arith.constant 1 : i32
  scf.for %t = %lo to %hi step %c1 : i64 {
    %kp = llvm.getelementptr inbounds %keys[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %k = llvm.load %kp : !llvm.ptr -> i64
    %bp = llvm.getelementptr inbounds %bins[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %old = llvm.load %bp : !llvm.ptr -> i32
    %new = arith.addi %old, %one : i32
    llvm.store %new, %bp : i32, !llvm.ptr
  }
  return
}

// Left alone: a loop that also stores elsewhere (the stored old value could be read back through any
// address), sums at addresses computed from the thread index alone (the loop stays vectorisable), and the
// atomic entry itself (not a `_private` / `_serial` copy).
// CHECK-LABEL: func.func @tickets_cpu_serial(
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @gradient_cpu_private(
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @histogram_cpu(
// CHECK-NOT: scf.if
// CHECK: return
func.func @tickets_cpu_serial(%bins: !llvm.ptr, %keys: !llvm.ptr, %olds: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %one = arith.constant 1 : i32
  scf.for %t = %lo to %hi step %c1 : i64 {
    %kp = llvm.getelementptr inbounds %keys[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %k = llvm.load %kp : !llvm.ptr -> i64
    %bp = llvm.getelementptr inbounds %bins[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %old = llvm.load %bp : !llvm.ptr -> i32
    %new = arith.addi %old, %one : i32
    llvm.store %new, %bp : i32, !llvm.ptr
    %op = llvm.getelementptr inbounds %olds[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    llvm.store %old, %op : i32, !llvm.ptr
  }
  return
}

func.func @gradient_cpu_private(%grad: !llvm.ptr, %x: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  scf.for %t = %lo to %hi step %c1 : i64 {
    %xp = llvm.getelementptr inbounds %x[%t] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %xp : !llvm.ptr -> f32
    %gp = llvm.getelementptr inbounds %grad[%t] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %g0 = llvm.load %gp : !llvm.ptr -> f32
    %g1 = arith.addf %g0, %v : f32
    llvm.store %g1, %gp : f32, !llvm.ptr
  }
  return
}

func.func @histogram_cpu(%bins: !llvm.ptr, %keys: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %one = arith.constant 1 : i32
  scf.for %t = %lo to %hi step %c1 : i64 {
    %kp = llvm.getelementptr inbounds %keys[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %k = llvm.load %kp : !llvm.ptr -> i64
    %bp = llvm.getelementptr inbounds %bins[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %old = llvm.load %bp : !llvm.ptr -> i32
    %new = arith.addi %old, %one : i32
    llvm.store %new, %bp : i32, !llvm.ptr
  }
  return
}
