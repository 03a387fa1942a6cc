"""wp.Mesh's kernel functions (Warp 1.19's mesh_* builtins, warp/native/mesh.h), written in the kernel language
as @wp.func over `array(ptr=..., shape=..., dtype=...)` views of the mesh descriptor
(core/geometry.py), so they compile for the CPU and CUDA like any user function, plus the grouped-tree
lookups wp.bvh_get_group_root / wp.mesh_get_group_root. By concern: mesh_data.py (the structs, the
descriptor, accessors), mesh_primitives.py (triangle and box tests), mesh_point_queries.py, mesh_ray_queries.py,
mesh_aabb_queries.py; this module gathers their public names.

Traversals use the tree's stackless preorder (a node that passes its test continues at n + 1, anything else
at skip[n]); a query from a root visits that node's subtree [root, skip[root]). Ray casts and closest-point
queries use a stack over the tree packed for them, ray casts 4-wide for a whole-tree cast
(_wide_ray_traversal). Results are Warp's: the same tests (its closest point on a triangle, sliver rejection,
Woop's watertight ray-triangle test, its ray-box slab tests), the same strict comparisons; the tree is Warp's
(bvh_sah.py) and the closest-point queries visit it in Warp's order, so of two triangles exactly as close
they report Warp's; elsewhere the first in this tree's order. Signs: `mesh_query_point` and `_sign_winding_number` on a mesh built
without winding support use Warp's three axis rays (inside when at least two first hits are back faces);
`_sign_parity` counts crossings along perturbed (1, 1, 1) rays; `_sign_normal` is Warp's angle-weighted
normal of the closest features; winding numbers sum the exact solid angles of near triangles and a dipole
term for each tree node farther than `accuracy` times its radius (Warp's far field also has the quadrupole
and octupole terms; both approximate the same sum, so inside/outside decisions agree away from the surface,
and a larger `accuracy` makes both exact)."""

from __future__ import annotations

from mlwarp.geometry.mesh_aabb_queries import (
    MeshQuery, mesh_query_aabb, mesh_query_aabb_next, mesh_query_next, mesh_query_sphere,
)
from mlwarp.geometry.mesh_data import (
    MeshQueryAABB, MeshQueryPoint, MeshQueryRay, bvh_get_group_root, mesh_eval_face_normal, mesh_eval_position,
    mesh_eval_velocity, mesh_get, mesh_get_bvh, mesh_get_group_root, mesh_get_index, mesh_get_point, mesh_get_velocity,
)
from mlwarp.geometry.mesh_point_queries import (
    mesh_query_furthest_point_no_sign, mesh_query_point, mesh_query_point_no_sign, mesh_query_point_sign_normal,
    mesh_query_point_sign_parity, mesh_query_point_sign_winding_number,
)
from mlwarp.geometry.mesh_ray_queries import mesh_query_ray, mesh_query_ray_anyhit, mesh_query_ray_count_intersections

__all__ = ["MeshQueryPoint", "MeshQueryRay", "MeshQueryAABB", "mesh_get", "mesh_get_bvh", "mesh_get_group_root",
           "bvh_get_group_root", "mesh_get_point", "mesh_get_velocity", "mesh_get_index", "mesh_eval_position",
           "mesh_eval_velocity", "mesh_eval_face_normal", "mesh_query_point", "mesh_query_point_no_sign",
           "mesh_query_point_sign_normal", "mesh_query_point_sign_winding_number", "mesh_query_point_sign_parity",
           "mesh_query_furthest_point_no_sign", "mesh_query_ray", "mesh_query_ray_anyhit",
           "mesh_query_ray_count_intersections", "mesh_query_aabb", "mesh_query_aabb_next", "mesh_query_sphere",
           "mesh_query_next", "MeshQuery"]
