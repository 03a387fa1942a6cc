# RUN: %PYTHON %s | FileCheck %s

# tile_map of a @wp.func: warp.tile_map's body (inlined by warp-inline, ending in gpu.yield) becomes a
# linalg.generic body. A tile of vec3f is a tensor with the components as its trailing dimension
# (tensor<4x3xf32>): an element-wise builtin on such tiles is a tensor.generate whose body builds each
# operand's element from its components, applies the builtin to whole vectors and yields one component.
import mlwarp as wp


@wp.func
def twice_plus(x: float, y: float):
    return 2.0 * x + y


@wp.kernel
def mapped(a: wp.array(dtype=float), b: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    t = wp.tile_map(twice_plus, wp.tile_load(a, shape=4), wp.tile_load(b, shape=4))
    wp.tile_store(a, t)
    tv = wp.tile_load(v, shape=4)
    wp.tile_store(v, tv + tv)


print(mapped.to_mlir("warp-opt"))
print(mapped.to_mlir("tiles"))

# CHECK-LABEL: func.func @mapped(
# CHECK: %[[T:.+]] = "warp.tile_map"(%{{.+}}, %{{.+}}) ({
# CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32):
# CHECK:   %[[M:.+]] = "warp.mul"(%{{.+}}, %[[X]]) : (f32, f32) -> f32
# CHECK:   %[[S:.+]] = "warp.add"(%[[M]], %[[Y]]) : (f32, f32) -> f32
# CHECK:   gpu.yield %[[S]] : f32
# CHECK: }) {operandSegmentSizes = array<i32: 1, 1, 0, {{.+}}} : ({{.+}}) -> !warp.tile<f32, array<i64: 4>>
# CHECK: "warp.add"(%[[V:.+]], %[[V]]) : (!warp.tile<!warp.vec<3 : i64, f32>, array<i64: 4>>, !warp.tile<!warp.vec<3 : i64, f32>, array<i64: 4>>)

# CHECK-LABEL: func.func @mapped(
# the map: a loop over the elements whose body is the function's
# CHECK: scf.for %[[I:.+]] = {{.+}} {
# CHECK:   "warp.mul"
# CHECK:   "warp.add"
# CHECK:   memref.store
# the vec3 tile: a 4x3 buffer; each component of tv + tv computed from whole vectors
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<4x3xf32>
# CHECK: scf.for %[[E:.+]] = {{.+}} {
# CHECK:   scf.for %[[C:.+]] = {{.+}} {
# CHECK:     %[[V0:.+]] = "warp.construct"(%{{.+}}, %{{.+}}, %{{.+}}) : (f32, f32, f32) -> !warp.vec<3 : i64, f32>
# CHECK:     %[[V1:.+]] = "warp.construct"
# CHECK:     %[[SUM:.+]] = "warp.add"(%[[V0]], %[[V1]]) : (!warp.vec<3 : i64, f32>, !warp.vec<3 : i64, f32>) -> !warp.vec<3 : i64, f32>
# CHECK:     "warp.extract"(%[[SUM]], %{{.+}}) : (!warp.vec<3 : i64, f32>, i32) -> f32
