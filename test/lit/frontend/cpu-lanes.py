# RUN: %PYTHON %s | FileCheck %s

# A kernel built for Warp's CPU lanes (the option cpu_block_dim, which a launch with wp.config.enable_cpu_blocks
# and block_dim > 1 sets): the module says how many (warp.cpu_lanes); wp.block_dim() is that many; wp.tile(x)
# writes the lane's element of a tile of block_dim (warp.lane_index) and ends with a barrier (warp.tile_sync);
# wp.untile reads the lane's element; a stack's count is a tile of one element that a push updates between
# barriers. Without the option (the default) the same kernel keeps one lane.
import mlwarp as wp

CAP = wp.constant(16)


@wp.kernel(enable_backward=False)
def k(a: wp.array(dtype=float), out: wp.array(dtype=int)):
    i, lane = wp.tid()
    t = wp.tile(a[lane])
    s = wp.tile_stack(capacity=CAP, dtype=int)
    slot = wp.tile_stack_push(s, lane, wp.untile(t) > 0.0)
    out[lane] = slot + wp.block_dim()


k.options["cpu_block_dim"] = 4
print(k.to_mlir())
del k.options["cpu_block_dim"]
print(k.to_mlir())

# CHECK: module attributes {warp.cpu_lanes = 4 : i64, warp.tiles}
# CHECK-LABEL: func.func @k(
# CHECK: %[[X:.+]] = "warp.load"
# CHECK: %[[T0:.+]] = "warp.tile_full"(%{{.+}}) : (f32) -> !warp.tile<f32, array<i64: 4>>
# CHECK: %[[L:.+]] = "warp.lane_index"() : () -> i32
# CHECK: %[[T:.+]] = "warp.tile_insert"(%[[T0]], %[[X]], %[[L]])
# CHECK: "warp.tile_sync"()
# CHECK: %[[COUNT:.+]] = "warp.tile_full"(%{{.+}}) : (i32) -> !warp.tile<i32, array<i64: 1>>
# CHECK: "warp.tile_sync"()
# CHECK: "warp.tile_extract"(%[[COUNT]], %{{.+}})
# CHECK: %[[L2:.+]] = "warp.lane_index"() : () -> i32
# CHECK: "warp.tile_extract"(%[[T]], %[[L2]])
# CHECK: "warp.tile_insert"(%[[COUNT]]
# CHECK: "warp.tile_sync"()
# CHECK: "warp.add"(%{{.+}}, %c4_i32{{.*}})

# CHECK: module attributes {warp.one_lane_tiles = "tile", warp.tiles}
# CHECK-LABEL: func.func @k(
# CHECK-NOT: warp.lane_index
# CHECK-NOT: warp.tile_sync
# CHECK: "warp.tile_full"(%{{.+}}) : (f32) -> !warp.tile<f32, array<i64: 1>>
# CHECK: return
