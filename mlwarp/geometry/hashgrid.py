"""`wp.HashGrid`: points bucketed by cell of a periodic dim_x * dim_y * dim_z grid, queried in kernels.

Warp's semantics (warp/native/hashgrid.h, 1.19): a point p lands in cell (floor(p * inv) mod dim) with
inv = 1 / radius of the last build(); a query of (point, max_dist) visits, x fastest, then y, then z, the
cells from floor((point - max_dist) * inv) to floor((point + max_dist) * inv) (at most dim cells per axis),
and yields every point stored in them, in build order within a cell: candidates, not filtered by distance.

The build is three kernels (build_kernels.py): each point's cell and the per-cell counts, the cell ranges
(both on every core), then one thread placing the points in index order, which orders each cell's points as
Warp's stable radix sort does. The id is the address of a small int64 descriptor (mlwarp/core/geometry.py) of
the sorted arrays, which this object keeps alive; kernels read it through warp.hash_grid_* ops that
warp-expand-geometry lowers to loads and scf loops.

A grid on a CUDA device (device="cuda:0") is built the same way on the host, from a copy of the points; its
sorted arrays and descriptor are then copied to device memory (device_mirror.py), and its id is the device
descriptor's address. Warp builds CUDA grids on the GPU (a radix sort by cell, stable as this build's order)."""

from __future__ import annotations

import operator

import numpy as np

from .. import runtime as _runtime_package
from ..vector import vec3
from .. import types as wt
from ..core import geometry as layout
from ..core.intrinsics import KernelOnly
from ..array import array
from ..runtime import capture as _capture
from . import build_kernels as bk
from ..runtime.device import get_device
from .device_mirror import DeviceMirror
from ..struct import struct

_MAX_CELL_COUNT = (1 << 31) - 1
_INT_MAX, _INT_MIN = 2**31 - 1, -(2**31)


def _query_struct():
    fields = {name: (wt.uint64 if name == "grid" else wt.int32) for name in layout.HASH_GRID_QUERY_FIELDS}
    cls = type("HashGridQuery", (), {"__annotations__": fields, "__module__": __name__,
                                     "__doc__": "The state of a wp.hash_grid_query (advanced by "
                                                "wp.hash_grid_query_next)."})
    return struct(cls)


HashGridQuery = _query_struct()


def _query_of(cls, dtype):
    """wp.HashGridQuery[wp.float32], as Warp spells the query of a grid of that precision."""
    if dtype not in (wt.float32, float):
        raise TypeError(f"mlwarp's HashGridQuery supports float32 grids only, not {getattr(dtype, '__name__', dtype)}")
    return cls


HashGridQuery.__class_getitem__ = classmethod(_query_of)


hash_grid_query = KernelOnly("hash_grid_query", "hash_grid_query(id: uint64, point: vec3, max_dist: float32) -> "
                                                 "HashGridQuery")
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
        if dtype not in (wt.float16, wt.float32, wt.float64):
            raise TypeError(f"Unsupported dtype {dtype} for HashGrid. Supported types: float16, float32, float64")
        if dtype is not wt.float32:
            raise NotImplementedError(f"mlwarp's HashGrid supports dtype float32 only, not {dtype.__name__}")
        self.dtype = dtype
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
        if self._mirror is not None:
            self._mirror.publish(d, {layout.HG_POINT_IDS: self._point_ids, layout.HG_CELL_STARTS: self._cell_starts,
                                     layout.HG_CELL_ENDS: self._cell_ends})

    def _set_cell_width_inv(self, inv: np.float32):
        d = self._desc.view(np.float32)
        d[2 * layout.HG_CELL_WIDTH_INV] = inv
        d[2 * layout.HG_CELL_WIDTH_INV + 1] = 0.0

    def reserve(self, num_points, with_groups=False):
        """Reserve memory for builds of up to num_points points (as Warp: 3/2 of it when it grows)."""
        if _capture.recording_on(self.device):  # a captured build() sizes the grid at replay; this cannot wait
            raise NotImplementedError("HashGrid.reserve() cannot be called during CPU graph capture; reserve before "
                                      "capture")
        self._reserve(operator.index(num_points))
        self._publish()  # (on a CUDA device: the new count and arrays reach the device descriptor)

    def _reserve(self, num_points: int) -> None:
        if num_points > self._desc[layout.HG_CAPACITY]:
            capacity = num_points * 3 // 2
            ids = np.zeros(capacity, dtype=np.int32)
            n = int(self._desc[layout.HG_NUM_POINTS])
            ids[:n] = self._point_ids[:n]
            self._point_ids = ids
            self._desc[layout.HG_CAPACITY] = capacity
        self._desc[layout.HG_NUM_POINTS] = num_points
        self.reserved = True

    def build(self, points, radius, groups=None):
        """Rebuild the grid from `points` (a wp.array of vec3) with cells of width `radius`."""
        if not wt.types_equal(getattr(points, "dtype", None), vec3):
            raise TypeError(f"Hash grid points should have type vec3f, got {getattr(points, 'dtype', points)}")
        if radius <= 0.0:
            raise ValueError(f"Hash grid cell width must be positive, got {radius}")
        if points.device != self.device:
            raise RuntimeError("points must live on the same device as this HashGrid")
        if groups is not None:
            raise NotImplementedError("mlwarp's HashGrid.build() does not take groups yet")
        if _capture.recording_on(self.device):  # a graph capture: the grid is built from the points at each replay
            if _capture.active.savable:
                raise NotImplementedError("HashGrid.build() cannot be used in a saveable APIC capture because "
                                          "HashGrid serialization is not yet supported; use apic=False or build "
                                          "outside capture")
            return _capture.record(lambda: self.build(points, radius))
        n = len(points)
        self._reserve(n)  # (published once, built, below)
        inv = np.float32(1.0) / np.float32(radius)
        self._set_cell_width_inv(inv)
        user_points = points
        if not points.is_contiguous or not self.device.is_cpu:  # (a CUDA grid builds on the host from a copy)
            points = array(np.ascontiguousarray(points.numpy(), dtype=np.float32).reshape(-1, 3), dtype=vec3,
                           device="cpu")
        # kernels (build_kernels.py): each point's cell and the per-cell counts (parallel), the cell ranges
        # (parallel), then one thread placing the points in index order: the stable sort by cell of Warp's radix sort
        if self._counts is None:
            self._counts = np.zeros(self._cell_starts.size, np.int32)
            self._inclusive = np.empty(self._cell_starts.size, np.int32)
        counts = self._counts
        counts.fill(0)
        cells = np.empty(n, np.int32)
        i32 = wt.int32
        bk.host_launch(bk.grid_cells, n, [points, inv, self._dim_x, self._dim_y, self._dim_z, bk.view(cells, i32)])
        bk.host_launch(bk.grid_counts, n, [bk.view(cells, i32), bk.view(counts, i32)])
        np.cumsum(counts, dtype=np.int32, out=self._inclusive)
        bk.host_launch(bk.grid_ranges, counts.size, [bk.view(counts, i32), bk.view(self._inclusive, i32),
                                                     bk.view(self._cell_starts, i32), bk.view(self._cell_ends, i32)])
        bk.host_launch(bk.grid_place, 1, [bk.view(cells, i32), bk.view(counts, i32), bk.view(self._point_ids, i32), n])
        self._points = user_points  # as Warp: the grid refers to the user's points
        # queries prefetch the point of a candidate a few ahead from here (a hint: never read through it)
        self._desc[layout.HG_POINTS] = (user_points.ptr or 0) if user_points.is_contiguous and self.device.is_cpu else 0
        self._publish()
        self.reserved = True

    def __del__(self):
        pass  # the descriptor and arrays go with the object


for _f in (hash_grid_query, hash_grid_query_next):
    _f._wp_query_type_ = HashGridQuery
hash_grid_query._wp_next_ = hash_grid_query_next  # `for index in wp.hash_grid_query(...)` (frontend/geometry.py)
