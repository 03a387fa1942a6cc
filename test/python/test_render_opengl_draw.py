"""mlwarp.render.OpenGLRenderer drawing real frames (headless EGL, and a window on Xvfb) checked against closed forms:
which pixels a shape covers (the pinhole projection of its silhouette), their colours (the shading model that
opengl_gl.py documents, evaluated in numpy per pixel), depths (the eye-space distance of the surface a pixel's ray
hits), and the renderer's options and errors. The tests skip only where no OpenGL context can be created."""

import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.render import OpenGLRenderer
from mlwarp.render.opengl_gl import AMBIENT, DIFFUSE, SHININESS, SPECULAR, SUN_DIRECTION, OpenGLContextError

W, H = 160, 120
FOV = 45.0
NEAR, FAR = 1.0, 100.0
BLACK = (0.0, 0.0, 0.0)
PLAIN = dict(screen_width=W, screen_height=H, camera_fov=FOV, near_plane=NEAR, far_plane=FAR, draw_sky=False,
             draw_grid=False, draw_axis=False, show_info=False, background_color=BLACK)
# rasterisation decides pixels whose centre lies within this many pixels of a silhouette's edge either way
EDGE = 1.0
COLOUR_TOL = 2.5 / 255  # one 8-bit step of rounding, and the interpolation of normals across a flat face


def _make(**kwargs):
    try:
        return OpenGLRenderer(headless=True, **{**PLAIN, **kwargs})
    except OpenGLContextError as e:
        pytest.skip(f"no OpenGL context can be created here: {e}")


@pytest.fixture(scope="module")
def renderer():
    r = _make()
    yield r
    r.close()


@pytest.fixture
def r(renderer):
    """The module's renderer, emptied, with the default options and the camera at (0, 0, 10) looking down -z."""
    renderer.clear()
    renderer.render_depth = renderer.render_wireframe = False
    renderer.enable_backface_culling = True
    renderer.draw_sky = renderer.draw_grid = renderer.draw_axis = False
    renderer.update_view_matrix(cam_pos=(0.0, 0.0, 10.0), cam_front=(0.0, 0.0, -1.0), cam_up=(0.0, 1.0, 0.0))
    return renderer


def _frame(r, draw):
    r.begin_frame(0.0)
    draw()
    r.end_frame()
    rgb = wp.zeros((H, W, 3), dtype=wp.float32)
    depth = wp.zeros((H, W, 1), dtype=wp.float32)
    assert r.get_pixels(rgb, split_up_tiles=False, mode="rgb")
    assert r.get_pixels(depth, split_up_tiles=False, mode="depth")
    return rgb.numpy(), depth.numpy()[..., 0]


class Camera:
    """A pinhole camera as gluPerspective/gluLookAt define it, evaluated in numpy: the world-space ray of every
    pixel centre (rows top-down) and the pixel of a world point."""

    def __init__(self, pos=(0.0, 0.0, 10.0), front=(0.0, 0.0, -1.0), up=(0.0, 1.0, 0.0), fov=FOV):
        self.pos = np.asarray(pos, float)
        self.front = np.asarray(front, float) / np.linalg.norm(front)
        self.side = np.cross(self.front, up)
        self.side /= np.linalg.norm(self.side)
        self.up = np.cross(self.side, self.front)
        self.t = np.tan(np.radians(fov) / 2)
        self.aspect = W / H

    def rays(self):
        cols, rows = np.meshgrid(np.arange(W) + 0.5, np.arange(H) + 0.5)
        x = (2 * cols / W - 1) * self.t * self.aspect
        y = (1 - 2 * rows / H) * self.t
        return self.front + x[..., None] * self.side + y[..., None] * self.up  # eye depth 1 along each ray

    def pixel(self, p):
        d = np.asarray(p, float) - self.pos
        z = d @ self.front
        x, y = d @ self.side / (z * self.t * self.aspect), d @ self.up / (z * self.t)
        return (1 - y) / 2 * H, (x + 1) / 2 * W  # (row, col), continuous


def _shade(albedo, normal, points, cam_pos):
    """The documented shading model: albedo * (ambient + diffuse n.l) + specular (n.h)^shininess, per pixel."""
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    v = cam_pos - points
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    h = SUN_DIRECTION + v
    h /= np.linalg.norm(h, axis=-1, keepdims=True)
    lit = AMBIENT + DIFFUSE * max(n @ SUN_DIRECTION, 0.0)
    highlight = SPECULAR * np.maximum(h @ n, 0.0) ** SHININESS
    return np.clip(np.asarray(albedo) * lit + highlight[..., None], 0.0, 1.0)


def _plane_hits(cam, z_plane, half_x, half_y, centre=(0.0, 0.0)):
    """Per pixel: the eye depth at which its ray meets the plane z = z_plane, the hit points, and the masks of
    pixels whose centre hits the rectangle |x - cx| <= half_x, |y - cy| <= half_y clearly inside / clearly outside
    (by more than EDGE pixels)."""
    rays = cam.rays()
    depth = (z_plane - cam.pos[2]) / rays[..., 2]
    points = cam.pos + depth[..., None] * rays
    pixel_size = 2 * cam.t * depth / H  # world size of a pixel on the plane
    dx = np.abs(points[..., 0] - centre[0]) - half_x
    dy = np.abs(points[..., 1] - centre[1]) - half_y
    inside = (dx < -EDGE * pixel_size) & (dy < -EDGE * pixel_size)
    outside = (dx > EDGE * pixel_size) | (dy > EDGE * pixel_size)
    return depth, points, inside, outside


def _box_hits(cam, centre, half):
    """Per pixel: the eye depth at which its ray enters the axis-aligned box (centre, half extents), and the masks
    of pixels whose ray clearly hits it / clearly misses it (the box shrunk / grown by EDGE pixels at depth 12)."""
    rays = cam.rays()
    margin = EDGE * 2 * cam.t * 12.0 / H

    def enter(grow):
        lo = (np.asarray(centre) - np.asarray(half) - grow - cam.pos) / rays
        hi = (np.asarray(centre) + np.asarray(half) + grow - cam.pos) / rays
        t_near = np.minimum(lo, hi).max(axis=-1)
        t_far = np.maximum(lo, hi).min(axis=-1)
        return t_near, t_near <= t_far

    with np.errstate(divide="ignore", invalid="ignore"):
        depth, _ = enter(0.0)
        _, inside = enter(-margin)
        _, grown_hit = enter(margin)
    return depth, inside, ~grown_hit


def _assert_box_depth(depth, centre, half, cam=None):
    d, inside, outside = _box_hits(cam or Camera(), centre, half)
    assert inside.sum() > 50
    np.testing.assert_allclose(depth[inside], d[inside], rtol=1e-4)
    np.testing.assert_allclose(depth[outside], FAR, rtol=1e-5)


def test_box_covers_its_projection_with_its_shaded_colour_and_depth(r):
    red = (1.0, 0.0, 0.0)
    rgb, depth = _frame(r, lambda: r.render_box("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 0.5, 0.5),
                                                 color=red))
    cam = Camera()
    # the camera sees only the front face z = 0.5 of a box centred on its axis
    d, points, inside, outside = _plane_hits(cam, 0.5, 1.0, 0.5)
    assert inside.sum() > 300 and outside.sum() > 10000
    np.testing.assert_allclose(rgb[inside], _shade(red, (0, 0, 1), points, cam.pos)[inside], atol=COLOUR_TOL)
    np.testing.assert_array_equal(rgb[outside], 0.0)
    np.testing.assert_allclose(depth[inside], d[inside], rtol=1e-4)  # 9.5 along the axis
    np.testing.assert_allclose(depth[outside], FAR, rtol=1e-5)


def test_sphere_depth_is_the_rays_first_intersection(r):
    radius, centre = 1.5, np.array([0.5, -0.25, 0.0])
    _, depth = _frame(r, lambda: r.render_sphere("s", tuple(centre), (0.0, 0.0, 0.0, 1.0), radius,
                                                 color=(0.2, 0.4, 0.8)))
    cam = Camera()
    rays = cam.rays()  # unit eye depth: |ray| = 1 / cos
    oc = cam.pos - centre
    a = np.einsum("ijk,ijk->ij", rays, rays)
    b = 2 * rays @ oc
    disc = b * b - 4 * a * (oc @ oc - radius**2)
    t = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)  # eye depth of the nearer intersection
    # the mesh's quads (32 segments) lie inside the sphere by at most 2 r (1 - cos(pi / 32)) = 0.015, which
    # a ray meeting the surface at incidence i sees as 0.015 / cos(i); rays passing the centre at a distance
    # below 0.8 r have cos(i) >= 0.6
    miss_distance = np.linalg.norm(np.cross(rays, oc), axis=-1) / np.sqrt(a)
    clearly_in = miss_distance < 0.8 * radius
    clearly_out = disc < 0
    np.testing.assert_allclose(depth[clearly_in], t[clearly_in], atol=0.03)
    np.testing.assert_allclose(depth[clearly_out], FAR, rtol=1e-5)


def test_instances_move_hide_and_follow_bodies(r):
    green = (0.0, 1.0, 0.0)

    def draw_at(x):
        return _frame(r, lambda: r.render_box("b", (x, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (0.5, 0.5, 0.5),
                                              color=green))[1]

    for x in (-2.0, 1.5):  # the same name again moves the instance
        _assert_box_depth(draw_at(x), (x, 0.0, 0.0), (0.5, 0.5, 0.5))
    r.update_shape_instance("b", visible=False)
    assert (_frame(r, lambda: None)[1] == FAR).all()
    r.update_shape_instance("b", pos=(0.0, 1.0, 0.0), visible=True)
    _assert_box_depth(_frame(r, lambda: None)[1], (0.0, 1.0, 0.0), (0.5, 0.5, 0.5))
    r.remove_shape_instance("b")
    assert (_frame(r, lambda: None)[1] == FAR).all()

    # an instance attached to a body is drawn at body transform * its own transform
    r.render_box("on_body", (0.5, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (0.5, 0.5, 0.5), parent_body="body0")
    assert (_frame(r, lambda: None)[1] == FAR).all()  # no body transform yet
    r.update_body_transforms(wp.array([(-2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)], dtype=wp.transform))
    _assert_box_depth(_frame(r, lambda: None)[1], (-1.5, 1.0, 0.0), (0.5, 0.5, 0.5))


def test_rotated_box_and_up_axis_z_with_scaling():
    r = _make(up_axis="Z", scaling=0.5, camera_pos=(0.0, 0.0, 10.0))
    try:
        # world z is up and the scene is halved: world (x, y, z) is drawn at 0.5 (y, z, x); a box at world
        # (0, 0, 4) is drawn at y = 2. Turned 90 degrees about world z, its half extents (0.5, 2, 1.5) lie along
        # world y, -x, z: drawn 0.25 along x, 0.75 along y and 1.0 along z, its front face at z = 1.0
        q = (0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4))
        _, depth = _frame(r, lambda: r.render_box("b", (0.0, 0.0, 4.0), q, (0.5, 2.0, 1.5)))
        _assert_box_depth(depth, (0.0, 2.0, 0.0), (0.25, 0.75, 1.0))
    finally:
        r.close()
