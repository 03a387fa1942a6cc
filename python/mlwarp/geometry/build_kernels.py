"""The geometry structures' builds as kernels (issue 17: "structures are built with all cores").

The hot parts of wp.Mesh, wp.Bvh and wp.HashGrid builds run as mlwarp kernels launched by the builders: they
compile once (the kernel cache, MLWARP_CACHE_DIR) and run on every core. numpy keeps the small bookkeeping
between launches. Every kernel here is deterministic whatever the thread count: a thread writes only its own
outputs, and the only atomics are integer adds (exact) whose sums are all that is read.

- `sah_split`: one thread per node of a tree level (bvh_sah.build_sah_tree), the whole of Warp's binned SAH
  split of that node in two passes over its items: 16 buckets along the longest axis of its centroid bounds
  and the cheapest split, then Warp's in-place partition of its items (libstdc++'s std::partition), their
  boxes moved with them (so every pass reads sequentially), which also gives each child's centroid bounds and
  box. Nodes of a level are independent, so a level's threads run in parallel; the
  top levels have few nodes (one thread at the root) but each of their threads loops over many items.
- `sah_preorder`: one thread renumbers sah_split's level-numbered nodes in depth-first preorder (sizes bottom-up,
  numbers top-down) and writes the node arrays there.
- `pack_ray_nodes`, `wide_collapse`, `pack_wide_nodes`: the ray casts' packed binary tree (a thread a node), its
  collapse into a 4-wide tree (one thread walking the binary preorder: a wide node's children are decided before
  they are reached) and the wide nodes' boxes and codes (a thread a wide node).
- refits (wp.Bvh.refit, wp.Mesh.refit, and the node boxes of a build that does not find them) are refit.py's.
- `triangle_boxes`, `pack_triangles`: wp.Mesh's per-triangle bounds and edge lengths, and the ray casts'
  packed triangles with their sliver flags, one thread per triangle.
- hash grid: cell of each point, per-cell counts (integer atomic adds), the cell ranges, then the points placed in
  cell order by one thread walking them in index order (the stable order Warp's radix sort gives).

Launches here run now even while a graph capture is recording (`host_launch`): the builders call them where
their host work runs (at construction, or at a replay for rebuild/refit/build recorded in a graph), and no Tape
records them."""

from __future__ import annotations

import contextlib

import numpy as np

from mlwarp.arrays.array import array, zeros
from mlwarp.library.builtins import namespace as wp
from mlwarp.core.refs import ref
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.kernels.parallel_compile import compile_ahead as _compile_ahead
from mlwarp.launching.launch import launch
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.device import get_device
from mlwarp.types import float16, float32, float64, int32, int64
from mlwarp.core.vector import vec3, vec3d, vec3h
from mlwarp.core import geometry as layout
from mlwarp.geometry.mesh_primitives import _is_sliver

SAH_BUCKETS = 16
INF = float("inf")
_RAY_TRI_FACE = layout.RAY_TRI_FACE
_RAY_TRI_SLIVER = layout.RAY_TRI_SLIVER


@contextlib.contextmanager
def _not_captured():
    """Launches inside run at once: a builder's host step is itself what a graph records (or runs now)."""
    active = _capture.active
    _capture.active = None
    try:
        yield
    finally:
        _capture.active = active


def host_launch(k, dim, inputs, uneven: bool = False):
    """Runs `k` on the CPU now (device="cpu": a structure on a CUDA device is built on the host as well, and the
    current device may be a GPU). `uneven`: k's threads cost more or less from launch to launch (one a tree node,
    over its items): every launch of two threads or more goes to the pool (runtime/cpu.py parallel_from)."""
    if uneven:
        compiled = k.compiled(get_device("cpu"))
        if not getattr(compiled, "uneven", True):
            compiled.parallel_from(2)
    if _capture.active is None:  # (the context manager below costs more than the launch's own checks)
        launch(k, dim=dim, inputs=inputs, device="cpu", record_tape=False)
        return
    with _not_captured():
        launch(k, dim=dim, inputs=inputs, device="cpu", record_tape=False)


def compile_ahead(*kernels) -> None:
    """Compiles those of a build's kernels that the kernel cache misses side by side, before its first launch
    (kernels/parallel_compile.py): a cold process's first wp.Mesh compiles nine, one after another otherwise."""
    _compile_ahead(kernels, get_device("cpu"))


def view(a: np.ndarray, dtype):
    """A CPU wp.array over a contiguous numpy array's memory (no copy, whatever the current device)."""
    return array(a, dtype=dtype, copy=False, device="cpu")


@func
def _box_area(lo: vec3, hi: vec3):
    """Warp's bounds3::area() in float32."""
    e = hi - lo
    return float32(2.0) * (e[0] * e[1] + e[0] * e[2] + e[1] * e[2])


@func
def _grow_bounds(cmin: ref[vec3], cmax: ref[vec3], nlo: ref[vec3], nhi: ref[vec3], lo: vec3, hi: vec3):
    """The centroid bounds [cmin, cmax] and box [nlo, nhi] of a set of items grown by the item box [lo, hi]."""
    p = float32(0.5) * (lo + hi)
    cmin = wp.min(cmin, p)
    cmax = wp.max(cmax, p)
    nlo = wp.min(nlo, lo)
    nhi = wp.max(nhi, hi)


@kernel(enable_backward=False)
def item_bounds(box_lo: array(dtype=vec3), box_hi: array(dtype=vec3), count: int32, cmin: array(dtype=vec3),
                cmax: array(dtype=vec3), lo: array(dtype=vec3), hi: array(dtype=vec3)):
    # one thread: the centroid bounds and box of all items (the SAH root's; numpy's axis reductions over
    # (n, 3) arrays take several times as long)
    inf = float32(INF)
    c_lo = vec3(inf, inf, inf)
    c_hi = vec3(-inf, -inf, -inf)
    n_lo = vec3(inf, inf, inf)
    n_hi = vec3(-inf, -inf, -inf)
    for k in range(count):
        _grow_bounds(c_lo, c_hi, n_lo, n_hi, box_lo[k], box_hi[k])
    cmin[0] = c_lo
    cmax[0] = c_hi
    lo[0] = n_lo
    hi[0] = n_hi


@kernel(enable_backward=False)
def sah_split(box_lo: array(dtype=vec3), box_hi: array(dtype=vec3), order: array(dtype=int32),
              level_nodes: array(dtype=int32), first_child: int32, node_start: array(dtype=int32),
              node_count: array(dtype=int32), node_cmin: array(dtype=vec3), node_cmax: array(dtype=vec3),
              node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), node_left: array(dtype=int32)):
    # box_lo[k], box_hi[k]: the box of item order[k] (the items' boxes move with them: sequential reads).
    # Thread `seg` splits node level_nodes[seg] (numbered level by level: bvh_sah.py), whose item range, centroid
    # bounds and box its parent's split wrote; its children become nodes first_child + 2 seg (left) and + 1
    # (right), their ranges, centroid bounds and boxes written here: two passes over a node's items, the
    # buckets and the partition
    seg = wp.tid()
    node = level_nodes[seg]
    s = node_start[node]
    c = node_count[node]
    inf = float32(INF)
    cmin = node_cmin[node]
    cmax = node_cmax[node]
    ext = cmax - cmin
    axis = int32(0)
    if ext[1] > ext[0]:
        axis = int32(1)
    if ext[2] > ext[axis]:
        axis = int32(2)
    start = cmin[axis]
    end = cmax[axis]
    flat = not (end > start)
    width = end - start
    if flat:
        width = float32(1.0)
    # the thread's own buckets
    bin_lo = zeros(shape=SAH_BUCKETS, dtype=vec3)
    bin_hi = zeros(shape=SAH_BUCKETS, dtype=vec3)
    bin_n = zeros(shape=SAH_BUCKETS, dtype=int32)
    right_area = zeros(shape=SAH_BUCKETS, dtype=float32)
    for b in range(SAH_BUCKETS):
        bin_lo[b] = vec3(inf, inf, inf)
        bin_hi[b] = vec3(-inf, -inf, -inf)
    for k in range(s, s + c):
        lo = box_lo[k]
        hi = box_hi[k]
        key = (float32(0.5) * (lo + hi))[axis]
        scaled = float32(SAH_BUCKETS) * (key - start) / width
        b = int32(0)
        if scaled >= float32(SAH_BUCKETS - 1):
            b = int32(SAH_BUCKETS - 1)
        elif scaled > float32(0.0):
            b = int32(scaled)
        bin_lo[b] = wp.min(bin_lo[b], lo)
        bin_hi[b] = wp.max(bin_hi[b], hi)
        bin_n[b] = bin_n[b] + 1
    # split i puts buckets 0..i left, i+1..15 right: the right sides' areas first (a suffix over the buckets)
    inv = float32(1.0) / _box_area(node_lo[node], node_hi[node])
    rlo = vec3(inf, inf, inf)
    rhi = vec3(-inf, -inf, -inf)
    for j in range(SAH_BUCKETS - 1):
        b = SAH_BUCKETS - 1 - j
        rlo = wp.min(rlo, bin_lo[b])
        rhi = wp.max(rhi, bin_hi[b])
        right_area[b] = _box_area(rlo, rhi)  # of the split after bucket b - 1
    llo = vec3(inf, inf, inf)
    lhi = vec3(-inf, -inf, -inf)
    ln = int32(0)
    best = int32(0)
    best_cost = inf
    for i in range(SAH_BUCKETS - 1):
        llo = wp.min(llo, bin_lo[i])
        lhi = wp.max(lhi, bin_hi[i])
        ln = ln + bin_n[i]
        # (float32 costs, as Warp's; Warp keeps the first split below every earlier one: NaN never is)
        cost = (_box_area(llo, lhi) * inv) * float32(ln) + (right_area[i + 1] * inv) * float32(c - ln)
        if cost < best_cost:
            best_cost = cost
            best = i
    split = start + float32(best + 1) * (end - start) / float32(SAH_BUCKETS)
    if flat:
        split = start
    # the partition in place, libstdc++'s std::partition as Warp calls it (so the tree and each leaf's order are
    # Warp's): the first item not below the split from the front swaps with the last one below it from the
    # back. Each item is tested once; its side's bounds grow then
    empty_lo = vec3(inf, inf, inf)
    empty_hi = vec3(-inf, -inf, -inf)
    l_cmin, l_cmax, l_lo, l_hi = empty_lo, empty_hi, empty_lo, empty_hi
    r_cmin, r_cmax, r_lo, r_hi = empty_lo, empty_hi, empty_lo, empty_hi
    first = s
    last = s + c
    while first != last:
        lo = box_lo[first]
        hi = box_hi[first]
        if (float32(0.5) * (lo + hi))[axis] < split:
            _grow_bounds(l_cmin, l_cmax, l_lo, l_hi, lo, hi)
            first += 1
        else:
            _grow_bounds(r_cmin, r_cmax, r_lo, r_hi, lo, hi)
            last -= 1
            below = False
            lo_b = lo
            hi_b = hi
            while first != last and not below:
                lo_b = box_lo[last]
                hi_b = box_hi[last]
                if (float32(0.5) * (lo_b + hi_b))[axis] < split:
                    below = True
                    _grow_bounds(l_cmin, l_cmax, l_lo, l_hi, lo_b, hi_b)
                else:
                    _grow_bounds(r_cmin, r_cmax, r_lo, r_hi, lo_b, hi_b)
                    last -= 1
            if below:  # swap the two, the front one past the boundary
                o = order[first]
                order[first] = order[last]
                order[last] = o
                box_lo[first] = lo_b
                box_hi[first] = hi_b
                box_lo[last] = lo
                box_hi[last] = hi
                first += 1
    n_left = first - s
    if n_left == 0 or n_left == c:  # nothing to split off: the middle of the current order, its sides' bounds
        n_left = c // 2
        l_cmin, l_cmax, l_lo, l_hi = empty_lo, empty_hi, empty_lo, empty_hi
        r_cmin, r_cmax, r_lo, r_hi = empty_lo, empty_hi, empty_lo, empty_hi
        for k in range(s, s + n_left):
            _grow_bounds(l_cmin, l_cmax, l_lo, l_hi, box_lo[k], box_hi[k])
        for k in range(s + n_left, s + c):
            _grow_bounds(r_cmin, r_cmax, r_lo, r_hi, box_lo[k], box_hi[k])
    left = first_child + 2 * seg
    right = left + 1
    node_left[node] = left
    node_start[left] = s
    node_count[left] = n_left
    node_start[right] = s + n_left
    node_count[right] = c - n_left
    node_cmin[left] = l_cmin
    node_cmax[left] = l_cmax
    node_lo[left] = l_lo
    node_hi[left] = l_hi
    node_cmin[right] = r_cmin
    node_cmax[right] = r_cmax
    node_lo[right] = r_lo
    node_hi[right] = r_hi


@kernel(enable_backward=False)
def sah_preorder(node_left: array(dtype=int32), node_start: array(dtype=int32), node_count: array(dtype=int32),
                 node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), num_nodes: int32,
                 size: array(dtype=int32), pre: array(dtype=int32), level: array(dtype=int32),
                 skip: array(dtype=int32), start: array(dtype=int32), end: array(dtype=int32),
                 depth: array(dtype=int32), out_lo: array(dtype=vec3), out_hi: array(dtype=vec3)):
    # one thread: the level-numbered nodes of sah_split (children after their parent) renumbered in depth-first
    # preorder, the right child first. Subtree sizes bottom-up (a reverse walk meets children first), then
    # each node's preorder number and depth top-down, then the node arrays at those numbers
    for j in range(num_nodes):
        n = num_nodes - 1 - j
        left = node_left[n]
        size[n] = 1
        if left >= 0:
            size[n] = 1 + size[left] + size[left + 1]
    pre[0] = 0
    level[0] = 0
    for n in range(num_nodes):
        left = node_left[n]
        p = pre[n]
        skip[p] = p + size[n]
        depth[p] = level[n]
        out_lo[p] = node_lo[n]
        out_hi[p] = node_hi[n]
        if left >= 0:
            start[p] = -1
            end[p] = -1
            # Warp's traversal pops the right child first: it comes first, so a query meets Warp's item order
            pre[left + 1] = p + 1
            pre[left] = p + 1 + size[left + 1]
            level[left] = level[n] + 1
            level[left + 1] = level[n] + 1
        else:
            start[p] = node_start[n]
            end[p] = node_start[n] + node_count[n]


@func
def triangle_box(p: vec3, q: vec3, r: vec3):
    """A triangle's box: min then max of its corners p, q, r in that order (the build's and every refit's, so a
    refitted box is the one a build finds)."""
    return wp.min(wp.min(p, q), r), wp.max(wp.max(p, q), r)


@kernel(enable_backward=False)
def triangle_boxes(points: array(dtype=vec3), indices: array(dtype=int32), lowers: array(dtype=vec3),
                   uppers: array(dtype=vec3), edges: array(dtype=float32)):
    t = wp.tid()
    p = points[indices[3 * t]]
    q = points[indices[3 * t + 1]]
    r = points[indices[3 * t + 2]]
    lo, hi = triangle_box(p, q, r)
    lowers[t] = lo
    uppers[t] = hi
    edges[t] = wp.length(p - q) + wp.length(p - r) + wp.length(r - q)


@kernel(enable_backward=False)
def pack_triangles(points: array(dtype=vec3), indices: array(dtype=int32), faces: array(dtype=int32),
                   packed: array(dtype=float32, ndim=2), packed_ints: array(dtype=int32, ndim=2)):
    # (packed_ints: the same memory as int32, for the face word)
    k = wp.tid()
    f = faces[k]
    for j in range(3):
        p = points[indices[3 * f + j]]
        packed[k, 4 * j] = p[0]
        packed[k, 4 * j + 1] = p[1]
        packed[k, 4 * j + 2] = p[2]
    packed_ints[k, _RAY_TRI_FACE] = f
    sliver = _is_sliver(points[indices[3 * f]], points[indices[3 * f + 1]], points[indices[3 * f + 2]])
    packed_ints[k, _RAY_TRI_SLIVER] = wp.where(sliver, 1, 0)


@kernel(enable_backward=False)
def pack_ray_nodes(node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), skip: array(dtype=int32),
                   start: array(dtype=int32), end: array(dtype=int32), packed: array(dtype=float32, ndim=2),
                   links: array(dtype=int32, ndim=2)):
    """Node n of the ray casts' binary tree (core/geometry.py MESH_RAY_NODES); `links`: the same memory as int32."""
    n = wp.tid()
    lo = node_lo[n]
    hi = node_hi[n]
    for j in range(3):
        packed[n, j] = lo[j]
        packed[n, 4 + j] = hi[j]
    s = start[n]
    if s >= 0:
        links[n, 3] = s
        links[n, 7] = end[n]
    else:  # preorder: the second child follows the first child's subtree
        links[n, 3] = skip[n + 1]
        links[n, 7] = -1


@func
def _expand_area(node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), start: array(dtype=int32), n: int32):
    """A wide node's child's priority for expansion: an inner node's surface area (numpy's float32 sum of
    products, in its order), -1 for a leaf or a missing child (n = -1)."""
    area = float32(-1.0)
    if n >= 0:
        if start[n] < 0:
            e = node_hi[n] - node_lo[n]
            area = e[0] * e[1] + e[1] * e[2] + e[2] * e[0]
    return area


@kernel(enable_backward=False)
def wide_collapse(node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), skip: array(dtype=int32),
                  start: array(dtype=int32), end: array(dtype=int32), num_nodes: int32,
                  wide_index: array(dtype=int32), wide_depth: array(dtype=int32), wide_node: array(dtype=int32),
                  slots: array(dtype=int32, ndim=2), leaf_codes: array(dtype=int32, ndim=2),
                  positions: array(dtype=int32, ndim=2), stats: array(dtype=int32)):
    """One thread: the binary tree (root inner) collapsed into a 4-wide one (Mesh._wide_links). Wide node w is
    binary node wide_node[w], numbered in the binary preorder; slots[w]: its children as binary nodes (-1
    missing), leaf_codes[w]: a leaf child's code (-1 - (16 group + count)); the leaves' groups of four as
    MESH_RAY_TRIS positions (-1: an empty lane), numbered in the order the wide nodes name them. stats: wide
    nodes, groups, wide levels, largest leaf. `wide_index`, `wide_depth`: per binary node, -1 and 0 on entry."""
    kids = zeros(shape=4, dtype=int32)
    w = int32(0)
    groups = int32(0)
    levels = int32(0)
    largest = int32(0)
    wide_index[0] = 0  # (the root is a wide node: marked, numbered below)
    for n in range(num_nodes):
        if wide_index[n] >= 0:
            wide_index[n] = w
            wide_node[w] = n
            depth = wide_depth[n]
            levels = wp.max(levels, depth + 1)
            kids[0] = n + 1
            kids[1] = skip[n + 1]
            kids[2] = -1
            kids[3] = -1
            # twice: the child of largest area that is an inner node replaced by its two children (the first
            # of equal areas, as numpy's argmax)
            for k in range(2, 4):
                widest = int32(0)
                best = _expand_area(node_lo, node_hi, start, kids[0])
                for i in range(1, 4):
                    a = _expand_area(node_lo, node_hi, start, kids[i])
                    if a > best:
                        best = a
                        widest = i
                if best >= float32(0.0):
                    c = kids[widest]
                    kids[widest] = c + 1
                    kids[k] = skip[c + 1]
            for i in range(4):
                c = kids[i]
                slots[w, i] = c
                leaf_codes[w, i] = -1
                if c >= 0:
                    s = start[c]
                    if s < 0:
                        wide_index[c] = 0  # marked: numbered when the walk reaches it (after n in preorder)
                        wide_depth[c] = depth + 1
                    else:
                        count = end[c] - s
                        largest = wp.max(largest, count)
                        leaf_codes[w, i] = -1 - (16 * groups + count)
                        for g in range((count + 3) // 4):
                            for lane in range(4):
                                pos = int32(-1)
                                if 4 * g + lane < count:
                                    pos = s + 4 * g + lane
                                positions[groups + g, lane] = pos
                        groups = groups + (count + 3) // 4
            w = w + 1
    stats[0] = w
    stats[1] = groups
    stats[2] = levels
    stats[3] = largest


@kernel(enable_backward=False)
def pack_wide_nodes(node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), start: array(dtype=int32),
                    wide_index: array(dtype=int32), slots: array(dtype=int32, ndim=2),
                    leaf_codes: array(dtype=int32, ndim=2), packed: array(dtype=float32, ndim=2),
                    packed_ints: array(dtype=int32, ndim=2)):
    """Wide node w (core/geometry.py MESH_RAY_WIDE): its children's boxes as rows of four lanes (a missing
    child's: the point at +inf), then their codes (an inner child's wide index, a leaf's code, -1 missing)."""
    w = wp.tid()
    inf = float32(INF)
    for i in range(4):
        c = slots[w, i]
        lo = vec3(inf, inf, inf)
        hi = vec3(inf, inf, inf)
        code = int32(-1)
        if c >= 0:
            lo = node_lo[c]
            hi = node_hi[c]
            code = leaf_codes[w, i]
            if start[c] < 0:
                code = wide_index[c]
        for j in range(3):
            packed[w, 4 * j + i] = lo[j]
            packed[w, 4 * (3 + j) + i] = hi[j]
        packed_ints[w, 24 + i] = code


@kernel(enable_backward=False)
def pack_leaf_groups(tris: array(dtype=float32, ndim=2), tri_ints: array(dtype=int32, ndim=2),
                     positions: array(dtype=int32, ndim=2), packed: array(dtype=float32, ndim=2),
                     packed_ints: array(dtype=int32, ndim=2)):
    """Group k of the 4-wide tree's leaves (core/geometry.py MESH_RAY_LEAVES) from the packed triangles `tris`
    (MESH_RAY_TRIS) at `positions[k]` (-1: an empty lane, corners 0 and face -1); `tri_ints` and `packed_ints`
    are the same memory as int32."""
    k = wp.tid()
    for i in range(4):
        pos = positions[k, i]
        face = int32(-1)
        if pos >= 0:
            face = tri_ints[pos, 3]
        for row in range(9):
            value = float32(0.0)
            if pos >= 0:
                value = tris[pos, 4 * (row // 3) + row % 3]
            packed[k, 4 * row + i] = value
        packed_ints[k, 36 + i] = face


@func
def _cell_coord(x: float32, dim: int32):
    """hashgrid.cell_coords then Python's modulo by dim: floor, saturated at INT_MAX - 1 and INT_MIN, NaN -> 0."""
    f = wp.floor(x)
    c = int32(0)
    if f >= float32(2147483648.0):
        c = int32(2147483646)
    elif f < float32(-2147483648.0):
        c = int32(-2147483647) - int32(1)
    elif f == f:
        c = int32(f)
    if c < int32(0) or c >= dim:  # (a division only for points outside the grid's first period)
        c = c % dim
        if c < int32(0):
            c = c + dim
    return c


@func
def _cell_coord_f64(x: float64, dim: int32):
    """hash_grid_cell_coord(double) then the modulo: as _cell_coord, saturated at INT_MAX - 1 from 2^31 - 2 on
    (a float64 holds 2^31 - 1 exactly, which must not become INT_MAX)."""
    f = wp.floor(x)
    c = int32(0)
    if f >= float64(2147483646.0):
        c = int32(2147483646)
    elif f < float64(-2147483648.0):
        c = int32(-2147483647) - int32(1)
    elif f == f:
        c = int32(f)
    if c < int32(0) or c >= dim:
        c = c % dim
        if c < int32(0):
            c = c + dim
    return c


@kernel(enable_backward=False)
def grid_cells(points: array(dtype=vec3), inv: float32, dim_x: int32, dim_y: int32, dim_z: int32,
               cells: array(dtype=int32)):
    i = wp.tid()
    p = points[i] * inv
    cells[i] = (_cell_coord(p[2], dim_z) * dim_y + _cell_coord(p[1], dim_y)) * dim_x + _cell_coord(p[0], dim_x)


@kernel(enable_backward=False)
def grid_cells_f16(points: array(dtype=vec3h), inv: float16, dim_x: int32, dim_y: int32, dim_z: int32,
                   cells: array(dtype=int32)):
    # Warp's half grid: the product rounded to half, then hash_grid_cell_coord(float(v))
    i = wp.tid()
    p = points[i] * inv
    cells[i] = ((_cell_coord(float32(p[2]), dim_z) * dim_y + _cell_coord(float32(p[1]), dim_y)) * dim_x
                + _cell_coord(float32(p[0]), dim_x))


@kernel(enable_backward=False)
def grid_cells_f64(points: array(dtype=vec3d), inv: float64, dim_x: int32, dim_y: int32, dim_z: int32,
                   cells: array(dtype=int32)):
    i = wp.tid()
    p = points[i] * inv
    cells[i] = ((_cell_coord_f64(p[2], dim_z) * dim_y + _cell_coord_f64(p[1], dim_y)) * dim_x
                + _cell_coord_f64(p[0], dim_x))


@kernel(enable_backward=False)
def grid_counts(cells: array(dtype=int32), counts: array(dtype=int32)):
    # (a kernel of its own: with the cell arithmetic in the same kernel, 1M points took ~24 ms instead of ~6)
    wp.atomic_add(counts, cells[wp.tid()], 1)


@kernel(enable_backward=False)
def grid_ranges(counts: array(dtype=int32), inclusive: array(dtype=int32), cell_starts: array(dtype=int32),
                cell_ends: array(dtype=int32)):
    c = wp.tid()
    n = counts[c]
    end = inclusive[c]
    # an empty cell is the empty range at its place in the sorted ids (Warp writes 0, 0: the same empty range
    # to a query), so a row of cells x0..x1 is the one range [cell_starts[x0], cell_ends[x1]) (expand_geometry)
    cell_starts[c] = end - n
    cell_ends[c] = end
    counts[c] = end - n  # each cell's cursor for grid_place


@kernel(enable_backward=False)
def grid_place(cells: array(dtype=int32), cursor: array(dtype=int32), point_ids: array(dtype=int32), n: int32):
    # one thread, points in index order: each cell's points in build order (Warp's stable radix sort)
    for i in range(n):
        c = cells[i]
        pos = cursor[c]
        point_ids[pos] = i
        cursor[c] = pos + 1
