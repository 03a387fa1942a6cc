# RUN: %PYTHON %s | FileCheck %s

# A local assigned in branches becomes a result of scf.if; elif is an scf.if
# nested in the else region.
import mlwarp as wp


@wp.kernel
def branches(a: wp.array(dtype=float), x: float):
    i = wp.tid()
    v = 0.0
    if x > 1.0:
        v = 1.0
    elif x > 0.0:
        v = 2.0
    else:
        v = 3.0
    a[i] = v


print(branches.to_mlir())

# CHECK-LABEL: func.func @branches
# CHECK: %[[C1:.+]] = "warp.gt"(%arg1, %{{.+}}) : (f32, f32) -> i1
# CHECK: %[[V:.+]] = scf.if %[[C1]] -> (f32) {
# CHECK:   %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
# CHECK:   scf.yield %[[ONE]] : f32
# CHECK: } else {
# CHECK:   %[[C2:.+]] = "warp.gt"(%arg1, %{{.+}}) : (f32, f32) -> i1
# CHECK:   %[[INNER:.+]] = scf.if %[[C2]] -> (f32) {
# CHECK:     %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
# CHECK:     scf.yield %[[TWO]] : f32
# CHECK:   } else {
# CHECK:     %[[THREE:.+]] = arith.constant 3.000000e+00 : f32
# CHECK:     scf.yield %[[THREE]] : f32
# CHECK:   }
# CHECK:   scf.yield %[[INNER]] : f32
# CHECK: }
# CHECK: "warp.store"(%arg0, %[[V]], %{{.+}})


# A branch that assigns nothing yields nothing.
@wp.kernel
def store_only(a: wp.array(dtype=float), x: float):
    i = wp.tid()
    if x > 0.0:
        a[i] = x


print(store_only.to_mlir())

# CHECK-LABEL: func.func @store_only
# CHECK: scf.if %{{.+}} {
# CHECK-NEXT: "warp.store"(%arg0, %arg1, %{{.+}})
# CHECK-NOT: scf.yield
# CHECK: return
