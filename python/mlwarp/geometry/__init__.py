"""Geometry structures that kernels query through a uint64 id, as in Warp (issue 17): wp.HashGrid, wp.Bvh,
wp.Mesh, wp.Volume and their queries; and, as the package `wp.geometry` (names not in `wp.*`, as in Warp), iso-surface
extraction, swept volumes and 2-D triangle meshes (adjacency, Delaunay edge flips).
docs/geometry.md says what exists, how the queries lower and what is missing."""

from mlwarp.geometry.bvh import (  # noqa: F401
    Bvh, BvhQuery, bvh_query_aabb, bvh_query_capsule, bvh_query_next, bvh_query_ray, bvh_query_sphere,
)
from mlwarp.geometry.bvh_tiled import (  # noqa: F401
    BvhQueryTiled, bvh_query_aabb_tiled, bvh_query_next_tiled, bvh_query_ray_tiled, tile_bvh_query_aabb,
    tile_bvh_query_next, tile_bvh_query_ray, tile_query_valid,
)
from mlwarp.geometry.bvh_sah import is_cubql_available  # noqa: F401
from mlwarp.geometry.hashgrid import (
    HashGrid, HashGridQuery, hash_grid_point_id, hash_grid_query, hash_grid_query_next,
)  # noqa: F401
from mlwarp.geometry.volume import Volume  # noqa: F401
from mlwarp.geometry.volume_funcs import *  # noqa: F401,F403  (wp.volume_sample, wp.volume_lookup_f, ...)
from mlwarp.geometry.volume_funcs import __all__ as _volume_names
from mlwarp.geometry.isosurface import IsoSurfaceBase, IsoSurfaceMarchingCubes  # noqa: F401  (wp.geometry.* only)
from mlwarp.geometry.surface_nets import IsoSurfaceNets  # noqa: F401  (wp.geometry.* only)
from mlwarp.geometry.sparse_marching_cubes import (  # noqa: F401  (wp.geometry.* only)
    lipschitz_octree, sparse_marching_cubes, sparse_marching_cubes_from_cells,
)
from mlwarp.geometry.delaunay import delaunay_edge_flip, find_triangle_neighbor_edge_index, tri_tri_adjacency  # noqa: F401  (same)
from mlwarp.geometry.mesh import Mesh  # noqa: F401
from mlwarp.geometry.mesh_queries import *  # noqa: F401,F403  (mesh_query_point, mesh_query_ray, ... as @wp.func)
from mlwarp.geometry.mesh_queries import __all__ as _mesh_queries_all
from mlwarp.geometry.mesh_tiled import (  # noqa: F401
    MeshQueryAABBTiled, mesh_query_aabb_next_tiled, mesh_query_aabb_tiled, tile_mesh_query_aabb,
    tile_mesh_query_aabb_next,
)
from mlwarp.geometry.swept_volume import (  # noqa: F401  (wp.geometry.* only, as Warp's warp.geometry)
    SweptVolumeSignMode, swept_volume_bounds, swept_volume_field, swept_volume_mesh, swept_volume_sdf,
)

__all__ = ["HashGrid", "HashGridQuery", "hash_grid_query", "hash_grid_query_next", "hash_grid_point_id", "Bvh",
           "BvhQuery", "bvh_query_aabb", "bvh_query_ray", "bvh_query_sphere", "bvh_query_capsule", "bvh_query_next"]
__all__ += ["BvhQueryTiled", "tile_bvh_query_aabb", "tile_bvh_query_ray", "tile_bvh_query_next", "tile_query_valid",
            "bvh_query_aabb_tiled", "bvh_query_ray_tiled", "bvh_query_next_tiled", "is_cubql_available"]
__all__ += ["Volume", *_volume_names]
__all__ += ["Mesh", *_mesh_queries_all]
__all__ += ["MeshQueryAABBTiled", "tile_mesh_query_aabb", "tile_mesh_query_aabb_next", "mesh_query_aabb_tiled",
            "mesh_query_aabb_next_tiled"]
