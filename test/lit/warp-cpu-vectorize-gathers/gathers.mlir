// RUN: mlwarp-opt %s --warp-cpu-vectorize-gathers | FileCheck %s

// The gather stretch of a scattering kernel (warp-cpu-interchange-loops' first loop): thread t reads the vec3
// x[a[t]], computes on it and writes a float into slot t - lo of a stack buffer. It becomes a loop of 8 threads a
// step: a[t..t+7] one vector load, each thread's vec3 one masked 16-byte load (its 12 bytes), the 8 transposed
// into x, y and z vectors, the arithmetic on vector<8xf32>, one vector store; the original loop runs the rest,
// and the module keeps its vectors (no LLVM scalarizer).
// CHECK: module attributes {warp.cpu_keep_vectors}
// CHECK-LABEL: func.func @lengths_cpu_private(
// CHECK: %[[COUNT:.+]] = arith.subi %[[HI:.+]], %[[LO:.+]] : i64
// CHECK-NEXT: %[[MINUS8:.+]] = arith.constant -8 : i64
// CHECK-NEXT: %[[WHOLE:.+]] = arith.andi %[[COUNT]], %[[MINUS8]] : i64
// CHECK-NEXT: %[[SPLIT:.+]] = arith.addi %[[LO]], %[[WHOLE]] : i64
// CHECK-NEXT: %[[EIGHT:.+]] = arith.constant 8 : i64
// CHECK-NEXT: scf.for %[[T:.+]] = %[[LO]] to %[[SPLIT]] step %[[EIGHT]]
// CHECK: llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xi32>
// CHECK-COUNT-8: llvm.intr.masked.load %{{.+}}, %{{.+}}, %{{.+}} {alignment = 4 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xf32>) -> vector<4xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf32>, vector<4xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 8, 1, 9, 4, 12, 5, 13] : vector<8xf32>, vector<8xf32>
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: math.sqrt %{{.+}} : vector<8xf32>
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK: scf.for %{{.+}} = %[[SPLIT]] to %[[HI]] step %{{.+}}
// CHECK: llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
func.func @lengths_cpu_private(%x: !llvm.ptr, %a: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %c4 = arith.constant 4 : i64
  %c12 = arith.constant 12 : i64
  %c256 = arith.constant 256 : i64
  %buffer = llvm.alloca %c256 x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ao = arith.muli %t, %c4 overflow<nsw> : i64
    %ap = llvm.getelementptr inbounds %a[%ao] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %i32 = llvm.load %ap : !llvm.ptr -> i32
    %i = arith.extsi %i32 : i32 to i64
    %xo = arith.muli %i, %c12 overflow<nsw> : i64
    %xp = llvm.getelementptr inbounds %x[%xo] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %v = llvm.load %xp {alignment = 4 : i64} : !llvm.ptr -> vector<3xf32>
    %sq = arith.mulf %v, %v : vector<3xf32>
    %sx = vector.extract %sq[0] : f32 from vector<3xf32>
    %sy = vector.extract %sq[1] : f32 from vector<3xf32>
    %sz = vector.extract %sq[2] : f32 from vector<3xf32>
    %s1 = arith.addf %sx, %sy : f32
    %s2 = arith.addf %s1, %sz : f32
    %len = math.sqrt %s2 : f32
    %slot = arith.subi %t, %lo : i64
    %bp = llvm.getelementptr %buffer[%slot] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %len, %bp : f32, !llvm.ptr
  }
  return
}
