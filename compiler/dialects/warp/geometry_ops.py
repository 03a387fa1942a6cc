"""The geometry ops of the warp dialect (issue 17): queries of the structures a kernel sees as a uint64 id
(wp.HashGrid, wp.Bvh, ...). Declared here, appended to `ops.OPS` by ops.py; `warp-expand-geometry`
(passes/expand_geometry.py) rewrites each into loads from the structure's descriptor and scf loops.

A query's state is a `!warp.struct` of i32 (and ui64) fields whose layout the expansion pass owns
(`QUERY_FIELDS` there); a `*_next` op takes the state and the out-parameter's current value and gives
(found, the advanced state, the out-parameter's new value: unchanged when nothing was found)."""

from __future__ import annotations

from .opdefs import AnyOf, Base, Is, OpDef, Operand, Result, Var
from .rules import READ

ID = Operand("id", Is("ui64"))
VEC3 = Base("warp.vec")  # a vec3f (the frontend casts); IRDL cannot name a type of the dialect it defines
FLOAT = AnyOf(Is("f16"), Is("f32"), Is("f64"))  # a hash-grid query's precision (its point's scalar)
QUERY = Var("Q", Base("warp.struct"))
QUERY_NEXT = (Operand("query", QUERY), Operand("index", Is("i32")))
ROOT = Operand("root", Is("i32"))  # the node to start at; -1: the tree's root
QUERY_RESULT = (Result("query", Base("warp.struct")),)
QUERY_NEXT_RESULTS = (Result("found", Is("i1")), Result("advanced", QUERY), Result("next_index", Is("i32")))

GEOMETRY_OPS = [op._replace(effect=READ) for op in [  # each reads its structure's memory
    OpDef("hash_grid_query", "wp.hash_grid_query(id, point, max_dist[, group]): the state of a query of every point "
          "in the cells the box point +- max_dist overlaps (Warp's order: x fastest, then y, then z), computed in the "
          "point's precision (vec3h / vec3f / vec3d, max_dist of its scalar); with grouped = 1, of group's points only "
          "when the grid was built with groups",
          (ID, Operand("point", VEC3), Operand("max_dist", FLOAT), Operand("group", Is("i32")),
           Operand("grouped", Is("i32"))), (Result("query", Base("warp.struct")),)),
    OpDef("hash_grid_query_next", "wp.hash_grid_query_next(query, index): the next candidate's point index",
          QUERY_NEXT, QUERY_NEXT_RESULTS),
    OpDef("hash_grid_point_id", "wp.hash_grid_point_id(id, index): the index-th point in cell order (-1 when the "
          "grid was never built)", (ID, Operand("index", Is("i32"))), (Result("point", Is("i32")),)),
    OpDef("bvh_query_aabb", "wp.bvh_query_aabb(id, lower, upper[, root]): the state of a query of the items whose "
          "boxes overlap [lower, upper]", (ID, Operand("lower", VEC3), Operand("upper", VEC3), ROOT), QUERY_RESULT),
    OpDef("bvh_query_ray", "wp.bvh_query_ray(id, start, dir[, root]): the state of a query of the items whose boxes "
          "the ray start + t dir (t >= 0) hits", (ID, Operand("start", VEC3), Operand("dir", VEC3), ROOT), QUERY_RESULT),
    OpDef("bvh_query_sphere", "wp.bvh_query_sphere(id, center, radius[, root]): the items whose boxes are within "
          "radius of center", (ID, Operand("center", VEC3), Operand("radius", Is("f32")), ROOT), QUERY_RESULT),
    OpDef("bvh_query_capsule", "wp.bvh_query_capsule(id, start, dir, radius[, root]): the items whose boxes, "
          "inflated by radius, the ray start + t dir (0 <= t <= max_dist of next) hits",
          (ID, Operand("start", VEC3), Operand("dir", VEC3), Operand("radius", Is("f32")), ROOT), QUERY_RESULT),
    OpDef("bvh_query_next", "wp.bvh_query_next(query, index[, max_dist]): the next item's index (ray queries: "
          "entry distance < max_dist, capsules <= max_dist)",
          QUERY_NEXT + (Operand("max_dist", Is("f32")),), QUERY_NEXT_RESULTS),
]]
