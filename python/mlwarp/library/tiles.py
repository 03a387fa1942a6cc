"""Warp's tile API, seen from Python: `wp.launch_tiled` and the `wp.tile_*` builtins.

Inside a kernel the frontend (compiler/frontend/tiles.py) maps each `wp.tile_*` object to ops of the warp
dialect's tile table; in Python scope they cannot be called (as in Warp); `wp.tile` is Warp's tile type class
there. On the CPU a tiled launch runs as Warp runs it by default: one lane per block (`block_dim` resolves to 1
unless `wp.config.enable_cpu_blocks`), the lane doing each whole tile operation, the blocks spread over all
cores; with enable_cpu_blocks, block_dim lanes per block (python/mlwarp/launching/cpu_lanes.py).
"""

from __future__ import annotations

import typing
from typing import Any

from mlwarp.core import types as wt
from mlwarp.config import config
from mlwarp.launching.cpu_lanes import resolve_block_dim
from mlwarp.launching.debug import for_launch
from mlwarp.launching.launch import launch
from mlwarp.runtime.device import get_device


class TileBuiltin:
    """A `wp.tile_*` builtin: `_wp_tile_` names it for the frontend."""

    def __init__(self, name: str, doc: str):
        self.__name__ = name
        self.key = name
        self.__doc__ = doc
        self._wp_tile_ = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"wp.{self.__name__}() can only be called inside a kernel or wp.func")

    def __repr__(self):
        return f"<mlwarp tile builtin {self.__name__}>"


_DOCS = {
    "tile_load": "tile_load(a, shape, offset=0, storage='register', bounds_check=True, aligned=False): a tile of "
                 "`shape` read from array `a` at `offset`; elements past the array's upper extent read as zero",
    "tile_store": "tile_store(a, t, offset=0, bounds_check=True, aligned=False): writes tile `t` into `a` at "
                  "`offset`, skipping elements past the array's upper extent",
    "tile_zeros": "tile_zeros(shape, dtype=float, storage='register'): a tile of zeros",
    "tile_ones": "tile_ones(shape, dtype=float, storage='register'): a tile of ones",
    "tile_full": "tile_full(shape, value, dtype=float, storage='register'): a tile with every element `value`",
    "tile_empty": "tile_empty(shape, dtype=float, storage='register'): a tile (zero-filled here)",
    "tile_arange": "tile_arange(stop) / (start, stop) / (start, stop, step), dtype=int: a 1-d tile of a range",
    "tile_sum": "tile_sum(a, axis=None): the sum of every element, a tile of shape (1,); or along `axis`",
    "tile_max": "tile_max(a, axis=None): the largest element, a tile of shape (1,); or along `axis`",
    "tile_min": "tile_min(a, axis=None): the smallest element, a tile of shape (1,); or along `axis`",
    "tile_reduce": "tile_reduce(op, a, axis=None): `a` folded with builtin `op` (wp.add, wp.mul, wp.max, wp.min)",
    "tile_argmax": "tile_argmax(a): the flat index of the largest element, an int tile of shape (1,)",
    "tile_argmin": "tile_argmin(a): the flat index of the smallest element, an int tile of shape (1,)",
    "tile_matmul": "tile_matmul(a, b, alpha=1.0) -> a tile; tile_matmul(a, b, out, alpha=1.0, beta=1.0): "
                   "out = alpha * a @ b + beta * out",
    "tile_transpose": "tile_transpose(a): the 2-d tile transposed",
    "tile_reshape": "tile_reshape(t, shape): the elements in row-major order in a new shape (one -1 inferred)",
    "tile_squeeze": "tile_squeeze(t, axis=None): the tile without dimensions of length one",
    "tile_astype": "tile_astype(t, dtype): the tile's scalars converted to dtype",
    "tile_broadcast": "tile_broadcast(a, shape): the tile broadcast to `shape` (numpy's rules)",
    "tile_map": "tile_map(op, a, ...): op applied element-wise (op: a Warp builtin such as wp.sin or wp.add)",
    "tile_extract": "tile_extract(a, i, ...): one element of the tile (also a[i, ...])",
    "tile_slice_indexed": "tile_slice_indexed(t, indices): the rows (or columns, ...) of `t` at a 1-d int index tile, "
                          "a copy: what t[indices, :] spells (indices: the index tile and full slices)",
    "tile_stack": "tile_stack(capacity, dtype): an empty stack of `capacity` values (one lane: push and pop one each)",
    "tile_stack_push": "tile_stack_push(s, value, has_value): pushes value when has_value and there is room; its "
                       "slot, or -1",
    "tile_stack_pop": "tile_stack_pop(s): (the last pushed value, its slot), or (zero, -1) when empty",
    "tile_stack_clear": "tile_stack_clear(s): empties the stack",
    "tile_stack_count": "tile_stack_count(s): the number of values in the stack",
    "tile_scan_inclusive": "tile_scan_inclusive(a): the running sums of the elements (row-major)",
    "tile_scan_exclusive": "tile_scan_exclusive(a): the running sums of the elements before each (from zero)",
    "tile_scan_max_inclusive": "tile_scan_max_inclusive(a): the running maxima (row-major)",
    "tile_scan_min_inclusive": "tile_scan_min_inclusive(a): the running minima (row-major)",
    "tile_fft": "tile_fft(inout): the unnormalised forward DFT along the last dimension of a vec2 (complex) tile, "
                "in place",
    "tile_ifft": "tile_ifft(inout): the unnormalised inverse DFT along the last dimension, in place",
    "tile_cholesky": "tile_cholesky(A, fill_mode='lower'): the Cholesky factor L (L L^T = A) or U (U^T U = A)",
    "tile_cholesky_inplace": "tile_cholesky_inplace(A, fill_mode='lower'): A replaced by its Cholesky factor",
    "tile_cholesky_solve": "tile_cholesky_solve(L, y, fill_mode='lower'): x with A x = y, given A's Cholesky factor",
    "tile_cholesky_solve_inplace": "tile_cholesky_solve_inplace(L, y, fill_mode='lower'): y replaced by x",
    "tile_lower_solve": "tile_lower_solve(L, y): z with L z = y (L lower-triangular)",
    "tile_lower_solve_inplace": "tile_lower_solve_inplace(L, y): y replaced by z with L z = y",
    "tile_upper_solve": "tile_upper_solve(U, z): x with U x = z (U upper-triangular)",
    "tile_upper_solve_inplace": "tile_upper_solve_inplace(U, z): z replaced by x with U x = z",
    "tile_load_indexed": "tile_load_indexed(a, indices, shape, offset=0, axis=0): tile_load gathering along `axis` "
                         "through a 1-d int32 tile of indices (outside the array: zero)",
    "tile_store_indexed": "tile_store_indexed(a, indices, t, offset=0, axis=0): tile_store scattering along `axis`",
    "tile_atomic_add_indexed": "tile_atomic_add_indexed(a, indices, t, offset=0, axis=0): atomic adds scattered "
                               "along `axis`",
    "tile_scatter_add": "tile_scatter_add(a, i, ..., value, has_value, atomic=True): adds value to a[i, ...] when "
                        "has_value (one lane per block: one add)",
    "tile_scatter_masked": "tile_scatter_masked(a, i, ..., value, has_value): writes value to a[i, ...] when has_value",
    "tile_view": "tile_view(t, offset, shape=None): the subtile of `t` at `offset` (its trailing dimensions when "
                 "`offset` names fewer; a copy: mlwarp's tiles are values)",
    "tile_assign": "tile_assign(dst, src, offset=None): src written into dst at offset (in place); or "
                   "tile_assign(dst, i, ..., value): one element",
    "tile_sort": "tile_sort(keys, values): both tiles sorted in place in ascending order of keys (row-major)",
    "tile_randi": "tile_randi(shape, rng, min=None, max=None): random int32s (wp.randi's sequence from rng, row-major)",
    "tile_randf": "tile_randf(shape, rng, min=None, max=None): random float32s in [0, 1) or [min, max)",
    "tile_from_thread": "tile_from_thread(shape, value, thread_idx, storage='register'): a tile holding lane "
                        "`thread_idx`'s `value` in every element (one lane per block: the value)",
    "tile_atomic_add": "tile_atomic_add(a, t, offset=0): adds tile `t` into array `a` at `offset`, element by "
                       "element atomically (elements past the array's upper extent skipped; structs field by "
                       "field); returns the tile of the elements before the add (zero where skipped)",
    "tile_dot": "tile_dot(a, b): the sum of a[i] * b[i] over two tiles of one shape (wp.dot for vectors, the "
                "Frobenius product for matrices), a tile of shape (1,)",
    "tile_axpy": "tile_axpy(alpha, src, dest): dest += alpha * src, in place",
    "tile_diag_add": "tile_diag_add(a, d): the square tile `a` with the 1-d tile `d` added to its diagonal",
}

class TileStackAnnotation:
    """`wp.tile_stack(capacity=N, dtype=T)` outside a kernel: the type of a @wp.func parameter that is a stack (passed
    by reference, as Warp's)."""

    def __init__(self, capacity, dtype):
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError(f"wp.tile_stack() requires capacity to be a positive integer, got {capacity!r}")
        self.capacity, self.dtype = capacity, dtype
        self._wp_tile_stack_annotation_ = True

    def __repr__(self):
        return f"wp.tile_stack(capacity={self.capacity}, dtype={getattr(self.dtype, '__name__', self.dtype)})"


class _TileStackFunction(TileBuiltin):
    """`wp.tile_stack(capacity, dtype)`: a stack in a kernel; the type of a stack parameter in an annotation."""

    def __call__(self, capacity=None, dtype=None):
        return TileStackAnnotation(capacity, dtype)


for _name, _doc in _DOCS.items():
    globals()[_name] = (_TileStackFunction if _name == "tile_stack" else TileBuiltin)(_name, _doc)
del _name, _doc


class TileAnnotation:
    """`wp.tile[dtype, M, N]` (dimensions ints or `typing.Literal[n]`), `wp.tile[dtype, (M, N)]` or `wp.tile[dtype]`:
    the type of a @wp.func parameter or result that is a tile; without a shape, generic over it (the function is
    made per shape it is called with)."""

    storage = "register"

    def __init__(self, dtype, shape):
        self.dtype = wt.canonical_type(dtype) or dtype
        self.shape = shape if shape is Any else tuple(shape)
        self._wp_tile_annotation_ = True

    @property
    def _wp_generic_(self) -> bool:
        return self.shape is Any

    def _wp_matches_(self, concrete) -> bool:
        """Whether a tile type (the frontend's TileT: dtype and shape) instantiates this annotation."""
        dtype, shape = getattr(concrete, "dtype", None), getattr(concrete, "shape", None)
        return wt.canonical_type(dtype) is wt.canonical_type(self.dtype) and isinstance(shape, tuple) and \
            (self.shape is Any or tuple(shape) == self.shape)

    def __eq__(self, other):
        if isinstance(other, TileAnnotation):
            return self.dtype == other.dtype and self.shape == other.shape
        return NotImplemented

    def __hash__(self):
        return hash(("tile", self.dtype, self.shape))

    def __repr__(self):
        dtype = getattr(self.dtype, "__name__", self.dtype)
        return f"wp.tile[{dtype}]" if self.shape is Any else f"wp.tile[{dtype}, {', '.join(map(str, self.shape))}]"


def _tile_dimension(d):
    if typing.get_origin(d) is typing.Literal and len(typing.get_args(d)) == 1:
        d = typing.get_args(d)[0]
    return d if type(d) is int and d > 0 else None


class tile(TileAnnotation):
    """A tile type, as Warp's `wp.tile` class: `wp.tile[dtype, M, N]` (or `wp.tile[dtype]`, generic over the shape)
    in annotations, `wp.tile(dtype=..., shape=...)` a tile type object in Python scope (dtype, shape, storage,
    layout, strides, size, owner). In a kernel `wp.tile(x)` is the builtin: a tile of the lanes' values x (shape
    (block_dim,); (1,) on the CPU without wp.config.enable_cpu_blocks: one lane per block)."""

    _wp_tile_ = "tile"  # what the frontend calls in a kernel (compiler/frontend/tiles.py)
    _wp_tile_type_ = True  # wp.types.type_is_tile / is_tile
    key = "tile"

    def __class_getitem__(cls, params):
        params = params if isinstance(params, tuple) else (params,)
        dims = params[1:]
        if len(dims) == 1 and isinstance(dims[0], tuple):  # wp.tile[float, (4, 4)]
            dims = dims[0]
        shape = [_tile_dimension(d) for d in dims]
        if not params or None in shape:
            raise TypeError(f"wp.tile[dtype, *shape] takes a dtype and positive int dimensions, got {params!r}")
        return cls(params[0], tuple(shape) if shape else Any)  # (wp.tile[float,]: the dtype alone)

    def __init__(self, dtype=Any, shape=Any, storage="register", layout="rowmajor", strides=None, owner=True):
        if isinstance(shape, list):
            shape = tuple(shape)
        if isinstance(shape, tuple) and not shape:
            raise RuntimeError("Empty shape specified, must have at least 1 dimension")
        super().__init__(dtype, shape)
        self.storage, self.layout, self.owner = storage, layout, owner
        self.strides = strides
        if shape is not Any:
            self.size = 1
            for d in shape:
                self.size *= d
            if strides is None:  # element strides of the layout
                order = range(len(shape) - 1, -1, -1) if layout == "rowmajor" else range(len(shape))
                step, strides = 1, [0] * len(shape)
                for i in order:
                    strides[i], step = step, step * shape[i]
                self.strides = strides  # (a list, as Warp's)


block_dim = TileBuiltin("block_dim", "block_dim(): the number of lanes of a block (1 on the CPU without "
                                     "wp.config.enable_cpu_blocks)")
untile = TileBuiltin("untile", "untile(t): each lane's value of a tile made by wp.tile (t[0] with one lane)")

__all__ = [*_DOCS, "launch_tiled", "tile", "untile", "block_dim"]


def launch_tiled(*args, **kwargs):
    """Warp's tiled launch. On CUDA, a kernel that warp-gpu-cooperative-tiles could rewrite is launched as Warp
    launches it, `dim + [block_dim]` threads, one CUDA block of block_dim lanes per Warp block, its tiles in
    shared memory and each tile op split over the lanes (wp.tid() gives the block's indices, and the lane to a
    kernel asking for one more index); any other kernel (and a CPU launch of one lane) as `dim + [1]`: one thread
    per block computes its tiles whole, which gives the same tile results (a kernel reading the lane sees lane 0).
    A CPU launch of block_dim lanes (wp.config.enable_cpu_blocks) is `dim + [block_dim]`, run by the kernel's
    lane build (python/mlwarp/launching/cpu_lanes.py).
    `block_dim` is resolved as Warp resolves it (on the CPU 1 unless `wp.config.enable_cpu_blocks`, at most 1024;
    None or <= 0 the device's default) and is the CUDA launch's block size."""
    if "dim" not in kwargs:
        raise RuntimeError("Launch dimensions 'dim' argument should be passed via. keyword args for wp.launch_tiled()")
    if "block_dim" not in kwargs:
        raise RuntimeError(
            "Launch block dimension 'block_dim' argument should be passed via. keyword args for wp.launch_tiled()")
    stream = kwargs.get("stream", args[7] if len(args) > 7 else None)
    device = get_device(stream.device if stream is not None else kwargs.get("device", args[6] if len(args) > 6 else None))
    block_dim = resolve_block_dim(device, kwargs["block_dim"])
    dim = kwargs["dim"]
    dim = [dim] if isinstance(dim, int) else list(dim)
    if len(dim) > 3:
        raise RuntimeError("wp.launch_tiled() requires a grid with fewer than 4 dimensions")
    if device.is_cpu:  # one lane per block (each tile operation runs whole on one thread), or Warp's CPU lanes
        kwargs["dim"] = [*dim, block_dim]  # (wp.config.enable_cpu_blocks: wp.launch runs the lane build)
    else:  # the compiled kernel says: a CUDA block per Warp block (its tiles in shared memory), or one thread
        kernel = args[0] if args else kwargs["kernel"]
        if getattr(kernel, "is_generic", False):  # a template: its instance for these arguments' types (as launch)
            kernel = kernel.instance_for(list(kwargs.get("inputs", args[2] if len(args) > 2 else ()) or ()) +
                                         list(kwargs.get("outputs", args[3] if len(args) > 3 else ()) or ()))
        kernel = for_launch(kernel)  # the build that runs (a debug build decides for itself)
        kwargs["dim"] = tile_launch_dims(getattr(kernel.compiled(device), "meta", None) or {}, kernel.key, dim,
                                         block_dim)
    kwargs["block_dim"] = block_dim
    return launch(*args, **kwargs)


def tile_launch_dims(meta: dict, kernel_key: str, dim: list, block_dim: int) -> list:
    """The launch dimensions of a tiled CUDA launch of a kernel compiled with `meta`: `dim + [block_dim]` where
    warp-gpu-cooperative-tiles made the block's lanes share its tiles (Warp's launch), else `dim + [1]` (one
    thread per block computes its tiles whole). A cooperative kernel whose tile operations sit under control flow
    that depends on wp.tid()'s index len(dim), which is the lane in this launch, is refused: not every lane would
    reach the block's barriers."""
    shape = meta.get("tile_launch") or {}
    if not shape.get("cooperative"):
        return [*dim, 1]
    if len(dim) in shape.get("lane_divergent_tid_positions", ()):
        raise RuntimeError(
            f"kernel '{kernel_key}' runs tile operations under control flow that depends on wp.tid() index "
            f"{len(dim)}, the lane index of a tiled launch over {len(dim)} dimension(s): every lane of a block must "
            f"reach each tile operation; launch it over {len(dim) + 1} dimensions or keep the tile operations out of "
            f"lane-dependent branches and loops")
    return [*dim, block_dim]
