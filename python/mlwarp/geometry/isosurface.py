"""Iso-surfaces of dense 3-D fields, Warp 1.19's `wp.geometry.IsoSurfaceBase` and
`wp.geometry.IsoSurfaceMarchingCubes` (`wp.MarchingCubes`, deprecated, is the same class).

The marching-cubes triangles are the classic table's (marching_cubes_table.py: Bourke's, which Warp uses, so the
index arrays are Warp's). The surface each row describes is also derived here, not transcribed: for each of the
256 sign patterns of a cube's corners (bit i set when corner i is at or above the threshold), every cube face
contributes the segments that cut off its set corners (on a face whose set corners are diagonal, each is cut off
alone: the face rule depends only on the face's four corners, so neighbouring cells agree and the surface has no
holes). The segments chain into closed loops around the cube, oriented so that the surface normal points towards
the set corners (outward for a signed distance field, counter-clockwise seen from outside): `case_loops`, which
surface nets use, and against which the classic rows are checked (same loops, same winding; the table only
chooses each loop's diagonals).

Extraction runs as Warp's does, as kernels: one thread per grid edge marks sign changes, a host scan numbers
them, one thread per crossing places its vertex by linear interpolation (the kernel the tape differentiates:
gradients reach the field), one thread per cell finds its case, a host scan places its triangles, and one
thread per cell with triangles writes them.
"""

from __future__ import annotations

import abc
import functools
import warnings
from typing import Final

import numpy as np

from mlwarp.arrays.array import array, empty
from mlwarp.runtime import capture as _capture
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.where, wp.lerp: the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import float32, int32
from mlwarp.core.vector import vec3
from mlwarp.geometry.marching_cubes_table import CLASSIC_TRIANGLES

# Corner i of a cell, as its offset from the cell's origin node: the z = 0 face's corners in cyclic order, then
# the z = 1 face's (bit i of a case is corner i).
MC_CUBE_CORNER_OFFSETS: Final[tuple[tuple[int, int, int], ...]] = (
    (0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0),
    (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1),
)

# The 12 edges as corner pairs: the z = 0 face's four, the z = 1 face's four, then the four along z.
MC_EDGE_TO_CORNERS: Final[tuple[tuple[int, int], ...]] = (
    (0, 1), (1, 2), (3, 2), (0, 3),
    (4, 5), (5, 6), (7, 6), (4, 7),
    (0, 4), (1, 5), (2, 6), (3, 7),
)

# Each face of the cube by its corners in cyclic order (either sense: segments are oriented geometrically).
_CUBE_FACES = ((0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7))


def _edge_between(a: int, b: int) -> int:
    return next(e for e, pair in enumerate(MC_EDGE_TO_CORNERS) if set(pair) == {a, b})


def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def case_loops(case: int, cut_unset_faces: int = 0) -> list[list[int]]:
    """The closed loops of crossed edges (edge indices, in the order that winds the surface outward) of one
    marching-cubes case. Integer geometry: corners at doubled coordinates, edge points at their midpoints.
    Bit f of `cut_unset_faces` resolves face f (of _CUBE_FACES), where it has diagonal set corners, the other
    way: cutting off its two unset corners (surface nets' disambiguation)."""
    inside = {c for c in range(8) if case >> c & 1}
    corner = [tuple(2 * x for x in offset) for offset in MC_CUBE_CORNER_OFFSETS]
    mid = [tuple((corner[a][d] + corner[b][d]) // 2 for d in range(3)) for a, b in MC_EDGE_TO_CORNERS]
    next_edge = {}
    for face_index, face in enumerate(_CUBE_FACES):
        # the face's outward normal, doubled: its centre minus the cube's centre (1, 1, 1) in doubled units
        centre4 = [sum(corner[c][d] for c in face) for d in range(3)]
        normal = tuple(centre4[d] - 4 for d in range(3))
        segments = []  # (edge, edge, set corners on the side the surface's normal points to)
        crossed = [_edge_between(face[k], face[(k + 1) % 4]) for k in range(4)
                   if (face[k] in inside) != (face[(k + 1) % 4] in inside)]
        if len(crossed) == 2:
            segments.append((crossed[0], crossed[1], [c for c in face if c in inside]))
        elif len(crossed) == 4:  # diagonal set corners: each cut off on its own (or each unset one)
            cut_set = not (cut_unset_faces >> face_index & 1)
            for k, c in enumerate(face):
                if (c in inside) == cut_set:
                    segments.append((_edge_between(c, face[(k + 1) % 4]), _edge_between(c, face[k - 1]),
                                     [c] if cut_set else None, c))
        for e1, e2, towards, *cut_off in segments:
            p, q = mid[e1], mid[e2]
            # 2 * (mean of the set corners - segment midpoint), scaled by len(towards) to stay integral; away
            # from a cut-off unset corner
            if towards is None:
                n = tuple(p[d] + q[d] - 2 * corner[cut_off[0]][d] for d in range(3))
            else:
                n = tuple(2 * sum(corner[c][d] for c in towards) - len(towards) * (p[d] + q[d]) for d in range(3))
            # a loop bounding a surface whose normal is n runs along n x (face normal) on this face
            if _dot(tuple(q[d] - p[d] for d in range(3)), _cross(n, normal)) < 0:
                e1, e2 = e2, e1
            next_edge[e1] = e2
    loops, seen = [], set()
    for start in sorted(next_edge):
        if start in seen:
            continue
        loop, e = [], start
        while e not in seen:
            seen.add(e)
            loop.append(e)
            e = next_edge[e]
        loops.append(loop)
    return loops


def _flat_tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    ranges, local = [0], []
    for triangles in CLASSIC_TRIANGLES:
        local += triangles
        ranges.append(len(local))
    return tuple(ranges), tuple(local)


MC_CASE_TO_TRI_RANGE: Final[tuple[int, ...]] = _flat_tables()[0]
MC_TRI_LOCAL_INDICES: Final[tuple[int, ...]] = _flat_tables()[1]

# Edge e of a cell as the grid edge it is: (node offset x, y, z from the cell's origin, axis of the edge).
_MC_EDGE_NODE_AXIS = tuple(
    tuple(MC_CUBE_CORNER_OFFSETS[a]) + (next(d for d in range(3) if MC_CUBE_CORNER_OFFSETS[a][d]
                                              != MC_CUBE_CORNER_OFFSETS[b][d]),)
    for a, b in MC_EDGE_TO_CORNERS)


# -- shared by the dense back ends ----------------------------------------------------------------------------
def validate_field(field) -> None:
    """Warp's checks of a dense field: 3-D, two nodes or more per axis, float32."""
    shape = tuple(field.shape)
    if len(shape) != 3:
        raise ValueError(f"Expected a 3D array for 'field', but got an array with shape {shape}.")
    if any(n < 2 for n in shape):
        raise ValueError(f"Expected 'field' to have at least 2 nodes on each axis, but got an array with shape "
                         f"{shape}.")
    if field.dtype != float32:
        raise TypeError(f"Expected a dtype of wp.float32 for 'field', but got {field.dtype}.")


def resolve_domain_bounds(shape, lower, upper) -> tuple[vec3, vec3]:
    """(lower, cell size): node (0, 0, 0) at `lower` (default the origin), the last node at `upper` (default
    its integer index)."""
    cells = [n - 1 for n in shape]
    lower = vec3(0.0, 0.0, 0.0) if lower is None else vec3(*lower)
    upper = vec3(*(float(c) for c in cells)) if upper is None else vec3(*upper)
    delta = vec3(*((upper[d] - lower[d]) / cells[d] for d in range(3)))
    return lower, delta


def _table(values, shape=None, device=None):
    data = np.asarray(values, dtype=np.int32)
    return array(data if shape is None else data.reshape(shape), dtype=int32, device=device)


def _host_counts(a) -> np.ndarray:
    return a.numpy().reshape(-1)


class IsoSurfaceBase(abc.ABC):
    """A dense-field iso-surface extractor (Warp's interface): construct it for a grid of nx * ny * nz nodes,
    call `surface(field, threshold)` and read `verts` (wp.vec3) and `indices` (flat wp.int32), or call the
    class method `extract(field, threshold)`. Faces wind counter-clockwise seen from where the field is
    above the threshold; vertex positions are differentiable with respect to the field."""

    def __init__(self, nx: int, ny: int, nz: int, *, lower=None, upper=None):
        self.nx, self.ny, self.nz = nx, ny, nz
        self.lower, self.upper = lower, upper
        self.verts = None
        self.indices = None

    def resize(self, nx: int, ny: int, nz: int) -> None:
        self.nx, self.ny, self.nz = nx, ny, nz

    def _check_field_shape(self, field) -> None:
        if tuple(field.shape) != (self.nx, self.ny, self.nz):
            raise ValueError(f"Field shape {tuple(field.shape)} does not match context grid dimensions "
                             f"{(self.nx, self.ny, self.nz)}.")

    @abc.abstractmethod
    def surface(self, field, threshold: float) -> None:
        """Extract the iso-surface of `field` at `threshold` into `verts` and `indices`."""

    @classmethod
    @abc.abstractmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None):
        """(verts, indices) of the iso-surface of `field` at `threshold`."""


# -- marching cubes kernels -----------------------------------------------------------------------------------
# Only the vertex placement carries a gradient: the other kernels are discrete (signs, cases, indices), launched
# with record_tape=False so that a wp.Tape over an extraction replays just the placement backwards.
@kernel(enable_backward=False)
def _mc_mark_crossings(field: array(dtype=float32, ndim=3), threshold: float32, crossed: array(dtype=int32)):
    i, j, k, axis = wp.tid()
    ni, nj, nk = field.shape[0], field.shape[1], field.shape[2]
    io = i + wp.where(axis == 0, 1, 0)
    jo = j + wp.where(axis == 1, 1, 0)
    ko = k + wp.where(axis == 2, 1, 0)
    flag = int(0)
    if io < ni and jo < nj and ko < nk:
        a = field[i, j, k]
        b = field[io, jo, ko]
        if (a >= threshold and b < threshold) or (a < threshold and b >= threshold):
            flag = 1
    crossed[((i * nj + j) * nk + k) * 3 + axis] = flag


@kernel
def _mc_place_vertices(field: array(dtype=float32, ndim=3), threshold: float32, lower: vec3, delta: vec3,
                       edges: array(dtype=int32), verts: array(dtype=vec3)):
    v = wp.tid()
    nj, nk = field.shape[1], field.shape[2]
    e = edges[v]
    axis = e % 3
    node = e // 3
    k = node % nk
    j = (node // nk) % nj
    i = node // (nk * nj)
    io = i + wp.where(axis == 0, 1, 0)
    jo = j + wp.where(axis == 1, 1, 0)
    ko = k + wp.where(axis == 2, 1, 0)
    a = field[i, j, k]
    b = field[io, jo, ko]
    t = wp.clamp((threshold - a) / (b - a), 0.0, 1.0)
    p0 = lower + wp.cw_mul(vec3(float(i), float(j), float(k)), delta)
    p1 = lower + wp.cw_mul(vec3(float(io), float(jo), float(ko)), delta)
    verts[v] = wp.lerp(p0, p1, t)


@kernel(enable_backward=False)
def _mc_classify_cells(field: array(dtype=float32, ndim=3), threshold: float32,
                       corner_offsets: array(dtype=int32, ndim=2), case_to_tri_range: array(dtype=int32),
                       cases: array(dtype=int32, ndim=3), tri_counts: array(dtype=int32, ndim=3)):
    i, j, k = wp.tid()
    case = int(0)
    bit = int(1)
    for c in range(8):
        if field[i + corner_offsets[c, 0], j + corner_offsets[c, 1], k + corner_offsets[c, 2]] >= threshold:
            case += bit
        bit *= 2
    cases[i, j, k] = case
    tri_counts[i, j, k] = (case_to_tri_range[case + 1] - case_to_tri_range[case]) // 3


@kernel(enable_backward=False)
def _mc_write_triangles(cells: array(dtype=int32), first_tri: array(dtype=int32),
                        cases: array(dtype=int32, ndim=3), case_to_tri_range: array(dtype=int32),
                        tri_local: array(dtype=int32), edge_node_axis: array(dtype=int32, ndim=2),
                        edge_vertex: array(dtype=int32, ndim=4), faces: array(dtype=int32)):
    t = wp.tid()
    cell = cells[t]
    ncj, nck = cases.shape[1], cases.shape[2]
    k = cell % nck
    j = (cell // nck) % ncj
    i = cell // (nck * ncj)
    case = cases[i, j, k]
    start = case_to_tri_range[case]
    out = 3 * first_tri[t]
    for n in range(case_to_tri_range[case + 1] - start):
        e = tri_local[start + n]
        faces[out + n] = edge_vertex[i + edge_node_axis[e, 0], j + edge_node_axis[e, 1],
                                     k + edge_node_axis[e, 2], edge_node_axis[e, 3]]


@functools.lru_cache(maxsize=None)
def _mc_tables(device) -> dict:
    return {"corners": _table(MC_CUBE_CORNER_OFFSETS, (8, 3), device=device),
            "ranges": _table(MC_CASE_TO_TRI_RANGE, device=device),
            "local": _table(MC_TRI_LOCAL_INDICES, device=device),
            "edges": _table(_MC_EDGE_NODE_AXIS, (12, 4), device=device)}


def crossing_vertices(field, threshold: float, lower: vec3, delta: vec3):
    """The vertices on the grid edges the surface crosses (numbered in edge order: node-major, then axis x,
    y, z) and, per node and axis, the vertex on that edge (-1 if none)."""
    device = field.device
    nx, ny, nz = field.shape
    if nx * ny * nz * 3 >= 2**31:
        raise ValueError(f"Field shape {tuple(field.shape)} has too many edges for int32 vertex indices.")
    crossed = empty(nx * ny * nz * 3, dtype=int32, device=device)
    launch(_mc_mark_crossings, dim=(nx, ny, nz, 3), inputs=[field, threshold, crossed], device=device,
           record_tape=False)
    flags = _host_counts(crossed)
    edge_ids = np.flatnonzero(flags).astype(np.int32)
    vertex_of_edge = np.full(flags.shape, -1, dtype=np.int32)
    vertex_of_edge[edge_ids] = np.arange(len(edge_ids), dtype=np.int32)
    verts = empty(len(edge_ids), dtype=vec3, device=device, requires_grad=field.requires_grad)
    if len(edge_ids):
        launch(_mc_place_vertices, dim=len(edge_ids),
               inputs=[field, threshold, lower, delta, array(edge_ids, dtype=int32, device=device)],
               outputs=[verts], device=device)
    return verts, array(vertex_of_edge.reshape(nx, ny, nz, 3), dtype=int32, device=device)


def marching_cubes(field, threshold: float, lower, upper):
    validate_field(field)
    _capture.refuse_host_sized("Marching cubes", field.device)
    lower, delta = resolve_domain_bounds(tuple(field.shape), lower, upper)
    threshold = float32(threshold)
    device = field.device
    tables = _mc_tables(str(device))
    verts, edge_vertex = crossing_vertices(field, threshold, lower, delta)
    cells = tuple(n - 1 for n in field.shape)
    cases = empty(cells, dtype=int32, device=device)
    counts = empty(cells, dtype=int32, device=device)
    launch(_mc_classify_cells, dim=cells, inputs=[field, threshold, tables["corners"], tables["ranges"]],
           outputs=[cases, counts], device=device, record_tape=False)
    per_cell = _host_counts(counts)
    active = np.flatnonzero(per_cell).astype(np.int32)
    first = (np.cumsum(per_cell[active], dtype=np.int64) - per_cell[active]).astype(np.int32)
    total = int(per_cell[active].sum())
    faces = empty(3 * total, dtype=int32, device=device)
    if total:
        launch(_mc_write_triangles, dim=len(active),
               inputs=[array(active, dtype=int32, device=device), array(first, dtype=int32, device=device),
                       cases, tables["ranges"], tables["local"], tables["edges"], edge_vertex],
               outputs=[faces], device=device, record_tape=False)
    return verts, faces


class _Unset:
    """The default of a deprecated argument: tells 'not given' from an explicit None."""

    def __repr__(self):
        return "None"


_UNSET = _Unset()


def _deprecated(message: str, stacklevel: int = 3) -> None:
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)


class IsoSurfaceMarchingCubes(IsoSurfaceBase):
    """Marching cubes over a dense float32 field of nx * ny * nz nodes: triangles (flat wp.int32 indices,
    three per face) whose vertices lie on the crossed grid edges, interpolated linearly (`wp.lerp`, the
    gradient's path from the field to `verts`)."""

    CUBE_CORNER_OFFSETS: Final[tuple[tuple[int, int, int], ...]] = MC_CUBE_CORNER_OFFSETS
    EDGE_TO_CORNERS: Final[tuple[tuple[int, int], ...]] = MC_EDGE_TO_CORNERS
    CASE_TO_TRI_RANGE: Final[tuple[int, ...]] = MC_CASE_TO_TRI_RANGE
    TRI_LOCAL_INDICES: Final[tuple[int, ...]] = MC_TRI_LOCAL_INDICES

    def __init__(self, nx: int, ny: int, nz: int, lower=None, upper=None, *,
                 domain_bounds_lower_corner=_UNSET, domain_bounds_upper_corner=_UNSET):
        if domain_bounds_lower_corner is not _UNSET:
            if lower is not None and domain_bounds_lower_corner is not None:
                raise TypeError("Cannot specify both `lower` and `domain_bounds_lower_corner`.")
            _deprecated("IsoSurfaceMarchingCubes() argument `domain_bounds_lower_corner` is deprecated and will be "
                        "removed in a future version of Warp. Use `lower` instead.")
            if domain_bounds_lower_corner is not None:
                lower = domain_bounds_lower_corner
        if domain_bounds_upper_corner is not _UNSET:
            if upper is not None and domain_bounds_upper_corner is not None:
                raise TypeError("Cannot specify both `upper` and `domain_bounds_upper_corner`.")
            _deprecated("IsoSurfaceMarchingCubes() argument `domain_bounds_upper_corner` is deprecated and will be "
                        "removed in a future version of Warp. Use `upper` instead.")
            if domain_bounds_upper_corner is not None:
                upper = domain_bounds_upper_corner
        super().__init__(nx, ny, nz, lower=lower, upper=upper)

    @property
    def domain_bounds_lower_corner(self):
        _deprecated("IsoSurfaceMarchingCubes.domain_bounds_lower_corner is deprecated and will be removed in a "
                    "future version of Warp. Use `lower` instead.")
        return self.lower

    @domain_bounds_lower_corner.setter
    def domain_bounds_lower_corner(self, value):
        _deprecated("IsoSurfaceMarchingCubes.domain_bounds_lower_corner is deprecated and will be removed in a "
                    "future version of Warp. Use `lower` instead.")
        self.lower = value

    @property
    def domain_bounds_upper_corner(self):
        _deprecated("IsoSurfaceMarchingCubes.domain_bounds_upper_corner is deprecated and will be removed in a "
                    "future version of Warp. Use `upper` instead.")
        return self.upper

    @domain_bounds_upper_corner.setter
    def domain_bounds_upper_corner(self, value):
        _deprecated("IsoSurfaceMarchingCubes.domain_bounds_upper_corner is deprecated and will be removed in a "
                    "future version of Warp. Use `upper` instead.")
        self.upper = value

    def surface(self, field, threshold: float) -> None:
        validate_field(field)
        self._check_field_shape(field)
        self.verts, self.indices = self.extract(field, threshold, lower=self.lower, upper=self.upper)

    @classmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None):
        return marching_cubes(field, threshold, lower, upper)

    @staticmethod
    def extract_surface_marching_cubes(field, threshold: float = 0.0, domain_bounds_lower_corner=None,
                                       domain_bounds_upper_corner=None):
        _deprecated("IsoSurfaceMarchingCubes.extract_surface_marching_cubes() is deprecated and will be removed "
                    "in a future version of Warp. Use IsoSurfaceMarchingCubes.extract() instead.")
        return marching_cubes(field, threshold, domain_bounds_lower_corner, domain_bounds_upper_corner)


def deprecated_marching_cubes(stacklevel: int = 4):
    """wp.MarchingCubes: Warp 1.19 resolves the old name to the new class, warning on each access (`stacklevel`:
    the user's frame, past python/mlwarp/__init__.py's lookup)."""
    _deprecated("wp.MarchingCubes is deprecated and will be removed in a future version of Warp. Use "
                "wp.geometry.IsoSurfaceMarchingCubes instead.", stacklevel=stacklevel)
    return IsoSurfaceMarchingCubes
