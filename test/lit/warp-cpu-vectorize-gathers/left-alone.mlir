// RUN: mlwarp-opt %s --split-input-file --warp-cpu-vectorize-gathers | FileCheck %s

// A libm call (a vector libm rounds otherwise than the scalar one): the loop stays as it is, and the module does
// not keep its vectors.
// CHECK-NOT: warp.cpu_keep_vectors
// CHECK-LABEL: func.func @sines_cpu(
// CHECK-NOT: step %c8
// CHECK: math.sin %{{.+}} : f32
func.func @sines_cpu(%x: !llvm.ptr, %a: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %c12 = arith.constant 12 : i64
  %c256 = arith.constant 256 : i64
  %buffer = llvm.alloca %c256 x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ap = llvm.getelementptr inbounds %a[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %i = llvm.load %ap : !llvm.ptr -> i64
    %xo = arith.muli %i, %c12 overflow<nsw> : i64
    %xp = llvm.getelementptr inbounds %x[%xo] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %v = llvm.load %xp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %vx = vector.extract %v[0] : f32 from vector<3xf32>
    %s = math.sin %vx : f32
    %slot = arith.subi %t, %lo : i64
    %bp = llvm.getelementptr %buffer[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %s, %bp : f32, !llvm.ptr
  }
  return
}

// -----

// Another loop of the module that LLVM vectorises once the scalarizer splits its vec3s (a store to an array at the
// thread's own slot): keeping the module's vectors would cost that loop its vectorisation, so the gather loop is
// left to LLVM too.
// CHECK-NOT: warp.cpu_keep_vectors
// CHECK-LABEL: func.func @two_loops_cpu(
// CHECK-NOT: masked.load
func.func @two_loops_cpu(%x: !llvm.ptr, %a: !llvm.ptr, %y: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %c12 = arith.constant 12 : i64
  %c256 = arith.constant 256 : i64
  %buffer = llvm.alloca %c256 x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ap = llvm.getelementptr inbounds %a[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %i = llvm.load %ap : !llvm.ptr -> i64
    %xo = arith.muli %i, %c12 overflow<nsw> : i64
    %xp = llvm.getelementptr inbounds %x[%xo] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %v = llvm.load %xp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %vx = vector.extract %v[0] : f32 from vector<3xf32>
    %slot = arith.subi %t, %lo : i64
    %bp = llvm.getelementptr %buffer[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %vx, %bp : f32, !llvm.ptr
  }
  scf.for %t = %lo to %hi step %c1 : i64 {
    %o = arith.muli %t, %c12 overflow<nsw> : i64
    %yp = llvm.getelementptr inbounds %y[%o] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %w = llvm.load %yp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %w2 = arith.addf %w, %w : vector<3xf32>
    llvm.store %w2, %yp {alignment = 4 : i64} : vector<3xf32>, !llvm.ptr
  }
  return
}

// -----

// A loop that stores into an array (not a stack buffer: another thread of the 8 could read it).
// CHECK-NOT: warp.cpu_keep_vectors
// CHECK-LABEL: func.func @to_array_cpu(
// CHECK-NOT: masked.load
func.func @to_array_cpu(%x: !llvm.ptr, %a: !llvm.ptr, %out: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %c12 = arith.constant 12 : i64
  %c256 = arith.constant 256 : i64
  %buffer = llvm.alloca %c256 x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ap = llvm.getelementptr inbounds %a[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %i = llvm.load %ap : !llvm.ptr -> i64
    %xo = arith.muli %i, %c12 overflow<nsw> : i64
    %xp = llvm.getelementptr inbounds %x[%xo] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %v = llvm.load %xp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %vx = vector.extract %v[0] : f32 from vector<3xf32>
    %op = llvm.getelementptr inbounds %out[%t] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %vx, %op : f32, !llvm.ptr
  }
  return
}

// -----

// A loop that reads back the buffer it writes (thread t + 1 reads what thread t wrote).
// CHECK-NOT: warp.cpu_keep_vectors
// CHECK-LABEL: func.func @reads_back_cpu(
// CHECK-NOT: masked.load
func.func @reads_back_cpu(%x: !llvm.ptr, %a: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %c12 = arith.constant 12 : i64
  %c256 = arith.constant 256 : i64
  %buffer = llvm.alloca %c256 x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ap = llvm.getelementptr inbounds %a[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %i = llvm.load %ap : !llvm.ptr -> i64
    %xo = arith.muli %i, %c12 overflow<nsw> : i64
    %xp = llvm.getelementptr inbounds %x[%xo] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %v = llvm.load %xp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %vx = vector.extract %v[0] : f32 from vector<3xf32>
    %slot = arith.subi %t, %lo : i64
    %bp = llvm.getelementptr %buffer[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %old = llvm.load %buffer : !llvm.ptr -> f32
    %sum = arith.addf %old, %vx : f32
    llvm.store %sum, %bp : f32, !llvm.ptr
  }
  return
}
