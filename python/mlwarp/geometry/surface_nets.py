"""`wp.geometry.IsoSurfaceNets`: Warp 1.19's surface nets over a dense float32 field, quads or their
triangles, with one vertex per sheet of the surface in each cell.

A cell's crossed edges fall into groups, one per sheet of the surface through the cell: the loops of the
cell's marching-cubes case (python/mlwarp/geometry/isosurface.py's `case_loops`, whose face rule neighbouring cells
share), except on a face with diagonal set corners where the sheets of both cells would each join the face's
two segments: both cells then resolve that face the other way, so no pair of vertices gets four quads. This
is the mesh of OpenVDB's rule, which Warp ports (a cell whose ambiguous face meets the complementary one
inverts its signs): those groups are these loops, the 36 ambiguous cases are the cases with such a face, and
each has one ambiguous face, so inverting the cell resolves just that face the other way. Checked against
warp-lang 1.19 on spheres and random fields: the same vertices and quads; only the numbering of the
vertices of a cell with several sheets differs (OpenVDB numbers its groups by its own table).

Each group places one vertex at the mean of its edges' linear crossings (the kernel the tape
differentiates). Every crossed grid edge with four cells around it stitches the vertices of the groups it
belongs to in those four cells into a quad, wound counter-clockwise seen from where the field is above the
threshold, as marching cubes winds its triangles. Groups whose edges all lie on the domain's boundary are in
no quad and are left out, so every output vertex is used. Output order: vertices by cell (x slowest) then
group; quads by cell, then the edges along x, y, z from the cell's origin node; a quad (a, b, c, d) as
triangles is (a, b, c), (a, c, d).
"""

from __future__ import annotations

import functools
from typing import Final

import numpy as np

from mlwarp.arrays.array import array, empty
from mlwarp.runtime import capture as _capture
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.where: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import float32, int32
from mlwarp.core.vector import vec3
from mlwarp.geometry.isosurface import (
    _CUBE_FACES, _MC_EDGE_NODE_AXIS, MC_CUBE_CORNER_OFFSETS, MC_EDGE_TO_CORNERS, IsoSurfaceBase, _edge_between, _table,
    case_loops, resolve_domain_bounds, validate_field,
)

_TOPOLOGIES: Final[tuple[str, ...]] = ("triangle", "quad")
_MAX_GROUPS = 4  # sheets through one cell: at most four (four cut-off corners)


def _validate_topology(topology) -> None:
    if topology not in _TOPOLOGIES:
        raise ValueError(f"Expected 'topology' to be one of {_TOPOLOGIES}, but got {topology!r}.")


# Each face of _CUBE_FACES: the offset of the cell across it and that cell's index of the same face.
_FACE_NEIGHBOURS = ((0, 0, -1, 1), (0, 0, 1, 0), (0, -1, 0, 4), (1, 0, 0, 5), (0, 1, 0, 2), (-1, 0, 0, 3))


@functools.lru_cache(maxsize=None)
def _edge_groups() -> tuple[np.ndarray, np.ndarray]:
    """(groups, tubes). groups: rows case * 64 + flips of 12, the 1-based group (sheet) of each edge of the
    case with the faces in `flips` resolved the other way (isosurface.case_loops), 0 where the edge is not
    crossed. tubes: per case, the faces with diagonal set corners whose two segments are in one sheet.

    Two cells sharing such a face, both tubes there, would stitch four quads onto one pair of vertices, so both
    resolve that face the other way (see _sn_classify_cells), which splits the sheet in each: the surface
    stays a manifold, and the face's resolution still agrees between its two cells."""
    groups = np.zeros((256, 64, 12), dtype=np.int32)
    tubes = np.zeros(256, dtype=np.int32)
    face_edges = [[_edge_between(face[k], face[(k + 1) % 4]) for k in range(4)] for face in _CUBE_FACES]
    for case in range(256):
        inside = [case >> c & 1 for c in range(8)]
        ambiguous = 0
        for f, face in enumerate(_CUBE_FACES):
            if inside[face[0]] == inside[face[2]] != inside[face[1]] == inside[face[3]]:
                ambiguous |= 1 << f
        variants = {}
        for flips in range(64):
            key = flips & ambiguous
            if key not in variants:
                row = np.zeros(12, dtype=np.int32)
                for group, loop in enumerate(case_loops(case, key), start=1):
                    row[loop] = group
                variants[key] = row
            groups[case, flips] = variants[key]
        default = variants[0]
        for f in range(6):
            if ambiguous >> f & 1 and len({int(default[e]) for e in face_edges[f]}) == 1:
                tubes[case] |= 1 << f
    return groups.reshape(-1), tubes


# The cell-local edge (marching-cubes numbering) that the grid edge along axis a from node (i, j, k) is in
# each of the four cells around it, in the quad's order (see _sn_write_quads), and those cells' offsets.
_AROUND = (
    ((0, 0, 0, 0), (0, -1, 0, 2), (0, -1, -1, 6), (0, 0, -1, 4)),    # x edge
    ((0, 0, 0, 3), (0, 0, -1, 7), (-1, 0, -1, 5), (-1, 0, 0, 1)),    # y edge
    ((0, 0, 0, 8), (0, -1, 0, 11), (-1, -1, 0, 10), (-1, 0, 0, 9)),  # z edge: clockwise around +z
)


@func
def _sn_case(field: array(dtype=float32, ndim=3), threshold: float32, corner_offsets: array(dtype=int32, ndim=2),
             i: int, j: int, k: int) -> int:
    case = int(0)
    bit = int(1)
    for c in range(8):
        if field[i + corner_offsets[c, 0], j + corner_offsets[c, 1], k + corner_offsets[c, 2]] >= threshold:
            case += bit
        bit *= 2
    return case


@func
def _sn_bit(mask: int, n: int) -> int:
    for _ in range(n):
        mask = mask // 2
    return mask % 2


@kernel(enable_backward=False)
def _sn_classify_cells(field: array(dtype=float32, ndim=3), threshold: float32,
                       corner_offsets: array(dtype=int32, ndim=2), edge_groups: array(dtype=int32),
                       tubes: array(dtype=int32), face_neighbours: array(dtype=int32, ndim=2),
                       edge_node_axis: array(dtype=int32, ndim=2), rows: array(dtype=int32, ndim=3),
                       kept: array(dtype=int32, ndim=3), kept_count: array(dtype=int32, ndim=3),
                       quad_count: array(dtype=int32, ndim=3)):
    i, j, k = wp.tid()
    nx, ny, nz = field.shape[0], field.shape[1], field.shape[2]
    case = _sn_case(field, threshold, corner_offsets, i, j, k)
    if case == 0 or case == 255:  # most cells: no surface
        rows[i, j, k] = case * 64
        kept[i, j, k] = 0
        kept_count[i, j, k] = 0
        quad_count[i, j, k] = 0
        return
    # faces where this cell and the one across are both tubes: resolved the other way in both
    flips = int(0)
    bit = int(1)
    for f in range(6):
        if _sn_bit(tubes[case], f) == 1:
            ni = i + face_neighbours[f, 0]
            nj = j + face_neighbours[f, 1]
            nk = k + face_neighbours[f, 2]
            if ni >= 0 and nj >= 0 and nk >= 0 and ni < nx - 1 and nj < ny - 1 and nk < nz - 1:
                other = _sn_case(field, threshold, corner_offsets, ni, nj, nk)
                if _sn_bit(tubes[other], face_neighbours[f, 3]) == 1:
                    flips += bit
        bit *= 2
    row = case * 64 + flips
    rows[i, j, k] = row
    # a group is kept when one of its edges is interior: four cells around it, so it is in a quad
    mask = int(0)
    for e in range(12):
        g = edge_groups[row * 12 + e]
        if g > 0:
            ei = i + edge_node_axis[e, 0]
            ej = j + edge_node_axis[e, 1]
            ek = k + edge_node_axis[e, 2]
            axis = edge_node_axis[e, 3]
            interior = True
            if axis != 0 and (ei == 0 or ei == nx - 1):
                interior = False
            if axis != 1 and (ej == 0 or ej == ny - 1):
                interior = False
            if axis != 2 and (ek == 0 or ek == nz - 1):
                interior = False
            if interior and _sn_bit(mask, g - 1) == 0:
                bitg = int(1)
                for _ in range(g - 1):
                    bitg *= 2
                mask += bitg
    kept[i, j, k] = mask
    n = int(0)
    m = mask
    while m > 0:
        n += m % 2
        m = m // 2
    kept_count[i, j, k] = n
    # quads: the crossed edges along x, y, z from this cell's origin node that have four cells around them
    q = int(0)
    if j > 0 and k > 0 and edge_groups[row * 12 + 0] > 0:
        q += 1
    if i > 0 and k > 0 and edge_groups[row * 12 + 3] > 0:
        q += 1
    if i > 0 and j > 0 and edge_groups[row * 12 + 8] > 0:
        q += 1
    quad_count[i, j, k] = q


@kernel
def _sn_place_vertices(field: array(dtype=float32, ndim=3), threshold: float32, lower: vec3, delta: vec3,
                       vertex_cells: array(dtype=int32), vertex_groups: array(dtype=int32),
                       rows: array(dtype=int32, ndim=3), corner_offsets: array(dtype=int32, ndim=2),
                       edge_corners: array(dtype=int32, ndim=2), edge_groups: array(dtype=int32),
                       verts: array(dtype=vec3)):
    v = wp.tid()
    cell = vertex_cells[v]
    group = vertex_groups[v]
    ncj, nck = rows.shape[1], rows.shape[2]
    k = cell % nck
    j = (cell // nck) % ncj
    i = cell // (nck * ncj)
    row = rows[i, j, k]
    total = vec3(0.0, 0.0, 0.0)
    count = float(0.0)
    for e in range(12):
        if edge_groups[row * 12 + e] == group:
            c0 = edge_corners[e, 0]
            c1 = edge_corners[e, 1]
            p0 = vec3(float(corner_offsets[c0, 0]), float(corner_offsets[c0, 1]), float(corner_offsets[c0, 2]))
            p1 = vec3(float(corner_offsets[c1, 0]), float(corner_offsets[c1, 1]), float(corner_offsets[c1, 2]))
            a = field[i + corner_offsets[c0, 0], j + corner_offsets[c0, 1], k + corner_offsets[c0, 2]]
            b = field[i + corner_offsets[c1, 0], j + corner_offsets[c1, 1], k + corner_offsets[c1, 2]]
            t = (threshold - a) / (b - a)
            total = total + p0 + t * (p1 - p0)
            count = count + 1.0
    local = total / count
    verts[v] = lower + wp.cw_mul(vec3(float(i) + local[0], float(j) + local[1], float(k) + local[2]), delta)


@func
def _sn_vertex(rows: array(dtype=int32, ndim=3), kept: array(dtype=int32, ndim=3),
               first_vertex: array(dtype=int32, ndim=3), edge_groups: array(dtype=int32), i: int, j: int, k: int,
               local_edge: int) -> int:
    """The output vertex of the group of `local_edge` in cell (i, j, k): its rank among the cell's kept
    groups after the cell's first vertex."""
    g = edge_groups[rows[i, j, k] * 12 + local_edge]
    mask = kept[i, j, k]
    rank = int(0)
    for h in range(g - 1):
        rank += mask % 2
        mask = mask // 2
    return first_vertex[i, j, k] + rank


@func
def _sn_write_face(faces: array(dtype=int32), quads: int, out: int, a: int, b: int, c: int, d: int):
    if quads != 0:
        faces[4 * out + 0] = a
        faces[4 * out + 1] = b
        faces[4 * out + 2] = c
        faces[4 * out + 3] = d
    else:
        faces[6 * out + 0] = a
        faces[6 * out + 1] = b
        faces[6 * out + 2] = c
        faces[6 * out + 3] = a
        faces[6 * out + 4] = c
        faces[6 * out + 5] = d


@kernel(enable_backward=False)
def _sn_write_quads(field: array(dtype=float32, ndim=3), threshold: float32, quad_cells: array(dtype=int32),
                    first_quad: array(dtype=int32), rows: array(dtype=int32, ndim=3),
                    kept: array(dtype=int32, ndim=3), first_vertex: array(dtype=int32, ndim=3),
                    edge_groups: array(dtype=int32), around: array(dtype=int32, ndim=3), quads: int,
                    faces: array(dtype=int32)):
    t = wp.tid()
    cell = quad_cells[t]
    ncj, nck = rows.shape[1], rows.shape[2]
    k = cell % nck
    j = (cell // nck) % ncj
    i = cell // (nck * ncj)
    row = rows[i, j, k]
    out = first_quad[t]
    for axis in range(3):
        inner = True
        if axis != 0 and i == 0:
            inner = False
        if axis != 1 and j == 0:
            inner = False
        if axis != 2 and k == 0:
            inner = False
        if inner and edge_groups[row * 12 + around[axis, 0, 3]] > 0:
            q0 = _sn_vertex(rows, kept, first_vertex, edge_groups, i, j, k, around[axis, 0, 3])
            q1 = _sn_vertex(rows, kept, first_vertex, edge_groups, i + around[axis, 1, 0], j + around[axis, 1, 1],
                            k + around[axis, 1, 2], around[axis, 1, 3])
            q2 = _sn_vertex(rows, kept, first_vertex, edge_groups, i + around[axis, 2, 0], j + around[axis, 2, 1],
                            k + around[axis, 2, 2], around[axis, 2, 3])
            q3 = _sn_vertex(rows, kept, first_vertex, edge_groups, i + around[axis, 3, 0], j + around[axis, 3, 1],
                            k + around[axis, 3, 2], around[axis, 3, 3])
            # the cells go counter-clockwise around +x and +y, clockwise around +z (Warp's first vertex of a
            # quad): kept where the field rises along x or y, or falls along z, reversed otherwise
            io = i + wp.where(axis == 0, 1, 0)
            jo = j + wp.where(axis == 1, 1, 0)
            ko = k + wp.where(axis == 2, 1, 0)
            if (field[io, jo, ko] >= threshold) == (axis != 2):
                _sn_write_face(faces, quads, out, q0, q1, q2, q3)
            else:
                _sn_write_face(faces, quads, out, q3, q2, q1, q0)
            out += 1


@functools.lru_cache(maxsize=None)
def _sn_tables(device) -> dict:
    groups, tubes = _edge_groups()
    return {"corners": _table(MC_CUBE_CORNER_OFFSETS, (8, 3), device=device),
            "edges": _table(MC_EDGE_TO_CORNERS, (12, 2), device=device),
            "groups": _table(groups, device=device), "tubes": _table(tubes, device=device),
            "neighbours": _table(_FACE_NEIGHBOURS, (6, 4), device=device),
            "node_axis": _table(_MC_EDGE_NODE_AXIS, (12, 4), device=device),
            "around": _table(_AROUND, (3, 4, 4), device=device)}


def surface_nets(field, threshold: float, lower, upper, topology: str):
    validate_field(field)
    _capture.refuse_host_sized("Surface nets", field.device)
    _validate_topology(topology)
    lower, delta = resolve_domain_bounds(tuple(field.shape), lower, upper)
    threshold = float32(threshold)
    device = field.device
    tables = _sn_tables(str(device))
    cells = tuple(n - 1 for n in field.shape)
    rows, kept, kept_count, quad_count = (empty(cells, dtype=int32, device=device) for _ in range(4))
    launch(_sn_classify_cells, dim=cells,
           inputs=[field, threshold, tables["corners"], tables["groups"], tables["tubes"], tables["neighbours"],
                   tables["node_axis"]],
           outputs=[rows, kept, kept_count, quad_count], device=device, record_tape=False)

    per_cell = kept_count.numpy().reshape(-1)
    first_vertex = (np.cumsum(per_cell, dtype=np.int64) - per_cell).astype(np.int32)
    with_vertices = np.flatnonzero(per_cell)
    bits = (kept.numpy().reshape(-1)[with_vertices, None] >> np.arange(_MAX_GROUPS)) & 1
    rows_with, group_bits = np.nonzero(bits)  # row-major: by cell, then group
    vertex_cells = with_vertices[rows_with]
    n_verts = len(vertex_cells)
    verts = empty(n_verts, dtype=vec3, device=device, requires_grad=field.requires_grad)
    if n_verts:
        launch(_sn_place_vertices, dim=n_verts,
               inputs=[field, threshold, lower, delta, array(vertex_cells.astype(np.int32), dtype=int32,
                                                             device=device),
                       array((group_bits + 1).astype(np.int32), dtype=int32, device=device), rows,
                       tables["corners"], tables["edges"], tables["groups"]],
               outputs=[verts], device=device)

    quads_per_cell = quad_count.numpy().reshape(-1)
    quad_cells = np.flatnonzero(quads_per_cell).astype(np.int32)
    first_quad = (np.cumsum(quads_per_cell[quad_cells], dtype=np.int64) - quads_per_cell[quad_cells])
    n_quads = int(quads_per_cell.sum())
    per_face = 4 if topology == "quad" else 6
    faces = empty(per_face * n_quads, dtype=int32, device=device)
    if n_quads:
        launch(_sn_write_quads, dim=len(quad_cells),
               inputs=[field, threshold, array(quad_cells, dtype=int32, device=device),
                       array(first_quad.astype(np.int32), dtype=int32, device=device), rows, kept,
                       array(first_vertex.reshape(cells), dtype=int32, device=device), tables["groups"],
                       tables["around"], 1 if topology == "quad" else 0],
               outputs=[faces], device=device, record_tape=False)
    return verts, faces


class IsoSurfaceNets(IsoSurfaceBase):
    """Surface nets over a dense float32 field of nx * ny * nz nodes: one vertex per sheet of the surface in
    each cell (the mean of its edge crossings, the gradient's path from the field to `verts`), quads around
    the crossed interior edges; `topology="triangle"` (default) splits each quad (a, b, c, d) into (a, b, c)
    and (a, c, d), `"quad"` keeps four indices per face."""

    def __init__(self, nx: int, ny: int, nz: int, *, lower=None, upper=None, topology: str = "triangle"):
        _validate_topology(topology)
        super().__init__(nx, ny, nz, lower=lower, upper=upper)
        self.topology = topology

    def surface(self, field, threshold: float) -> None:
        validate_field(field)
        self._check_field_shape(field)
        self.verts, self.indices = surface_nets(field, threshold, self.lower, self.upper, self.topology)

    @classmethod
    def extract(cls, field, threshold: float = 0.0, *, lower=None, upper=None, topology: str = "triangle"):
        return surface_nets(field, threshold, lower, upper, topology)
