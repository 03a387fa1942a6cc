"""2-D triangle meshes, as Warp 1.19's `wp.geometry` has them: `tri_tri_adjacency` (which triangle lies across
each edge), `delaunay_edge_flip` (flip interior edges, in place, until every one is locally Delaunay) and the
kernel function `find_triangle_neighbor_edge_index`.

Adjacency is a sort of the mesh's undirected edges on the host (numpy): discrete work that a kernel would only
redo. Flipping runs in passes of two kernels: every interior edge that fails the in-circle test (its opposite
apex strictly inside the circumcircle, computed in float64) and whose flip keeps both new triangles above
`area_epsilon` (a convex quad; and, with `ref_positions`, non-degenerate there) claims its two triangles with
a priority, a fixed random permutation of the edges (so that claims do not cascade along the mesh's
numbering); the edges that win both claims flip at once, an independent set, and the adjacency is rebuilt
for the next pass. Each flip replaces edge ab of the triangles (c, a, b) and (d, b, a) by edge cd, giving
(c, a, d) and (c, d, b): counter-clockwise stays counter-clockwise.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from mlwarp.arrays.array import array, empty, full, zeros
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.atomic_max: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.runtime import capture as _capture
from mlwarp.types import float64, int32
from mlwarp.core.vector import vec2

_NOT_TRIANGLES = "indices must be a (num_tris, 3) array of triangle vertex indices"


def _check_triangles(indices) -> None:
    if getattr(indices, "ndim", None) != 2 or indices.shape[1] != 3:
        raise ValueError(_NOT_TRIANGLES)
    if indices.dtype != int32:
        raise TypeError(f"indices must be an array of int32 triangle vertex indices, got {indices.dtype}")


def _adjacency(tris: np.ndarray, vertex_count: int) -> tuple[np.ndarray, np.ndarray]:
    """(neighbours, neighbour edges), both (num_tris, 3) int32: across the edge opposite local vertex j."""
    n = len(tris)
    if tris.min() < 0 or tris.max() >= vertex_count:
        bad = int(tris.min()) if tris.min() < 0 else int(tris.max())
        raise ValueError(f"triangle vertex index {bad} is out of range for vertex_count {vertex_count}")
    a = tris[:, [1, 2, 0]].astype(np.int64).ravel()  # half-edge 3 t + j: opposite local vertex j
    b = tris[:, [2, 0, 1]].astype(np.int64).ravel()
    keys = np.minimum(a, b) * vertex_count + np.maximum(a, b)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    if sizes.max() > 2:
        worst = order[starts[np.argmax(sizes)]]
        raise ValueError(f"edge ({min(a[worst], b[worst])}, {max(a[worst], b[worst])}) is shared by {sizes.max()} "
                         "triangles: the mesh must be edge-manifold (one or two triangles per edge)")
    neighbours = np.full(3 * n, -1, dtype=np.int32)
    edges = np.full(3 * n, -1, dtype=np.int32)
    pairs = starts[sizes == 2]
    h0, h1 = order[pairs], order[pairs + 1]
    neighbours[h0], neighbours[h1] = h1 // 3, h0 // 3
    edges[h0], edges[h1] = h1 % 3, h0 % 3
    return neighbours.reshape(n, 3), edges.reshape(n, 3)


def tri_tri_adjacency(indices, vertex_count: int | None = None, return_neighbor_edge_indices: bool = True):
    """For a (num_tris, 3) int32 mesh: `triangle_neighbors[t, j]`, the triangle across the edge of t opposite
    its local vertex j (-1 on the boundary), and, unless `return_neighbor_edge_indices=False`,
    `neighbor_edge_indices[t, j]`, that edge's local index in the neighbour. `vertex_count` defaults to one
    more than the largest index. The mesh must be edge-manifold; its winding need not be consistent."""
    _check_triangles(indices)
    device = indices.device
    if _capture.recording_on(device):  # a graph capture: the adjacency is found at each replay
        if vertex_count is None:
            raise RuntimeError("`tri_tri_adjacency` requires `vertex_count` to be set for use in graph capture")
        neighbours = full((indices.shape[0], 3), -1, dtype=int32, device=device)
        edge_indices = full((indices.shape[0], 3), -1, dtype=int32, device=device)
        if indices.shape[0]:
            _capture.record(partial(_fill_adjacency, indices, int(vertex_count), neighbours, edge_indices))
        return (neighbours, edge_indices) if return_neighbor_edge_indices else neighbours
    tris = indices.numpy().reshape(-1, 3)
    if len(tris) == 0:
        neighbours = full((0, 3), -1, dtype=int32, device=device)
        edge_indices = full((0, 3), -1, dtype=int32, device=device)
    else:
        if vertex_count is None:
            vertex_count = int(tris.max()) + 1
        found, found_edges = _adjacency(tris, int(vertex_count))
        neighbours = array(found, dtype=int32, device=device)
        edge_indices = array(found_edges, dtype=int32, device=device)
    return (neighbours, edge_indices) if return_neighbor_edge_indices else neighbours


def _fill_adjacency(indices, vertex_count: int, neighbours, edge_indices) -> None:
    found, found_edges = _adjacency(indices.numpy().reshape(-1, 3), vertex_count)
    neighbours.assign(found)
    edge_indices.assign(found_edges)


@func
def find_triangle_neighbor_edge_index(triangle_neighbors: array(dtype=int32, ndim=2), triangle: int32,
                                      neighbor: int32) -> int32:
    """The local edge j of `triangle` with triangle_neighbors[triangle, j] == neighbor, or -1."""
    for j in range(3):
        if triangle_neighbors[triangle, j] == neighbor:
            return j
    return -1


@func
def _signed_area(a: vec2, b: vec2, c: vec2) -> float64:
    """The area of abc, positive when counter-clockwise."""
    return float64(0.5) * ((float64(b[0]) - float64(a[0])) * (float64(c[1]) - float64(a[1]))
                           - (float64(b[1]) - float64(a[1])) * (float64(c[0]) - float64(a[0])))


@func
def _in_circle(a: vec2, b: vec2, c: vec2, d: vec2) -> float64:
    """> 0 when d is strictly inside the circumcircle of the counter-clockwise triangle abc."""
    adx = float64(a[0]) - float64(d[0])
    ady = float64(a[1]) - float64(d[1])
    bdx = float64(b[0]) - float64(d[0])
    bdy = float64(b[1]) - float64(d[1])
    cdx = float64(c[0]) - float64(d[0])
    cdy = float64(c[1]) - float64(d[1])
    ad2 = adx * adx + ady * ady
    bd2 = bdx * bdx + bdy * bdy
    cd2 = cdx * cdx + cdy * cdy
    return adx * (bdy * cd2 - cdy * bd2) - ady * (bdx * cd2 - cdx * bd2) + ad2 * (bdx * cdy - bdy * cdx)


@kernel(enable_backward=False)
def _claim_flips(tris: array(dtype=int32, ndim=2), neighbours: array(dtype=int32, ndim=2),
                 neighbour_edges: array(dtype=int32, ndim=2), positions: array(dtype=vec2),
                 reference: array(dtype=vec2), has_reference: int32, area_epsilon: float64,
                 reference_epsilon: float64, priority: array(dtype=int32), wanted: array(dtype=int32, ndim=2),
                 claim: array(dtype=int32)):
    t = wp.tid()
    for j in range(3):
        wanted[t, j] = 0
        n = neighbours[t, j]
        if n > t:  # each interior edge once, from its lower triangle
            c = tris[t, j]
            a = tris[t, (j + 1) % 3]
            b = tris[t, (j + 2) % 3]
            d = tris[n, neighbour_edges[t, j]]
            pa = positions[a]
            pb = positions[b]
            pc = positions[c]
            pd = positions[d]
            flip = _in_circle(pc, pa, pb, pd) > float64(0.0)
            # both new triangles keep a positive area: the quad is convex
            if _signed_area(pc, pa, pd) <= area_epsilon or _signed_area(pc, pd, pb) <= area_epsilon:
                flip = False
            if has_reference != 0:
                if wp.abs(_signed_area(reference[c], reference[a], reference[d])) <= reference_epsilon:
                    flip = False
                if wp.abs(_signed_area(reference[c], reference[d], reference[b])) <= reference_epsilon:
                    flip = False
            if flip:
                wanted[t, j] = 1
                p = priority[3 * t + j]
                wp.atomic_max(claim, t, p)
                wp.atomic_max(claim, n, p)


@kernel(enable_backward=False)
def _apply_flips(tris: array(dtype=int32, ndim=2), neighbours: array(dtype=int32, ndim=2),
                 neighbour_edges: array(dtype=int32, ndim=2), priority: array(dtype=int32),
                 wanted: array(dtype=int32, ndim=2), claim: array(dtype=int32), flips: array(dtype=int32)):
    t = wp.tid()
    for j in range(3):
        if wanted[t, j] != 0:
            n = neighbours[t, j]
            p = priority[3 * t + j]
            # a triangle's claim is one edge's: the edges that won both of theirs share no triangle
            if claim[t] == p and claim[n] == p:
                c = tris[t, j]
                a = tris[t, (j + 1) % 3]
                b = tris[t, (j + 2) % 3]
                d = tris[n, neighbour_edges[t, j]]
                tris[t, 0] = c
                tris[t, 1] = a
                tris[t, 2] = d
                tris[n, 0] = c
                tris[n, 1] = d
                tris[n, 2] = b
                wp.atomic_add(flips, 0, 1)


def delaunay_edge_flip(positions, indices, ref_positions=None, max_passes: int = 1000, area_epsilon: float = 0.0,
                       ref_area_epsilon: float = 1.0e-10):
    """Flip the non-Delaunay interior edges of the counter-clockwise (num_tris, 3) int32 mesh `indices` over
    the wp.vec2 `positions`, in place, until none is left or `max_passes` passes ran. Returns the number of
    flips as a (1,) int32 array on the mesh's device."""
    _check_triangles(indices)
    device = indices.device
    if positions.device != device:
        raise ValueError("positions and indices must be on the same device")
    if ref_positions is not None and ref_positions.device != device:
        raise ValueError("ref_positions and indices must be on the same device")
    if max_passes < 1:
        raise ValueError("max_passes must be at least 1")
    if not math.isfinite(area_epsilon) or area_epsilon < 0.0:
        raise ValueError("area_epsilon must be a finite, non-negative number")
    if not math.isfinite(ref_area_epsilon) or ref_area_epsilon < 0.0:
        raise ValueError("ref_area_epsilon must be a finite, non-negative number")
    for name, points in (("positions", positions), ("ref_positions", ref_positions)):
        if points is not None and points.dtype != vec2:
            raise TypeError(f"{name} must be an array of wp.vec2, got {points.dtype}")
    if not indices.is_contiguous:
        raise ValueError("indices must be a contiguous array: it is updated in place")
    total = zeros(1, dtype=int32, device=device)
    num_tris = indices.shape[0]
    if num_tris == 0:
        return total

    # the passes read the adjacency on the host: a graph capture runs them at each replay
    _capture.run_or_record(device, partial(_flip_passes, positions, indices, ref_positions, max_passes, area_epsilon,
                                           ref_area_epsilon, total))
    return total


def _flip_passes(positions, indices, ref_positions, max_passes, area_epsilon, ref_area_epsilon, total) -> None:
    """delaunay_edge_flip's passes over a checked, non-empty mesh; the number of flips goes to `total`."""
    device = indices.device
    num_tris = indices.shape[0]
    vertex_count = positions.shape[0]
    priority = array(np.random.default_rng(0x5EED).permutation(3 * num_tris).astype(np.int32), dtype=int32,
                     device=device)
    reference = ref_positions if ref_positions is not None else positions
    wanted = empty((num_tris, 3), dtype=int32, device=device)
    claim = empty(num_tris, dtype=int32, device=device)
    flips = empty(1, dtype=int32, device=device)
    count = 0
    for _ in range(max_passes):
        found, found_edges = _adjacency(indices.numpy().reshape(-1, 3), vertex_count)
        neighbours = array(found, dtype=int32, device=device)
        neighbour_edges = array(found_edges, dtype=int32, device=device)
        claim.fill_(-1)
        flips.zero_()
        launch(_claim_flips, dim=num_tris,
               inputs=[indices, neighbours, neighbour_edges, positions, reference,
                       1 if ref_positions is not None else 0, float(area_epsilon), float(ref_area_epsilon),
                       priority],
               outputs=[wanted, claim], device=device, record_tape=False)
        launch(_apply_flips, dim=num_tris, inputs=[indices, neighbours, neighbour_edges, priority, wanted, claim],
               outputs=[flips], device=device, record_tape=False)
        done = int(flips.numpy()[0])
        if done == 0:
            break
        count += done
    total.fill_(count)
