# RUN: env MLWARP_PRINT_IR_AFTER_ALL=1 %PYTHON %s 2>&1 >/dev/null | FileCheck %s

# The compiler itself prints the IR after each of its passes when asked, in
# MLIR's format, as mlwarp-opt --mlir-print-ir-after-all does.
import mlwarp as wp


@wp.kernel
def double(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0


print(double.to_mlir("llvm"))

# CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
# CHECK: "warp.mul"
# CHECK: // -----// IR Dump After {{.*}}(convert-warp-builtins-to-arith) //----- //
# CHECK: arith.mulf
# CHECK: // -----// IR Dump After {{.*}}(warp-cpu-entry) //----- //
# CHECK: func.func @double_cpu
# CHECK: // -----// IR Dump After {{.*}}(reconcile-unrealized-casts) //----- //
# CHECK: llvm.func @double_cpu
