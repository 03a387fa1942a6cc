"""Warp 1.19's textures (`wp.Texture1D`, `wp.Texture2D`, `wp.Texture3D`, `wp.TextureFilterMode`,
`wp.TextureAddressMode`, `wp.TextureResourceFlags`) as software textures, on the CPU and on CUDA alike.

A texture owns a contiguous `wp.array` of its scalar dtype (texels row-major, channels innermost: numpy's
`(width,)`, `(height, width)` or `(depth, height, width)` shape with a trailing channel axis when there is more
than one) on its device. In kernels it is a value of an internal `@wp.struct` per dimensionality (`struct_type`):

    data: uint64                 the address of texel (0, 0, 0)'s first channel
    width, height, depth: int32  (1 for the axes the texture does not have)
    num_channels, dtype_code: int32   (dtype codes as Warp's WP_TEXTURE_DTYPE_*)
    filter_mode, address_mode_u, address_mode_v, address_mode_w, normalized_coords: int32

so `tex.width`, `tex.height`, `tex.depth` read as in Warp, and `wp.texture_sample` (texture_funcs.py, kernel
language) does Warp's CPU sampling: the same launch ABI and struct packing as any struct argument, and nothing
CUDA-specific (no texture objects) in the generated code. docs/textures.md says what differs from Warp.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, zeros
from mlwarp.runtime.device import get_device
from mlwarp.kernels.struct import struct

_MAX_TEXTURE_MIP_LEVELS = 16


class TextureFilterMode(enum.IntEnum):
    """Filter modes for texture sampling."""

    CLOSEST = 0
    LINEAR = 1


class TextureAddressMode(enum.IntEnum):
    """Address modes for coordinates outside the texture."""

    WRAP = 0
    CLAMP = 1
    MIRROR = 2
    BORDER = 3


class TextureResourceFlags(enum.IntEnum):
    """Warp's flags for registering OpenGL textures with CUDA (kept for the name; mlwarp has no GL interop)."""

    NONE = 0x00
    READ_ONLY = 0x01
    WRITE_DISCARD = 0x02
    SURFACE_LDST = 0x04
    TEXTURE_GATHER = 0x08


_SUPPORTED = (wt.uint8, wt.uint16, wt.uint32, wt.int8, wt.int16, wt.int32, wt.float16, wt.float32)
_CODES = {wt.uint8: 0, wt.uint16: 1, wt.float32: 2, wt.int8: 3, wt.int16: 4, wt.float16: 5, wt.uint32: 6,
          wt.int32: 7}
_UNSUPPORTED = "Unsupported texture dtype: {}. Supported: uint8, uint16, uint32, int8, int16, int32, float16, float32"

_structs: dict = {}


def struct_type(ndim: int):
    """The internal struct a texture of `ndim` dimensions is in kernels (see the module docstring)."""
    found = _structs.get(ndim)
    if found is None:
        name = f"Texture{ndim}D"
        fields = {"data": wt.uint64, "width": wt.int32, "height": wt.int32, "depth": wt.int32,
                  "num_channels": wt.int32, "dtype_code": wt.int32, "filter_mode": wt.int32,
                  "address_mode_u": wt.int32, "address_mode_v": wt.int32, "address_mode_w": wt.int32,
                  "normalized_coords": wt.int32}
        found = struct(type(name, (), {"__annotations__": fields, "__module__": __name__, "__qualname__": name}))
        found._wp_texture_ndim_ = ndim
        found._wp_mismatch_ = staticmethod(lambda value: _mismatch(ndim, value))
        found = _structs.setdefault(ndim, found)
    return found


def _mismatch(ndim, value) -> str:
    got = type(value).__name__ if value is not None else "None"
    return f"expects a Texture{ndim}D, but passed value has type {got}"


def _type_repr(t) -> str:
    return getattr(t, "__name__", str(t))


class Texture:
    """Texture base class: software filtering and addressing (linear/bilinear/trilinear, wrap, clamp, mirror,
    border) of uint8, uint16, uint32, int8, int16, int32, float16 or float32 texels with 1, 2 or 4 channels.
    Use a subclass (`Texture1D`, `Texture2D`, `Texture3D`), which is also the kernel annotation."""

    def __init__(self, ndim: int, data=None, width: int = 0, height: int = 0, depth: int = 0,
                 num_channels: int = 0, dtype=None, filter_mode=None, address_mode=TextureAddressMode.CLAMP,
                 address_mode_u=None, address_mode_v=None, address_mode_w=None, normalized_coords: bool = True,
                 num_mip_levels: int = 1, mip_filter_mode=None, device=None, surface_access: bool = False,
                 cuda_array: int = 0):
        if ndim < 1 or ndim > 3:
            raise ValueError(f"Texture dimensionality must be 1, 2, or 3, got {ndim}")
        device = get_device(device)
        if filter_mode is not None:
            try:
                filter_mode = TextureFilterMode(filter_mode)
            except (TypeError, ValueError) as e:
                raise ValueError(f"Invalid texture filter mode: {filter_mode}") from e
        if mip_filter_mode is not None:
            try:
                mip_filter_mode = TextureFilterMode(mip_filter_mode)
            except (TypeError, ValueError) as e:
                raise ValueError(f"Invalid texture mip filter mode: {mip_filter_mode}") from e
        normalized_coords = bool(normalized_coords)
        address_mode_u = self._resolve_address_mode(address_mode, address_mode_u, 0)
        address_mode_v = (self._resolve_address_mode(address_mode, address_mode_v, 1) if ndim > 1
                          else TextureAddressMode.CLAMP)
        address_mode_w = (self._resolve_address_mode(address_mode, address_mode_w, 2) if ndim > 2
                          else TextureAddressMode.CLAMP)
        if cuda_array:
            if not device.is_cuda:
                raise ValueError("Texture cuda_array was given, but the device is not a CUDA device")
            raise NotImplementedError("mlwarp textures cannot wrap an external cudaArray_t (cuda_array=): they "
                                      "are software textures over ordinary device memory")
        if data is not None:
            if isinstance(data, np.ndarray):
                data = array(data, device="cpu")
            if not isinstance(data, array):
                raise ValueError("Data must be a Warp array or NumPy array")
            data_width, data_height, data_depth, data_channels, data_dtype = self._shape_from_warp_array(data, ndim)
            if width == 0:
                width = data_width
            elif data_width != width:
                raise ValueError("Specified texture width does not match data width")
            if height == 0:
                height = data_height
            elif data_height != height:
                raise ValueError("Specified texture height does not match data height")
            if depth == 0:
                depth = data_depth
            elif data_depth != depth:
                raise ValueError("Specified texture depth does not match data depth")
            if num_channels == 0:
                num_channels = data_channels
            elif data_channels != num_channels:
                raise ValueError(f"Specified texture channels do not match data channels (expected {num_channels}, "
                                 f"got {data_channels})")
            if dtype is None:
                dtype = data_dtype
            elif data_dtype != dtype:
                raise ValueError("Specified texture dtype does not match data dtype")
        if width <= 0:
            raise ValueError("Texture width must be a positive integer")
        if height <= 0 and ndim > 1:
            raise ValueError("Texture height must be a positive integer")
        if depth <= 0 and ndim > 2:
            raise ValueError("Texture depth must be a positive integer")
        if num_channels not in (1, 2, 4):
            raise ValueError("Texture num_channels must be 1, 2, or 4")
        dtype = self._canonicalize_dtype(dtype)
        base_shape = (width, height if ndim > 1 else 1, depth if ndim > 2 else 1)
        mip_shapes = self._compute_mip_shapes(base_shape, ndim, num_mip_levels)
        is_mipmapped = len(mip_shapes) > 1
        is_integer32 = dtype in (wt.int32, wt.uint32)
        default_filter = TextureFilterMode.CLOSEST if is_integer32 else TextureFilterMode.LINEAR
        if filter_mode is None:
            filter_mode = default_filter
        if mip_filter_mode is None:
            mip_filter_mode = default_filter
        if is_integer32 and filter_mode != TextureFilterMode.CLOSEST:
            raise ValueError("32-bit integer textures require filter_mode=TextureFilterMode.CLOSEST")
        if is_integer32 and is_mipmapped and mip_filter_mode != TextureFilterMode.CLOSEST:
            raise ValueError("32-bit integer mipmapped textures require mip_filter_mode=TextureFilterMode.CLOSEST")
        if is_mipmapped and data is None:
            raise ValueError("Mipmapped textures require data to be provided at construction")
        if is_mipmapped and surface_access:
            raise ValueError("surface_access is not supported for mipmapped textures")
        if is_mipmapped and device.is_cuda and not normalized_coords:
            raise ValueError("Mipmapped textures on a CUDA device require normalized_coords=True")
        if is_mipmapped:
            raise NotImplementedError("mlwarp textures have one mip level: num_mip_levels other than 1 is not "
                                      "implemented (Warp's 2x box-filtered chain and lod blending)")
        self.device = device
        self._ndim = ndim
        self._width = width
        self._height = height if ndim > 1 else 1
        self._depth = depth if ndim > 2 else 1
        self._num_channels = num_channels
        self._dtype = dtype
        self._dtype_code = _CODES[dtype]
        self._filter_mode = filter_mode
        self._mip_filter_mode = mip_filter_mode
        self._num_mip_levels = len(mip_shapes)
        self._is_mipmapped = is_mipmapped
        self._address_mode_u = address_mode_u
        self._address_mode_v = address_mode_v
        self._address_mode_w = address_mode_w
        self._normalized_coords = normalized_coords
        self._surface_access = bool(surface_access and device.is_cuda)
        self._storage = zeros(self._get_shape(), dtype=dtype, device=device)
        if data is not None:
            self.copy_from(data)

    # -- Warp's helpers ------------------------------------------------------------------------------------------
    @staticmethod
    def _canonicalize_dtype(dtype):
        if dtype is float:
            return wt.float32
        if dtype is int:
            return wt.int32
        if dtype in _SUPPORTED:
            return dtype
        raise ValueError(_UNSUPPORTED.format(dtype))

    @staticmethod
    def _resolve_address_mode(address_mode, axis_address_mode, axis_index):
        if axis_address_mode is not None:
            mode = axis_address_mode
        elif isinstance(address_mode, tuple):
            mode = address_mode[axis_index] if axis_index < len(address_mode) else TextureAddressMode.CLAMP
        else:
            mode = address_mode if address_mode is not None else TextureAddressMode.CLAMP
        try:
            return TextureAddressMode(mode)
        except (TypeError, ValueError) as e:
            raise ValueError(f"Invalid texture address mode for axis {axis_index}: {mode}") from e

    @staticmethod
    def _compute_mip_shapes(base_shape, ndim, num_mip_levels):
        width, height, depth = base_shape
        if num_mip_levels < 0:
            raise ValueError("num_mip_levels must be >= 0")
        max_dim = max([width, height, depth][:ndim])
        full_chain_levels = int(math.floor(math.log2(max(max_dim, 1)))) + 1
        if num_mip_levels == 0:
            num_mip_levels = full_chain_levels
        elif num_mip_levels > full_chain_levels:
            raise ValueError(f"num_mip_levels ({num_mip_levels}) exceeds the maximum for base dimensions "
                             f"{base_shape[:ndim]} ({full_chain_levels})")
        if num_mip_levels > _MAX_TEXTURE_MIP_LEVELS:
            raise ValueError(f"num_mip_levels ({num_mip_levels}) exceeds the maximum supported mip levels "
                             f"({_MAX_TEXTURE_MIP_LEVELS})")
        shapes = []
        w, h, d = width, height, depth
        for _ in range(num_mip_levels):
            shapes.append((w, h if ndim > 1 else 1, d if ndim > 2 else 1))
            w, h, d = max(1, w // 2), max(1, h // 2), max(1, d // 2)
        return shapes

    @staticmethod
    def _shape_from_warp_array(wp_data, tex_ndim: int):
        dtype = wp_data.dtype
        scalar_dtype = wt.type_scalar_type(dtype)
        if scalar_dtype not in _SUPPORTED:
            raise ValueError(_UNSUPPORTED.format(scalar_dtype))
        shape = tuple(wp_data.shape)
        if wt.type_is_vector(dtype):
            channels = int(wt.type_length(dtype))
            if len(shape) != tex_ndim:
                raise ValueError(f"{tex_ndim}D texture data with vector dtype must be a {tex_ndim}D wp.array")
            spatial = shape
        else:
            if len(shape) == tex_ndim:
                spatial, channels = shape, 1
            elif len(shape) == tex_ndim + 1:
                spatial, channels = shape[:-1], shape[-1]
            else:
                raise ValueError(f"{tex_ndim}D texture data must be {tex_ndim}D or {tex_ndim + 1}D array")
        sizes = list(reversed(spatial)) + [1] * (3 - tex_ndim)  # (width, height, depth)
        return int(sizes[0]), int(sizes[1]), int(sizes[2]), int(channels), scalar_dtype

    def _get_shape(self):
        shape = {1: (self.width,), 2: (self.height, self.width), 3: (self.depth, self.height, self.width)}[self._ndim]
        return shape if self._num_channels == 1 else (*shape, self._num_channels)

    # -- copies ---------------------------------------------------------------------------------------------------
    def _as_source(self, src, direction: str):
        """`src` (an array, numpy array or texture) checked against this texture: a numpy array of its layout."""
        which = "source" if direction == "from" else "destination"
        if isinstance(src, Texture):
            if src.width != self.width or src.height != self.height or src.depth != self.depth:
                first, second = ("destination", "source") if direction == "from" else ("source", "destination")
                a, b = (self, src) if direction == "from" else (self, src)
                raise ValueError(f"Incompatible texture shapes for copy: {first} shape={a._get_shape()}, "
                                 f"{second} shape={b._get_shape()}")
            if src.dtype != self.dtype or src.num_channels != self.num_channels:
                first, second = ("destination", "source") if direction == "from" else ("source", "destination")
                raise ValueError(f"Incompatible texture data types for copy: {first} dtype={_type_repr(self.dtype)}, "
                                 f"{second} dtype={_type_repr(src.dtype)}, {first} channels={self.num_channels}, "
                                 f"{second} channels={src.num_channels}")
            return None
        if isinstance(src, np.ndarray):
            src = array(src, device="cpu", copy=False)
        elif not isinstance(src, array):
            raise ValueError(f"Expected contiguous array or Texture, got {type(src)}")
        w, h, d, c, dt = self._shape_from_warp_array(src, self._ndim)
        if w != self.width or h != self.height or d != self.depth:
            raise ValueError(f"Incompatible array shape for copy: texture shape={self._get_shape()}, {which} "
                             f"shape={src.shape}")
        if dt != self.dtype or c != self.num_channels:
            raise ValueError(f"Incompatible array data type for copy: texture dtype={_type_repr(self.dtype)}, "
                             f"{which} dtype={_type_repr(dt)}, texture channels={self.num_channels}, "
                             f"{which} channels={c}")
        if not src.is_contiguous:
            raise ValueError(f"{which.capitalize()} array must be contiguous")
        return src

    def copy_from(self, src):
        """Copy texture data from a Warp array, a NumPy array or another texture."""
        if self._is_mipmapped:
            raise RuntimeError("copy_from is not supported for mipmapped textures; mipmap contents are immutable "
                               "after construction")
        checked = self._as_source(src, "from")
        values = src._storage.numpy() if checked is None else checked.numpy()
        self._storage.assign(np.ascontiguousarray(values).reshape(self._get_shape()))

    def copy_to(self, dst):
        """Copy texture data to a Warp array, a NumPy array or another texture."""
        if self._is_mipmapped:
            raise RuntimeError("copy_to is not supported for mipmapped textures; mipmap contents are immutable "
                               "after construction")
        if isinstance(dst, Texture):
            self._as_source(dst, "to")
            dst._storage.assign(self._storage.numpy())
            return
        if isinstance(dst, np.ndarray):
            target = dst
            self._as_source(array(dst, device="cpu", copy=False), "to")
            np.copyto(target, self._storage.numpy().reshape(target.shape))
            return
        checked = self._as_source(dst, "to")
        checked.assign(self._storage.numpy().reshape(checked.numpy().shape))

    # -- properties -----------------------------------------------------------------------------------------------
    ndim = property(lambda self: self._ndim)
    width = property(lambda self: self._width)
    height = property(lambda self: self._height)
    depth = property(lambda self: self._depth)
    num_channels = property(lambda self: self._num_channels)
    dtype = property(lambda self: self._dtype)
    filter_mode = property(lambda self: self._filter_mode)
    mip_filter_mode = property(lambda self: self._mip_filter_mode)
    num_mip_levels = property(lambda self: self._num_mip_levels)
    is_mipmapped = property(lambda self: self._is_mipmapped)
    address_mode_u = property(lambda self: self._address_mode_u)
    address_mode_v = property(lambda self: self._address_mode_v)
    address_mode_w = property(lambda self: self._address_mode_w)
    normalized_coords = property(lambda self: self._normalized_coords)

    @property
    def id(self) -> int:
        """The texture's handle: here the address of its texel storage."""
        return int(self._storage.ptr)

    @property
    def cuda_array(self) -> int:
        if not self.device.is_cuda:
            raise RuntimeError("cuda_array is only supported for CUDA textures.")
        raise RuntimeError("mlwarp textures have no cudaArray_t: they are software textures over device memory")

    @property
    def cuda_texture(self) -> int:
        if not self.device.is_cuda:
            raise RuntimeError("cuda_texture is only supported for CUDA textures. Use id for a device-independent "
                               "handle.")
        raise RuntimeError("mlwarp textures have no cudaTextureObject_t: they are software textures")

    @property
    def cuda_surface(self) -> int:
        if not self.device.is_cuda:
            raise RuntimeError("cuda_surface is only supported for CUDA textures.")
        raise RuntimeError("mlwarp textures have no cudaSurfaceObject_t: they are software textures")

    # -- as a kernel argument -------------------------------------------------------------------------------------
    def _wp_ctype_value_(self):
        c = struct_type(self._ndim)._ctype_()
        c.data = int(self._storage.ptr)
        c.width, c.height, c.depth = self._width, self._height, self._depth
        c.num_channels, c.dtype_code = self._num_channels, self._dtype_code
        c.filter_mode = int(self._filter_mode)
        c.address_mode_u, c.address_mode_v = int(self._address_mode_u), int(self._address_mode_v)
        c.address_mode_w = int(self._address_mode_w)
        c.normalized_coords = int(self._normalized_coords)
        return c


class _ClassProperty:
    def __init__(self, fget):
        self.fget = fget

    def __get__(self, obj, cls):
        return self.fget(cls)


def _array_element(cls):
    """What an array of this texture class holds: its kernel struct (wp.array(textures, dtype=wp.Texture2D),
    `textures: wp.array[wp.Texture2D]` in a kernel)."""
    return struct_type(cls._wp_ndim_)


class Texture1D(Texture):
    """A 1D texture; also the kernel annotation `tex: wp.Texture1D`."""

    _wp_ndim_ = 1
    _wp_indexed_struct_ = _ClassProperty(lambda cls: struct_type(cls._wp_ndim_))
    _wp_array_element_ = _ClassProperty(_array_element)

    def __init__(self, data=None, width: int = 0, num_channels: int = 0, dtype=None, filter_mode=None,
                 address_mode=TextureAddressMode.CLAMP, address_mode_u=None, normalized_coords: bool = True,
                 num_mip_levels: int = 1, mip_filter_mode=None, device=None, surface_access: bool = False,
                 cuda_array: int = 0):
        super().__init__(1, data, width, 1, 1, num_channels, dtype, filter_mode, address_mode, address_mode_u,
                         None, None, normalized_coords, num_mip_levels, mip_filter_mode, device, surface_access,
                         cuda_array)


class Texture2D(Texture):
    """A 2D texture; also the kernel annotation `tex: wp.Texture2D`."""

    _wp_ndim_ = 2
    _wp_indexed_struct_ = _ClassProperty(lambda cls: struct_type(cls._wp_ndim_))
    _wp_array_element_ = _ClassProperty(_array_element)

    def __init__(self, data=None, width: int = 0, height: int = 0, num_channels: int = 0, dtype=None,
                 filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None, address_mode_v=None,
                 normalized_coords: bool = True, num_mip_levels: int = 1, mip_filter_mode=None, device=None,
                 surface_access: bool = False, cuda_array: int = 0):
        super().__init__(2, data, width, height, 1, num_channels, dtype, filter_mode, address_mode, address_mode_u,
                         address_mode_v, None, normalized_coords, num_mip_levels, mip_filter_mode, device,
                         surface_access, cuda_array)


class Texture3D(Texture):
    """A 3D texture; also the kernel annotation `tex: wp.Texture3D`."""

    _wp_ndim_ = 3
    _wp_indexed_struct_ = _ClassProperty(lambda cls: struct_type(cls._wp_ndim_))
    _wp_array_element_ = _ClassProperty(_array_element)

    def __init__(self, data=None, width: int = 0, height: int = 0, depth: int = 0, num_channels: int = 0,
                 dtype=None, filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None,
                 address_mode_v=None, address_mode_w=None, normalized_coords: bool = True, num_mip_levels: int = 1,
                 mip_filter_mode=None, device=None, surface_access: bool = False, cuda_array: int = 0):
        super().__init__(3, data, width, height, depth, num_channels, dtype, filter_mode, address_mode,
                         address_mode_u, address_mode_v, address_mode_w, normalized_coords, num_mip_levels,
                         mip_filter_mode, device, surface_access, cuda_array)
