# RUN: %PYTHON %s | FileCheck %s

# print(tile): Warp's nested-bracket format, one printf per element in loops over the tile (the elements read
# with warp.tile_extract at the loop's indices), a separator printed between elements, the row separator
# between rows; one fflush at the end.
import mlwarp as wp


@wp.kernel(enable_backward=False)
def k(a: wp.array2d(dtype=int)):
    print(wp.tile_load(a, shape=(2, 3)))


print(k.to_mlir())

# CHECK-DAG: llvm.mlir.global private constant @[[OPEN:__wp_str_[0-9]+]]("[\00")
# CHECK-DAG: llvm.mlir.global private constant @[[D:__wp_str_[0-9]+]]("%d\00")
# CHECK-DAG: llvm.mlir.global private constant @[[SP:__wp_str_[0-9]+]](" \00")
# CHECK-DAG: llvm.mlir.global private constant @[[ROW:__wp_str_[0-9]+]]("\0A \00")
# CHECK-DAG: llvm.mlir.global private constant @{{__wp_str_[0-9]+}}(" = tile(shape=(2,3), storage=register)\00")
# CHECK-LABEL: func.func @k(
# CHECK: %[[T:.+]] = "warp.tile_load"
# CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
# CHECK:   %[[II:.+]] = arith.index_cast %[[I]] : index to i32
# CHECK:   scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
# CHECK:     %[[JJ:.+]] = arith.index_cast %[[J]] : index to i32
# CHECK:     %[[E:.+]] = "warp.tile_extract"(%[[T]], %[[II]], %[[JJ]])
# CHECK:     %[[FMT:.+]] = llvm.mlir.addressof @[[D]]
# CHECK:     llvm.call @printf(%[[FMT]], %[[E]])
# CHECK:     scf.if
# CHECK:       llvm.mlir.addressof @[[SP]]
# CHECK:   scf.if
# CHECK:     llvm.mlir.addressof @[[ROW]]
# CHECK: llvm.call @fflush(
# CHECK-NOT: llvm.call @fflush(
