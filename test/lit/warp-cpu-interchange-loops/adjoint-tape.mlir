// RUN: mlwarp-opt %s --convert-warp-composites-to-vector --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry --warp-cpu-interchange-loops --canonicalize --cse | FileCheck %s

// The adjoint of `for s in range(n): v = v + a * sin(v)` (warp-autodiff: a forward replay, then a tape of
// the loop's states in two warp.stack_arrays, filled and read back by loops whose bounds derive from n
// alone). Its thread loop runs in blocks too: the block has as many threads as fit the arrays in
// STACK_ARRAY_BUDGET (a power of two <= 256, from n: math.ctlz), each stack array is one allocation per
// block (count x block elements, after a stack save that the block's end restores), and every loop
// (replay, checkpoints, segment re-run, reverse) runs once per block with its body per thread.
// CHECK-LABEL: func.func @relax_adj_cpu(
// CHECK: %[[LOG:.+]] = math.ctlz
// CHECK: %[[BLOCK:.+]] = arith.shli %c1_i64, %{{.+}} : i64
// CHECK: scf.for %[[B:.+]] = %arg1 to %arg2 step %[[BLOCK]]
// CHECK: %[[SP:.+]] = llvm.intr.stacksave
// CHECK: %[[N1:.+]] = arith.muli %{{.+}}, %[[BLOCK]] : i64
// CHECK: llvm.alloca %[[N1]] x !llvm.array<4 x i8>
// CHECK: %[[N2:.+]] = arith.muli %{{.+}}, %[[BLOCK]] : i64
// CHECK: llvm.alloca %[[N2]] x !llvm.array<4 x i8>
// the forward replay: the body per thread, innermost
// CHECK: scf.for %{{.+}} = %c0_i32 to %{{.+}} step %c1_i32 : i32 {
// CHECK-NEXT: scf.for %{{.+}} = %[[B]] to
// CHECK: math.sin
// the reverse over the segments, its re-run and reverse loops inside, each body per thread
// CHECK: math.cos
// CHECK: llvm.intr.stackrestore %[[SP]]
// CHECK: } else {

module {
  func.func @relax(%arg0: !warp.array<f32, 1 : i64>, %arg1: f32, %arg2: i32, %arg3: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %2 = scf.for %arg4 = %c0_i32 to %arg2 step %c1_i32 iter_args(%arg5 = %1) -> (f32)  : i32 {
      %3 = "warp.sin"(%arg5) : (f32) -> f32
      %4 = "warp.mul"(%arg1, %3) : (f32, f32) -> f32
      %5 = "warp.add"(%arg5, %4) : (f32, f32) -> f32
      scf.yield %5 : f32
    }
    "warp.store"(%arg3, %2, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @relax_adj(%arg0: !warp.array<f32, 1 : i64>, %arg1: f32, %arg2: i32, %arg3: !warp.array<f32, 1 : i64>, %arg4: !warp.array<f32, 1 : i64>, %arg5: f32, %arg6: i32, %arg7: !warp.array<f32, 1 : i64>, %arg8: i64) attributes {warp.adjoint_of = "relax", warp.kernel} {
    %c16384_i32 = arith.constant 16384 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %c3_i64 = arith.constant 3 : i64
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %2 = scf.for %arg9 = %c0_i32 to %arg2 step %c1_i32 iter_args(%arg10 = %1) -> (f32)  : i32 {
      %26 = "warp.sin"(%arg10) : (f32) -> f32
      %27 = "warp.mul"(%arg1, %26) : (f32, f32) -> f32
      %28 = "warp.add"(%arg10, %27) : (f32, f32) -> f32
      scf.yield %28 : f32
    }
    %3 = "warp.load"(%arg7, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %4 = arith.shrui %arg8, %c3_i64 : i64
    %5 = arith.andi %4, %c1_i64 : i64
    %6 = arith.cmpi ne, %5, %c0_i64 : i64
    scf.if %6 {
      "warp.store"(%arg7, %cst, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    }
    %7 = arith.maxsi %arg2, %c0_i32 : i32
    %8 = arith.sitofp %7 : i32 to f64
    %9 = math.sqrt %8 : f64
    %10 = arith.fptosi %9 : f64 to i32
    %11 = arith.addi %10, %c1_i32 : i32
    %12 = arith.maxsi %11, %c16384_i32 : i32
    %13 = arith.cmpi sle, %7, %c16384_i32 : i32
    %14 = arith.select %13, %7, %12 : i32
    %15 = arith.maxsi %14, %c1_i32 : i32
    %16 = arith.addi %7, %15 : i32
    %17 = arith.subi %16, %c1_i32 : i32
    %18 = arith.divsi %17, %15 : i32
    %19 = arith.maxsi %18, %c1_i32 : i32
    %20 = "warp.stack_array"(%19) : (i32) -> !warp.array<f32, 1 : i64>
    %21 = "warp.stack_array"(%15) : (i32) -> !warp.array<f32, 1 : i64>
    "warp.store"(%20, %1, %c0_i32) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    %22 = scf.for %arg9 = %c1_i32 to %18 step %c1_i32 iter_args(%arg10 = %1) -> (f32)  : i32 {
      %26 = scf.for %arg11 = %c0_i32 to %15 step %c1_i32 iter_args(%arg12 = %arg10) -> (f32)  : i32 {
        %27 = "warp.sin"(%arg12) : (f32) -> f32
        %28 = "warp.mul"(%arg1, %27) : (f32, f32) -> f32
        %29 = "warp.add"(%arg12, %28) : (f32, f32) -> f32
        scf.yield %29 : f32
      }
      "warp.store"(%20, %26, %arg9) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
      scf.yield %26 : f32
    }
    %23:2 = scf.for %arg9 = %c0_i32 to %18 step %c1_i32 iter_args(%arg10 = %3, %arg11 = %cst) -> (f32, f32)  : i32 {
      %26 = arith.subi %18, %c1_i32 : i32
      %27 = arith.subi %26, %arg9 : i32
      %28 = arith.muli %27, %15 : i32
      %29 = arith.subi %7, %28 : i32
      %30 = arith.minsi %29, %15 : i32
      %31 = "warp.load"(%20, %27) : (!warp.array<f32, 1 : i64>, i32) -> f32
      "warp.store"(%21, %31, %c0_i32) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
      %32 = scf.for %arg12 = %c1_i32 to %30 step %c1_i32 iter_args(%arg13 = %31) -> (f32)  : i32 {
        %34 = "warp.sin"(%arg13) : (f32) -> f32
        %35 = "warp.mul"(%arg1, %34) : (f32, f32) -> f32
        %36 = "warp.add"(%arg13, %35) : (f32, f32) -> f32
        "warp.store"(%21, %36, %arg12) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
        scf.yield %36 : f32
      }
      %33:2 = scf.for %arg12 = %c0_i32 to %30 step %c1_i32 iter_args(%arg13 = %arg10, %arg14 = %arg11) -> (f32, f32)  : i32 {
        %34 = arith.subi %30, %c1_i32 : i32
        %35 = arith.subi %34, %arg12 : i32
        %36 = "warp.load"(%21, %35) : (!warp.array<f32, 1 : i64>, i32) -> f32
        %37 = "warp.sin"(%36) : (f32) -> f32
        %38 = "warp.mul"(%arg1, %37) : (f32, f32) -> f32
        %39 = "warp.add"(%36, %38) : (f32, f32) -> f32
        %40 = "warp.mul"(%37, %arg13) : (f32, f32) -> f32
        %41 = "warp.mul"(%arg1, %arg13) : (f32, f32) -> f32
        %42 = "warp.add"(%arg14, %40) : (f32, f32) -> f32
        %43 = "warp.cos"(%36) : (f32) -> f32
        %44 = "warp.mul"(%43, %41) : (f32, f32) -> f32
        %45 = "warp.add"(%arg13, %44) : (f32, f32) -> f32
        scf.yield %45, %42 : f32, f32
      }
      scf.yield %33#0, %33#1 : f32, f32
    }
    %24 = "warp.load"(%arg4, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %25 = "warp.add"(%24, %23#0) : (f32, f32) -> f32
    "warp.store"(%arg4, %25, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}

