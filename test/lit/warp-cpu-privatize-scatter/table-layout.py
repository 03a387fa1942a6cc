# REQUIRES: x86-64
# RUN: %PYTHON %s | FileCheck %s
#
# The private table's offsets are constants (ptrtoint of a GEP from null) that the translation to LLVM IR folds:
# with the host's data layout on the module first, they are the launch struct's as the runtime lays it out
# (ctypes: dims 32 bytes, the struct 64 (its array field 56: two i64s, two i32 quadruples, two i16s), then the
# arrays at 96, 120, 144; 168 in all). Folded with LLVM's default layout (an i64 aligned to 4 bytes) the struct's
# array field was 52 bytes and every offset after it 8 short (88, 112, 136; 160), and the runtime read other
# parameters' words as the arrays' descriptors.
import mlwarp as wp


@wp.struct
class Scale:
    values: wp.array(dtype=float)
    count: int


@wp.kernel
def scaled_histogram(s: Scale, x: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, idx[i], x[i] * s.values[0])


# version 2, the struct's size, 3 rows, flags (SUMS_ONLY: 1), then per row parameter, offset, ndim, type code
# (out's sums are f32, code 1)
# CHECK: @scaled_histogram_cpu_private_params = {{.*}}constant [16 x i64] [i64 2, i64 168, i64 3, i64 1, i64 1, i64 96, i64 1, i64 0, i64 2, i64 120, i64 1, i64 0, i64 3, i64 144, i64 1, i64 1]
text = scaled_histogram.to_mlir("llvm-ir")
print("\n".join(line for line in text.splitlines() if "_private_params" in line and "constant" in line))
