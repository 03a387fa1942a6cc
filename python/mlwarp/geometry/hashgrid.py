"""`wp.HashGrid`: points bucketed by cell of a periodic dim_x * dim_y * dim_z grid, queried in kernels.

Warp's semantics (warp/native/hashgrid.h, 1.19): a point p lands in cell (floor(p * inv) mod dim) with
inv = 1 / radius of the last build(), computed in the grid's precision (dtype float16, float32 or float64); a query of (point, max_dist) visits, x fastest, then y, then z, the
cells from floor((point - max_dist) * inv) to floor((point + max_dist) * inv) (at most dim cells per axis),
and yields every point stored in them, in build order within a cell: candidates, not filtered by distance.

The build is three kernels (build_kernels.py): each point's cell and the per-cell counts, the cell ranges
(both on every core), then one thread placing the points in index order, which orders each cell's points as
Warp's stable radix sort does. A grouped build (groups=...) sorts each cell's points by group id, as uint32,
then index (Warp's 64-bit (cell, group) keys), and keeps each sorted position's group, so a query given a group
narrows each cell to that group's points by binary search. The id is the address of a small int64 descriptor (core/geometry.py) of
the sorted arrays, which this object keeps alive; kernels read it through warp.hash_grid_* ops that
warp-expand-geometry lowers to loads and scf loops.

A grid on a CUDA device (device="cuda:0") is built the same way on the host, from a copy of the points; its
sorted arrays and descriptor are then copied to device memory (device_mirror.py), and its id is the device
descriptor's address. Warp builds CUDA grids on the GPU (a radix sort by cell, stable as this build's order)."""

from __future__ import annotations

import operator

import numpy as np

from mlwarp import runtime as _runtime_package
from mlwarp.core.vector import vec3, vec3d, vec3h
from mlwarp.core import types as wt
from mlwarp.core import geometry as layout
from mlwarp.core.intrinsics import KernelOnly
from mlwarp.arrays.array import array
from mlwarp.runtime import capture as _capture
from mlwarp.geometry import build_kernels as bk
from mlwarp.runtime.device import get_device
from mlwarp.geometry.device_mirror import DeviceMirror
from mlwarp.kernels.struct import struct

_MAX_CELL_COUNT = (1 << 31) - 1
_INT_MAX, _INT_MIN = 2**31 - 1, -(2**31)


def _query_struct(name: str, precision: str):
    fields = {name: (wt.uint64 if name == "grid" else wt.int32) for name in layout.HASH_GRID_QUERY_FIELDS}
    cls = type(name, (), {"__annotations__": fields, "__module__": __name__,
                          "__doc__": f"The state of a wp.hash_grid_query of {precision} points (advanced by "
                                     "wp.hash_grid_query_next)."})
    return struct(cls)


# one query type per precision, as Warp's (hash_grid_query_f / _h / _d): the same fields, distinct types
HashGridQuery = _query_struct("HashGridQuery", "float32")
HashGridQueryH = _query_struct("HashGridQueryH", "float16")
HashGridQueryD = _query_struct("HashGridQueryD", "float64")
QUERY_TYPES = {wt.float16: HashGridQueryH, wt.float32: HashGridQuery, wt.float64: HashGridQueryD}
_VEC3 = {wt.float16: vec3h, wt.float32: vec3, wt.float64: vec3d}
_SCALAR_BYTES = {wt.float16: 2, wt.float32: 4, wt.float64: 8}
_NUMPY = {wt.float16: np.float16, wt.float32: np.float32, wt.float64: np.float64}


def _query_of(cls, dtype):
    """wp.HashGridQuery[wp.float64]: the query type of a grid of that precision (Python's float is float32)."""
    t = wt.float32 if dtype is float else dtype
    if t not in QUERY_TYPES:
        raise TypeError(f"Unsupported dtype {dtype} for HashGridQuery. Supported types: float16, float32, float64")
    return QUERY_TYPES[t]


HashGridQuery.__class_getitem__ = classmethod(_query_of)


hash_grid_query = KernelOnly("hash_grid_query", "hash_grid_query(id: uint64, point: vec3, max_dist: float[, group: "
                                                 "int32]) -> HashGridQuery (vec3h / vec3f / vec3d points)")
hash_grid_query_next = KernelOnly("hash_grid_query_next", "hash_grid_query_next(query: HashGridQuery, index: int32) "
                                                           "-> bool: advances query, sets index to the next candidate")
hash_grid_point_id = KernelOnly("hash_grid_point_id", "hash_grid_point_id(id: uint64, index: int32) -> int32: the "
                                                       "index-th point in cell order")


def cell_coords(scaled: np.ndarray) -> np.ndarray:
    """hash_grid_cell_coord of float32 values as int64: floor, saturated at INT_MAX - 1 and INT_MIN, NaN -> 0
    (a float32 below 2^31 is at most 2^31 - 128, so clipping at INT_MAX - 1 only changes the saturated ones)."""
    f = np.floor(scaled.astype(np.float32, copy=False)).astype(np.float64)
    np.nan_to_num(f, copy=False, nan=0.0, posinf=_INT_MAX - 1.0, neginf=float(_INT_MIN))
    np.clip(f, float(_INT_MIN), _INT_MAX - 1.0, out=f)
    return f.astype(np.int64)


class HashGrid:
    """Class representing a hash grid object for accelerated point queries (Warp's wp.HashGrid)."""

    runtime = _runtime_package  # Warp's attribute: the runtime that owns the object (here the mlwarp.runtime package)

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.id = None
        return instance

    def __init__(self, dim_x, dim_y, dim_z, device=None, dtype=None):
        if dtype is None:
            dtype = wt.float32
        if dtype not in _VEC3:
            raise TypeError(f"Unsupported dtype {dtype} for HashGrid. Supported types: float16, float32, float64")
        self.dtype = dtype
        self._vec_type = _VEC3[dtype]
        self.device = get_device(device)
        try:
            self._dim_x, self._dim_y, self._dim_z = (operator.index(d) for d in (dim_x, dim_y, dim_z))
        except TypeError as e:
            raise TypeError("HashGrid dimensions must be integers") from e
        if self._dim_x <= 0 or self._dim_y <= 0 or self._dim_z <= 0:
            raise RuntimeError("Hash grid dimensions must be positive")
        cells = self._dim_x * self._dim_y * self._dim_z
        if cells > _MAX_CELL_COUNT:
            raise RuntimeError("Hash grid cell count exceeds supported limit: "
                               f"{self._dim_x} * {self._dim_y} * {self._dim_z} = {cells} > {_MAX_CELL_COUNT}")
        self._desc = np.zeros(layout.HG_WORDS, dtype=np.int64)
        self._cell_starts = np.zeros(cells, dtype=np.int32)
        self._cell_ends = np.zeros(cells, dtype=np.int32)
        self._point_ids = np.zeros(1, dtype=np.int32)
        self._groups = np.zeros(1, dtype=np.int32)  # each sorted position's group (grouped builds)
        self._desc[layout.HG_POINT_BYTES] = 3 * _SCALAR_BYTES[dtype]
        self._desc[layout.HG_DIM_X:layout.HG_DIM_Z + 1] = (self._dim_x, self._dim_y, self._dim_z)
        # a grid on a CUDA device: built on the host, its arrays and descriptor copied to the device (device_mirror.py)
        self._mirror = None if self.device.is_cpu else DeviceMirror(self.device, layout.HG_WORDS)
        self._publish()
        self.id = int(self._desc.ctypes.data) if self._mirror is None else self._mirror.id
        self.reserved = False
        self.groups = None
        self._counts = None  # per-cell counts, then cursors, of build() (allocated at the first build)

    def _publish(self):
        """Points the descriptor at the current arrays (after a build or a reserve that grew them); on a CUDA
        device, copies the arrays and the descriptor there."""
        d = self._desc
        d[layout.HG_POINT_IDS] = self._point_ids.ctypes.data
        d[layout.HG_CELL_STARTS] = self._cell_starts.ctypes.data
        d[layout.HG_CELL_ENDS] = self._cell_ends.ctypes.data
        d[layout.HG_GROUPS] = self._groups.ctypes.data
        if self._mirror is not None:
            self._mirror.publish(d, {layout.HG_POINT_IDS: self._point_ids, layout.HG_CELL_STARTS: self._cell_starts,
                                     layout.HG_CELL_ENDS: self._cell_ends, layout.HG_GROUPS: self._groups})

    def _set_cell_width_inv(self, inv) -> None:
        """The inverse in the grid's precision, and as the other precisions (a query of another precision than
        the grid's reads its own word)."""
        self._desc[layout.HG_CELL_WIDTH_INV] = 0
        self._desc[layout.HG_CELL_WIDTH_INV_F16] = 0
        self._desc.view(np.float32)[2 * layout.HG_CELL_WIDTH_INV] = np.float32(inv)
        self._desc[layout.HG_CELL_WIDTH_INV_F64:layout.HG_CELL_WIDTH_INV_F64 + 1].view(np.float64)[0] = np.float64(inv)
        self._desc.view(np.float16)[4 * layout.HG_CELL_WIDTH_INV_F16] = np.float16(inv)

    def reserve(self, num_points, with_groups=False):
        """Reserve memory for builds of up to num_points points (as Warp: 3/2 of it when it grows)."""
        if _capture.recording_on(self.device):  # a captured build() sizes the grid at replay; this cannot wait
            raise NotImplementedError("HashGrid.reserve() cannot be called during CPU graph capture; reserve before "
                                      "capture")
        self._reserve(operator.index(num_points), bool(with_groups))
        self._publish()  # (on a CUDA device: the new count and arrays reach the device descriptor)

    def _reserve(self, num_points: int, with_groups: bool = False) -> None:
        n = int(self._desc[layout.HG_NUM_POINTS])
        if num_points > self._desc[layout.HG_CAPACITY]:
            capacity = num_points * 3 // 2
            ids = np.zeros(capacity, dtype=np.int32)
            ids[:n] = self._point_ids[:n]
            self._point_ids = ids
            self._desc[layout.HG_CAPACITY] = capacity
        if with_groups and num_points > self._groups.size:
            groups = np.zeros(num_points * 3 // 2, dtype=np.int32)
            groups[:min(n, self._groups.size)] = self._groups[:min(n, self._groups.size)]
            self._groups = groups
        self._desc[layout.HG_NUM_POINTS] = num_points
        self.reserved = True

    def build(self, points, radius, groups=None):
        """Rebuild the grid from `points` (a wp.array of the grid's vec3h / vec3f / vec3d, any shape: read
        flattened) with cells of width `radius`; `groups` (int32, one per point) partitions each cell by group
        for queries given a group."""
        if not wt.types_equal(getattr(points, "dtype", None), self._vec_type):
            raise TypeError(f"Hash grid points should have type {self._vec_type.__name__}, got "
                            f"{getattr(points, 'dtype', points)}")
        if radius <= 0.0:
            raise ValueError(f"Hash grid cell width must be positive, got {radius}")
        if points.device != self.device:
            raise RuntimeError("points must live on the same device as this HashGrid")
        if groups is not None:
            if getattr(groups, "dtype", None) is not wt.int32:
                raise RuntimeError("groups should be an array of type wp.int32")
            if groups.device != self.device:
                raise RuntimeError("groups must live on the same device as this HashGrid")
            if groups.size != points.size:
                raise RuntimeError("groups must have the same length as points")
        if _capture.recording_on(self.device):  # a graph capture: the grid is built from the points at each replay
            if _capture.active.savable:
                raise NotImplementedError("HashGrid.build() cannot be used in a saveable APIC capture because "
                                          "HashGrid serialization is not yet supported; use apic=False or build "
                                          "outside capture")
            return _capture.record(lambda: self.build(points, radius, groups))
        if points.ndim > 1:  # as Warp: the points in row-major order, ids index the flattened array
            points = points.contiguous().flatten()
        n = points.size
        self._reserve(n, groups is not None)  # (published once, built, below)
        scalar = _NUMPY[self.dtype]
        inv = scalar(1.0) / scalar(radius)
        self._set_cell_width_inv(inv)
        user_points = points
        if not points.is_contiguous or not self.device.is_cpu:  # (a CUDA grid builds on the host from a copy)
            points = array(np.ascontiguousarray(points.numpy(), dtype=scalar).reshape(-1, 3), dtype=self._vec_type,
                           device="cpu")
        if self._counts is None:
            self._counts = np.zeros(self._cell_starts.size, np.int32)
            self._inclusive = np.empty(self._cell_starts.size, np.int32)
        cells = self._cells_of(points, inv)
        self._set_ranges(cells)
        if groups is None:
            # one thread placing the points in index order: the stable sort by cell of Warp's radix sort
            bk.host_launch(bk.grid_place, 1, [bk.view(cells, wt.int32), bk.view(self._counts, wt.int32),
                                              bk.view(self._point_ids, wt.int32), n])
        else:
            self._place_grouped(cells, groups)
        self._desc[layout.HG_HAS_GROUPS] = int(groups is not None)
        self._points = user_points  # as Warp: the grid refers to the user's points
        self.groups = groups
        # queries prefetch the point of a candidate a few ahead from here (a hint: never read through it)
        self._desc[layout.HG_POINTS] = (user_points.ptr or 0) if user_points.is_contiguous and self.device.is_cpu else 0
        self._publish()
        self.reserved = True

    def _cells_of(self, points, inv) -> np.ndarray:
        """Each point's cell (build_kernels.py's grid_cells of the grid's precision, on every core)."""
        cells = np.empty(points.size, np.int32)
        kernel = {wt.float16: bk.grid_cells_f16, wt.float32: bk.grid_cells, wt.float64: bk.grid_cells_f64}[self.dtype]
        bk.host_launch(kernel, points.size, [points, inv, self._dim_x, self._dim_y, self._dim_z,
                                             bk.view(cells, wt.int32)])
        return cells

    def _set_ranges(self, cells: np.ndarray) -> None:
        """The per-cell counts (parallel), each cell's [start, end) in the sorted ids (parallel), and self._counts
        left holding each cell's start (the cursors of grid_place)."""
        counts = self._counts
        counts.fill(0)
        i32 = wt.int32
        bk.host_launch(bk.grid_counts, cells.size, [bk.view(cells, i32), bk.view(counts, i32)])
        np.cumsum(counts, dtype=np.int32, out=self._inclusive)
        bk.host_launch(bk.grid_ranges, counts.size, [bk.view(counts, i32), bk.view(self._inclusive, i32),
                                                     bk.view(self._cell_starts, i32), bk.view(self._cell_ends, i32)])

    def _place_grouped(self, cells: np.ndarray, groups) -> None:
        """The points sorted by Warp's 64-bit key (cell << 32 | uint32(group)), stably (its radix sort), and each
        sorted position's group, which the queries' binary search reads."""
        g = np.ascontiguousarray(groups.numpy().reshape(-1), dtype=np.int32)
        keys = (cells.astype(np.uint64) << np.uint64(32)) | g.view(np.uint32).astype(np.uint64)
        order = np.argsort(keys, kind="stable").astype(np.int32)
        self._point_ids[:order.size] = order
        self._groups[:order.size] = g[order]

    def __del__(self):
        pass  # the descriptor and arrays go with the object


for _f in (hash_grid_query, hash_grid_query_next):
    _f._wp_query_type_ = HashGridQuery
    _f._wp_query_types_ = tuple(QUERY_TYPES.values())
hash_grid_query._wp_query_type_of_ = QUERY_TYPES  # the query type of each point precision (frontend/geometry.py)
for _query_type in QUERY_TYPES.values():
    _query_type._wp_iter_next_ = hash_grid_query_next  # `for index in query`
hash_grid_query._wp_next_ = hash_grid_query_next  # `for index in wp.hash_grid_query(...)` (frontend/geometry.py)
