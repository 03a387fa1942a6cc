"""Warp's volume builtins (warp/native/volume.h semantics) written in the kernel language as @wp.func: a kernel
reads the NanoVDB bytes at `volume.id` through `wp.array(ptr=..., dtype=...)` views and walks the tree as
PNanoVDB does (the root's tiles by key, then the upper, lower and leaf nodes by their child masks).

- `volume_lookup*` / `volume_store*`: the value at a voxel (a tile's or the background outside the leaves);
  stores write leaf voxels only. A grid of another type than asked reads 0 and ignores stores, as in Warp.
- `volume_sample*`: CLOSEST (rounded coordinates) or LINEAR (trilinear, float32 weights) in index space;
  `volume_sample_grad*` also returns d value / d uvw. Their derivatives w.r.t. uvw come from warp-autodiff
  differentiating the weights (the voxel values are constants), which is Warp's adjoint.
- `volume_lookup_index`, `volume_sample_index`, `volume_sample_grad_index`: index grids, the values in a
  user array (its gradients are the array's).
- `volume_index_to_world`, `volume_world_to_index` and `_dir` variants: the grid's float32 map.
- `volume_voxel_count`.

The generic forms (`volume_lookup(..., dtype=T)`, `volume_sample`, `volume_sample_grad`) pick the function of
their dtype at compile time (frontend/dtype_dispatch.py)."""

# no `from __future__ import annotations`: the per-type functions annotate with the factory's closure types

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp
from mlwarp.core import types as wt
from mlwarp.core import vector as wv
from mlwarp.core.refs import ref
from mlwarp.kernels.func import func
from mlwarp.kernels.func_grad import adjoint, func_grad
from mlwarp.types import float32, float64, int32, int64, uint32, uint64
from mlwarp.core.vector import vec3, vec3d
from mlwarp.geometry import nanovdb as nv

# -- raw reads ------------------------------------------------------------------------------------------------


@func
def _u32(addr: uint64) -> uint32:
    return array(ptr=addr, shape=(1,), dtype=uint32)[0]


@func
def _u64(addr: uint64) -> uint64:
    return array(ptr=addr, shape=(1,), dtype=uint64)[0]


@func
def _i64(addr: uint64) -> int64:
    return array(ptr=addr, shape=(1,), dtype=int64)[0]


@func
def _grid_type(vol: uint64) -> uint32:
    return _u32(vol + uint64(636))


# -- the tree walk ------------------------------------------------------------------------------------------------


@func
def _layout(gtype: uint32):
    """(root_size, root_tile_size, root_tile_off_value, root_off_background, upper_off_table, lower_off_table,
    leaf_off_table, table_stride, value_stride_bits, leaf_size) of a grid type: PNanoVDB's table."""
    if gtype == uint32(1) or gtype == uint32(4) or gtype == uint32(10):  # float, int32, uint32
        return 64, 32, 20, 28, 8256, 1088, 96, 8, 32, 2144
    if gtype == uint32(2) or gtype == uint32(5):  # double, int64
        return 96, 32, 24, 32, 8256, 1088, 128, 8, 64, 4224
    if gtype == uint32(6):  # Vec3f
        return 96, 32, 20, 28, 8256, 1088, 128, 16, 96, 6272
    if gtype == uint32(7):  # Vec3d
        return 128, 64, 24, 32, 8288, 1120, 160, 24, 192, 12448
    if gtype == uint32(17):  # Vec4f
        return 96, 64, 20, 28, 8288, 1120, 128, 16, 128, 8320
    if gtype == uint32(18):  # Vec4d
        return 160, 64, 24, 32, 8320, 1152, 160, 32, 256, 16544
    # Index, OnIndex (and anything else: the index layout, whose values are no leaf data)
    return 96, 32, 24, 32, 8256, 1088, 80, 8, 0, 96


@func
def _coord_key(i: int32, j: int32, k: int32) -> uint64:
    iu = uint64(uint32(i) >> uint32(12))
    ju = uint64(uint32(j) >> uint32(12))
    ku = uint64(uint32(k) >> uint32(12))
    return ku | (ju << uint64(21)) | (iu << uint64(42))


@func
def _mask_bit(node: uint64, mask_off: int32, n: int32) -> bool:
    word = _u64(node + uint64(mask_off) + uint64(8 * (n >> 6)))
    return (word >> uint64(n & 63)) & uint64(1) != uint64(0)


@func
def _value_address(vol: uint64, gtype: uint32, i: int32, j: int32, k: int32):
    """(address of the value at voxel (i, j, k), level): 0 a leaf voxel, 1 a lower node's tile, 2 an upper
    node's tile, 3 a root tile or the background."""
    root_size, tile_size, tile_off_value, root_off_bg, upper_table, lower_table, leaf_table, stride, vbits, \
        leaf_size = _layout(gtype)
    tree = vol + uint64(672)
    root = tree + _u64(tree + uint64(24))
    count = int32(_u32(root + uint64(24)))
    key = _coord_key(i, j, k)
    address = root + uint64(root_off_bg)
    level = int32(3)
    for n in range(count):
        tile = root + uint64(root_size) + uint64(n * tile_size)
        if _u64(tile) == key:
            child = _i64(tile + uint64(8))
            address = tile + uint64(tile_off_value)
            if child != int64(0):
                upper = root + uint64(child)
                n2 = (((i & 4095) >> 7) << 10) | (((j & 4095) >> 7) << 5) | ((k & 4095) >> 7)
                address = upper + uint64(upper_table) + uint64(n2 * stride)
                level = 2
                if _mask_bit(upper, 4128, n2):
                    lower = upper + uint64(_i64(address))
                    n1 = (((i & 127) >> 3) << 8) | (((j & 127) >> 3) << 4) | ((k & 127) >> 3)
                    address = lower + uint64(lower_table) + uint64(n1 * stride)
                    level = 1
                    if _mask_bit(lower, 544, n1):
                        leaf = lower + uint64(_i64(address))
                        n0 = ((i & 7) << 6) | ((j & 7) << 3) | (k & 7)
                        address = leaf + uint64(leaf_table) + uint64((vbits * n0) >> 3)
                        level = 0
            break
    return address, level


@func
def _voxel_index(vol: uint64, gtype: uint32, address: uint64, i: int32, j: int32, k: int32) -> uint64:
    """Warp's index of a leaf voxel (its value address): an OnIndex grid's numbering of its active voxels (1..,
    0 = inactive), an Index grid's offset + n, a value grid's leaf * 512 + n + 1."""
    n = ((i & 7) << 6) | ((j & 7) << 3) | (k & 7)
    if gtype == uint32(20) or gtype == uint32(22):
        leaf = address - uint64(80)
        word_idx = n >> 6
        mask = uint64(1) << uint64(n & 63)
        words = _u64(leaf + uint64(16 + 8 * word_idx))
        if words & mask == uint64(0):
            return uint64(0)
        total = uint64(wp.bit_count(words & (mask - uint64(1))))
        if word_idx > 0:
            prefix = _u64(address + uint64(8))
            total = total + ((prefix >> uint64(9 * (word_idx - 1))) & uint64(511))
        return _u64(address) + total
    if gtype == uint32(19) or gtype == uint32(21):
        return _u64(address) + uint64(n)
    root_size, tile_size, tile_off_value, root_off_bg, upper_table, lower_table, leaf_table, stride, vbits, \
        leaf_size = _layout(gtype)
    leaf = address - uint64(leaf_table + ((vbits * n) >> 3))
    tree = vol + uint64(672)
    first = tree + _u64(tree)
    return ((leaf - first) / uint64(leaf_size)) * uint64(512) + uint64(n) + uint64(1)


# -- value grids, one set of functions per value type -------------------------------------------------------------


def _value_functions(T, code: int, W, G):
    """lookup / store / sample / sample_grad / sample_index / sample_grad_index for values of type T stored in
    grids of type `code`; W the scalar type of the weights (T's), G the gradient type (vec3 of W for a scalar
    T, a matrix with one row per component otherwise)."""
    suffix = T.__name__
    V3 = wv.vec3d if W is float64 else wv.vec3f

    def unique(py_func):
        """A @wp.func of its own per value type (the same signature for every T would make them overloads)."""
        py_func.__qualname__ = f"{py_func.__name__}_{suffix}"
        return func(py_func)

    @unique
    def _read(address: uint64) -> T:
        return array(ptr=address, shape=(1,), dtype=T)[0]

    @unique
    def lookup(vol: uint64, i: int32, j: int32, k: int32) -> T:
        gtype = _grid_type(vol)
        if gtype != uint32(code):
            return T(0)
        address, level = _value_address(vol, gtype, i, j, k)
        return _read(address)

    @func
    def volume_store(vol: uint64, i: int32, j: int32, k: int32, value: T):
        gtype = _grid_type(vol)
        if gtype == uint32(code):
            address, level = _value_address(vol, gtype, i, j, k)
            if level == 0:
                array(ptr=address, shape=(1,), dtype=T)[0] = value

    if wt.is_composite(T):
        @func
        def _outer(v: T, g: vec3) -> G:
            return wp.outer(v, V3(W(g[0]), W(g[1]), W(g[2])))
    else:
        @func
        def _outer(v: T, g: vec3) -> G:
            return G(W(g[0]) * v, W(g[1]) * v, W(g[2]) * v)

    @unique
    def sample(vol: uint64, uvw: vec3, mode: int32) -> T:
        gtype = _grid_type(vol)
        if gtype != uint32(code):
            return T(0)
        if mode == 0:
            address, level = _value_address(vol, gtype, int32(wp.round(uvw[0])), int32(wp.round(uvw[1])),
                                            int32(wp.round(uvw[2])))
            return _read(address)
        val = T(0)
        if mode == 1:
            base = vec3(wp.floor(uvw[0]), wp.floor(uvw[1]), wp.floor(uvw[2]))
            frac = uvw - base
            i = int32(base[0])
            j = int32(base[1])
            k = int32(base[2])
            c = int32(0)
            while c < 8:  # a loop, not 8 inlined tree walks (compile time), in the adjoint too
                dx = (c >> 2) & 1
                dy = (c >> 1) & 1
                dz = c & 1
                wx = wp.where(dx == 1, frac[0], float32(1.0) - frac[0])
                wy = wp.where(dy == 1, frac[1], float32(1.0) - frac[1])
                wz = wp.where(dz == 1, frac[2], float32(1.0) - frac[2])
                address, level = _value_address(vol, gtype, i + dx, j + dy, k + dz)
                val = val + W(wx * wy * wz) * _read(address)
                c += 1
        return val

    @unique
    def sample_grad(vol: uint64, uvw: vec3, mode: int32, grad: ref[G]) -> T:
        grad = G()
        gtype = _grid_type(vol)
        if gtype != uint32(code):
            return T(0)
        if mode == 0:
            address, level = _value_address(vol, gtype, int32(wp.round(uvw[0])), int32(wp.round(uvw[1])),
                                            int32(wp.round(uvw[2])))
            return _read(address)
        val = T(0)
        if mode == 1:
            base = vec3(wp.floor(uvw[0]), wp.floor(uvw[1]), wp.floor(uvw[2]))
            frac = uvw - base
            i = int32(base[0])
            j = int32(base[1])
            k = int32(base[2])
            c = int32(0)
            while c < 8:  # a loop, not 8 inlined tree walks (compile time), in the adjoint too
                dx = (c >> 2) & 1
                dy = (c >> 1) & 1
                dz = c & 1
                wx = wp.where(dx == 1, frac[0], float32(1.0) - frac[0])
                wy = wp.where(dy == 1, frac[1], float32(1.0) - frac[1])
                wz = wp.where(dz == 1, frac[2], float32(1.0) - frac[2])
                sx = float32(2 * dx - 1)
                sy = float32(2 * dy - 1)
                sz = float32(2 * dz - 1)
                address, level = _value_address(vol, gtype, i + dx, j + dy, k + dz)
                v = _read(address)
                val = val + W(wx * wy * wz) * v
                grad = grad + _outer(v, vec3(sx * wy * wz, sy * wx * wz, sz * wx * wy))
                c += 1
        return val

    @func
    def _read_index(vol: uint64, gtype: uint32, i: int32, j: int32, k: int32, values: array(dtype=T),
                    background: T) -> T:
        address, level = _value_address(vol, gtype, i, j, k)
        if level == 0:
            index = _voxel_index(vol, gtype, address, i, j, k)
            if index > uint64(0):
                return values[int32(index - uint64(1))]
        return background

    @func
    def volume_sample_index(vol: uint64, uvw: vec3, mode: int32, values: array(dtype=T), background: T) -> T:
        gtype = _grid_type(vol)
        if mode == 0:
            return _read_index(vol, gtype, int32(wp.round(uvw[0])), int32(wp.round(uvw[1])),
                               int32(wp.round(uvw[2])), values, background)
        val = T(0)
        if mode == 1:
            base = vec3(wp.floor(uvw[0]), wp.floor(uvw[1]), wp.floor(uvw[2]))
            frac = uvw - base
            i = int32(base[0])
            j = int32(base[1])
            k = int32(base[2])
            c = int32(0)
            while c < 8:  # a loop, not 8 inlined tree walks (compile time), in the adjoint too
                dx = (c >> 2) & 1
                dy = (c >> 1) & 1
                dz = c & 1
                wx = wp.where(dx == 1, frac[0], float32(1.0) - frac[0])
                wy = wp.where(dy == 1, frac[1], float32(1.0) - frac[1])
                wz = wp.where(dz == 1, frac[2], float32(1.0) - frac[2])
                val = val + W(wx * wy * wz) * _read_index(vol, gtype, i + dx, j + dy, k + dz, values, background)
                c += 1
        return val

    @func
    def volume_sample_grad_index(vol: uint64, uvw: vec3, mode: int32, values: array(dtype=T), background: T,
                                 grad: ref[G]) -> T:
        grad = G()
        gtype = _grid_type(vol)
        if mode == 0:
            return _read_index(vol, gtype, int32(wp.round(uvw[0])), int32(wp.round(uvw[1])),
                               int32(wp.round(uvw[2])), values, background)
        val = T(0)
        if mode == 1:
            base = vec3(wp.floor(uvw[0]), wp.floor(uvw[1]), wp.floor(uvw[2]))
            frac = uvw - base
            i = int32(base[0])
            j = int32(base[1])
            k = int32(base[2])
            c = int32(0)
            while c < 8:  # a loop, not 8 inlined tree walks (compile time), in the adjoint too
                dx = (c >> 2) & 1
                dy = (c >> 1) & 1
                dz = c & 1
                wx = wp.where(dx == 1, frac[0], float32(1.0) - frac[0])
                wy = wp.where(dy == 1, frac[1], float32(1.0) - frac[1])
                wz = wp.where(dz == 1, frac[2], float32(1.0) - frac[2])
                sx = float32(2 * dx - 1)
                sy = float32(2 * dy - 1)
                sz = float32(2 * dz - 1)
                v = _read_index(vol, gtype, i + dx, j + dy, k + dz, values, background)
                val = val + W(wx * wy * wz) * v
                grad = grad + _outer(v, vec3(sx * wy * wz, sy * wx * wz, sz * wx * wy))
                c += 1
        return val

    return lookup, volume_store, sample, sample_grad, volume_sample_index, volume_sample_grad_index


# (Warp type, grid type, weight scalar, gradient type): the value types Warp's volume builtins support
VALUE_TYPES = (
    (float32, nv.FLOAT, float32, wv.vec3f), (float64, nv.DOUBLE, float64, wv.vec3d),
    (int32, nv.INT32, int32, wv.vec3i), (int64, nv.INT64, int64, wv.vector(3, int64)),
    (uint32, nv.UINT32, uint32, wv.vector(3, uint32)),
    (wv.vec3f, nv.VEC3F, float32, wv.mat33f), (wv.vec3d, nv.VEC3D, float64, wv.mat33d),
    (wv.vec4f, nv.VEC4F, float32, wv.matrix((4, 3), float32)),
    (wv.vec4d, nv.VEC4D, float64, wv.matrix((4, 3), float64)),
)
_BY_TYPE = {}
for _T, _code, _W, _G in VALUE_TYPES:
    _BY_TYPE[_T] = _value_functions(_T, _code, _W, _G)


def _gathered(position: int):
    """One Function whose overloads are every value type's function at `position` of _value_functions' result
    (each call of it is a scope of its own: its @wp.func definitions do not overload each other by name)."""
    first, *rest = (_BY_TYPE[t][position] for t, *_ in VALUE_TYPES)
    for other in rest:
        for o in other.overloads:
            first.add(o.func)
    return first


volume_store = _gathered(1)  # one Function: every type's store is an overload of it
_lookup_f, _lookup_i, _lookup_v = (_BY_TYPE[t][0] for t in (float32, int32, wv.vec3f))
_sample_f, _sample_i, _sample_v = (_BY_TYPE[t][2] for t in (float32, int32, wv.vec3f))
_sample_grad_f = _BY_TYPE[float32][3]
volume_sample_index = _gathered(4)
volume_sample_grad_index = _gathered(5)


class _DtypeGeneric:
    """`wp.volume_lookup(..., dtype=T)` and the like: a builtin whose @wp.func the frontend picks by the
    compile-time `dtype` keyword (frontend/dtype_dispatch.py)."""

    def __init__(self, name: str, slot: int, doc: str, grad_arg: int | None = None):
        self.__name__ = self.key = name
        self.__doc__ = doc
        self._slot = slot
        self._grad_arg = grad_arg  # the position of the gradient out-argument, whose type dtype fixes

    def _wp_dtype_args_check_(self, dtype, arg_types):
        """Warp's message for a gradient argument of the wrong type (None when it fits or is unknown)."""
        if self._grad_arg is None or len(arg_types) <= self._grad_arg or arg_types[self._grad_arg] is None:
            return None
        expected = next((g for t, _, _, g in VALUE_TYPES if t is dtype), None)
        got = arg_types[self._grad_arg]
        if expected is None or got is expected or wt.types_equal(got, expected):
            return None
        return f"Incompatible gradient type, expected {expected.__name__}, got {getattr(got, '__name__', got)}"

    def _wp_dtype_dispatch_(self, dtype):
        for t, fns in _BY_TYPE.items():
            if t is dtype or wt.types_equal(t, dtype):
                return fns[self._slot]
        names = ", ".join(getattr(t, "__name__", str(t)) for t in _BY_TYPE)
        raise TypeError(f"{self.__name__}: unsupported volume type {getattr(dtype, '__name__', dtype)} "
                        f"(supported: {names})")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"wp.{self.__name__}() can only be called inside Warp kernels and functions")


volume_lookup = _DtypeGeneric("volume_lookup", 0, "The value of the voxel (i, j, k) of a volume of type dtype.")
volume_sample = _DtypeGeneric("volume_sample", 2, "Samples a volume of type dtype at index-space uvw.")
volume_sample_grad = _DtypeGeneric("volume_sample_grad", 3,
                                   "Samples a volume of type dtype at uvw and writes d value / d uvw to grad.",
                                   grad_arg=3)


@func
def volume_lookup_f(id: uint64, i: int32, j: int32, k: int32) -> float32:
    """The value of voxel (i, j, k) of a float volume (background outside; 0 for another grid type)."""
    return _lookup_f(id, i, j, k)


@func
def volume_lookup_i(id: uint64, i: int32, j: int32, k: int32) -> int32:
    return _lookup_i(id, i, j, k)


@func
def volume_lookup_v(id: uint64, i: int32, j: int32, k: int32) -> vec3:
    return _lookup_v(id, i, j, k)


@func
def volume_store_f(id: uint64, i: int32, j: int32, k: int32, value: float32):
    volume_store(id, i, j, k, value)


@func
def volume_store_i(id: uint64, i: int32, j: int32, k: int32, value: int32):
    volume_store(id, i, j, k, value)


@func
def volume_store_v(id: uint64, i: int32, j: int32, k: int32, value: vec3):
    volume_store(id, i, j, k, value)


@func
def volume_sample_f(id: uint64, uvw: vec3, sampling_mode: int32) -> float32:
    return _sample_f(id, uvw, sampling_mode)


@func
def volume_sample_v(id: uint64, uvw: vec3, sampling_mode: int32) -> vec3:
    return _sample_v(id, uvw, sampling_mode)


@func
def volume_sample_i(id: uint64, uvw: vec3) -> int32:
    return _sample_i(id, uvw, 0)


@func
def volume_sample_grad_f(id: uint64, uvw: vec3, sampling_mode: int32, grad: ref[vec3]) -> float32:
    return _sample_grad_f(id, uvw, sampling_mode, grad)


@func
def volume_lookup_index(id: uint64, i: int32, j: int32, k: int32) -> int32:
    """The index of voxel (i, j, k) (-1 outside the leaves or inactive)."""
    gtype = _grid_type(id)
    address, level = _value_address(id, gtype, i, j, k)
    if level == 0:
        return int32(_voxel_index(id, gtype, address, i, j, k)) - 1
    return -1


@func
def volume_voxel_count(id: uint64) -> int32:
    """Indexable voxels: an OnIndex grid's active voxels, every leaf voxel otherwise (clamped to int32)."""
    gtype = _grid_type(id)
    tree = id + uint64(672)
    count = uint64(_u32(tree + uint64(32))) * uint64(512)
    if gtype == uint32(20) or gtype == uint32(22):
        count = _u64(tree + uint64(56))
    if count > uint64(2147483647):
        return 2147483647
    return int32(count)


# -- index <-> world transforms: the grid map's float32 and float64 copies ------------------------------------


def _map_transforms(S, V, base: int, transposed_adjoint: bool, overloads=(None, None, None, None)):
    """volume_index_to_world, volume_world_to_index and their _dir forms on V = vec3 of S, reading the map's
    copy in S at byte `base` of the grid (NanoVDB keeps a float32 and a float64 one, each the index-to-world
    matrix, its inverse and the translation: 9 + 9 + 3 values). `overloads`: the Functions these add an overload
    to (a @wp.func of a name that is a Function in the defining scope overloads it). Warp's float32 adjoints
    apply the matrix itself to the output adjoint (not its transpose: the two agree for the usual scaled and
    translated maps, and mlwarp gives Warp's numbers for rotated ones too); its float64 adjoints apply the
    transpose, its _dir adjoints in float64 being those of the point transforms."""
    volume_index_to_world, volume_world_to_index, volume_index_to_world_dir, volume_world_to_index_dir = overloads
    forward = base  # byte offsets of the matrices and the translation
    inverse = base + 9 * wt.type_size_in_bytes(S)
    translation = base + 18 * wt.type_size_in_bytes(S)

    @func
    def _apply(id: uint64, off: int32, p: V) -> V:
        m = array(ptr=id + uint64(off), shape=(9,), dtype=S)
        return V(m[0] * p[0] + m[1] * p[1] + m[2] * p[2], m[3] * p[0] + m[4] * p[1] + m[5] * p[2],
                 m[6] * p[0] + m[7] * p[1] + m[8] * p[2])

    @func
    def _apply_transposed(id: uint64, off: int32, p: V) -> V:
        m = array(ptr=id + uint64(off), shape=(9,), dtype=S)
        return V(m[0] * p[0] + m[3] * p[1] + m[6] * p[2], m[1] * p[0] + m[4] * p[1] + m[7] * p[2],
                 m[2] * p[0] + m[5] * p[1] + m[8] * p[2])

    @func
    def _translation(id: uint64) -> V:
        t = array(ptr=id + uint64(translation), shape=(3,), dtype=S)
        return V(t[0], t[1], t[2])

    adjoint_apply = _apply_transposed if transposed_adjoint else _apply

    @func
    def volume_index_to_world(id: uint64, uvw: V) -> V:
        """The world-space position of index-space uvw (the grid's map)."""
        return _apply(id, forward, uvw) + _translation(id)

    @func
    def volume_world_to_index(id: uint64, xyz: V) -> V:
        return _apply(id, inverse, xyz - _translation(id))

    @func
    def volume_index_to_world_dir(id: uint64, uvw: V) -> V:
        return _apply(id, forward, uvw)

    @func
    def volume_world_to_index_dir(id: uint64, xyz: V) -> V:
        return _apply(id, inverse, xyz)

    @func_grad(volume_index_to_world)
    def _adj_volume_index_to_world(id: uint64, uvw: V, adj_ret: V):
        adjoint[uvw] += adjoint_apply(id, forward, adj_ret)

    @func_grad(volume_world_to_index)
    def _adj_volume_world_to_index(id: uint64, xyz: V, adj_ret: V):
        adjoint[xyz] += adjoint_apply(id, inverse, adj_ret)

    @func_grad(volume_index_to_world_dir)
    def _adj_volume_index_to_world_dir(id: uint64, uvw: V, adj_ret: V):
        adjoint[uvw] += adjoint_apply(id, forward, adj_ret)

    @func_grad(volume_world_to_index_dir)
    def _adj_volume_world_to_index_dir(id: uint64, xyz: V, adj_ret: V):
        adjoint[xyz] += adjoint_apply(id, inverse, adj_ret)

    return volume_index_to_world, volume_world_to_index, volume_index_to_world_dir, volume_world_to_index_dir


# the grid's map (nanovdb.py OFF_MAP): the float32 copy, a float32 taper, then the float64 copy at byte 88
_TRANSFORMS = _map_transforms(float32, vec3, nv.OFF_MAP, transposed_adjoint=False)
volume_index_to_world, volume_world_to_index, volume_index_to_world_dir, volume_world_to_index_dir = (
    _map_transforms(float64, vec3d, nv.OFF_MAP + 88, transposed_adjoint=True, overloads=_TRANSFORMS))


__all__ = ["volume_lookup", "volume_lookup_f", "volume_lookup_i", "volume_lookup_v", "volume_lookup_index",
           "volume_store", "volume_store_f", "volume_store_i", "volume_store_v", "volume_sample", "volume_sample_f",
           "volume_sample_i", "volume_sample_v", "volume_sample_grad", "volume_sample_grad_f", "volume_sample_index",
           "volume_sample_grad_index", "volume_index_to_world", "volume_world_to_index", "volume_index_to_world_dir",
           "volume_world_to_index_dir", "volume_voxel_count"]
