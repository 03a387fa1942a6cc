"""What the runtime and the compiler agree on about geometry structures (issue 17): the words of each
structure's descriptor (the memory its uint64 id points at) and the fields of each query's state struct.
Imports nothing: mlwarp/geometry/ (the API, which builds descriptors) and
compiler/passes/expand_geometry.py (which reads them in kernels) both use these numbers.

A descriptor is an array of int64 words; a float field is a float32 at f32 index 2 * word (the low half of
the word on a little-endian host)."""

from __future__ import annotations

# -- wp.HashGrid -------------------------------------------------------------------------------------
HG_POINT_IDS = 0  # address of int32[num_points]: point indices sorted by cell (stable)
HG_CELL_STARTS = 1  # address of int32[num_cells]: first sorted position of each cell (0 for an empty cell)
HG_CELL_ENDS = 2  # address of int32[num_cells]: one past the last (0 for an empty cell)
HG_DIM_X, HG_DIM_Y, HG_DIM_Z = 3, 4, 5
HG_CAPACITY = 6  # points reserved (Warp's max_points): 0 = never built or reserved, queries find nothing
HG_NUM_POINTS = 7
HG_CELL_WIDTH_INV = 8  # float32
HG_WORDS = 9

# The state of a hash-grid query: wp.HashGridQuery's fields, in order.
HASH_GRID_QUERY_FIELDS = ("grid", "x_start", "y_start", "z_start", "x_end", "y_end", "z_end", "x", "y", "z",
                          "cell_index", "cell_end")

# -- wp.Bvh ------------------------------------------------------------------------------------------
BVH_LOWERS = 0  # address of float32[num_nodes * 3]: each node's box lower corner
BVH_UPPERS = 1  # address of float32[num_nodes * 3]
BVH_LEFT = 2  # address of int32[num_nodes]: left child, or -1 - item for a leaf
BVH_RIGHT = 3  # address of int32[num_nodes]: right child (a leaf: -1)
BVH_NUM_NODES = 4
BVH_NUM_ITEMS = 5
BVH_STACK = 32  # the traversal stack of a query (Warp's BVH_QUERY_STACK_SIZE)
BVH_WORDS = 6

# The state of a BVH query: wp.BvhQuery's fields; "stack" is a fixed array of BVH_STACK int32 in a
# struct field... kept as a pointer-free struct of scalars: the stack lives in the traversal loop instead.
BVH_QUERY_FIELDS = ("bvh", "is_ray", "a0", "a1", "a2", "b0", "b1", "b2", "next_node")
