# RUN: %PYTHON %s | FileCheck %s

# `assert condition, message` becomes warp.assert of the condition (an i1), the statement's text its message;
# the message expression is not evaluated. Debug builds check it (warp-bounds-check), release builds erase it
# (warp-strip-asserts).
import mlwarp as wp


@wp.kernel
def checked(a: wp.array(dtype=float)):
    i = wp.tid()
    assert a[i] >= 0.0, "no negative values"
    a[i] = wp.sqrt(a[i])


print(checked.to_mlir())

# CHECK-LABEL: func.func @checked
# CHECK: %[[X:.+]] = "warp.load"(%arg0, %{{.+}})
# CHECK: %[[OK:.+]] = "warp.ge"(%[[X]], %{{.+}}) : (f32, f32) -> i1
# CHECK: "warp.assert"(%[[OK]]) {message = "assert a[i] >= 0.0, \22no negative values\22"} : (i1) -> ()
# CHECK: "warp.sqrt"
