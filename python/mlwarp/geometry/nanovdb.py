"""NanoVDB grids as bytes (issue 17, wp.Volume): the public NanoVDB/PNanoVDB layout (grid, tree, root, upper 32^3,
lower 16^3 and leaf 8^3 nodes, blind metadata), built, read and checked on the host with numpy.

The byte offsets are the layout's (PNanoVDB.h documents them; they are what makes a buffer a NanoVDB grid that
other NanoVDB readers, and Warp, understand). A grid is one contiguous buffer: the 672-byte grid header, the
64-byte tree header, the root and its tiles, then every upper, lower and leaf node, breadth first, each level
sorted by coordinate, then blind metadata. Kernels walk the same bytes (volume_funcs.py)."""

from __future__ import annotations

import math
import struct
import zlib
from typing import NamedTuple

import numpy as np

MAGIC_GRID = 0x314244566F6E614E  # "NanoVDB1", what Warp's builders write ("NanoVDB0" is accepted on load)
MAGIC_GRID_ALT = 0x304244566F6E614E
MAGIC_FILE = 0x324244566F6E614E  # "NanoVDB2" (files start with NanoVDB0 or NanoVDB2)
VERSION = (32 << 21) | (8 << 10)  # 32.8.0, Warp 1.19's: the major version is what readers check
FILE_VERSION = (32 << 21) | (3 << 10) | 3  # what Warp's save_to_nvdb writes in a file's headers

GRID_SIZE, TREE_SIZE, BLIND_META_SIZE, NAME_SIZE = 672, 64, 288, 256
# grid header fields
OFF_MAGIC, OFF_CHECKSUM, OFF_VERSION, OFF_FLAGS = 0, 8, 16, 20
OFF_GRID_INDEX, OFF_GRID_COUNT, OFF_GRID_SIZE, OFF_GRID_NAME, OFF_MAP = 24, 28, 32, 40, 296
OFF_WORLD_BBOX, OFF_VOXEL_SIZE, OFF_GRID_CLASS, OFF_GRID_TYPE = 560, 608, 632, 636
OFF_BLIND_OFFSET, OFF_BLIND_COUNT, OFF_DATA0, OFF_DATA1, OFF_DATA2 = 640, 648, 652, 656, 664
MAP_MATF, MAP_INVMATF, MAP_VECF, MAP_TAPERF = 0, 36, 72, 84
MAP_MATD, MAP_INVMATD, MAP_VECD, MAP_TAPERD = 88, 160, 232, 256
FLAG_HAS_BBOX, FLAG_IS_BREADTH_FIRST = 1 << 1, 1 << 5
# tree header (at GRID_SIZE): node offsets relative to the tree, leaf/lower/upper/root
TREE_NODE_OFFSET, TREE_NODE_COUNT, TREE_TILE_COUNT, TREE_VOXEL_COUNT = 0, 32, 44, 56
# nodes
ROOT_BBOX, ROOT_TABLE_SIZE = 0, 24
TILE_KEY, TILE_CHILD, TILE_STATE = 0, 8, 16
NODE_BBOX, NODE_FLAGS, NODE_VALUE_MASK = 0, 24, 32
UPPER_CHILD_MASK, LOWER_CHILD_MASK = 4128, 544
LEAF_BBOX_DIF_FLAGS, LEAF_VALUE_MASK = 12, 16
LEAF_FLAG_HAS_BBOX = 1 << 1
UPPER_TABLE_COUNT, LOWER_TABLE_COUNT, LEAF_TABLE_COUNT = 32768, 4096, 512
GRID_CLASS_UNKNOWN, GRID_CLASS_INDEX = 0, 8
BLIND_DATA_OFFSET, BLIND_VALUE_COUNT, BLIND_VALUE_SIZE, BLIND_SEMANTIC = 0, 8, 16, 20
BLIND_DATA_CLASS, BLIND_DATA_TYPE, BLIND_NAME = 24, 28, 32


class GridType(NamedTuple):
    """One grid type's layout constants (PNanoVDB's per-type table) and its values as numpy sees them."""
    code: int
    name: str  # NanoVDB's type string (what get_grid_info().type_str says)
    scalar: str | None  # numpy dtype of one value component; None for index grids
    components: int
    root_off_background: int
    root_size: int
    value_stride_bits: int
    table_stride: int
    root_tile_off_value: int
    root_tile_size: int
    upper_off_table: int
    upper_size: int
    lower_off_table: int
    lower_size: int
    leaf_off_table: int
    leaf_size: int

    @property
    def is_index(self) -> bool:
        return self.scalar is None

    @property
    def value_size(self) -> int:
        return self.value_stride_bits // 8


# PNanoVDB's per-type layout table, every grid type (index = type code): root_off_background, root_off_min,
# root_off_max, root_off_ave, root_off_stddev, root_size, value_stride_bits, table_stride, root_tile_off_value,
# root_tile_size, upper_off_{min,max,ave,stddev,table}, upper_size, lower_off_{...,table}, lower_size,
# leaf_off_{...,table}, leaf_size. The validator needs every row (FpN, Half, ... grids load too); GRID_TYPES
# are the types mlwarp reads and writes.
LAYOUT_ROWS = (
    (28, 28, 28, 28, 28, 32, 0, 8, 20, 32, 8224, 8224, 8224, 8224, 8224, 270368,
     1056, 1056, 1056, 1056, 1056, 33824, 80, 80, 80, 80, 96, 96),
    (28, 32, 36, 40, 44, 64, 32, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 80, 84, 88, 92, 96, 2144),
    (32, 40, 48, 56, 64, 96, 64, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 88, 96, 104, 128, 4224),
    (28, 30, 32, 36, 40, 64, 16, 8, 20, 32, 8224, 8226, 8228, 8232, 8256, 270400,
     1056, 1058, 1060, 1064, 1088, 33856, 80, 82, 84, 88, 96, 1120),
    (28, 32, 36, 40, 44, 64, 32, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 80, 84, 88, 92, 96, 2144),
    (32, 40, 48, 56, 64, 96, 64, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 88, 96, 104, 128, 4224),
    (28, 40, 52, 64, 68, 96, 96, 16, 20, 32, 8224, 8236, 8248, 8252, 8256, 532544,
     1056, 1068, 1080, 1084, 1088, 66624, 80, 92, 104, 108, 128, 6272),
    (32, 56, 80, 104, 112, 128, 192, 24, 24, 64, 8224, 8248, 8272, 8280, 8288, 794720,
     1056, 1080, 1104, 1112, 1120, 99424, 80, 104, 128, 136, 160, 12448),
    (28, 29, 30, 31, 32, 64, 0, 8, 20, 32, 8224, 8225, 8226, 8227, 8256, 270400,
     1056, 1057, 1058, 1059, 1088, 33856, 80, 80, 80, 80, 96, 96),
    (28, 30, 32, 36, 40, 64, 16, 8, 20, 32, 8224, 8226, 8228, 8232, 8256, 270400,
     1056, 1058, 1060, 1064, 1088, 33856, 80, 82, 84, 88, 96, 1120),
    (28, 32, 36, 40, 44, 64, 32, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 80, 84, 88, 92, 96, 2144),
    (28, 29, 30, 31, 32, 64, 1, 8, 20, 32, 8224, 8225, 8226, 8227, 8256, 270400,
     1056, 1057, 1058, 1059, 1088, 33856, 80, 80, 80, 80, 96, 160),
    (28, 32, 36, 40, 44, 64, 32, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 80, 84, 88, 92, 96, 2144),
    (28, 32, 36, 40, 44, 64, 0, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 88, 90, 92, 94, 96, 352),
    (28, 32, 36, 40, 44, 64, 0, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 88, 90, 92, 94, 96, 608),
    (28, 32, 36, 40, 44, 64, 0, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 88, 90, 92, 94, 96, 1120),
    (28, 32, 36, 40, 44, 64, 0, 8, 20, 32, 8224, 8228, 8232, 8236, 8256, 270400,
     1056, 1060, 1064, 1068, 1088, 33856, 88, 90, 92, 94, 96, 96),
    (28, 44, 60, 76, 80, 96, 128, 16, 20, 64, 8224, 8240, 8256, 8260, 8288, 532576,
     1056, 1072, 1088, 1092, 1120, 66656, 80, 96, 112, 116, 128, 8320),
    (32, 64, 96, 128, 136, 160, 256, 32, 24, 64, 8224, 8256, 8288, 8296, 8320, 1056896,
     1056, 1088, 1120, 1128, 1152, 132224, 80, 112, 144, 152, 160, 16544),
    (32, 40, 48, 56, 64, 96, 0, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 80, 80, 80, 80, 96),
    (32, 40, 48, 56, 64, 96, 0, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 80, 80, 80, 80, 96),
    (32, 40, 48, 56, 64, 96, 0, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 80, 80, 80, 80, 160),
    (32, 40, 48, 56, 64, 96, 0, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 80, 80, 80, 80, 160),
    (32, 40, 48, 56, 64, 96, 16, 8, 24, 32, 8224, 8232, 8240, 8248, 8256, 270400,
     1056, 1064, 1072, 1080, 1088, 33856, 80, 88, 96, 96, 96, 1120),
    (28, 31, 34, 40, 44, 64, 24, 8, 20, 32, 8224, 8227, 8232, 8236, 8256, 270400,
     1056, 1059, 1064, 1068, 1088, 33856, 80, 83, 88, 92, 96, 1632),
    (28, 34, 40, 48, 52, 64, 48, 8, 20, 32, 8224, 8230, 8236, 8240, 8256, 270400,
     1056, 1062, 1068, 1072, 1088, 33856, 80, 86, 92, 96, 128, 3200),
    (28, 29, 30, 32, 36, 64, 8, 8, 20, 32, 8224, 8225, 8228, 8232, 8256, 270400,
     1056, 1057, 1060, 1064, 1088, 33856, 80, 81, 84, 88, 96, 608),
)


def _t(code, name, scalar, comps):
    row = LAYOUT_ROWS[code]
    return GridType(code, name, scalar, comps, row[0], row[5], row[6], row[7], row[8], row[9], row[14], row[15],
                    row[20], row[21], row[26], row[27])


GRID_TYPES = {t.code: t for t in (
    _t(1, "float", "<f4", 1), _t(2, "double", "<f8", 1), _t(4, "int32", "<i4", 1), _t(5, "int64", "<i8", 1),
    _t(6, "Vec3f", "<f4", 3), _t(7, "Vec3d", "<f8", 3), _t(10, "uint32", "<u4", 1), _t(17, "Vec4f", "<f4", 4),
    _t(18, "Vec4d", "<f8", 4), _t(19, "Index", None, 1), _t(20, "OnIndex", None, 1),
)}
GRID_TYPE_BY_NAME = {t.name: t for t in GRID_TYPES.values()}
FLOAT, DOUBLE, INT32, INT64, VEC3F, VEC3D, UINT32, VEC4F, VEC4D, INDEX, ONINDEX = 1, 2, 4, 5, 6, 7, 10, 17, 18, 19, 20


def coord_key(ijk) -> np.ndarray:
    """The root's key of each upper node origin (int32 coords): NanoVDB's 21 bits per axis, i highest."""
    u = (np.asarray(ijk, dtype=np.int64).astype(np.uint32) >> np.uint32(12)).astype(np.uint64)
    return u[..., 2] | (u[..., 1] << np.uint64(21)) | (u[..., 0] << np.uint64(42))


def packed_keys(rows: np.ndarray) -> np.ndarray | None:
    """One int64 key per row of an (N, k) integer array, ordering the rows as np.lexsort of its columns (the
    first most significant) would: each column's value less its minimum, in as many bits as its span needs;
    None when the spans need more than 63 bits together (then lexsort itself). (Column by column: numpy's
    reductions along a short last axis, and integer matrix products, are several times slower.)"""
    if not len(rows):
        return np.zeros(0, np.int64)
    columns = np.ascontiguousarray(rows.T)
    low = columns.min(axis=1)
    widths = [int(w).bit_length() for w in columns.max(axis=1) - low]
    if sum(widths) > 63:
        return None
    shifts = np.cumsum([0] + widths[:0:-1])[::-1]  # (each column above the ones after it)
    return np.bitwise_or.reduce((columns - low[:, None]) << shifts[:, None], axis=0)


def unique_rows(ijk):
    """np.unique(ijk, axis=0, return_index=True, return_inverse=True) of (N, 3) integer coordinates (rows in
    lexicographic order, each one's first occurrence, each row's unique row), by one sort of packed keys (one
    lexsort where they do not fit): numpy sorts rows as structured values, several times slower."""
    ijk = np.asarray(ijk, np.int64).reshape(-1, 3)
    keys = packed_keys(ijk)
    if keys is not None:
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return ijk[first], first, inverse.reshape(-1)
    order = np.lexsort((ijk[:, 2], ijk[:, 1], ijk[:, 0]))
    rows = ijk[order]
    first = np.ones(len(ijk), bool)
    first[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    inverse = np.empty(len(ijk), np.int64)
    inverse[order] = np.cumsum(first) - 1
    return rows[first], order[first], inverse


# the lowest and the highest set bit of each byte (0 for 0: an empty leaf's box is its origin)
_LOWEST_BIT = np.array([(b & -b).bit_length() - 1 if b else 0 for b in range(256)], np.int64)
_HIGHEST_BIT = np.array([b.bit_length() - 1 if b else 0 for b in range(256)], np.int64)
_COORD_BIT = np.arange(8, dtype=np.uint8)[:, None]  # (coordinate, leaf) flags shifted to their bit
_LOWER_PLACE = np.array([[22], [17], [12]])  # a lower node's x, y, z place in its upper (5 bits each) in a key
_LEAF_PLACE = np.array([[8], [4], [0]])  # a leaf's in its lower (4 bits each)


def _popcount(words: np.ndarray) -> np.ndarray:
    """The set bits of each uint64: numpy's bitwise_count (numpy 2), else the SWAR sum (numpy's uint64
    arithmetic wrapping as C's)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).astype(np.int64)
    x = words - ((words >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


def _run_starts(keys: np.ndarray) -> np.ndarray:
    """The first index of each run of equal consecutive keys."""
    change = np.ones(len(keys), bool)
    change[1:] = keys[1:] != keys[:-1]
    return np.flatnonzero(change)


def _parent_of_runs(starts: np.ndarray, count: int) -> np.ndarray:
    """Each of `count` items' run, given the runs' first items."""
    first = np.zeros(count, np.int64)
    first[starts] = 1
    return np.cumsum(first) - 1


def _child_slot(ijk, level_bits, child_bits):
    """The table slot of each child origin inside its parent node: (x, y, z) of log2 size level_bits - child_bits."""
    c = (np.asarray(ijk, dtype=np.int64) & ((1 << level_bits) - 1)) >> child_bits
    n = level_bits - child_bits
    return (c[..., 0] << (2 * n)) | (c[..., 1] << n) | c[..., 2]


def _bbox(mins, maxs):
    return np.concatenate([mins.astype(np.int32), maxs.astype(np.int32)]).tobytes()


def _put_value(buf, offset, gtype: GridType, value):
    """One value of `gtype` at buf[offset:]: its components in the grid's scalar type."""
    arr = np.asarray(value, dtype=gtype.scalar).reshape(-1)
    if arr.size == 1 and gtype.components > 1:
        arr = np.repeat(arr, gtype.components)
    buf[offset:offset + arr.nbytes] = arr.tobytes()


def aligned_buffer(nbytes: int) -> np.ndarray:
    """`nbytes` zero bytes at an address aligned as NanoVDB's nodes (every field aligned to its size)."""
    raw = np.zeros(nbytes + DATA_ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % DATA_ALIGNMENT
    return raw[start:start + nbytes]


def build_grid(gtype: GridType, leaf_origins, leaf_masks, leaf_values=None, background=0, *,
               matrix=((1.0, 0, 0), (0, 1.0, 0), (0, 0, 1.0)), translation=(0.0, 0.0, 0.0), name: str = "",
               grid_index: int = 0, grid_count: int = 1) -> np.ndarray:
    """One NanoVDB grid of `gtype` over leaves at `leaf_origins` ((L, 3) int, multiples of 8) with active voxel
    bits `leaf_masks` ((L, 8) uint64, bit x*64 + y*8 + z) and, for value grids, `leaf_values` ((L, 512[, C]),
    None = background everywhere). An origin given several times is one leaf, its masks OR-ed (without
    leaf_values only). Index grids (OnIndex) number the active voxels 1.. in leaf order and bit order; 0 is the
    background. `matrix` maps index to world space (world = matrix @ ijk + translation).
    Returns the grid in a zeroed aligned_buffer: only its nonzero bytes are written."""
    origins = np.asarray(leaf_origins, dtype=np.int64).reshape(-1, 3)
    masks = np.asarray(leaf_masks, dtype=np.uint64).reshape(-1, 8)
    # breadth first, each level in tree order: upper nodes by signed coordinates, then each one's lower nodes
    # by coordinates, then each lower's leaves (as Warp's builder: the order of an index grid's voxel indices)
    # a leaf's key: its upper node's (an order-preserving number of its coordinates), then its lower node's place
    # in that upper (x, y, z: 5 bits each), then its own place in that lower (4 bits each)
    up = origins >> 12
    upper_key = packed_keys(up)
    if upper_key is None or (len(up) and upper_key.max() >= 1 << 36):  # (too wide: its rank among the uppers)
        upper_key = unique_rows(up)[2]
    local = np.ascontiguousarray(origins.T) & 4095  # (axis, leaf): the place in the upper node
    places = (local >> 7) << _LOWER_PLACE | ((local >> 3) & 15) << _LEAF_PLACE
    keys = upper_key << 27 | np.bitwise_or.reduce(places, axis=0)
    order = np.argsort(keys, kind="stable")
    # (take: several times faster than fancy indexing on rows)
    origins, masks, keys = origins.take(order, 0), masks.take(order, 0), keys.take(order)
    if leaf_values is not None:
        leaf_values = np.asarray(leaf_values).take(order, 0)
    else:  # repeated origins, now consecutive: one leaf
        firsts = _run_starts(keys)
        if len(firsts) < len(origins):
            again = np.flatnonzero(keys[1:] == keys[:-1]) + 1
            if (masks.take(again, 0) == masks.take(again - 1, 0)).all():  # (nothing to merge: reduceat is slow)
                masks = masks.take(firsts, 0)
            else:
                masks = np.bitwise_or.reduceat(masks, firsts)
            origins, keys = origins.take(firsts, 0), keys.take(firsts)
    # in tree order a node's children are consecutive: a parent starts where its children's key less their own
    # place changes
    leaf_starts = _run_starts(keys >> 12)
    lower_starts = _run_starts(keys.take(leaf_starts) >> 27)
    lowers = origins.take(leaf_starts, 0) & ~127
    uppers = lowers.take(lower_starts, 0) & ~4095
    n_leaf, n_lower, n_upper = len(origins), len(lowers), len(uppers)
    leaf_parent = _parent_of_runs(leaf_starts, n_leaf)
    lower_parent = _parent_of_runs(lower_starts, n_lower)

    t = gtype
    root_off = GRID_SIZE + TREE_SIZE
    upper_off = root_off + t.root_size + n_upper * t.root_tile_size
    lower_off = upper_off + n_upper * t.upper_size
    leaf_off = lower_off + n_lower * t.lower_size
    end = leaf_off + n_leaf * t.leaf_size
    end = (end + 31) & ~31
    raw = aligned_buffer(end)
    buf = memoryview(raw)  # (bytes and struct.pack_into write through it)

    # active voxels: counts and bounding boxes, from the mask words (word x of a leaf holds bit y * 8 + z), as
    # rows (x, leaf) (numpy's reductions along a short last axis are several times slower)
    words = np.ascontiguousarray(masks.T)
    word_counts = _popcount(words)
    voxel_count = int(word_counts.sum())
    rows = np.bitwise_or.reduce(words, axis=0)  # per leaf: byte y holds the z bits of any x
    row_bytes = np.ascontiguousarray(rows.view(np.uint8).reshape(-1, 8).T)  # (y, leaf)
    # per axis, the coordinates (0..7) holding an active voxel as the bits of a byte: its lowest and highest bit
    along = np.stack([np.bitwise_or.reduce((words != 0).view(np.uint8) << _COORD_BIT, axis=0),
                      np.bitwise_or.reduce((row_bytes != 0).view(np.uint8) << _COORD_BIT, axis=0),
                      np.bitwise_or.reduce(row_bytes, axis=0)], axis=1)
    leaf_min = _LOWEST_BIT.take(along) + origins
    leaf_max = _HIGHEST_BIT.take(along) + origins
    empty = rows == 0
    if empty.any():
        leaf_min[empty], leaf_max[empty] = origins[empty], origins[empty]
    lower_min, lower_max = np.minimum.reduceat(leaf_min, leaf_starts), np.maximum.reduceat(leaf_max, leaf_starts)
    upper_min, upper_max = np.minimum.reduceat(lower_min, lower_starts), np.maximum.reduceat(lower_max, lower_starts)
    if n_upper:
        root_min, root_max = upper_min.min(axis=0), upper_max.max(axis=0)
    else:
        root_min, root_max = np.full(3, np.iinfo(np.int32).max), np.full(3, np.iinfo(np.int32).min)

    bg = 0 if t.is_index else background
    # the nodes' records written as rows of bytes, a node a row (all leaves, all lowers, all uppers at once)
    leaves = raw[leaf_off:leaf_off + n_leaf * t.leaf_size].reshape(n_leaf, t.leaf_size)
    leaves[:, 0:12] = _bytes_of(leaf_min, "<i4")
    leaves[:, 12:15] = leaf_max - leaf_min
    leaves[:, 15] = LEAF_FLAG_HAS_BBOX
    leaves[:, 16:80] = _bytes_of(masks, "<u8")
    next_index = 1
    if t.is_index:
        # each leaf's first index, and an OnIndex leaf's prefix sums of its words (9 bits each)
        below = np.cumsum(word_counts, axis=0)  # (x, leaf): the active voxels of words 0..x
        firsts = 1 + np.cumsum(below[7]) - below[7]
        prefix = np.zeros(n_leaf, np.int64)
        for w in range(1, 8 if t.code == ONINDEX else 1):
            prefix |= below[w - 1] << (9 * (w - 1))
        leaves[:, t.leaf_off_table:t.leaf_off_table + 16] = _bytes_of(np.stack([firsts, prefix], axis=1), "<u8")
        next_index += voxel_count
    elif n_leaf:
        little = np.dtype(t.scalar).newbyteorder("<")
        if leaf_values is not None:
            data = _bytes_of(np.asarray(leaf_values, dtype=t.scalar).reshape(n_leaf, -1), little)
            leaves[:, t.leaf_off_table:t.leaf_off_table + data.shape[1]] = data
        elif _tile_value(t, bg).astype(little).view(np.uint8).any():  # (zero bytes are there already: most)
            data = _bytes_of(np.tile(_tile_value(t, bg), 512)[None], little)
            leaves[:, t.leaf_off_table:t.leaf_off_table + data.shape[1]] = data
    # lowers: a child per leaf, every other slot the background; uppers: a child per lower
    _inner_nodes(raw, t, bg, lower_off, t.lower_size, t.lower_off_table, LOWER_TABLE_COUNT, LOWER_CHILD_MASK,
                 lower_min, lower_max, leaf_parent, _child_slot(origins, 7, 3), leaf_off, t.leaf_size)
    _inner_nodes(raw, t, bg, upper_off, t.upper_size, t.upper_off_table, UPPER_TABLE_COUNT, UPPER_CHILD_MASK,
                 upper_min, upper_max, lower_parent, _child_slot(lowers, 12, 7), lower_off, t.lower_size)
    # root and its tiles, one per upper node, sorted by key
    buf[root_off:root_off + 24] = _bbox(root_min, root_max)
    struct.pack_into("<I", buf, root_off + ROOT_TABLE_SIZE, n_upper)
    if not t.is_index:
        _put_value(buf, root_off + t.root_off_background, t, bg)
    keys = coord_key(uppers) if n_upper else np.zeros(0, np.uint64)
    for n in range(n_upper):
        at = root_off + t.root_size + n * t.root_tile_size
        struct.pack_into("<QqI", buf, at, int(keys[n]), upper_off + n * t.upper_size - root_off, 0)
    # tree
    tree = GRID_SIZE

    def rel(offset, count):
        return offset - tree if count else 0

    struct.pack_into("<QQQQ", buf, tree, rel(leaf_off, n_leaf), rel(lower_off, n_lower), rel(upper_off, n_upper),
                     root_off - tree)
    # the tile-count words hold the node counts again, as Warp's builder writes them
    struct.pack_into("<IIIIIIQ", buf, tree + TREE_NODE_COUNT, n_leaf, n_lower, n_upper, n_leaf, n_lower, n_upper,
                     voxel_count)
    # grid header
    mat = np.asarray(matrix, dtype=np.float32).reshape(3, 3).astype(np.float64)  # Warp's float32 transform
    inv = np.linalg.inv(mat)
    vec = np.asarray(translation, dtype=np.float64).reshape(3)
    name_bytes = name.encode("ascii")[:NAME_SIZE - 1]
    struct.pack_into("<QQIIIIQ", buf, 0, MAGIC_GRID, 0xFFFFFFFFFFFFFFFF, VERSION, FLAG_HAS_BBOX | FLAG_IS_BREADTH_FIRST,
                     grid_index, grid_count, end)
    buf[OFF_GRID_NAME:OFF_GRID_NAME + len(name_bytes)] = name_bytes
    m = OFF_MAP
    buf[m + MAP_MATF:m + MAP_MATF + 36] = mat.astype("<f4").tobytes()
    buf[m + MAP_INVMATF:m + MAP_INVMATF + 36] = inv.astype("<f4").tobytes()
    buf[m + MAP_VECF:m + MAP_VECF + 12] = vec.astype("<f4").tobytes()
    struct.pack_into("<f", buf, m + MAP_TAPERF, 1.0)
    buf[m + MAP_MATD:m + MAP_MATD + 72] = mat.astype("<f8").tobytes()
    buf[m + MAP_INVMATD:m + MAP_INVMATD + 72] = inv.astype("<f8").tobytes()
    buf[m + MAP_VECD:m + MAP_VECD + 24] = vec.astype("<f8").tobytes()
    struct.pack_into("<d", buf, m + MAP_TAPERD, 1.0)
    if n_upper:
        corners = np.array([[x, y, z] for x in (root_min[0], root_max[0] + 1) for y in (root_min[1], root_max[1] + 1)
                            for z in (root_min[2], root_max[2] + 1)], dtype=np.float64)
        world = corners @ mat.T + vec
        struct.pack_into("<6d", buf, OFF_WORLD_BBOX, *world.min(axis=0), *world.max(axis=0))
    struct.pack_into("<3d", buf, OFF_VOXEL_SIZE, *np.linalg.norm(mat, axis=0))
    struct.pack_into("<q", buf, OFF_BLIND_OFFSET, end)  # no blind data: the offset is the grid's end
    struct.pack_into("<II", buf, OFF_GRID_CLASS, GRID_CLASS_INDEX if t.is_index else GRID_CLASS_UNKNOWN, t.code)
    if t.is_index:
        struct.pack_into("<Q", buf, OFF_DATA1, next_index)  # the value count, background included
    return raw


def _bytes_of(values, dtype) -> np.ndarray:
    """Rows of `values` as rows of bytes in `dtype` (little-endian, as NanoVDB)."""
    values = np.ascontiguousarray(values, dtype=dtype)
    row = math.prod(values.shape[1:])
    return values.reshape(values.shape[0], row).view(np.uint8)


def _tile_value(t: GridType, bg) -> np.ndarray:
    """The background as one value of `t`: its components in the grid's scalar type."""
    one = np.asarray(bg, dtype=t.scalar).reshape(-1)
    return np.repeat(one, t.components) if one.size == 1 else one


def _inner_nodes(raw, t: GridType, bg, off, size, table_off, table_count, mask_off, mins, maxs, parent, slot,
                 child_off, child_size):
    """The records of a level of internal nodes (at raw[off:], `size` bytes each): bounding boxes, tables holding
    the background tile value (index grids: index 0) but at each child's slot (child c of node parent[c] at
    table slot slot[c]) its offset from the node, and the child masks."""
    count = len(mins)
    if not count:
        return
    nodes = raw[off:off + count * size].reshape(count, size)
    nodes[:, 0:24] = _bytes_of(np.concatenate([mins, maxs], axis=1), "<i4")
    if not t.is_index:
        cell = np.zeros(t.table_stride, np.uint8)
        one = _tile_value(t, bg)
        cell[:one.nbytes] = np.frombuffer(one.tobytes(), np.uint8)
        if cell.any():  # (zero tiles are there already)
            nodes[:, table_off:table_off + table_count * t.table_stride] = np.tile(cell, table_count)
    children = np.arange(len(parent))
    at = off + parent * size + table_off + slot * t.table_stride  # each child's slot (8-byte aligned)
    raw.view("<i8")[at >> 3] = child_off + children * child_size - (off + parent * size)
    words = np.zeros((count, table_count // 64), np.uint64)  # (bit slot % 64 of word slot // 64, little-endian)
    np.bitwise_or.at(words, (parent, slot >> 6), np.left_shift(np.uint64(1), (slot & 63).astype(np.uint64)))
    nodes[:, mask_off:mask_off + table_count // 8] = _bytes_of(words, "<u8")


# -- reading ------------------------------------------------------------------------------------------------------

def u32(buf, at):
    return struct.unpack_from("<I", buf, at)[0]


def u64(buf, at):
    return struct.unpack_from("<Q", buf, at)[0]


def i64(buf, at):
    return struct.unpack_from("<q", buf, at)[0]


def grid_type_of(buf, grid=0) -> GridType | None:
    return GRID_TYPES.get(u32(buf, grid + OFF_GRID_TYPE))


def tree_counts(buf, grid=0):
    """(leaf, lower, upper) node counts and the active voxel count of a grid."""
    tree = grid + GRID_SIZE
    leaf, lower, upper = struct.unpack_from("<III", buf, tree + TREE_NODE_COUNT)
    return leaf, lower, upper, u64(buf, tree + TREE_VOXEL_COUNT)


def leaf_nodes(buf, grid=0):
    """(origins (L, 3) int32, value masks (L, 8) uint64) of every leaf of a grid: origins from the leaf's bbox
    min rounded down to a multiple of 8."""
    t = grid_type_of(buf, grid)
    leaf_size = t.leaf_size if t is not None else None
    tree = grid + GRID_SIZE
    n_leaf = u32(buf, tree + TREE_NODE_COUNT)
    if n_leaf == 0:
        return np.zeros((0, 3), np.int32), np.zeros((0, 8), np.uint64)
    first = tree + u64(buf, tree + TREE_NODE_OFFSET)
    raw = np.frombuffer(bytes(buf[first:first + n_leaf * leaf_size]), np.uint8).reshape(n_leaf, leaf_size)
    origins = raw[:, 0:12].copy().view("<i4").reshape(n_leaf, 3) & ~7
    masks = raw[:, 16:80].copy().view("<u8").reshape(n_leaf, 8)
    return origins.astype(np.int32), masks


def active_voxels(origins, masks):
    """Coordinates (N, 3) int32 of every active voxel, leaf by leaf in bit order (the order of index grids)."""
    bits = np.unpackbits(np.ascontiguousarray(masks).view(np.uint8).reshape(-1, 8, 8), axis=2,
                         bitorder="little").reshape(-1, 512)
    leaf, n = np.nonzero(bits)
    local = np.stack([n >> 6, (n >> 3) & 7, n & 7], axis=1)
    return (origins[leaf] + local).astype(np.int32)


def grid_name(buf, grid=0) -> bytes:
    return bytes(buf[grid + OFF_GRID_NAME:grid + OFF_GRID_NAME + NAME_SIZE])


def map_of(buf, grid=0):
    """(matF 3x3 float32, vecF float32[3]) of a grid's index-to-world map."""
    m = grid + OFF_MAP
    mat = np.frombuffer(bytes(buf[m + MAP_MATF:m + MAP_MATF + 36]), "<f4").reshape(3, 3)
    vec = np.frombuffer(bytes(buf[m + MAP_VECF:m + MAP_VECF + 12]), "<f4")
    return mat.copy(), vec.copy()


# -- validation ---------------------------------------------------------------------------------------------------
GRID_TYPE_FPN, GRID_TYPE_END, DATA_ALIGNMENT = 16, 27, 32
VALID, UNSUPPORTED, INVALID = 0, 1, 2


def _relative(base: int, rel: int, size: int):
    """base + rel when it stays within [0, size], else None."""
    if base > size:
        return None
    target = base + rel
    return target if 0 <= target <= size else None


def check_metadata(buf, available: int) -> bool:
    """What creating a Volume checks (Warp's wp_volume_create_host): a grid header whose size fits the buffer,
    a terminated name, and blind metadata (terminated names, data ranges) inside the grid."""
    if available < GRID_SIZE + TREE_SIZE or u64(buf, 0) not in (MAGIC_GRID, MAGIC_GRID_ALT):
        return False
    size = u64(buf, OFF_GRID_SIZE)
    if size < GRID_SIZE + TREE_SIZE or size > available:
        return False
    if 0 not in bytes(buf[OFF_GRID_NAME:OFF_GRID_NAME + NAME_SIZE]):
        return False
    meta = i64(buf, OFF_BLIND_OFFSET)
    count = u32(buf, OFF_BLIND_COUNT)
    if meta < 0 or meta > size or count > (size - meta) // BLIND_META_SIZE:
        return False
    for n in range(count):
        entry = meta + n * BLIND_META_SIZE
        if 0 not in bytes(buf[entry + BLIND_NAME:entry + BLIND_NAME + NAME_SIZE]):
            return False
        data = _relative(entry, i64(buf, entry + BLIND_DATA_OFFSET), size)
        value_size = u32(buf, entry + BLIND_VALUE_SIZE)
        if data is None or (value_size and u64(buf, entry + BLIND_VALUE_COUNT) > (size - data) // value_size):
            return False
    return True


class _Level(NamedTuple):
    begin: int
    end: int
    stride: int  # 0: variable-size (FpN) leaves at `starts`
    count: int
    starts: tuple = ()

    def holds_node_at(self, offset: int) -> bool:
        if self.stride == 0:
            return offset in self.starts
        return self.begin <= offset < self.end and (offset - self.begin) % self.stride == 0


def _level(rel: int, count: int, stride: int, size: int):
    if count == 0:
        return _Level(0, 0, stride, 0)
    if rel < TREE_SIZE or rel > size - GRID_SIZE or rel % DATA_ALIGNMENT:
        return None
    begin = GRID_SIZE + rel
    if count > (size - begin) // stride:
        return None
    return _Level(begin, begin + count * stride, stride, count)


def _fpn_leaves(buf, rel: int, count: int, size: int):
    """FpN leaves: a 96-byte header, then 512 values of 2^k bits (k in the top 3 bits of the flags word)."""
    if count == 0:
        return _Level(0, 0, 0, 0)
    if rel < TREE_SIZE or rel > size - GRID_SIZE or rel % DATA_ALIGNMENT:
        return None
    begin = at = GRID_SIZE + rel
    if count > (size - begin) // (96 + 64):
        return None
    starts = []
    for _ in range(count):
        if 96 > size - at:
            return None
        log_bits = u32(buf, at + LEAF_BBOX_DIF_FLAGS) >> 29
        if log_bits > 4:
            return None
        leaf = 96 + (1 << log_bits) * 64
        if leaf > size - at:
            return None
        starts.append(at)
        at += leaf
    return _Level(begin, at, 0, count, tuple(starts))


def _children_ok(buf, parent: _Level, mask_off: int, table_off: int, table_count: int, stride: int,
                 child: _Level, size: int) -> bool:
    if stride < 8 or mask_off > parent.stride or table_count // 32 > (parent.stride - mask_off) // 4 \
            or table_off > parent.stride or table_count > (parent.stride - table_off) // stride:
        return False
    for n in range(parent.count):
        node = parent.begin + n * parent.stride
        mask = np.frombuffer(bytes(buf[node + mask_off:node + mask_off + table_count // 8]), np.uint8)
        for slot in np.nonzero(np.unpackbits(mask, bitorder="little"))[0]:
            target = _relative(node, i64(buf, node + table_off + int(slot) * stride), size)
            if target is None or not child.holds_node_at(target):
                return False
    return True


def _check_tree(buf, size: int) -> bool:
    gtype = u32(buf, OFF_GRID_TYPE)
    row = LAYOUT_ROWS[gtype]
    root_size, tile_size, stride = row[5], row[9], row[7]
    if root_size < 28 or tile_size < 20:
        return False
    tree = GRID_SIZE
    leaf_rel, lower_rel, upper_rel, root_rel = struct.unpack_from("<QQQQ", buf, tree)
    n_leaf, n_lower, n_upper = struct.unpack_from("<III", buf, tree + TREE_NODE_COUNT)
    root = _level(root_rel, 1, root_size, size)
    upper = _level(upper_rel, n_upper, row[15], size)
    lower = _level(lower_rel, n_lower, row[21], size)
    if gtype == GRID_TYPE_FPN:
        leaf = _fpn_leaves(buf, leaf_rel, n_leaf, size)
    else:
        leaf = _level(leaf_rel, n_leaf, row[27], size)
    if None in (root, upper, lower, leaf):
        return False
    tiles = u32(buf, root.begin + ROOT_TABLE_SIZE)
    if tiles > (size - root.end) // tile_size:
        return False
    occupied = root.end + tiles * tile_size
    meta, meta_count = i64(buf, OFF_BLIND_OFFSET), u32(buf, OFF_BLIND_COUNT)
    boundary = size if meta_count == 0 and meta == 0 else meta  # legacy grids: 0 = no metadata
    for lv in (upper, lower, leaf):  # breadth first: each populated level after the previous one
        if lv.count:
            if lv.begin < occupied:
                return False
            occupied = lv.end
    if occupied > boundary:
        return False
    for n in range(tiles):
        rel = i64(buf, root.end + n * tile_size + TILE_CHILD)
        if rel != 0:
            target = _relative(root.begin, rel, size)
            if target is None or not upper.holds_node_at(target):
                return False
    return _children_ok(buf, upper, UPPER_CHILD_MASK, row[14], UPPER_TABLE_COUNT, stride, lower, size) and \
        _children_ok(buf, lower, LOWER_CHILD_MASK, row[20], LOWER_TABLE_COUNT, stride, leaf, size)


def check_grids(buf) -> int:
    """What loading a .nvdb checks (Warp's wp_volume_validate_host), over every concatenated grid: VALID,
    UNSUPPORTED (a layout other than breadth first) or INVALID (a header, metadata or tree reference outside
    its grid, overlapping levels, children that are no node of the next level)."""
    total = len(buf)
    at, result = 0, VALID
    while at < total:
        grid = memoryview(buf)[at:]
        if total - at < GRID_SIZE + TREE_SIZE or u64(grid, 0) not in (MAGIC_GRID, MAGIC_GRID_ALT):
            return INVALID
        size = u64(grid, OFF_GRID_SIZE)
        if size % DATA_ALIGNMENT or not check_metadata(grid, total - at):
            return INVALID
        gtype = u32(grid, OFF_GRID_TYPE)
        if gtype == 0 or gtype >= GRID_TYPE_END:
            return INVALID
        if not u32(grid, OFF_FLAGS) & FLAG_IS_BREADTH_FIRST:
            result = UNSUPPORTED
        elif not _check_tree(grid, size):
            return INVALID
        at += size
    return result if at == total and at else INVALID


# -- .nvdb files -------------------------------------------------------------------------------------------------

FILE_HEADER = struct.Struct("<QIHH")
FILE_META_SIZE = 176
CODECS = {"none": 0, "zip": 1, "blosc": 2}


def read_nvdb(data) -> bytes:
    """The grid buffers of a .nvdb file (its grids concatenated), decompressed. Errors are Warp's messages."""
    data = bytes(data)
    if len(data) < FILE_HEADER.size:
        raise RuntimeError("NanoVDB signature not found")
    magic, version, grid_count, codec = FILE_HEADER.unpack_from(data, 0)
    if magic not in (MAGIC_GRID_ALT, MAGIC_FILE):
        raise RuntimeError("NanoVDB signature not found")
    if version >> 21 != 32:
        raise RuntimeError("Unsupported NanoVDB version")
    at, total = FILE_HEADER.size, 0
    for _ in range(grid_count):
        total += u64(data, at + 8)  # the grid's size in the file (compressed)
        at += FILE_META_SIZE + u32(data, at + 136)  # the metadata, then the grid's name
    end = at + total
    if codec == 0:
        grids = data[at:end]
    elif codec in (1, 2):
        if codec == 2:
            try:
                import blosc  # noqa: PLC0415  (optional, as in Warp)
            except ImportError as err:
                raise RuntimeError("NanoVDB buffer is compressed using blosc, but Python module could not be "
                                   f"imported: {err}") from err
            decompress = blosc.decompress
        else:
            decompress = zlib.decompress
        out = bytearray()
        while at < end:
            size = u64(data, at)
            out += decompress(data[at + 8:at + 8 + size])
            at += 8 + size
        grids = bytes(out)
    else:
        raise RuntimeError(f"Unsupported codec code: {codec}")
    if len(grids) < 8 or u64(grids, 0) not in (MAGIC_GRID, MAGIC_GRID_ALT):
        raise RuntimeError("NanoVDB signature not found on grid!")
    return grids


def write_nvdb(grid_buffers, codec: str = "none") -> bytes:
    """A .nvdb file of the given grid buffers (each one grid), compressed per grid by `codec`."""
    if codec not in CODECS:
        raise RuntimeError(f"Unsupported codec requested: {codec}")
    code = CODECS[codec]
    if code == 2:
        try:
            import blosc  # noqa: PLC0415
        except ImportError as err:
            raise RuntimeError(f"blosc compression was requested, but Python module could not be imported: {err}") \
                from err
    header = FILE_HEADER.pack(MAGIC_GRID_ALT, FILE_VERSION, len(grid_buffers), code)
    metas, payloads = bytearray(), bytearray()
    for grid in grid_buffers:
        grid = bytes(grid)
        if code == 0:
            payload, file_size = grid, len(grid)
        else:  # one compressed chunk after its size; the metadata's file size is the chunk's (as Warp writes it)
            packed = zlib.compress(grid) if code == 1 else blosc.compress(grid)  # noqa: F821
            payload, file_size = struct.pack("<Q", len(packed)) + packed, len(packed)
        name = grid_name(grid).split(b"\0", 1)[0] + b"\0"
        leaf, lower, upper, voxels = tree_counts(grid)
        meta = bytearray(FILE_META_SIZE)
        mat, _ = map_of(grid)
        struct.pack_into("<QQQQII", meta, 0, len(grid), file_size, 0, voxels, u32(grid, OFF_GRID_TYPE),
                         u32(grid, OFF_GRID_CLASS))
        meta[40:88] = grid[OFF_WORLD_BBOX:OFF_WORLD_BBOX + 48]
        meta[88:112] = grid[GRID_SIZE + TREE_SIZE:GRID_SIZE + TREE_SIZE + 24]  # the root's index bbox
        meta[112:136] = grid[OFF_VOXEL_SIZE:OFF_VOXEL_SIZE + 24]
        struct.pack_into("<IIIIIIIIHHI", meta, 136, len(name), leaf, lower, upper, 1, 0, 0, 0, code, 0,
                         FILE_VERSION)
        metas += meta + name
        payloads += payload
    return header + bytes(metas) + bytes(payloads)
