// RUN: mlwarp-opt %s --warp-cpu-vector-math="isa=avx2" | FileCheck %s
// RUN: mlwarp-opt %s --warp-cpu-vector-math="isa=sse4,avx512" | FileCheck %s --check-prefix=WIDE
// RUN: mlwarp-opt %s --warp-cpu-vector-math="isa=none" | FileCheck %s --check-prefix=NONE
// RUN: not mlwarp-opt %s --warp-cpu-vector-math="isa=neon" 2>&1 | FileCheck %s --check-prefix=BAD

// A scalar libm intrinsic becomes a call of the libm function, whose declaration names its
// libmvec variants (the loop vectoriser reads `vector-function-abi-variant`) and has no
// memory effects; the vector functions are declared and kept by llvm.compiler.used.
// CHECK-DAG: llvm.func @cosf(f32) -> f32 attributes {memory_effects = #llvm.memory_effects<other = none{{.*}}passthrough = ["nounwind", "willreturn", ["vector-function-abi-variant", "_ZGV_LLVM_N8v_cosf(_ZGVdN8v_cosf)"]]
// CHECK-DAG: llvm.func @sin(f64) -> f64 {{.*}}"_ZGV_LLVM_N4v_sin(_ZGVdN4v_sin)"
// CHECK-DAG: llvm.func @powf(f32, f32) -> f32 {{.*}}"_ZGV_LLVM_N8vv_powf(_ZGVdN8vv_powf)"
// CHECK-DAG: llvm.func @erff(f32) -> f32 {{.*}}"_ZGV_LLVM_N8v_erff(_ZGVdN8v_erff)"
// CHECK-LABEL: llvm.func @kernel
// CHECK: llvm.call @cosf(%{{.+}}) : (f32) -> f32
// CHECK: llvm.call @sin(%{{.+}}) : (f64) -> f64
// CHECK: llvm.call @powf(%{{.+}}, %{{.+}}) : (f32, f32) -> f32
// CHECK: llvm.call @erff(%{{.+}}) : (f32) -> f32
// What it leaves alone: intrinsics LLVM vectorises itself (sqrt), vector operands, other calls.
// CHECK: llvm.intr.sqrt(%{{.+}}) : (f32) -> f32
// CHECK: llvm.intr.cos(%{{.+}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK: llvm.call @helper(%{{.+}}) : (f32) -> f32
// CHECK-DAG: llvm.func @_ZGVdN8v_cosf(vector<8xf32>) -> vector<8xf32>
// CHECK-DAG: llvm.func @_ZGVdN4v_sin(vector<4xf64>) -> vector<4xf64>
// CHECK-DAG: llvm.func @_ZGVdN8vv_powf(vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-DAG: llvm.mlir.global appending @llvm.compiler.used() {{.*}} : !llvm.array<4 x ptr>

// Every ISA asked for is a variant: the vectoriser picks by the width it chooses.
// WIDE: "_ZGV_LLVM_N4v_cosf(_ZGVbN4v_cosf),_ZGV_LLVM_N16v_cosf(_ZGVeN16v_cosf)"
// WIDE: llvm.func @_ZGVbN4v_cosf(vector<4xf32>) -> vector<4xf32>
// WIDE: llvm.func @_ZGVeN16v_cosf(vector<16xf32>) -> vector<16xf32>

// NONE-NOT: _ZGV
// NONE: llvm.intr.cos(%{{.+}}) : (f32) -> f32

// BAD: pass 'warp-cpu-vector-math': unknown isa ['neon']; use host, none or ['avx2', 'avx512', 'sse4']
llvm.func @erff(f32) -> f32
llvm.func @helper(f32) -> f32
llvm.func @kernel(%x: f32, %d: f64, %v: vector<4xf32>) -> f32 {
  %0 = llvm.intr.cos(%x) : (f32) -> f32
  %1 = llvm.intr.sin(%d) : (f64) -> f64
  %2 = llvm.intr.pow(%x, %0) : (f32, f32) -> f32
  %3 = llvm.call @erff(%2) : (f32) -> f32
  %4 = llvm.intr.sqrt(%3) : (f32) -> f32
  %5 = llvm.intr.cos(%v) : (vector<4xf32>) -> vector<4xf32>
  %6 = llvm.call @helper(%4) : (f32) -> f32
  llvm.return %6 : f32
}
