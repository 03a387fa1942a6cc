"""wp.geometry's swept volumes against closed forms: a fine sphere mesh translated through poses gives the
distance field of the union of spheres (a capsule for a dense sweep), a rotated pose moves the field, the
bounds are the posed boxes' hull, each sign mode agrees on a closed mesh, NO_SIGN is unsigned; and the grid's
argument errors (Warp's messages)."""

import numpy as np
import pytest

import mlwarp as wp
import mlwarp.geometry as geo

from test_geometry_mesh import uv_sphere

RADIUS = 0.5


def sphere(winding=True):
    pts, tris = uv_sphere(RADIUS, rings=24, segments=32)
    return wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32),
                   support_winding_number=winding)


def translations(offsets):
    offsets = np.asarray(offsets, np.float32)
    tr = np.zeros((*offsets.shape[:-1], 7), np.float32)
    tr[..., :3] = offsets
    tr[..., 6] = 1.0
    return tr


def nodes(field, lower, upper):
    dims = np.array(field.shape)
    lo, hi = np.array([lower[0], lower[1], lower[2]]), np.array([upper[0], upper[1], upper[2]])
    idx = np.stack(np.meshgrid(*[np.arange(d) for d in dims], indexing="ij"), axis=-1).reshape(-1, 3)
    return lo + idx * (hi - lo) / (dims - 1), field.numpy().reshape(-1)


def test_two_poses_give_the_union_of_two_spheres():
    centres = np.array([[-0.8, 0.0, 0.0], [0.8, 0.3, 0.0]])
    field, lower, upper = geo.swept_volume_field([sphere()], translations([centres]), voxel_size=0.1)
    p, f = nodes(field, lower, upper)
    ref = np.min([np.linalg.norm(p - c, axis=1) - RADIUS for c in centres], axis=0)
    band = np.abs(ref) < 0.4
    np.testing.assert_allclose(f[band], ref[band], atol=0.02)  # the mesh's facets are within 0.01 of the sphere
    assert (f[ref < -0.05] < 0).all() and (f[ref > 0.05] > 0).all()


def test_rotated_pose_moves_the_field():
    pts, tris = uv_sphere(0.3, rings=16, segments=24, centre=(1.0, 0.0, 0.0))
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32),
                   support_winding_number=True)
    tr = np.zeros((1, 1, 7), np.float32)
    tr[0, 0, 5], tr[0, 0, 6] = np.sin(np.pi / 4), np.cos(np.pi / 4)  # 90 degrees about z: +x -> +y
    field, lower, upper = geo.swept_volume_field([mesh], tr, resolution=(21, 21, 21), lower=(-1.5, -1.5, -1.5),
                                                 upper=(1.5, 1.5, 1.5))
    p, f = nodes(field, lower, upper)
    ref = np.linalg.norm(p - np.array([0.0, 1.0, 0.0]), axis=1) - 0.3
    band = np.abs(ref) < 0.5
    np.testing.assert_allclose(f[band], ref[band], atol=0.02)


def test_bounds_are_the_hull_of_the_posed_boxes():
    offsets = [[[0.0, 0.0, 0.0], [2.0, -1.0, 0.5]]]
    lower, upper = geo.swept_volume_bounds([sphere()], translations(offsets), padding=0.25)
    np.testing.assert_allclose([lower[0], lower[1], lower[2]], [-0.75, -1.75, -0.75], atol=1e-5)
    np.testing.assert_allclose([upper[0], upper[1], upper[2]], [2.75, 0.75, 1.25], atol=1e-5)


def test_voxel_size_is_the_spacing_and_resolution_the_shape():
    tr = translations([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    field, lower, upper = geo.swept_volume_field([sphere()], tr, voxel_size=0.1)
    spacing = (np.array([upper[a] - lower[a] for a in range(3)])) / (np.array(field.shape) - 1)
    np.testing.assert_allclose(spacing, 0.1, rtol=1e-5)
    field, _, _ = geo.swept_volume_field([sphere()], tr, resolution=(6, 7, 8))
    assert field.shape == (6, 7, 8)


@pytest.mark.parametrize("mode", [geo.SweptVolumeSignMode.NORMAL, geo.SweptVolumeSignMode.PARITY,
                                  geo.SweptVolumeSignMode.NO_SIGN])
def test_sign_modes_on_a_closed_sphere(mode):
    tr = translations([[[0.0, 0.0, 0.0]]])
    # (no node at the centre, where every direction is as near and the normal sign is Warp's coin toss)
    field, lower, upper = geo.swept_volume_field([sphere(winding=False)], tr, resolution=(9, 9, 9),
                                                 lower=(-0.93, -1.01, -0.97), upper=(1.07, 0.99, 1.03),
                                                 sign_mode=mode)
    p, f = nodes(field, lower, upper)
    ref = np.linalg.norm(p, axis=1) - RADIUS
    if mode == geo.SweptVolumeSignMode.NO_SIGN:
        ref = np.abs(ref)
    np.testing.assert_allclose(f, ref, atol=0.02)


@pytest.mark.parametrize("call, message", [
    (lambda m, tr: geo.swept_volume_field([], tr, voxel_size=0.1), "'meshes' must contain at least one mesh."),
    (lambda m, tr: geo.swept_volume_field([m], tr), "Provide either 'voxel_size' or 'resolution'."),
    (lambda m, tr: geo.swept_volume_field([m], tr, voxel_size=0.1, resolution=(4, 4, 4)),
     "Pass either 'voxel_size' or 'resolution', not both."),
    (lambda m, tr: geo.swept_volume_field([m], tr, voxel_size=-0.5), "'voxel_size' must be positive, got -0.5."),
    (lambda m, tr: geo.swept_volume_field([m], tr, resolution=(4, 4)),
     "'resolution' must have exactly 3 entries, got (4, 4)."),
    (lambda m, tr: geo.swept_volume_field([m], tr, resolution=(4, 4, 1)),
     "'resolution' must be at least 2 along each axis, got (4, 4, 1)."),
    (lambda m, tr: geo.swept_volume_field([m], tr, resolution=(4, 4, 4), lower=(0.0, 0.0, 0.0)),
     "Pass both 'lower' and 'upper', or neither."),
    (lambda m, tr: geo.swept_volume_field([m], np.concatenate([tr, tr]), voxel_size=0.1),
     "'transforms' has 2 rows but there are 1 meshes."),
    (lambda m, tr: geo.swept_volume_field([m], np.zeros((1, 0, 7), np.float32), voxel_size=0.1),
     "'transforms' must contain at least one pose sample."),
    (lambda m, tr: geo.swept_volume_field([m], np.zeros((1, 2, 6), np.float32), voxel_size=0.1),
     "'transforms' must be a wp.array2d(dtype=wp.transform) or an array of shape (num_meshes, num_samples, 7), "
     "got shape (1, 2, 6)."),
    (lambda m, tr: geo.swept_volume_mesh([m], tr, voxel_size=0.1, sign_mode=geo.SweptVolumeSignMode.NO_SIGN),
     "'threshold' must be positive when sign_mode is SweptVolumeSignMode.NO_SIGN, got 0.0. An unsigned field is "
     "positive everywhere, so its zero isosurface is empty."),
])
def test_bad_arguments_raise_warps_messages(call, message):
    with pytest.raises(ValueError) as e:
        call(sphere(), translations([[[0.0, 0.0, 0.0]]]))
    assert str(e.value) == message


def test_winding_number_mode_needs_winding_support():
    with pytest.raises(ValueError) as e:
        geo.swept_volume_field([sphere(winding=False)], translations([[[0.0, 0.0, 0.0]]]), voxel_size=0.1)
    assert str(e.value).startswith("'meshes[0]' was not built with support_winding_number=True")
