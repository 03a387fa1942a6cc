"""Geometry structures that kernels query through a uint64 id, as in Warp (issue 17): wp.HashGrid, wp.Bvh,
wp.Mesh and their queries. docs/geometry.md says what exists, how the queries lower and what is missing."""

from .bvh import (  # noqa: F401
    Bvh, BvhQuery, bvh_query_aabb, bvh_query_capsule, bvh_query_next, bvh_query_ray, bvh_query_sphere,
)
from .hashgrid import HashGrid, HashGridQuery, hash_grid_point_id, hash_grid_query, hash_grid_query_next  # noqa: F401
from .mesh import Mesh, is_cubql_available  # noqa: F401
from .mesh_queries import *  # noqa: F401,F403  (mesh_query_point, mesh_query_ray, ... as @wp.func)
from .mesh_queries import __all__ as _mesh_queries_all
from .swept_volume import (  # noqa: F401  (wp.geometry.* only, as Warp's warp.geometry)
    SweptVolumeSignMode, swept_volume_bounds, swept_volume_field, swept_volume_mesh, swept_volume_sdf,
)

__all__ = ["HashGrid", "HashGridQuery", "hash_grid_query", "hash_grid_query_next", "hash_grid_point_id", "Bvh",
           "BvhQuery", "bvh_query_aabb", "bvh_query_ray", "bvh_query_sphere", "bvh_query_capsule", "bvh_query_next",
           "Mesh", "is_cubql_available", *_mesh_queries_all]
