"""Warp's block-wide mesh AABB query: `wp.tile_mesh_query_aabb`, `wp.tile_mesh_query_aabb_next`,
`wp.tile_query_valid` of a `wp.MeshQueryAABBTiled`, and the deprecated `wp.mesh_query_aabb_tiled` /
`wp.mesh_query_aabb_next_tiled` (Warp 1.18's names: a DeprecationWarning when a kernel uses them).

Warp's CPU semantics (native/tile_mesh.h): each lane advances a private copy of an ordinary `mesh_query_aabb`;
`tile_mesh_query_aabb_next` takes one step (`mesh_query_aabb_next` from index -1) and gives a tile of shape
(block_dim,) with the face at element 0 and -1 everywhere else (-1 at element 0 too once no face is left);
`tile_query_valid` says whether the last step found a face (True before the first).

A mesh's AABB query is a query of its tree (mesh.py: a wp.Bvh over the triangles' boxes, `mesh_get_bvh`): the
faces whose boxes overlap, met in the same preorder as `wp.mesh_query_next` meets them. So the block's mesh
query is the block's BVH query (bvh_tiled.py) of the mesh's tree, typed MeshQueryAABBTiled (its fields are
BvhQueryTiled's): the frontend (compiler/frontend/geometry.py) reads the tree's id from the mesh's descriptor
and emits the same ops, one query per block with Warp's CPU lanes."""

from __future__ import annotations

from mlwarp.core import geometry as layout
from mlwarp.core.intrinsics import KernelOnly
from mlwarp.geometry.bvh import _query_struct
from mlwarp.geometry.bvh_tiled import tile_query_valid

MeshQueryAABBTiled = _query_struct("MeshQueryAABBTiled", layout.BVH_TILED_QUERY_FIELDS)
MeshQueryAABBTiled.__doc__ = "The state of a block's mesh AABB query (advanced by wp.tile_mesh_query_aabb_next)."

tile_mesh_query_aabb = KernelOnly("tile_mesh_query_aabb", "tile_mesh_query_aabb(id: uint64, low: vec3, high: vec3) "
                                                           "-> MeshQueryAABBTiled: a block's query of the faces whose "
                                                           "boxes overlap [low, high]")
tile_mesh_query_aabb_next = KernelOnly("tile_mesh_query_aabb_next", "tile_mesh_query_aabb_next(query: "
                                                                     "MeshQueryAABBTiled) -> tile(int, (block_dim,)): "
                                                                     "advances query; the next face per lane, -1 "
                                                                     "where a lane has none")
mesh_query_aabb_tiled = KernelOnly("mesh_query_aabb_tiled", "Deprecated alias of tile_mesh_query_aabb (Warp 1.18)")
mesh_query_aabb_next_tiled = KernelOnly("mesh_query_aabb_next_tiled",
                                        "Deprecated alias of tile_mesh_query_aabb_next (Warp 1.18)")

for _start in (tile_mesh_query_aabb, mesh_query_aabb_tiled):
    _start._wp_query_type_ = MeshQueryAABBTiled
for _advance in (tile_mesh_query_aabb_next, mesh_query_aabb_next_tiled):
    _advance._wp_query_types_ = (MeshQueryAABBTiled,)
tile_query_valid._wp_query_types_ += (MeshQueryAABBTiled,)  # (its last_valid where a BvhQueryTiled has it)

__all__ = ["MeshQueryAABBTiled", "tile_mesh_query_aabb", "tile_mesh_query_aabb_next", "mesh_query_aabb_tiled",
           "mesh_query_aabb_next_tiled"]
