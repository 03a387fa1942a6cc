// RUN: mlwarp-opt %s --warp-cpu-entry="adjoint-only=true" | FileCheck %s
// RUN: mlwarp-opt %s --warp-cpu-entry | FileCheck %s --check-prefix=BOTH

// A kernel's adjoint library on the CPU (its with_adjoint build) launches only the adjoints: the kernel's own
// library runs it forward, and the adjoint replays what it needs of the kernel. With adjoint-only, a kernel k
// next to its adjoint k_adj gets no entry and is erased; a kernel without an adjoint keeps its entry.
// CHECK-NOT: func.func @k(
// CHECK-NOT: @k_cpu(
// CHECK-LABEL: func.func @k_adj_cpu(
// CHECK-LABEL: func.func @other_cpu(
// CHECK-NOT: @k_cpu(

// Without the option each kernel gets its entry.
// BOTH-DAG: func.func @k_cpu(
// BOTH-DAG: func.func @k_adj_cpu(
// BOTH-DAG: func.func @other_cpu(
func.func @k(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  return
}

func.func @k_adj(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                 %adj_x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  return
}

func.func @other(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  return
}
