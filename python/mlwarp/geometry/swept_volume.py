"""Swept volumes of rigidly moving meshes (Warp 1.19's warp.geometry.swept_volume_*): the pseudo signed
distance min over meshes m and sampled poses s of sdf_m(X_ms^-1 p), sampled on a dense grid ("dense time
stamping"), and its isosurface.

`swept_volume_sdf` is a @wp.func (one closest-point query per mesh and pose, the point pulled back into the
mesh's rest frame: rigid maps keep distances); `swept_volume_field` launches it over the grid's nodes;
`swept_volume_bounds` is the union of each mesh's rest box carried by every pose (numpy on the host: the
eight corners of each box per pose); `swept_volume_mesh` extracts the field's `threshold` level with
wp.geometry.IsoSurfaceMarchingCubes. The grid rules are Warp's: `voxel_size` pads the swept bounds by the
threshold plus two cells and grows the extent to whole cells (spacing exactly voxel_size), `resolution`
pads by two of its own cells, explicit `lower`/`upper` are used as given; the closest-point bound spans the
domain and the geometry together, so a node deep inside still finds the surface."""

from __future__ import annotations

import enum
import math
import sys

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp  # wp.transform_point, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.runtime.device import get_device
from mlwarp.types import float32, int32, uint64
from mlwarp.core.vector import transform, vec3
from mlwarp.geometry.mesh_queries import (
    mesh_eval_position, mesh_query_point_no_sign, mesh_query_point_sign_normal, mesh_query_point_sign_parity,
    mesh_query_point_sign_winding_number,
)


class SweptVolumeSignMode(enum.IntEnum):
    """How the per-mesh distance gets its inside/outside sign (an int in kernels)."""

    NORMAL = 0  # mesh_query_point_sign_normal
    WINDING_NUMBER = 1  # mesh_query_point_sign_winding_number (meshes built with support_winding_number=True)
    PARITY = 2  # mesh_query_point_sign_parity
    NO_SIGN = 3  # unsigned distances: a positive field, for threshold > 0 shells


_NORMAL, _WINDING, _PARITY, _NO_SIGN = (int(m) for m in SweptVolumeSignMode)


@func
def swept_volume_sdf(point: vec3, mesh_ids: array(dtype=uint64), transforms: array(dtype=transform, ndim=2),
                     max_dist: float32, sign_mode: int32) -> float32:
    """The swept volume's pseudo signed distance at `point`: the minimum over meshes m and poses s of mesh m's
    signed distance at transforms[m, s]^-1 point (max_dist where no query reaches a surface). Not
    differentiable."""
    best = max_dist
    for m in range(mesh_ids.shape[0]):
        mesh = mesh_ids[m]
        for s in range(transforms.shape[1]):
            local = wp.transform_point(wp.transform_inverse(transforms[m, s]), point)
            sign = float32(1.0)
            if sign_mode == _WINDING:
                q = mesh_query_point_sign_winding_number(mesh, local, max_dist)
                sign = q.sign
            elif sign_mode == _PARITY:
                q = mesh_query_point_sign_parity(mesh, local, max_dist)
                sign = q.sign
            elif sign_mode == _NO_SIGN:
                q = mesh_query_point_no_sign(mesh, local, best)  # (unsigned: only nearer than best can win)
            else:
                q = mesh_query_point_sign_normal(mesh, local, max_dist)
                sign = q.sign
            if q.result:
                best = wp.min(best, sign * wp.length(local - mesh_eval_position(mesh, q.face, q.u, q.v)))
    return best


@kernel(enable_backward=False)
def _field_kernel(mesh_ids: array(dtype=uint64), transforms: array(dtype=transform, ndim=2), origin: vec3,
                  spacing: vec3, max_dist: float32, sign_mode: int32, field: array(dtype=float32, ndim=3)):
    i, j, k = wp.tid()
    node = origin + wp.cw_mul(spacing, vec3(float32(i), float32(j), float32(k)))
    field[i, j, k] = swept_volume_sdf(node, mesh_ids, transforms, max_dist, sign_mode)


def _poses(transforms, device):
    """transforms as a wp.array2d of wp.transform (num_meshes, num_samples) on `device`."""
    if isinstance(transforms, array):
        if transforms.ndim != 2:
            raise ValueError("'transforms' must be a 2D array of shape (num_meshes, num_samples), got ndim "
                             f"{transforms.ndim}.")
        if not wt.types_equal(transforms.dtype, transform):
            raise TypeError(f"'transforms' must have dtype wp.transform, got {wt.type_repr(transforms.dtype)}.")
        return transforms.to(device)
    values = np.asarray(transforms, dtype=np.float32)
    if values.ndim != 3 or values.shape[2] != 7:
        raise ValueError("'transforms' must be a wp.array2d(dtype=wp.transform) or an array of shape (num_meshes, "
                         f"num_samples, 7), got shape {values.shape}.")
    return array(values, dtype=transform, device=device)


def _check(meshes, poses):
    if poses.shape[0] != len(meshes):
        raise ValueError(f"'transforms' has {poses.shape[0]} rows but there are {len(meshes)} meshes.")
    if poses.shape[1] == 0:
        raise ValueError("'transforms' must contain at least one pose sample.")


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4) given as (x, y, z, w)."""
    u, w = q[..., :3], q[..., 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _bounds(meshes, poses, margin):
    """(lower, upper) of every mesh's rest box carried by every one of its poses, widened by margin."""
    xf = np.asarray(poses.numpy(), np.float64).reshape(poses.shape[0], poses.shape[1], 7)
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for m, mesh in enumerate(meshes):
        pts = np.asarray(mesh.points.numpy(), np.float64).reshape(-1, 3)
        if not len(pts):
            continue
        box = np.stack([pts.min(axis=0), pts.max(axis=0)])
        corners = np.array([[box[a, 0], box[b, 1], box[c, 2]] for a in (0, 1) for b in (0, 1) for c in (0, 1)])
        moved = _rotate(xf[m, :, None, 3:], corners[None]) + xf[m, :, None, :3]
        lo = np.minimum(lo, moved.reshape(-1, 3).min(axis=0))
        hi = np.maximum(hi, moved.reshape(-1, 3).max(axis=0))
    if not np.isfinite(lo[0]):
        raise ValueError("Could not compute swept-volume bounds: all input meshes are empty.")
    return vec3(*(lo - margin)), vec3(*(hi + margin))


def _device_of(meshes, device):
    if len(meshes) == 0:
        raise ValueError("'meshes' must contain at least one mesh.")
    return get_device(device) if device is not None else meshes[0].device


def swept_volume_bounds(meshes, transforms, padding: float = 0.0, device=None):
    """The world-space (lower, upper) of every mesh over every pose, widened by `padding` on each side."""
    device = _device_of(meshes, device)
    poses = _poses(transforms, device)
    _check(meshes, poses)
    return _bounds(meshes, poses, padding)


def _grid(meshes, poses, voxel_size, resolution, lower, upper, extra_padding):
    """(lower, upper, node counts, tight lower, tight upper) of the sampling grid (the module docstring)."""
    if (lower is None) != (upper is None):
        raise ValueError("Pass both 'lower' and 'upper', or neither.")
    if voxel_size is not None and resolution is not None:
        raise ValueError("Pass either 'voxel_size' or 'resolution', not both.")
    if voxel_size is None and resolution is None:
        raise ValueError("Provide either 'voxel_size' or 'resolution'.")
    if voxel_size is not None and voxel_size <= 0.0:
        raise ValueError(f"'voxel_size' must be positive, got {voxel_size}.")
    dims = None
    if resolution is not None:
        dims = tuple(int(n) for n in resolution)
        if len(dims) != 3:
            raise ValueError(f"'resolution' must have exactly 3 entries, got {dims}.")
        if min(dims) < 2:
            raise ValueError(f"'resolution' must be at least 2 along each axis, got {dims}.")
    tight_lo, tight_hi = _bounds(meshes, poses, 0.0)
    extent = [tight_hi[a] - tight_lo[a] for a in range(3)]
    if lower is not None:
        if voxel_size is not None:
            raise ValueError("'voxel_size' cannot be combined with explicit domain bounds, since the extent would "
                             "have to grow to fit whole cells. Pass 'resolution' instead.")
        lower, upper = vec3(*(float(c) for c in lower)), vec3(*(float(c) for c in upper))
        if any(upper[a] <= lower[a] for a in range(3)):
            raise ValueError(f"'upper' {upper} must exceed 'lower' {lower}.")
        return lower, upper, dims, tight_lo, tight_hi
    if voxel_size is not None:
        pad = extra_padding + 2.0 * voxel_size
        dims = tuple(max(2, int(math.ceil((extent[a] + 2.0 * pad) / voxel_size)) + 1) for a in range(3))
        grow = [0.5 * ((dims[a] - 1) * voxel_size - extent[a]) for a in range(3)]
    else:
        grow = [extra_padding + 2.0 * extent[a] / (dims[a] - 1) for a in range(3)]
    lower = vec3(*(tight_lo[a] - grow[a] for a in range(3)))
    upper = vec3(*(tight_hi[a] + grow[a] for a in range(3)))
    return lower, upper, dims, tight_lo, tight_hi


def swept_volume_field(meshes, transforms, voxel_size=None, *, resolution=None, lower=None, upper=None,
                       sign_mode=SweptVolumeSignMode.WINDING_NUMBER, device=None):
    """(field, lower, upper): swept_volume_sdf at every node of a dense grid (a wp.array3d of float32; node
    (0, 0, 0) at `lower`, the last at `upper`), negative inside the swept volume. `transforms`: per mesh, per
    sample, rest-to-world poses (a wp.array2d of wp.transform, or (meshes, samples, 7): xyz then quaternion
    xyzw). Size the grid by `voxel_size` or `resolution`; see the module docstring."""
    device = _device_of(meshes, device)
    for i, mesh in enumerate(meshes):
        if mesh.device != device:
            raise ValueError(f"'meshes[{i}]' is on device '{mesh.device}' but the launch device is '{device}'.")
        if sign_mode == SweptVolumeSignMode.WINDING_NUMBER and not mesh.support_winding_number:
            raise ValueError(f"'meshes[{i}]' was not built with support_winding_number=True, which the default "
                             "SweptVolumeSignMode.WINDING_NUMBER requires. Rebuild it with wp.Mesh(..., "
                             "support_winding_number=True), or pass sign_mode=SweptVolumeSignMode.NORMAL.")
    poses = _poses(transforms, device)
    _check(meshes, poses)
    lower, upper, dims, tight_lo, tight_hi = _grid(meshes, poses, voxel_size, resolution, lower, upper, 0.0)
    spacing = vec3(*((upper[a] - lower[a]) / (dims[a] - 1) for a in range(3)))
    span = [max(upper[a], tight_hi[a]) - min(lower[a], tight_lo[a]) for a in range(3)]
    max_dist = math.sqrt(sum(s * s for s in span))
    ids = array(np.array([mesh.id for mesh in meshes], np.uint64), dtype=uint64, device=device)
    field = array(np.zeros(dims, np.float32), dtype=float32, device=device)
    launch(_field_kernel, dim=dims, inputs=[ids, poses, lower, spacing, float(max_dist), int(sign_mode)],
           outputs=[field], device=device)
    return field, lower, upper


def swept_volume_mesh(meshes, transforms, voxel_size=None, *, resolution=None, lower=None, upper=None,
                      threshold: float = 0.0, sign_mode=SweptVolumeSignMode.WINDING_NUMBER, device=None):
    """(vertices, indices): the `threshold` isosurface of swept_volume_field (marching cubes), one world-space
    triangle mesh tracing the union of every mesh over every pose; the default grid is padded by threshold."""
    if sign_mode == SweptVolumeSignMode.NO_SIGN and threshold <= 0.0:
        raise ValueError(f"'threshold' must be positive when sign_mode is SweptVolumeSignMode.NO_SIGN, got "
                         f"{threshold}. An unsigned field is positive everywhere, so its zero isosurface is empty.")
    device = _device_of(meshes, device)
    poses = _poses(transforms, device)
    _check(meshes, poses)
    lower, upper, dims, _, _ = _grid(meshes, poses, voxel_size, resolution, lower, upper, max(threshold, 0.0))
    field, lower, upper = swept_volume_field(meshes, poses, resolution=dims, lower=lower, upper=upper,
                                             sign_mode=sign_mode, device=device)
    # Marching cubes lives in its own module of this package (isosurface.py); looked up through the package
    # so that this module works without it and says so.
    extractor = getattr(sys.modules[__package__], "IsoSurfaceMarchingCubes", None)
    if extractor is None:
        raise NotImplementedError("swept_volume_mesh() needs wp.geometry.IsoSurfaceMarchingCubes, which this "
                                  "build of mlwarp lacks; swept_volume_field() gives the field")
    return extractor.extract(field, threshold=threshold, lower=lower, upper=upper)


__all__ = ["SweptVolumeSignMode", "swept_volume_sdf", "swept_volume_field", "swept_volume_bounds",
           "swept_volume_mesh"]
