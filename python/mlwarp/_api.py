"""The user API, `import mlwarp as wp`: every name `wp.*` has. python/mlwarp/__init__.py loads this module on the
first use of a name of the package, and copies its names into the package, so that importing
`mlwarp.compiler` or `mlwarp.runtime` alone does not load the API.
"""

from mlwarp.core.intrinsics import KernelOnly
from mlwarp.types import (  # noqa: F401
    bool_ as bool, float16, float32, float64, half, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    dtype_from_numpy, dtype_to_numpy, handle, scalar_base, Float, Int, Scalar,
)
from mlwarp.arrays.array import (  # noqa: F401
    array, array1d, array2d, array3d, array4d, clone, copy, empty, empty_like, from_numpy, full, full_like, ones,
    ones_like, zeros, zeros_like
)
from mlwarp.arrays import cuda_array as _cuda_array  # noqa: F401  (registers CudaArray with wp.array: device="cuda")
from mlwarp.interop import (  # noqa: F401
    device_from_jax, device_from_torch, device_to_jax, device_to_torch, dtype_from_jax, dtype_from_torch, dtype_to_jax,
    dtype_to_torch, from_dlpack, from_jax, from_torch, stream_from_torch, stream_to_torch, to_dlpack, to_jax, to_torch,
)
from mlwarp.interop.paddle import (  # noqa: F401
    device_from_paddle, device_to_paddle, dtype_from_paddle, dtype_to_paddle, from_paddle, stream_from_paddle,
    to_paddle,
)
from mlwarp.core.errors import (
    CompileError, CompileIndexError, CompileTypeError, CompileValueError, DeterminismError, LaunchError,
    UnsupportedSyntaxError
)  # noqa: F401,E501
from mlwarp.library.builtins import RemovedFunction as _RemovedFunction, functions as _builtin_functions
from mlwarp.types import bfloat16  # noqa: F401
from mlwarp.core.vector import *  # noqa: F401,F403  (vec3, mat33, quat, transform, wp.vec, wp.mat, ...)
from mlwarp.kernels.struct import struct  # noqa: F401
from mlwarp.arrays.indexed import (  # noqa: F401
    fixedarray, indexedarray, indexedarray1d, indexedarray2d, indexedarray3d, indexedarray4d
)
from mlwarp.arrays.fabric import fabricarray, fabricarrayarray, indexedfabricarray, indexedfabricarrayarray  # noqa: F401
from mlwarp.config import LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARNING, DeterministicMode, config  # noqa: F401
from mlwarp.kernels.kernel import Kernel, kernel, overload  # noqa: F401
from mlwarp.kernels.func import Function, func  # noqa: F401
from mlwarp.core.refs import address_of, ref  # noqa: F401  (wp.ref[T] parameters, wp.address_of)
from mlwarp.kernels.native import func_native  # noqa: F401  (decorates; calling one is an error: no C++ stage)
from mlwarp.library.rigid import *  # noqa: F401,F403  (transform_to_matrix, quat_to_rpy, ... as @wp.func)
from mlwarp.library.norms import *  # noqa: F401,F403  (norm_l1, norm_huber, smooth_normalize, ... as @wp.func)
from mlwarp.library.intersect import *  # noqa: F401,F403  (closest_point_edge_edge, intersect_tri_tri as @wp.func)
from mlwarp.library.array_search import *  # noqa: F401,F403  (lower_bound as a generic @wp.func)
from mlwarp.library.decompositions import *  # noqa: F401,F403  (eig3, qr3, svd3, svd2 as @wp.func)
from mlwarp.library.perlin import *  # noqa: F401,F403  (noise, pnoise, curlnoise as @wp.func)
from mlwarp.library.random import *  # noqa: F401,F403  (rand_init, randf, randn, sample_unit_sphere, ...)
# wp.geometry's names (wp.HashGrid, wp.Mesh, wp.mesh_query_ray, wp.volume_sample, ...: issue 17) load with the
# package on the first use of one (its iso-surface tables and volume functions cost ~60 ms of import): mlwarp/
# __init__.py imports the module a name of _lazy_names maps to. test_public_names checks the list is geometry's
# __all__.
_GEOMETRY_NAMES = (
    "Bvh", "BvhQuery", "BvhQueryTiled", "HashGrid", "HashGridQuery", "Mesh", "MeshQuery", "MeshQueryAABB",
    "MeshQueryAABBTiled", "MeshQueryPoint", "MeshQueryRay", "Volume", "bvh_get_group_root", "bvh_query_aabb",
    "bvh_query_aabb_tiled", "bvh_query_capsule", "bvh_query_next", "bvh_query_next_tiled", "bvh_query_ray",
    "bvh_query_ray_tiled", "bvh_query_sphere", "hash_grid_point_id", "hash_grid_query", "hash_grid_query_next",
    "is_cubql_available", "mesh_eval_face_normal", "mesh_eval_position", "mesh_eval_velocity", "mesh_get",
    "mesh_get_bvh", "mesh_get_group_root", "mesh_get_index", "mesh_get_point", "mesh_get_velocity", "mesh_query_aabb",
    "mesh_query_aabb_next", "mesh_query_aabb_next_tiled", "mesh_query_aabb_tiled", "mesh_query_furthest_point_no_sign",
    "mesh_query_next", "mesh_query_point", "mesh_query_point_no_sign", "mesh_query_point_sign_normal",
    "mesh_query_point_sign_parity", "mesh_query_point_sign_winding_number", "mesh_query_ray", "mesh_query_ray_anyhit",
    "mesh_query_ray_count_intersections", "mesh_query_sphere", "tile_bvh_query_aabb", "tile_bvh_query_next",
    "tile_bvh_query_ray", "tile_mesh_query_aabb", "tile_mesh_query_aabb_next", "tile_query_valid",
    "volume_index_to_world", "volume_index_to_world_dir", "volume_lookup", "volume_lookup_f", "volume_lookup_i",
    "volume_lookup_index", "volume_lookup_v", "volume_sample", "volume_sample_f", "volume_sample_grad",
    "volume_sample_grad_f", "volume_sample_grad_index", "volume_sample_i", "volume_sample_index", "volume_sample_v",
    "volume_store", "volume_store_f", "volume_store_i", "volume_store_v", "volume_voxel_count", "volume_world_to_index",
    "volume_world_to_index_dir",
)
_lazy_names = {name: "mlwarp.geometry" for name in (*_GEOMETRY_NAMES, "geometry")}
# Warp's textures (python/mlwarp/arrays/texture.py, texture_funcs.py), loaded on first use as wp.geometry's names are.
_TEXTURE_NAMES = ("Texture", "Texture1D", "Texture2D", "Texture3D", "TextureAddressMode", "TextureFilterMode",
                  "TextureResourceFlags")
_lazy_names.update({name: "mlwarp.arrays.texture" for name in _TEXTURE_NAMES})
_lazy_names["texture_sample"] = "mlwarp.library.texture_funcs"
_lazy_names.update({name: "mlwarp.interop.gl_interop" for name in ("GLTextureResource", "RegisteredGLBuffer")})
_lazy_names["build_experimental"] = "mlwarp.build_experimental"
_lazy_names["sparse"] = "mlwarp.sparse"  # wp.sparse (Warp's warp.sparse), loaded on first use as wp.geometry is
_lazy_names["optim"] = "mlwarp.optim"  # Warp's optimizers and linear solvers, written in the kernel language
# Warp kernels and annotated functions as JAX primitives (XLA FFI targets): loaded, with jax, on first use.
# Warp's internal paths, reached as attributes by clients (`wp._src.context.runtime.core`: Newton), not public.
_lazy_names["_src"] = "mlwarp._src"
_lazy_names.update({"jax_kernel": "mlwarp.interop.jax_ffi_kernel", "jax_callable": "mlwarp.interop.jax_ffi_callable",
                    "clear_jax_callable_graph_cache": "mlwarp.interop.jax_ffi_callable",
                    "JaxCallableGraphMode": "mlwarp.interop.jax_ffi_base",
                    "JaxModulePreloadMode": "mlwarp.interop.jax_ffi_base"})


def _deprecated_marching_cubes():
    from mlwarp.geometry.isosurface import deprecated_marching_cubes  # lazy: wp.geometry loads on first use (above)

    return deprecated_marching_cubes(stacklevel=5)  # (one frame more: this one)


_deprecated_names = {"MarchingCubes": _deprecated_marching_cubes}  # name -> what resolves it (python/mlwarp/__init__.py)
from mlwarp.kernels.static import constant, static  # noqa: F401
from mlwarp.launching.launch import launch, synchronize, synchronize_device  # noqa: F401
from mlwarp.kernels.module import Module, force_load, get_module, get_module_options, load_module, set_module_options  # noqa: F401,E501
from mlwarp.core.errors import (
    CompileAttributeError, CompileKeyError, CompilerWarning, FloatingPointCheckError, KernelAssertionError,
    KernelBoundsError
)  # noqa: F401
from mlwarp.autodiff.tape import Tape  # noqa: F401
from mlwarp.autodiff.jvp import jvp  # noqa: F401
from mlwarp.algorithms.map import map  # noqa: F401  (wp.map; Python's map is builtins.map)
from mlwarp import autograd  # noqa: F401  (wp.autograd: gradcheck, gradcheck_tape, jacobian, jacobian_fd)
from mlwarp.kernels.func_grad import adjoint, func_grad, func_replay  # noqa: F401
from mlwarp.kernels.grad_call import GradWrapper, grad  # noqa: F401
from mlwarp.runtime.device import Device, get_device, get_devices, set_device  # noqa: F401
from mlwarp import context  # noqa: F401  (wp.context.init(): Warp's module name before 1.10)
from mlwarp.context import init  # noqa: F401
from mlwarp.runtime import cache as _cache
from mlwarp.library.constants import *  # noqa: F401,F403  (pi, e, inf, nan, tau, half_pi, ...)
from mlwarp.launching.launch_plan import Launch  # noqa: F401  (what wp.launch(..., record_cmd=True) returns)
from mlwarp.library.tiles import *  # noqa: F401,F403  (wp.launch_tiled, wp.tile_load, tile_store, tile_matmul, ...)
# CUDA devices, streams and AOT (is_cuda_available, get_preferred_device, ...)
from mlwarp.launching.cuda import *  # noqa: F401,F403
from mlwarp.launching.stream import *  # noqa: F401,F403
from mlwarp.launching.graph_capture import *  # noqa: F401,F403  (wp.capture_begin/end/launch, ScopedCapture, capture_while, wp.Graph)
from mlwarp.launching.aot import compile_aot_module, load_aot_module  # noqa: F401
from mlwarp import utils  # noqa: F401  (wp.utils: Warp's warp.utils)
from mlwarp.launching.logger import *  # noqa: F401,F403  (wp.Logger, get_logger, set_logger, ScopedLogger, ScopedLogLevel)
from mlwarp.arrays.memory import *  # noqa: F401,F403  (MemoryKind, allocators, mempools, peer access, IPC, ScopedMemoryTracker)
from mlwarp.launching.timing import *  # noqa: F401,F403  (timing_begin/end/print, TimingResult, TIMING_*, cuda_profiler_*)
from mlwarp.launching.system import *  # noqa: F401,F403  (DeviceLike, versions, print_diagnostics, ModuleBuildOptions, ...)
from mlwarp.utils import ScopedTimer, transform_expand  # noqa: F401

__version__ = "0.1.0"

# The builtins' Python handles (wp.sin, wp.tid, ...); no name above is a builtin's.
for _name, _function in _builtin_functions.items():
    globals().setdefault(_name, _function)
del _name, _function, _builtin_functions

# Warp's names for the compile errors
WarpCodegenError = CompileError
WarpCodegenTypeError = CompileTypeError
WarpCodegenValueError = CompileValueError
WarpCodegenAttributeError = CompileAttributeError
WarpCodegenKeyError = CompileKeyError
WarpCodegenIndexError = CompileIndexError
WarpDeterminismError = DeterminismError


# Warp's internal builtins, public by name in warp/__init__.py: its code generator emits them for subscripts,
# `not` and references. mlwarp's frontend lowers subscripts and `not` itself; written by hand in a kernel (or
# called from Python) each says what to write instead.
def _internal_builtins():
    said = {
        "address": "the address of an array element (Warp's code generator emits it for arr[i] in an "
                   "expression); write arr[i], or wp.address_of(arr, i) for a reference",
        "view": "a subarray (Warp's code generator emits it for arr[i] with fewer indices than dimensions); "
                "write arr[i]",
        "array_store": "a store into an array (Warp's code generator emits it for arr[i] = value); write "
                       "arr[i] = value",
        "index": "a vector, matrix or quaternion component (Warp's code generator emits it for v[i]); write v[i]",
        "indexref": "a reference to a component (Warp's code generator emits it for v[i] on references); write "
                    "v[i]",
        "load": "a load through a reference (Warp's code generator emits it); use the wp.ref value itself",
        "store": "a store through a reference (Warp's code generator emits it); assign to the wp.ref parameter",
    }
    out = {name: _RemovedFunction(name, f"wp.{name}() is an internal builtin of Warp's code generator: {what}. "
                                       "mlwarp does not expose it")
           for name, what in said.items()}
    for name in ("dense_gemm", "dense_gemm_batched", "dense_chol", "dense_chol_batched", "dense_subs",
                 "dense_solve", "dense_solve_batched"):
        out[name] = _RemovedFunction(name, f"wp.{name}() is one of Warp's hidden, undocumented dense linear "
                                          "algebra builtins (marked WIP); mlwarp does not implement them: use "
                                          "wp.tile_matmul, wp.tile_cholesky and wp.tile_cholesky_solve")
    return out


globals().update(_internal_builtins())
unot = KernelOnly("unot", "unot(a: bool | int | array) -> bool: `not a` (Warp's logical not; an array is false "
                           "unless it is null)")


def is_cpu_available() -> bool:
    return True


def is_device_available(device) -> bool:
    try:
        get_device(device)
    except ValueError:
        return False
    return True


def clear_kernel_cache():
    """Removes every compiled kernel from the disk cache (kernels already loaded keep working)."""
    _cache.clear()


def kernel_cache_size() -> int:
    """Bytes used by the disk kernel cache."""
    return _cache.size_bytes()


def get_kernel_cache_dir() -> str:
    return _cache.cache_dir()

