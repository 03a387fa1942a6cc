# RUN: not %PYTHON %s 2>&1 | FileCheck %s

# A construct the kernel language does not have is refused with the user's
# file and line, the kernel's name and the construct.
import mlwarp as wp


@wp.kernel
def squares(a: wp.array(dtype=float)):
    i = wp.tid()
    b = [x * x for x in range(3)]
    a[i] = 1.0


print(squares.to_mlir())

# CHECK: mlwarp.errors.UnsupportedSyntaxError: {{.*}}error-unsupported.py:11: in 'squares': unsupported: list comprehension
# CHECK-NEXT: b = [x * x for x in range(3)]
