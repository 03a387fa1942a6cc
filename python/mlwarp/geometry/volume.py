"""`wp.Volume`: a sparse NanoVDB grid (issue 17). The volume owns one buffer holding real NanoVDB bytes
(nanovdb.py builds and reads them); `volume.id` is that buffer's address, which kernels walk with the
`wp.volume_*` functions of volume_funcs.py (root tiles -> upper -> lower -> leaf, by the nodes' bit masks), as
Warp's kernels do with PNanoVDB. `volume.array()` is the buffer itself (uint8).

Host-side builds (`allocate`, `allocate_by_tiles`, `allocate_by_voxels`, `load_from_numpy`) run with numpy.

A volume on a CUDA device keeps the host buffer (built there, or copied from the user's device array) for its
host-side methods, and a device copy that kernels read and write: its id is the device copy's address (NanoVDB
offsets are relative, so the bytes are the same). Stores by kernels change the device copy only; the methods
that read values (save_to_nvdb) copy it back first, those that read the topology (get_tiles, get_voxels, the
counts) need not, as only rebuild() changes it, on the host, then copies the grid to the same device memory.
Warp builds CUDA volumes on the GPU; the grids are the same."""

from __future__ import annotations

import ctypes
import numbers
from typing import NamedTuple

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, empty
from mlwarp.runtime.cuda import memory as device_memory
from mlwarp.runtime.device import get_device
from mlwarp.core import vector as wv
from mlwarp.geometry import nanovdb as nv

_ALIGN = nv.DATA_ALIGNMENT  # NanoVDB's node alignment: every field of the buffer is aligned to its size


def _dtype_grid_type(dtype) -> int:
    """The NanoVDB grid type storing values of Warp type `dtype` (Warp's supported value types)."""
    table = {wt.float32: nv.FLOAT, wt.float64: nv.DOUBLE, wt.int32: nv.INT32, wt.int64: nv.INT64,
             wt.uint32: nv.UINT32, wv.vec3f: nv.VEC3F, wv.vec3d: nv.VEC3D, wv.vec4f: nv.VEC4F, wv.vec4d: nv.VEC4D}
    for t, code in table.items():
        if dtype is t:
            return code
    raise TypeError(f"Unsupported volume value type {getattr(dtype, '__name__', dtype)}")


_TYPE_OF_GRID = {"float": wt.float32, "double": wt.float64, "int16": wt.int16, "int32": wt.int32, "int64": wt.int64,
                 "Vec3f": wv.vec3f, "Vec3d": wv.vec3d, "Half": wt.float16, "uint32": wt.uint32, "bool": wt.bool_,
                 "Vec4f": wv.vec4f, "Vec4d": wv.vec4d, "Vec3u8": wv.vec3ub, "Vec3u16": wv.vec3us, "uint8": wt.uint8}
_GRID_TYPE_NAMES = {0: "Unknown", 1: "float", 2: "double", 3: "int16", 4: "int32", 5: "int64", 6: "Vec3f",
                    7: "Vec3d", 8: "Mask", 9: "Half", 10: "uint32", 11: "bool", 12: "RGBA8", 13: "Float4",
                    14: "Float8", 15: "Float16", 16: "FloatN", 17: "Vec4f", 18: "Vec4d", 19: "Index", 20: "OnIndex",
                    21: "IndexMask", 22: "OnIndexMask", 23: "PointIndex", 24: "Vec3u8", 25: "Vec3u16", 26: "uint8"}


def _value_of_background(bg_value):
    """(Warp dtype, value) of an allocation's background value, as Warp infers the grid type from it."""
    if isinstance(bg_value, wt.scalar_base):
        return type(bg_value), bg_value.value
    t = type(bg_value)
    if wt.is_composite(t):
        return t, np.asarray(bg_value)
    if isinstance(bg_value, (bool, np.bool_)):
        raise TypeError("Unsupported volume background value type bool")
    if isinstance(bg_value, numbers.Integral):
        return wt.int32, int(bg_value)
    if isinstance(bg_value, numbers.Real):
        return wt.float32, float(bg_value)
    arr = np.asarray(bg_value, dtype=np.float64).reshape(-1)
    if arr.size == 3:
        return wv.vec3f, arr
    if arr.size == 4:
        return wv.vec4f, arr
    raise TypeError(f"Unsupported volume background value {bg_value!r}")


def _voxel_size_vector(voxel_size, what="voxel_size") -> np.ndarray:
    """A per-axis voxel size (3 positive finite floats) from a scalar or a 3-sequence; Warp's errors."""
    if isinstance(voxel_size, (str, bytes)) or voxel_size is None:
        raise TypeError(f"{what} must be a number or a sequence of 3 numbers, got {type(voxel_size).__name__}")
    if isinstance(voxel_size, (numbers.Real, np.floating, np.integer)) and not isinstance(voxel_size, bool):
        v = np.full(3, float(voxel_size))
    else:
        try:
            items = list(voxel_size)
        except TypeError:
            raise TypeError(f"{what} must be a number or a sequence of 3 numbers, "
                            f"got {type(voxel_size).__name__}") from None
        if len(items) != 3:
            raise ValueError(f"{what} must have 3 elements, got {len(items)}")
        try:
            v = np.array([float(x) for x in items])
        except (TypeError, ValueError):
            raise TypeError(f"{what} must contain numbers") from None
    if not np.all(np.isfinite(v)) or np.any(v <= 0.0):
        raise ValueError(f"{what} must be positive and finite, got {tuple(float(x) for x in v)}")
    return v


def _transform(voxel_size, transform):
    if transform is not None:
        mat = np.asarray(transform, dtype=np.float64).reshape(3, 3)
        if abs(np.linalg.det(mat)) == 0.0:
            raise ValueError("transform must be invertible")
        return mat
    return np.diag(_voxel_size_vector(voxel_size))


def _points_to_index(points, mat, translation, in_world_space):
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if in_world_space:
        pts = (pts - np.asarray(translation, dtype=np.float64)) @ np.linalg.inv(mat).T
    return pts


def _leaves_of_voxels(ijk):
    """(leaf origins, masks) of a set of voxel coordinates (int, (N, 3)), duplicates merged."""
    ijk = np.asarray(ijk, dtype=np.int64).reshape(-1, 3)
    if len(ijk) == 0:
        return np.zeros((0, 3), np.int64), np.zeros((0, 8), np.uint64)
    origins, _, leaf = nv.unique_rows(ijk & ~7)
    leaf = leaf.reshape(-1)
    local = ijk & 7
    n = (local[:, 0] << 6) | (local[:, 1] << 3) | local[:, 2]
    masks = np.zeros((len(origins), 8), np.uint64)
    np.bitwise_or.at(masks, (leaf, n >> 6), np.left_shift(np.uint64(1), (n & 63).astype(np.uint64)))
    return origins, masks


def _point_array_numpy(points, point_mask=None):
    """The rows of a points argument (a wp.array of vec3/int32 rows, or numpy), with point_mask's zeros dropped;
    whether they are integers (index space) or floats (world space)."""
    data = points.numpy() if hasattr(points, "numpy") else np.asarray(points)
    data = data.reshape(-1, 3)
    if point_mask is not None:
        mask = point_mask.numpy() if hasattr(point_mask, "numpy") else np.asarray(point_mask)
        mask = mask.reshape(-1)
        if len(mask) != len(data):
            raise ValueError(f"point_mask must have one entry per point ({len(data)}), got {len(mask)}")
        data = data[mask != 0]
    return data, np.issubdtype(data.dtype, np.integer)


def _write_leading(out, values: np.ndarray) -> None:
    """Writes `values` over the first elements of `out` (flattened), on the CPU in place, on a CUDA device through
    a host copy (its numpy() is a copy)."""
    if out.device.is_cpu:
        out.numpy().reshape(-1)[:values.size] = values.reshape(-1)
        return
    host = out.numpy()
    host.reshape(-1)[:values.size] = values.reshape(-1)
    out.assign(host)


def _set_status(status, bits: int):
    if status is not None:
        _write_leading(status, np.array([bits]))


def _to_device(device, buf: np.ndarray):
    """(address, allocation) of a new device copy of the host buffer `buf` (the allocation frees it when it goes)."""
    alloc = device_memory.Allocation(device, buf.nbytes)
    device_memory.copy_host_to_device(device, alloc.ptr, buf.ctypes.data, buf.nbytes)
    return alloc.ptr, alloc


def _from_device(device, address: int, nbytes: int) -> np.ndarray:
    """A host copy of `nbytes` of device memory at `address`."""
    raw = np.empty(nbytes, np.uint8)
    device_memory.copy_device_to_host(device, raw.ctypes.data, address, nbytes)
    device.stream.synchronize()
    return raw


class _Plan(NamedTuple):
    """How a volume allocated from points is built, kept for rebuild(): the kind of points ("tiles" or
    "voxels"), the grid type, transform, background and capacities (voxels, leaves, lowers, uppers; None: not
    rebuildable)."""
    kind: str
    code: int
    mat: np.ndarray
    translation: np.ndarray
    background: object
    capacity: tuple | None

    def leaves(self, points, point_mask):
        """(leaf origins, masks, REBUILD_* overflow bits) of `points`; over capacity, the first leaves that fit."""
        pts, is_index = _point_array_numpy(points, point_mask)
        if self.kind == "tiles":
            ijk = pts.astype(np.int64) if is_index else \
                np.floor(_points_to_index(pts, self.mat, self.translation, True)).astype(np.int64)
            # (build_grid merges repeated leaves; the capacity checks below count distinct ones)
            origins = ijk & ~7 if self.capacity is None else nv.unique_rows(ijk & ~7)[0]
            masks = np.full((len(origins), 8), np.uint64(0xFFFFFFFFFFFFFFFF))
        else:
            ijk = pts.astype(np.int64) if is_index else \
                np.floor(_points_to_index(pts, self.mat, self.translation, True) + 0.5).astype(np.int64)
            origins, masks = _leaves_of_voxels(ijk)
        if self.capacity is None:
            return origins, masks, 0
        voxels = int(np.unpackbits(masks.view(np.uint8)).sum()) if len(masks) else 0
        counts = (voxels, len(origins), len(nv.unique_rows(origins & ~127)[0]), len(nv.unique_rows(origins & ~4095)[0]))
        bits = 0
        for flag, n, cap in zip((Volume.REBUILD_VOXEL_CAPACITY_EXCEEDED, Volume.REBUILD_LEAF_CAPACITY_EXCEEDED,
                                 Volume.REBUILD_LOWER_CAPACITY_EXCEEDED, Volume.REBUILD_UPPER_CAPACITY_EXCEEDED),
                                counts, self.capacity):
            if n > cap:
                bits |= flag
        if bits:  # keep what fits: leaves in order while every count stays within its capacity
            keep = np.zeros(len(origins), bool)
            for n in range(len(origins)):
                keep[n] = True
                o, m = origins[keep], masks[keep]
                c = (int(np.unpackbits(m.view(np.uint8)).sum()), len(o), len(nv.unique_rows(o & ~127)[0]),
                     len(nv.unique_rows(o & ~4095)[0]))
                if any(x > cap for x, cap in zip(c, self.capacity)):
                    keep[n] = False
            origins, masks = origins[keep], masks[keep]
        return origins, masks, bits

    def build(self, origins, masks):
        return nv.build_grid(nv.GRID_TYPES[self.code], origins, masks, None, self.background, matrix=self.mat,
                             translation=self.translation)

    def capacity_bytes(self) -> int:
        t = nv.GRID_TYPES[self.code]
        _, leaf, lower, upper = self.capacity
        size = nv.GRID_SIZE + nv.TREE_SIZE + t.root_size + upper * (t.root_tile_size + t.upper_size) \
            + lower * t.lower_size + leaf * t.leaf_size
        return (size + 31) & ~31


class Volume:
    """Sparse volumetric data structure based on NanoVDB for efficient 3D sampling."""

    CLOSEST = 0
    """Enum value to specify nearest-neighbor interpolation during sampling"""
    LINEAR = 1
    """Enum value to specify trilinear interpolation during sampling"""

    # Warp's status bits (its native WP_VOLUME_REBUILD_* values)
    REBUILD_SUCCESS = 0
    REBUILD_LEAF_CAPACITY_EXCEEDED = 1 << 0
    REBUILD_LOWER_CAPACITY_EXCEEDED = 1 << 1
    REBUILD_UPPER_CAPACITY_EXCEEDED = 1 << 2
    REBUILD_VOXEL_CAPACITY_EXCEEDED = 1 << 3
    # Warp's native rebuild sets it for a volume that is not rebuildable or a value type that is not the
    # volume's; Volume.rebuild raises for those before (in Warp's Python API too), so it is never set here
    REBUILD_INVALID_INPUT = 1 << 4

    class RebuildInfo(NamedTuple):
        """Capacity metadata of a volume allocated with rebuild support."""
        kind: str | None
        max_voxel_count: int
        max_leaf_node_count: int
        max_lower_node_count: int
        max_upper_node_count: int

    class ActiveStats(NamedTuple):
        """Active topology statistics from the current grid metadata."""
        voxel_count: int
        leaf_node_count: int
        lower_node_count: int
        upper_node_count: int

    class GridInfo(NamedTuple):
        """Grid metadata"""
        name: str
        size_in_bytes: int
        grid_index: int
        grid_count: int
        type_str: str
        translation: object
        transform_matrix: object

    class FeatureArrayInfo(NamedTuple):
        """Metadata for a supplemental data array"""
        name: str
        ptr: int
        value_size: int
        value_count: int
        type_str: str

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.id = None
        return instance

    def __init__(self, data, copy: bool = True):
        """A volume over `data`, a uint8 wp.array of NanoVDB grid bytes (validated; copied unless copy=False)."""
        self._rebuild_info = Volume.RebuildInfo(None, 0, 0, 0, 0)
        self._keep = None
        if data is None:
            return
        self.device = get_device(getattr(data, "device", "cpu"))
        raw = data.numpy() if hasattr(data, "numpy") else np.asarray(data)  # (a host copy of a CUDA array)
        raw = np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
        if not nv.check_metadata(raw, raw.size):
            raise RuntimeError("Failed to create volume from input array")
        on_device = None
        if not self.device.is_cpu:
            buf = nv.aligned_buffer(raw.size)
            buf[:] = raw
            if not copy and data.ptr % _ALIGN == 0:  # kernels use the user's device memory, as Warp's copy=False
                on_device = (data.ptr, data)
        elif copy or raw.ctypes.data % _ALIGN:
            buf = nv.aligned_buffer(raw.size)
            buf[:] = raw
        else:
            buf = raw
            self._keep = data
        self._set_buffer(buf, self._keep, on_device)

    def _set_buffer(self, buf: np.ndarray, keep=None, on_device=None):
        """Takes `buf` (checked) as this volume's grid, and a snapshot of its headers and blind metadata, which
        the introspection methods read (as Warp's: later writes to an aliased buffer do not change them).
        On a CUDA device, `on_device` is (address, owner) of the grid's bytes in device memory, the id; None
        copies `buf` to new device memory."""
        self._buf = buf
        self._keep = keep
        self._head = bytes(buf[:nv.GRID_SIZE + nv.TREE_SIZE])
        meta, count = nv.i64(self._head, nv.OFF_BLIND_OFFSET), nv.u32(self._head, nv.OFF_BLIND_COUNT)
        self._blind_offset = meta
        self._blind = bytes(buf[meta:meta + count * nv.BLIND_META_SIZE])
        if self.device.is_cpu:
            self.id, self._memory = int(buf.ctypes.data), buf
        else:
            self.id, self._memory = on_device if on_device is not None else _to_device(self.device, buf)

    def _pull_from_device(self):
        """On a CUDA device: the host buffer refreshed from the device copy (which kernels may have written)."""
        if not self.device.is_cpu:
            device_memory.copy_device_to_host(self.device, self._buf.ctypes.data, self.id, self._buf.nbytes)
            self.device.stream.synchronize()

    @staticmethod
    def _decode_nvdb_name(name: bytes) -> str:
        """A fixed-size NanoVDB name field as a str (Warp's error when it has no terminator)."""
        end = name.find(b"\0")
        if end < 0:
            raise RuntimeError("Invalid NanoVDB name")
        return name[:end].decode("ascii")

    def __del__(self):
        if not getattr(self, "id", None):
            return
        self.id = 0

    # -- construction ---------------------------------------------------------------------------------------------
    @classmethod
    def _from_bytes(cls, grid_bytes, device=None, built: bool = False) -> Volume:
        """A Volume of a NanoVDB grid's bytes, checked first unless `built` (nanovdb.build_grid's, valid by
        construction, in an aligned buffer of its own: taken as it is)."""
        if built:
            buf = grid_bytes
        else:
            buf = nv.aligned_buffer(len(grid_bytes))
            buf[:] = np.frombuffer(grid_bytes, np.uint8)
        status = nv.VALID if built else nv.check_grids(buf)
        if status == nv.UNSUPPORTED:
            raise RuntimeError("Unsupported NanoVDB tree layout")
        if status != nv.VALID:
            raise RuntimeError("Invalid NanoVDB grid structure")
        v = cls(None)
        v.device = get_device(device)
        v._set_buffer(buf)
        return v

    @classmethod
    def load_from_nvdb(cls, file_or_buffer, device=None) -> Volume:
        """A Volume of a serialized NanoVDB file (a file object or its bytes); its first grid, the next ones
        reached by load_next_grid()."""
        try:
            data = file_or_buffer.read()
        except AttributeError:
            data = file_or_buffer
        return cls._from_bytes(nv.read_nvdb(data), device)

    @classmethod
    def load_from_address(cls, grid_ptr: int, buffer_size: int = 0, device=None) -> Volume:
        """A Volume aliasing the NanoVDB grid at address `grid_ptr` (buffer_size bytes, 0 = the grid's size)."""
        if not grid_ptr:
            raise RuntimeError("Invalid grid buffer pointer")
        target = get_device(device)
        if target.is_cpu:
            size = buffer_size or nv.u64(ctypes.string_at(grid_ptr, nv.GRID_SIZE), nv.OFF_GRID_SIZE)
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(grid_ptr))
        else:  # a device address: the header, then the grid, copied to the host (kernels use the memory there)
            size = buffer_size or nv.u64(bytes(_from_device(target, grid_ptr, nv.GRID_SIZE)), nv.OFF_GRID_SIZE)
            raw = nv.aligned_buffer(size)
            raw[:] = _from_device(target, grid_ptr, size)
        if not nv.check_metadata(raw, size):
            raise RuntimeError("Failed to create volume from input array")
        v = cls(None)
        v.device = target
        v._set_buffer(raw, None, None if target.is_cpu else (int(grid_ptr), None))
        return v

    def load_next_grid(self) -> Volume | None:
        """The next grid of this volume's buffer, or None after the last."""
        info = self.get_grid_info()
        if info.grid_index + 1 >= info.grid_count or self._buf.size <= info.size_in_bytes:
            return None
        rest = self._buf[info.size_in_bytes:]
        if not nv.check_metadata(rest, rest.size):
            raise RuntimeError("Failed to create volume from input array")
        v = Volume(None)
        v.device = self.device
        v._set_buffer(rest, keep=self, on_device=None if self.device.is_cpu else (self.id + info.size_in_bytes, self))
        return v

    def save_to_nvdb(self, path, codec: str = "none"):
        """Writes this volume's grids (this one and those after it in the buffer) to a .nvdb file."""
        if nv.u32(self._buf, nv.OFF_GRID_INDEX) > 0:
            raise RuntimeError("Saving of aliased Volumes is not supported. Use `save_to_nvdb` on the original "
                               "volume, before any `load_next_grid` calls.")
        self._pull_from_device()  # (the values kernels stored on a CUDA device; the next grids' buffers are views)
        grids = []
        v = self
        while v is not None:
            t = nv.grid_type_of(v._buf)
            if t is None:
                raise RuntimeError(f"Unsupported grid type for saving: {v.get_grid_info().type_str}")
            grids.append(v._buf[:v.get_grid_info().size_in_bytes].tobytes())
            v = v.load_next_grid()
        data = nv.write_nvdb(grids, codec)
        with open(path, "wb") as f:
            f.write(data)

    def array(self):
        """The raw NanoVDB bytes of this volume as a uint8 array (no copy)."""
        return array(ptr=self.id, dtype=wt.uint8, shape=(self._buf.size,), device=self.device, owner=self._memory)

    # -- introspection --------------------------------------------------------------------------------------------
    def _check(self):
        if not self.id:
            raise RuntimeError("Invalid Volume")

    def get_grid_info(self) -> Volume.GridInfo:
        """The metadata of this grid."""
        self._check()
        b = self._head
        mat, vec = nv.map_of(b)
        return Volume.GridInfo(Volume._decode_nvdb_name(nv.grid_name(b)), nv.u64(b, nv.OFF_GRID_SIZE),
                               nv.u32(b, nv.OFF_GRID_INDEX), nv.u32(b, nv.OFF_GRID_COUNT),
                               _GRID_TYPE_NAMES.get(nv.u32(b, nv.OFF_GRID_TYPE), "Unknown"),
                               wv.vec3f(*vec.tolist()), wv.mat33f(*mat.reshape(-1).tolist()))

    @property
    def dtype(self):
        """The Warp type of the values (None for index grids and types Warp has no name for)."""
        return _TYPE_OF_GRID.get(self.get_grid_info().type_str)

    @property
    def is_index(self) -> bool:
        return self.get_grid_info().type_str in ("Index", "OnIndex", "IndexMask", "OnIndexMask")

    @property
    def is_rebuildable(self) -> bool:
        return self._rebuild_info.kind is not None

    def get_rebuild_info(self) -> Volume.RebuildInfo:
        return self._rebuild_info

    def get_active_stats(self) -> Volume.ActiveStats:
        leaf, lower, upper, voxels = nv.tree_counts(self._buf)
        return Volume.ActiveStats(voxels, leaf, lower, upper)

    def get_tile_count(self) -> int:
        if self._rebuild_info.kind is not None:
            return self._rebuild_info.max_leaf_node_count
        return nv.tree_counts(self._buf)[0]

    def get_voxel_count(self) -> int:
        """Voxels that have an index: the active ones of an OnIndex grid, every voxel of every leaf otherwise
        (a rebuildable volume: its capacity, as Warp's)."""
        if self._rebuild_info.kind is not None:
            return self._rebuild_info.max_voxel_count
        leaf, _, _, voxels = nv.tree_counts(self._buf)
        return voxels if nv.u32(self._buf, nv.OFF_GRID_TYPE) in (nv.ONINDEX, 22) else leaf * nv.LEAF_TABLE_COUNT

    def _out(self, out, rows):
        if out is None:
            return empty(shape=(rows, 3), dtype=wt.int32, device=self.device)
        if out.device != self.device or out.shape[0] < rows:
            raise RuntimeError(f"'out' array must an array with at least {rows} rows on device {self.device}")
        ok = (out.dtype is wv.vec3i and out.ndim == 1) or (out.dtype is wt.int32 and out.ndim == 2
                                                             and out.shape[1] == 3)
        if not ok or not out.is_contiguous:
            raise RuntimeError("'out' must be a contiguous 1D array with type vec3i or a 2D array of type int32 "
                               "with shape (N, 3) ")
        return out

    def get_tiles(self, out=None):
        """The origins of every leaf (tile) of this volume, an (N, 3) int32 array."""
        self._check()
        origins, _ = nv.leaf_nodes(self._buf)
        out = self._out(out, len(origins))
        _write_leading(out, origins)
        return out

    def get_voxels(self, out=None):
        """The coordinates of every indexable voxel (see get_voxel_count), in index order."""
        self._check()
        origins, masks = nv.leaf_nodes(self._buf)
        if nv.u32(self._buf, nv.OFF_GRID_TYPE) not in (nv.ONINDEX, 22):  # every leaf voxel has an index
            vox = nv.active_voxels(origins, np.full_like(masks, np.uint64(0xFFFFFFFFFFFFFFFF)))
        else:  # an OnIndex voxel's index: its leaf's first index + its rank among the leaf's active voxels - 1
            vox = nv.active_voxels(origins, masks)
            tree = nv.GRID_SIZE
            first = tree + nv.u64(self._buf, tree + nv.TREE_NODE_OFFSET)
            size = nv.GRID_TYPES[nv.ONINDEX].leaf_size
            starts = np.array([nv.u64(self._buf, first + n * size + 80) for n in range(len(origins))], np.int64)
            counts = np.unpackbits(masks.view(np.uint8), axis=1).sum(axis=1).astype(np.int64)
            leaf = np.repeat(np.arange(len(origins)), counts)
            rank = np.arange(len(vox)) - np.repeat(np.cumsum(counts) - counts, counts)
            index = starts[leaf] + rank - 1
            placed = np.zeros_like(vox)
            keep = (index >= 0) & (index < len(vox))
            placed[index[keep]] = vox[keep]
            vox = placed
        out = self._out(out, len(vox))
        _write_leading(out, vox)
        return out

    def get_voxel_size(self) -> tuple:
        """The voxel size: the lengths of the index-to-world map's columns (float32)."""
        self._check()
        return tuple(float(np.float32(x)) for x in np.frombuffer(
            bytes(self._buf[nv.OFF_VOXEL_SIZE:nv.OFF_VOXEL_SIZE + 24]), "<f8"))

    # -- blind data (feature arrays) ------------------------------------------------------------------------------
    def get_feature_array_count(self) -> int:
        return nv.u32(self._head, nv.OFF_BLIND_COUNT) if getattr(self, "_head", None) else 0

    def get_feature_array_info(self, feature_index: int) -> Volume.FeatureArrayInfo:
        """The name, address, value size and count and type of blind data array `feature_index`."""
        if not self.id or getattr(self, "_blind", None) is None \
                or not 0 <= feature_index < self.get_feature_array_count():
            raise RuntimeError("Invalid feature array")
        b = self._blind
        meta = feature_index * nv.BLIND_META_SIZE
        data = self._blind_offset + meta + nv.i64(b, meta + nv.BLIND_DATA_OFFSET)
        name = Volume._decode_nvdb_name(bytes(b[meta + nv.BLIND_NAME:meta + nv.BLIND_NAME + nv.NAME_SIZE]))
        type_code = nv.u32(b, meta + nv.BLIND_DATA_TYPE)
        return Volume.FeatureArrayInfo(name, self.id + data,
                                       nv.u32(b, meta + nv.BLIND_VALUE_SIZE), nv.u64(b, meta + nv.BLIND_VALUE_COUNT),
                                       _GRID_TYPE_NAMES.get(type_code, "Unknown"))

    def feature_array(self, feature_index: int, dtype=None):
        """One of the grid's blind data arrays as a wp.array (aliasing the buffer)."""
        info = self.get_feature_array_info(feature_index)
        if dtype is None:
            dtype = _TYPE_OF_GRID.get(info.type_str, wt.uint8)
        size = wt.type_size_in_bytes(dtype)
        count, value_size = info.value_count, info.value_size
        if size == 1:
            count, value_size = count * value_size, 1
        elif value_size == 1 and count % size == 0:
            count, value_size = count // size, size
        if size != value_size:
            raise RuntimeError(f"Cannot cast feature data of size {value_size} to array dtype "
                               f"{getattr(dtype, '__name__', dtype)}")
        return array(ptr=info.ptr, dtype=dtype, shape=(count,), device=self.device, owner=self._memory)

    # -- allocation -----------------------------------------------------------------------------------------------
    @classmethod
    def _build(cls, code, origins, masks, values, bg, mat, translation, device) -> Volume:
        grid = nv.build_grid(nv.GRID_TYPES[code], origins, masks, values, bg, matrix=mat, translation=translation)
        return cls._from_bytes(grid, device, built=True)

    @classmethod
    def allocate(cls, min, max, voxel_size, bg_value=0.0, translation=(0.0, 0.0, 0.0), points_in_world_space=False,
                 device=None) -> Volume:
        """A volume whose leaves cover the box [min, max] (index space, or world space with
        points_in_world_space), every voxel of them active and set to bg_value."""
        mat = _transform(voxel_size, None)
        lo = np.asarray(min, dtype=np.float64).reshape(3)
        hi = np.asarray(max, dtype=np.float64).reshape(3)
        if points_in_world_space:
            lo, hi = _points_to_index(np.stack([lo, hi]), mat, translation, True)
        lo, hi = np.floor(np.minimum(lo, hi)).astype(np.int64), np.floor(np.maximum(lo, hi)).astype(np.int64)
        axes = [np.arange(a & ~7, b + 1, 8) for a, b in zip(lo, hi)]
        tiles = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
        return cls._allocate_tiles(tiles, mat, translation, bg_value, device)

    @classmethod
    def _allocate_tiles(cls, tiles, mat, translation, bg_value, device):
        origins = nv.unique_rows(np.asarray(tiles, dtype=np.int64).reshape(-1, 3) & ~7)[0]
        masks = np.full((len(origins), 8), np.uint64(0xFFFFFFFFFFFFFFFF))
        if bg_value is None:  # an index grid of whole leaves: Index (every leaf voxel has an index), as Warp's
            return cls._build(nv.INDEX, origins, masks, None, 0, mat, translation, device)
        dtype, bg = _value_of_background(bg_value)
        return cls._build(_dtype_grid_type(dtype), origins, masks, None, bg, mat, translation, device)

    @classmethod
    def allocate_by_tiles(cls, tile_points, voxel_size=None, bg_value=0.0, translation=(0.0, 0.0, 0.0),
                          device=None, transform=None, point_mask=None, rebuildable=False, max_tiles=0,
                          max_lower_nodes=0, max_upper_nodes=0, status=None) -> Volume:
        """A volume with a leaf (8^3 tile) at each point: int32 (N, 3) index-space points, or vec3 world-space
        ones; point_mask's zeros drop points. bg_value None makes an index grid. rebuildable=True reserves room
        for max_tiles leaves (max_lower_nodes / max_upper_nodes internal nodes, 0 = as many as below), which
        rebuild() fills with new points in place (the id stays); `status` (uint32[1]) gets the REBUILD_* bits."""
        if voxel_size is None and transform is None:
            voxel_size = 1.0
        mat = _transform(voxel_size, transform)
        if bg_value is None:
            code, bg = nv.INDEX, 0
        else:
            dtype, bg = _value_of_background(bg_value)
            code = _dtype_grid_type(dtype)
            bg = np.array(bg, dtype=np.float64 if np.ndim(bg) else None, copy=True)  # a snapshot for rebuilds
        plan = _Plan("tiles", code, mat, np.asarray(translation, dtype=np.float64).reshape(3), bg, None)
        if rebuildable:
            lower = max_lower_nodes or max_tiles
            plan = plan._replace(capacity=(max_tiles * nv.LEAF_TABLE_COUNT, max_tiles, lower, max_upper_nodes or lower))
        return cls._from_plan(plan, tile_points, point_mask, status, device)

    @classmethod
    def allocate_by_voxels(cls, voxel_points, voxel_size=None, translation=(0.0, 0.0, 0.0), device=None,
                           transform=None, point_mask=None, rebuildable=False, max_active_voxels=0,
                           max_leaf_nodes=0, max_lower_nodes=0, max_upper_nodes=0, status=None) -> Volume:
        """An index grid (OnIndex) whose active voxels are the given points (int32 index space, or vec3 world
        space rounded to the nearest voxel); point_mask's zeros drop points. rebuildable / max_* / status as
        allocate_by_tiles, with room for max_active_voxels voxels."""
        if voxel_size is None and transform is None:
            voxel_size = 1.0
        mat = _transform(voxel_size, transform)
        plan = _Plan("voxels", nv.ONINDEX, mat, np.asarray(translation, dtype=np.float64).reshape(3), 0, None)
        if rebuildable:
            leaf = max_leaf_nodes or max_active_voxels
            lower = max_lower_nodes or leaf
            plan = plan._replace(capacity=(max_active_voxels, leaf, lower, max_upper_nodes or lower))
        return cls._from_plan(plan, voxel_points, point_mask, status, device)

    @classmethod
    def _from_plan(cls, plan, points, point_mask, status, device) -> Volume:
        origins, masks, overflow = plan.leaves(points, point_mask)
        if plan.capacity is None:
            v = cls._from_bytes(plan.build(origins, masks), device, built=True)
        else:
            v = cls(None)
            v.device = get_device(device)
            v._plan = plan
            v._rebuild_info = Volume.RebuildInfo(plan.kind, *plan.capacity)
            buf = nv.aligned_buffer(plan.capacity_bytes())
            v._write_grid(buf, plan.build(origins, masks), plan)
            v._set_buffer(buf)
        _set_status(status, overflow)
        return v

    @staticmethod
    def _write_grid(buf, grid, plan):
        """A grid into a rebuildable volume's buffer: its header then says the buffer's size (Warp's: the grid
        size of a rebuildable volume is its reserved capacity)."""
        buf[:] = 0
        buf[:grid.size] = grid
        buf[nv.OFF_GRID_SIZE:nv.OFF_GRID_SIZE + 8] = np.frombuffer(np.uint64(buf.size).tobytes(), np.uint8)
        buf[nv.OFF_BLIND_OFFSET:nv.OFF_BLIND_OFFSET + 8] = np.frombuffer(np.int64(buf.size).tobytes(), np.uint8)

    def rebuild(self, points, status=None, point_mask=None):
        """Replaces the topology of a rebuildable volume by that of `points` (as its allocate_by_* took them),
        in place: the id, grid size, type, transform and background stay. Over capacity, the volume keeps its
        topology and `status` gets the REBUILD_*_CAPACITY_EXCEEDED bits."""
        plan = getattr(self, "_plan", None)
        if plan is None:
            raise RuntimeError("Volume.rebuild() needs a volume allocated with rebuildable=True")
        origins, masks, overflow = plan.leaves(points, point_mask)
        if not overflow:
            self._write_grid(self._buf, plan.build(origins, masks), plan)
            on_device = None
            if not self.device.is_cpu:  # the new grid into the same device memory: the id stays
                device_memory.copy_host_to_device(self.device, self.id, self._buf.ctypes.data, self._buf.nbytes)
                on_device = (self.id, self._memory)
            self._set_buffer(self._buf, self._keep, on_device)
        _set_status(status, overflow)

    @classmethod
    def load_from_numpy(cls, ndarray, min_world=(0.0, 0.0, 0.0), voxel_size=1.0, bg_value=0.0,
                        device=None) -> Volume:
        """A dense numpy array as a volume whose voxel (0, 0, 0) is at min_world: as Warp, every leaf over the
        array (padded to multiples of 8 with bg_value) is allocated and filled. A sequence bg_value makes a vec3f
        volume of a (x, y, z, 3) array, a Python int an int32 volume, anything else a float32 volume."""
        vs = _voxel_size_vector(voxel_size)
        data = np.asarray(ndarray)
        if hasattr(bg_value, "__len__"):
            code, scalar, comps = nv.VEC3F, np.float32, 3
            bg = np.asarray(bg_value, dtype=np.float32).reshape(3)
        elif isinstance(bg_value, int) and not isinstance(bg_value, bool):
            code, scalar, comps, bg = nv.INT32, np.int32, 1, int(bg_value)
        else:
            code, scalar, comps, bg = nv.FLOAT, np.float32, 1, float(bg_value)
        nx, ny, nz = data.shape[:3]
        padded = np.empty(((nx + 7) & ~7, (ny + 7) & ~7, (nz + 7) & ~7, comps), scalar)
        padded[...] = bg
        padded[:nx, :ny, :nz] = data.reshape(nx, ny, nz, comps)
        sx, sy, sz = (padded.shape[a] // 8 for a in range(3))
        origins = np.stack(np.meshgrid(np.arange(sx) * 8, np.arange(sy) * 8, np.arange(sz) * 8, indexing="ij"),
                           axis=-1).reshape(-1, 3)
        # (leaf, x, y, z) blocks in the leaf's value order (x * 64 + y * 8 + z)
        blocks = padded.reshape(sx, 8, sy, 8, sz, 8, comps).transpose(0, 2, 4, 1, 3, 5, 6)
        values = blocks.reshape(sx * sy * sz, 512, comps)
        masks = np.full((len(origins), 8), np.uint64(0xFFFFFFFFFFFFFFFF))
        return cls._build(code, origins, masks, values if comps == 3 else values[..., 0], bg, np.diag(vs),
                          np.asarray(min_world, dtype=np.float64), device)

