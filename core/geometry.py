"""What the runtime and the compiler agree on about geometry structures (issue 17): the words of each
structure's descriptor (the memory its uint64 id points at) and the fields of each query's state struct.
Imports nothing: python/mlwarp/geometry/ (the API, which builds descriptors) and
compiler/passes/expand_geometry.py (which reads them in kernels) both use these numbers.

A descriptor is an array of int64 words; a float field is a float32 at f32 index 2 * word (the low half of
the word on a little-endian host)."""

from __future__ import annotations

# -- wp.HashGrid -------------------------------------------------------------------------------------
HG_POINT_IDS = 0  # address of int32[num_points]: point indices sorted by cell (stable)
HG_CELL_STARTS = 1  # address of int32[num_cells]: first sorted position of each cell (an empty cell: where it
#                   would start, so consecutive cells' ranges are contiguous)
HG_CELL_ENDS = 2  # address of int32[num_cells]: one past the last (an empty cell: equal to its start)
HG_DIM_X, HG_DIM_Y, HG_DIM_Z = 3, 4, 5
HG_CAPACITY = 6  # points reserved (Warp's max_points): 0 = never built or reserved, queries find nothing
HG_NUM_POINTS = 7
HG_CELL_WIDTH_INV = 8  # float32 (1 / radius in the grid's precision, rounded to float32)
HG_POINTS = 9  # address of the [num_points, 3] points the grid was built from (0: none, or not on the host):
#             no query reads it (it fed a per-candidate prefetch, gone: dense grids lost more than sparse gained)
HG_CELL_WIDTH_INV_F64 = 10  # float64: the same inverse as a float64 (a float64 grid's own value)
HG_CELL_WIDTH_INV_F16 = 11  # float16 in the word's low 16 bits (a float16 grid's own value)
HG_POINT_BYTES = 12  # bytes per point of HG_POINTS (6, 12 or 24: vec3h, vec3f, vec3d)
# Grouped builds (build(points, radius, groups=...)): within a cell the points are sorted by group id, compared as
# uint32 (Warp's (cell << 32 | uint32(group)) keys), then by index; HG_GROUPS holds each sorted position's group.
HG_HAS_GROUPS = 13  # 1 when the last build had groups
HG_GROUPS = 14  # address of int32[num_points] (0 without groups)
HG_WORDS = 15

# The state of a hash-grid query: wp.HashGridQuery's fields, in order. `grouped`: 1 when the query was given a
# group and the grid was built with groups, so each cell's range narrows to that group's points.
HASH_GRID_QUERY_FIELDS = ("grid", "x_start", "y_start", "z_start", "x_end", "y_end", "z_end", "x", "y", "z",
                          "cell_index", "cell_end", "group", "grouped")

# -- wp.Bvh ------------------------------------------------------------------------------------------
# Nodes in depth-first preorder: a node's right child (the items above its split) is the next node, its left
# child follows the right subtree (Warp's traversal pops the right child first: its order), and skip[n] is the node after n's subtree, so a traversal is a loop over node indices
# (overlap: go to n + 1, else to skip[n]) with no stack. A leaf holds primitive_indices[start:end].
# Words 0-13 sit where Warp's host BVH struct (native/bvh.h) keeps the same fields, so host code that reads
# Warp's header through bvh.id (its tests do, with ctypes) finds the parents, counts and depth; only the node
# boxes differ (float32 [x, y, z] here, Warp's 16-byte packed halves there). Pairs of int32 share a word:
# the first in its low half.
BVH_NODE_LOWERS = 0  # address of float32[num_nodes, 3]
BVH_NODE_UPPERS = 1  # address of float32[num_nodes, 3]
BVH_NODE_PARENTS = 2  # address of int32[num_nodes]: each node's parent, -1 for the root
BVH_NODE_COUNTS = 3  # 0 (Warp's host trees have none)
BVH_PRIMITIVES = 4  # address of int32[num_items]: item indices, grouped by leaf
BVH_MAX_DEPTH = 5  # int32 max_depth (the root at depth 0), then int32 max_nodes
BVH_NUM_NODES = 6  # int32 num_nodes (the high half 0)
BVH_ROOT = 7  # address of int32[1]: the root node, 0
BVH_ITEM_LOWERS = 8  # address of the user's lowers (vec3f[num_items], contiguous)
BVH_ITEM_UPPERS = 9
BVH_ITEM_GROUPS = 10  # address of the user's int32 groups, 0 without
BVH_NUM_ITEMS = 11  # int32 num_items (the high half 0)
BVH_CONSTRUCTOR = 12  # Warp's BvhConstructor value: 0 sah, 1 median
BVH_CONTEXT = 13  # 0 (a CUDA context in Warp)
BVH_SKIP = 14  # address of int32[num_nodes]
BVH_PRIM_START = 15  # address of int32[num_nodes]: a leaf's first position in primitive_indices, -1 inside
BVH_PRIM_END = 16  # address of int32[num_nodes]
# Grouped trees (wp.Bvh(..., groups=...)): each group's items form one subtree; its root node is
# group_roots[k] for the group id group_ids[k] (sorted ascending). A tree without groups lists group 0 at
# node 0, as Warp (its items all count as group 0).
BVH_GROUP_IDS = 17  # address of int32[num_groups], ascending
BVH_GROUP_ROOTS = 18  # address of int32[num_groups]
BVH_NUM_GROUPS = 19
BVH_WORDS = 20

# Query kinds (Warp's BvhQueryKind) and the state of a BVH query: wp.BvhQuery's fields. a = lower / start /
# center, b = upper / 1 / dir, d = dir (capsules). The "f32" fields hold a float32's bits in an int32, so the
# state carries no derivative (warp-autodiff leaves integer values alone, as Warp's adjoint of a query is a no-op).
BVH_AABB, BVH_RAY, BVH_CAPSULE, BVH_SPHERE = 0, 1, 2, 3
BVH_QUERY_FIELDS = (("bvh", "ui64"), ("kind", "i32"), ("node", "i32"), ("stop", "i32"), ("prim_cur", "i32"),
                    ("prim_end", "i32"), ("bounds_nr", "i32"), ("a0", "f32"), ("a1", "f32"), ("a2", "f32"),
                    ("b0", "f32"), ("b1", "f32"), ("b2", "f32"), ("d0", "f32"), ("d1", "f32"), ("d2", "f32"),
                    ("radius", "f32"), ("radius_sq", "f32"))
# The struct name of each kind's query (Warp's distinct Python types); "BvhQuery" is the erased parent,
# whose next() dispatches on the kind field.
BVH_QUERY_NAMES = {BVH_AABB: "BvhQueryAabb", BVH_RAY: "BvhQueryRay", BVH_CAPSULE: "BvhQueryCapsule",
                   BVH_SPHERE: "BvhQuerySphere"}

# A block's BVH query (wp.tile_bvh_query_aabb / _ray, Warp's BvhQueryTiled): a BvhQuery's state and then
# last_valid, whether the last tile_bvh_query_next found an item (1 before the first), tile_query_valid's answer.
BVH_TILED_QUERY_NAME = "BvhQueryTiled"
BVH_TILED_QUERY_FIELDS = BVH_QUERY_FIELDS + (("last_valid", "i32"),)

# -- wp.Mesh -----------------------------------------------------------------------------------------
# A mesh owns a wp.Bvh over its triangles' boxes (MESH_BVH: that tree's descriptor, so the BVH queries and
# mesh_get_bvh see it); the boxes are float32[num_tris, 3] arrays the tree's item words point at.
MESH_POINTS = 0  # address of vec3f[num_points] (the user's array)
MESH_VELOCITIES = 1  # address of vec3f[num_points], 0 without velocities
MESH_INDICES = 2  # address of int32[num_tris * 3]
MESH_NUM_POINTS = 3
MESH_NUM_TRIS = 4
MESH_BVH = 5  # address of the tree's BVH descriptor
MESH_AVERAGE_EDGE_LENGTH = 6  # float32 (mesh_query_point_sign_normal's epsilon scale)
MESH_WINDING = 7  # 1 when built with support_winding_number=True
# Winding-number far field, per tree node (support_winding_number=True): the sum of its triangles' area
# vectors (1/2 (q - p) x (r - p)), their area-weighted centre, and the radius of a ball about that centre
# holding the node's box. A node far enough away contributes the dipole term N . (c - x) / |c - x|^3.
MESH_WN_NORMALS = 8  # address of float32[num_nodes, 3]
MESH_WN_CENTERS = 9  # address of float32[num_nodes, 3]
MESH_WN_RADII = 10  # address of float32[num_nodes]
# The tree packed for ray casts, 32 bytes a node as Warp's: float32 lower x, y, z, then an int32 (an inner node's
# second child in preorder, a leaf's first position in the tree's primitives), float32 upper x, y, z, then an int32 (-1 for
# an inner node, a leaf's end): a node's box and links in one cache line, both children's boxes loaded at once.
MESH_RAY_NODES = 11  # address of float32[num_nodes, 8]
RAY_NODE_FLOATS = 8
# The triangles in the tree's primitive order (a leaf's triangles side by side), 48 bytes each: float32 p x, y,
# z, the face's index as an int32, then q x, y, z, an int32 sliver flag (1 where Warp's sliver test rejects
# the triangle: the closest-point queries skip it without its square root and division), r x, y, z, 0: no
# index chase from a leaf to its vertices.
MESH_RAY_TRIS = 12  # address of float32[num_tris, 12]
RAY_TRI_FLOATS = 12
RAY_TRI_FACE = 3  # the words of a packed triangle holding its face and its sliver flag
RAY_TRI_SLIVER = 7
# The same tree as a 4-wide one, for closest-hit and any-hit casts over the whole tree: the inner nodes at even
# depth, each with its grandchildren as children (a leaf child stays one child), 128 bytes a node: float32[4]
# rows of the children's lower x, y, z and upper x, y, z, then int32[4] children (>= 0: a wide node; < 0: a
# leaf, -1 - (16 group + count) with its count triangles in MESH_RAY_LEAVES groups from `group` on), then
# four words of padding. A missing child is the point (+inf, +inf, +inf), which a ray with finite nonzero
# direction components never enters before any t (the slab test takes min/max of the planes: an inverted box
# would be every box), and an empty leaf (-1). Half the levels of the
# binary tree, each one load of four boxes tested as vectors. MESH_RAY_WIDE_NODES is 0 where the tree cannot be
# packed so (a root that is a leaf, a leaf over 15 triangles, a tree too deep for the traversal's stack), and
# from a CPU mesh's refit until the next launch of a kernel that needs WIDE_RAYS_NEED (runtime/launch_needs.py),
# which repacks this tree and MESH_RAY_LEAVES: a kernel launched otherwise (one compiled before, a path that does
# not refresh) casts over the binary tree, as Warp does (the same nearest hit; of equally near triangles, Warp's).
MESH_RAY_WIDE = 13  # address of float32[num_wide_nodes, 32], 128-byte aligned
MESH_RAY_WIDE_NODES = 14
RAY_WIDE_FLOATS = 32
WIDE_RAYS_NEED = "mesh-wide-rays"
# The 4-wide tree's leaves as groups of four triangles side by side, one ray tested against four at once: 160
# bytes a group, float32[4] rows of the four triangles' p x, y, z, q x, y, z, r x, y, z (the MESH_RAY_TRIS
# corners), then an int32[4] row of their faces (-1: no triangle, its corners 0). A leaf's
# triangles fill its groups in order; only the last group of a leaf has empty lanes.
MESH_RAY_LEAVES = 15  # address of float32[num_leaf_groups, 40]
MESH_RAY_LEAF_GROUPS = 16
RAY_LEAF_FLOATS = 40
# The addresses of the user's points.grad and velocities.grad (0 without): wp.mesh_get's points and velocities
# carry them as Warp's Mesh does (its array_t grad pointers), so reads through m.points differentiate.
MESH_POINTS_GRAD = 17
MESH_VELOCITIES_GRAD = 18
# A ray's traversal stack: one entry per level a farther child waits at (Warp's BVH_QUERY_STACK_SIZE); the
# trees are at most 31 levels deep below a group's root (bvh_sah.py), 32 more for groups.
RAY_STACK = 64
MESH_WORDS = 19
