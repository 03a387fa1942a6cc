# RUN: not %PYTHON %s 2>&1 | FileCheck %s

# Mixing types without a conversion is a type error naming the line, as in Warp.
import mlwarp as wp


@wp.kernel
def mixed(c: wp.array(dtype=wp.float64)):
    i = wp.tid()
    c[i] = c[i] * 2.0


print(mixed.to_mlir())

# CHECK: mlwarp.errors.CompileTypeError: {{.*}}error-types.py:10: in 'mixed': Input types must be the same, got ['float64', 'float32']
# CHECK-NEXT: c[i] = c[i] * 2.0
