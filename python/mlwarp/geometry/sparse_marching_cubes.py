"""Sparse marching cubes, as Warp 1.19's `wp.geometry` has it: `lipschitz_octree` (the cells of a
2^depth grid that can hold the level set of a Lipschitz field), `sparse_marching_cubes_from_cells` (marching
cubes on an explicit list of cells, sharing vertices between neighbours) and `sparse_marching_cubes` (both,
on the grid `IsoSurfaceMarchingCubes.extract` would sample, so the two give the same surface).

The octree goes down level by level from one root cell: a cell of widths w centred at c is kept while
|field(c) - threshold| <= lipschitz_bound * |w| / 2 (a field that changes by at most lipschitz_bound per
unit cannot reach the threshold inside the cell otherwise), and the kept cells split in eight. The field is
a caller's batched callable, points (wp.vec3) -> values (wp.float32), called once per level at the cell
centres and once at the leaves' corners.

Extraction: the cells' corners are made unique on the host (numpy: one sort of integer corner codes relative
to the smallest subscript, so positions stay exact for subscripts past float32's integers), a kernel finds
each cell's case in the same (classic) tables as the dense marching cubes, the crossed edges are made unique
by (owner corner, axis) on the host, and kernels place one vertex per edge (linear interpolation: the taped
kernel, through which gradients reach the corner values, and through a taped gather the caller's per-cell
values) and write the triangles. Vertices come in the order of their edges' (corner code, axis), triangles in
the order of the cells.
"""

from __future__ import annotations

import functools

import numpy as np

from mlwarp.arrays.array import array, empty
from mlwarp.runtime import capture as _capture
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.lerp, wp.clamp: the builtins, spelt as in user code
from mlwarp.kernels.func import Function
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.runtime.device import get_device
from mlwarp.types import float32, int32
from mlwarp.core.vector import vec3, vec3i
from mlwarp.geometry.isosurface import (
    MC_CASE_TO_TRI_RANGE, MC_CUBE_CORNER_OFFSETS, MC_EDGE_TO_CORNERS, MC_TRI_LOCAL_INDICES, _table,
    resolve_domain_bounds,
)

_CORNERS = np.array(MC_CUBE_CORNER_OFFSETS, dtype=np.int64)
# Each cube edge by the corner at its lower end (its owner: shared by every cell around the edge), its other
# corner and its axis.
_EDGE_AXIS = np.array([int(np.flatnonzero(_CORNERS[a] != _CORNERS[b])[0]) for a, b in MC_EDGE_TO_CORNERS])
_EDGE_OWNER = np.array([a if _CORNERS[a][_EDGE_AXIS[e]] < _CORNERS[b][_EDGE_AXIS[e]] else b
                        for e, (a, b) in enumerate(MC_EDGE_TO_CORNERS)])
_EDGE_UPPER = np.array([b if a == _EDGE_OWNER[e] else a for e, (a, b) in enumerate(MC_EDGE_TO_CORNERS)])

_BATCH_HINT = (
    "`field` must be a batched callable with signature evaluate(points: wp.array[wp.vec3]) -> "
    "wp.array[wp.float32], not a single-point @wp.func. Wrap it in a small kernel that evaluates it over the "
    "batch, e.g.:\n\n"
    "    @wp.kernel\n"
    "    def eval_kernel(points: wp.array[wp.vec3], values: wp.array[wp.float32]):\n"
    "        i = wp.tid()\n"
    "        values[i] = my_sdf(points[i])\n\n"
    "    def evaluate(points):\n"
    "        values = wp.empty(points.shape[0], dtype=wp.float32, device=points.device)\n"
    "        wp.launch(eval_kernel, dim=points.shape[0], inputs=[points], outputs=[values], device=points.device)\n"
    "        return values"
)


def _evaluator(field):
    """`field` checked, as a function of numpy float32 points (n, 3) on a device -> its wp.array of values."""
    if isinstance(field, Function):
        raise TypeError(_BATCH_HINT)
    if not callable(field):
        raise TypeError("`field` must be a callable mapping a warp.array[wp.vec3] batch of query points to a "
                        f"warp.array[wp.float32] of distances, but got {type(field)}.")

    def evaluate(points_np: np.ndarray, device):
        points = array(points_np, dtype=vec3, device=device)
        values = field(points)
        if not isinstance(values, array):
            raise TypeError("The implicit function callable must return a warp.array of float32 distance values, "
                            f"but returned {type(values)}.")
        if values.shape[0] != points.shape[0]:
            raise ValueError(f"The implicit function returned {values.shape[0]} values for {points.shape[0]} "
                             "query points.")
        if values.device != points.device:
            raise ValueError(f"The implicit function returned values on device '{values.device}', but the query "
                             f"points are on device '{points.device}'. Evaluate the field on the device of the "
                             "points it is given.")
        if values.dtype != float32:
            raise TypeError("The implicit function must return a warp.array of float32 distance values, got "
                            f"{values.dtype}.")
        return values

    return evaluate


def _f32(v) -> np.ndarray:
    return np.array([v[0], v[1], v[2]], dtype=np.float32)


def _octree_leaves(evaluate, origin, root_width, max_depth: int, threshold: float, lipschitz_bound: float,
                   device, counter=None) -> np.ndarray:
    """The kept cells (n, 3) int32 at depth max_depth, cell (i, j, k) of widths root_width / 2^max_depth."""
    origin, root_width = _f32(origin), _f32(root_width)
    cells = np.zeros((1, 3), dtype=np.int32)
    children = np.array([(c & 1, c >> 1 & 1, c >> 2 & 1) for c in range(8)], dtype=np.int32)
    for depth in range(max_depth + 1):
        width = root_width * np.float32(1.0 / (1 << depth))
        band = np.float32(lipschitz_bound * 0.5 * float(np.sqrt(np.sum(width * width, dtype=np.float32))))
        centres = origin + width * (cells.astype(np.float32) + np.float32(0.5))
        values = evaluate(centres, device).numpy()
        if counter is not None:
            counter[0] += len(cells)
        cells = cells[np.abs(values - np.float32(threshold)) <= band]
        if len(cells) == 0 or depth == max_depth:
            return cells
        cells = (2 * cells[:, None, :] + children[None]).reshape(-1, 3)
    return cells


def _unique_corners(cells: np.ndarray, origin, cell_width):
    """(cell_corners (n, 8) int32 into the unique corners, their positions (m, 3) float32, for each unique
    corner its first (cell * 8 + corner) occurrence). Codes and positions are relative to the smallest
    subscript; the offset goes into the origin in float64."""
    lo = cells.min(axis=0).astype(np.int64)
    rel = cells.astype(np.int64) - lo
    stride = int(rel.max()) + 2
    if stride**3 >= 2**63:
        raise ValueError(f"Cell subscript range spans {stride} nodes per axis, too large to pack into 64-bit "
                         "corner codes.")
    corners = rel[:, None, :] + _CORNERS[None]
    codes = ((corners[..., 0] * stride) + corners[..., 1]) * stride + corners[..., 2]
    unique, first, inverse = np.unique(codes.ravel(), return_index=True, return_inverse=True)
    sub = np.stack([unique // (stride * stride), unique // stride % stride, unique % stride], axis=1)
    width = _f32(cell_width)
    base = (_f32(origin).astype(np.float64) + width.astype(np.float64) * lo).astype(np.float32)
    positions = base + width * sub.astype(np.float32)
    return inverse.reshape(-1, 8).astype(np.int32), positions, first.astype(np.int32)


@kernel(enable_backward=False)
def _smc_cases(cell_corners: array(dtype=int32, ndim=2), values: array(dtype=float32), threshold: float32,
               case_to_tri_range: array(dtype=int32), cases: array(dtype=int32), tri_counts: array(dtype=int32)):
    cell = wp.tid()
    case = int(0)
    bit = int(1)
    for c in range(8):
        if values[cell_corners[cell, c]] >= threshold:
            case += bit
        bit *= 2
    cases[cell] = case
    tri_counts[cell] = (case_to_tri_range[case + 1] - case_to_tri_range[case]) // 3


@kernel
def _smc_place_vertices(positions: array(dtype=vec3), values: array(dtype=float32), threshold: float32,
                        lower_corner: array(dtype=int32), upper_corner: array(dtype=int32),
                        verts: array(dtype=vec3)):
    v = wp.tid()
    a = lower_corner[v]
    b = upper_corner[v]
    t = wp.clamp((threshold - values[a]) / (values[b] - values[a]), 0.0, 1.0)
    verts[v] = wp.lerp(positions[a], positions[b], t)


@kernel(enable_backward=False)
def _smc_write_triangles(cells: array(dtype=int32), first_tri: array(dtype=int32), cases: array(dtype=int32),
                         cell_corners: array(dtype=int32, ndim=2), case_to_tri_range: array(dtype=int32),
                         tri_local: array(dtype=int32), edge_owner_axis: array(dtype=int32, ndim=2),
                         vertex_of_slot: array(dtype=int32), faces: array(dtype=int32)):
    t = wp.tid()
    cell = cells[t]
    case = cases[cell]
    start = case_to_tri_range[case]
    out = 3 * first_tri[t]
    for n in range(case_to_tri_range[case + 1] - start):
        e = tri_local[start + n]
        faces[out + n] = vertex_of_slot[cell_corners[cell, edge_owner_axis[e, 0]] * 3 + edge_owner_axis[e, 1]]


@kernel
def _smc_gather_flat(values: array(dtype=float32), source: array(dtype=int32), out: array(dtype=float32)):
    u = wp.tid()
    out[u] = values[source[u]]


@kernel
def _smc_gather_rows(values: array(dtype=float32, ndim=2), source: array(dtype=int32), out: array(dtype=float32)):
    u = wp.tid()
    s = source[u]
    out[u] = values[s // 8, s % 8]


@functools.lru_cache(maxsize=None)
def _smc_tables(device) -> dict:
    return {"ranges": _table(MC_CASE_TO_TRI_RANGE, device=device),
            "local": _table(MC_TRI_LOCAL_INDICES, device=device),
            "edges": _table(np.stack([_EDGE_OWNER, _EDGE_AXIS], axis=1), device=device)}


def _empty_mesh(device, requires_grad=False):
    return empty(0, dtype=vec3, device=device, requires_grad=requires_grad), empty(0, dtype=int32, device=device)


def _extract(cell_corners: np.ndarray, positions: np.ndarray, values, threshold: float, device):
    """Marching cubes over cells given by their unique corners' indices; `values` per unique corner."""
    n_cells = len(cell_corners)
    tables = _smc_tables(str(device))
    threshold = float32(threshold)
    corners_wp = array(cell_corners, dtype=int32, device=device)
    cases = empty(n_cells, dtype=int32, device=device)
    counts = empty(n_cells, dtype=int32, device=device)
    launch(_smc_cases, dim=n_cells, inputs=[corners_wp, values, threshold, tables["ranges"]],
           outputs=[cases, counts], device=device, record_tape=False)
    case_np = cases.numpy()
    bits = (case_np[:, None] >> np.arange(8)) & 1
    crossed = bits[:, _EDGE_OWNER] != bits[:, _EDGE_UPPER]  # (n, 12)
    cell_index, edge = np.nonzero(crossed)
    slots = cell_corners[cell_index, _EDGE_OWNER[edge]].astype(np.int64) * 3 + _EDGE_AXIS[edge]
    slots, first = np.unique(slots, return_index=True)
    if len(slots) == 0:
        return _empty_mesh(device, values.requires_grad)
    vertex_of_slot = np.full(3 * len(positions), -1, dtype=np.int32)
    vertex_of_slot[slots] = np.arange(len(slots), dtype=np.int32)
    upper = cell_corners[cell_index[first], _EDGE_UPPER[edge[first]]]
    verts = empty(len(slots), dtype=vec3, device=device, requires_grad=values.requires_grad)
    launch(_smc_place_vertices, dim=len(slots),
           inputs=[array(positions, dtype=vec3, device=device), values, threshold,
                   array((slots // 3).astype(np.int32), dtype=int32, device=device),
                   array(upper.astype(np.int32), dtype=int32, device=device)],
           outputs=[verts], device=device)
    per_cell = counts.numpy()
    active = np.flatnonzero(per_cell).astype(np.int32)
    first_tri = (np.cumsum(per_cell[active], dtype=np.int64) - per_cell[active]).astype(np.int32)
    faces = empty(3 * int(per_cell.sum()), dtype=int32, device=device)
    launch(_smc_write_triangles, dim=len(active),
           inputs=[array(active, dtype=int32, device=device), array(first_tri, dtype=int32, device=device), cases,
                   corners_wp, tables["ranges"], tables["local"], tables["edges"],
                   array(vertex_of_slot, dtype=int32, device=device)],
           outputs=[faces], device=device, record_tape=False)
    return verts, faces


def lipschitz_octree(field, origin, root_width: float, max_depth: int, threshold: float = 0.0,
                     lipschitz_bound: float = 1.0, device=None):
    """(cells, cell_width): the wp.vec3i subscripts of the depth-`max_depth` cells of the cube [origin, origin +
    root_width] that can hold the `threshold` level set of `field` (whose Lipschitz constant is at most
    `lipschitz_bound`), cell (i, j, k) spanning origin + cell_width * [(i, j, k), (i + 1, j + 1, k + 1)].
    Empty when nothing is bracketed. Not differentiable (a discrete search)."""
    if max_depth < 0:
        raise ValueError(f"max_depth must be non-negative, got {max_depth}.")
    if root_width <= 0.0:
        raise ValueError(f"root_width must be positive, got {root_width}.")
    if lipschitz_bound < 0.0:
        raise ValueError(f"lipschitz_bound must be non-negative, got {lipschitz_bound}.")
    device = get_device(device)
    _capture.refuse_host_sized("lipschitz_octree", device)
    evaluate = _evaluator(field)
    root = float(root_width)
    cells = _octree_leaves(evaluate, vec3(*origin), (root, root, root), int(max_depth), threshold, lipschitz_bound,
                           device)
    return array(cells.reshape(-1, 3), dtype=vec3i, device=device), root / float(1 << int(max_depth))


def _cells_array(cells) -> np.ndarray:
    data = cells.numpy() if isinstance(cells, array) else np.asarray(cells)
    if data.size % 3 != 0:
        raise ValueError(f"cells must be an (N, 3) array of integer cell subscripts, got shape {data.shape}.")
    return np.ascontiguousarray(data, dtype=np.int32).reshape(-1, 3)


def sparse_marching_cubes_from_cells(cells, corner_values, origin=(0.0, 0.0, 0.0), cell_width: float = 1.0,
                                     threshold: float = 0.0, device=None):
    """(verts, indices) of the `threshold` surface over the cells (N, 3) integer subscripts (cell (i, j, k)
    spans origin + cell_width * [(i, j, k), (i + 1, j + 1, k + 1)]) with `corner_values` (N, 8) ordered by
    IsoSurfaceMarchingCubes.CUBE_CORNER_OFFSETS; vertices are shared between cells, so closed surfaces are
    watertight. Differentiable with respect to `corner_values` (one entry per shared corner, the first)."""
    device = get_device(device)
    _capture.refuse_host_sized("sparse_marching_cubes_from_cells", device)
    if cell_width <= 0.0:
        raise ValueError(f"cell_width must be positive, got {cell_width}.")
    cells_np = _cells_array(cells)
    n_cells = len(cells_np)
    values = corner_values if isinstance(corner_values, array) else \
        array(np.ascontiguousarray(corner_values, dtype=np.float32), dtype=float32, device=device)
    if values.dtype != float32:
        raise ValueError(f"corner_values must be float32, got {values.dtype}.")
    if values.size != 8 * n_cells:
        raise ValueError(f"corner_values must have {8 * n_cells} entries for {n_cells} cells, got {values.size}.")
    if values.ndim not in (1, 2) or (values.ndim == 2 and values.shape[1] != 8):
        raise ValueError(f"corner_values must be an (N, 8) or (8 N,) array, got shape {values.shape}.")
    if n_cells == 0:
        return _empty_mesh(device)
    cell_corners, positions, source = _unique_corners(cells_np, origin, (cell_width,) * 3)
    unique_values = empty(len(positions), dtype=float32, device=device, requires_grad=values.requires_grad)
    launch(_smc_gather_flat if values.ndim == 1 else _smc_gather_rows, dim=len(positions),
           inputs=[values, array(source, dtype=int32, device=device)], outputs=[unique_values], device=device)
    return _extract(cell_corners, positions, unique_values, threshold, device)


def sparse_marching_cubes(field, nx: int, ny: int, nz: int, *, lower=None, upper=None, threshold: float = 0.0,
                          lipschitz_bound: float = 1.0, device=None, return_stats: bool = False):
    """(verts, indices) of the `threshold` surface of the batched field `field` on the grid of nx * ny * nz
    nodes over [lower, upper] (IsoSurfaceMarchingCubes.extract's grid and surface), sampling only the cells
    a Lipschitz octree keeps; with `return_stats`, also a dict of leaf_cells, unique_corners,
    field_evaluations, resolution, requested_ncells, culled_cells. Differentiable through the values `field`
    returns (when they require grad)."""
    if nx < 2 or ny < 2 or nz < 2:
        raise ValueError(f"nx, ny, nz must each be at least 2, got ({nx}, {ny}, {nz}).")
    if lipschitz_bound < 0.0:
        raise ValueError(f"lipschitz_bound must be non-negative, got {lipschitz_bound}.")
    device = get_device(device)
    _capture.refuse_host_sized("sparse_marching_cubes", device)
    lower_corner, delta = resolve_domain_bounds((nx, ny, nz), lower, upper)
    ncells = (nx - 1, ny - 1, nz - 1)
    max_depth = (max(ncells) - 1).bit_length()
    resolution = 1 << max_depth
    root_width = _f32(delta) * np.float32(resolution)
    evaluate = _evaluator(field)
    stats = {"leaf_cells": 0, "unique_corners": 0, "field_evaluations": 0, "resolution": resolution,
             "requested_ncells": ncells, "culled_cells": 0}
    counter = [0]

    def finish(verts, faces):
        stats["field_evaluations"] = counter[0]
        return (verts, faces, stats) if return_stats else (verts, faces)

    cells = _octree_leaves(evaluate, lower_corner, root_width, max_depth, threshold, lipschitz_bound, device,
                           counter)
    inside = (cells < np.array(ncells)).all(axis=1)  # the octree's box is padded to a power of two
    stats["culled_cells"] = int(len(cells) - inside.sum())
    cells = cells[inside]
    if len(cells) == 0:
        return finish(*_empty_mesh(device))
    stats["leaf_cells"] = len(cells)
    cell_corners, positions, _ = _unique_corners(cells, lower_corner, root_width / np.float32(resolution))
    stats["unique_corners"] = len(positions)
    values = evaluate(positions, device)
    counter[0] += len(positions)
    return finish(*_extract(cell_corners, positions, values, threshold, device))
