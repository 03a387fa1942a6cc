"""Warp's block-wide BVH queries: `wp.tile_bvh_query_aabb`, `wp.tile_bvh_query_ray`, `wp.tile_bvh_query_next`,
`wp.tile_query_valid`, and the deprecated `wp.bvh_query_aabb_tiled` / `_ray_tiled` / `bvh_query_next_tiled`.

On the CPU Warp runs a block's query on its lanes' private copies of one ordinary BVH query (native/tile_bvh.h):
each `tile_bvh_query_next` advances it by one item and gives a tile of shape (block_dim,) holding that item's
index at element 0 and -1 everywhere else (-1 at element 0 too once nothing is left), and `tile_query_valid` says
whether the last call found an item (True before the first call). mlwarp's blocks have one lane (docs/tiles.md),
so the tile has shape (1,) and `wp.untile` of it is the item's index, or -1. In kernels each call is an op of the
warp dialect, as the other BVH queries (compiler/frontend/geometry.py)."""

from __future__ import annotations

from mlwarp.core import geometry as layout
from mlwarp.geometry.bvh import _query_struct
from mlwarp.core.intrinsics import KernelOnly

BvhQueryTiled = _query_struct(layout.BVH_TILED_QUERY_NAME, layout.BVH_TILED_QUERY_FIELDS)

tile_bvh_query_aabb = KernelOnly("tile_bvh_query_aabb", "tile_bvh_query_aabb(id: uint64, low: vec3, high: vec3) -> "
                                                         "BvhQueryTiled: a block's query of the boxes overlapping "
                                                         "[low, high]")
tile_bvh_query_ray = KernelOnly("tile_bvh_query_ray", "tile_bvh_query_ray(id: uint64, start: vec3, dir: vec3) -> "
                                                       "BvhQueryTiled: a block's query of the boxes the ray hits")
tile_bvh_query_next = KernelOnly("tile_bvh_query_next", "tile_bvh_query_next(query: BvhQueryTiled) -> tile(int, "
                                                         "(block_dim,)): advances query; the next item's index per "
                                                         "lane, -1 where a lane has none")
tile_query_valid = KernelOnly("tile_query_valid", "tile_query_valid(query: BvhQueryTiled) -> bool: whether the last "
                                                   "tile_bvh_query_next found an item (True before the first)")
bvh_query_aabb_tiled = KernelOnly("bvh_query_aabb_tiled", "Deprecated alias of tile_bvh_query_aabb (Warp 1.18)")
bvh_query_ray_tiled = KernelOnly("bvh_query_ray_tiled", "Deprecated alias of tile_bvh_query_ray (Warp 1.18)")
bvh_query_next_tiled = KernelOnly("bvh_query_next_tiled", "Deprecated alias of tile_bvh_query_next (Warp 1.18)")

for _query in (tile_bvh_query_aabb, tile_bvh_query_ray, bvh_query_aabb_tiled, bvh_query_ray_tiled):
    _query._wp_query_type_ = BvhQueryTiled
for _advance in (tile_bvh_query_next, bvh_query_next_tiled, tile_query_valid):
    _advance._wp_query_types_ = (BvhQueryTiled,)

__all__ = ["BvhQueryTiled", "tile_bvh_query_aabb", "tile_bvh_query_ray", "tile_bvh_query_next", "tile_query_valid",
           "bvh_query_aabb_tiled", "bvh_query_ray_tiled", "bvh_query_next_tiled"]
