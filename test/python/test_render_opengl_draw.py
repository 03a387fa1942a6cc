"""mlwarp.render.OpenGLRenderer drawing real frames (headless EGL, and a window on Xvfb) checked against closed forms:
which pixels a shape covers (the pinhole projection of its silhouette), their colours (the shading model that
opengl_gl.py documents, evaluated in numpy per pixel), depths (the eye-space distance of the surface a pixel's ray
hits), and the renderer's options and errors. The tests skip only where no OpenGL context can be created."""

import os
import shutil
import subprocess
import sys

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
    renderer.paused = False
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

    def __init__(self, pos=(0.0, 0.0, 10.0), front=(0.0, 0.0, -1.0), up=(0.0, 1.0, 0.0), fov=FOV, width=W, height=H):
        self.width, self.height = width, height
        self.pos = np.asarray(pos, float)
        self.front = np.asarray(front, float) / np.linalg.norm(front)
        self.side = np.cross(self.front, up)
        self.side /= np.linalg.norm(self.side)
        self.up = np.cross(self.side, self.front)
        self.t = np.tan(np.radians(fov) / 2)
        self.aspect = width / height

    def rays(self):
        cols, rows = np.meshgrid(np.arange(self.width) + 0.5, np.arange(self.height) + 0.5)
        x = (2 * cols / self.width - 1) * self.t * self.aspect
        y = (1 - 2 * rows / self.height) * self.t
        return self.front + x[..., None] * self.side + y[..., None] * self.up  # eye depth 1 along each ray

    def pixel(self, p):
        d = np.asarray(p, float) - self.pos
        z = d @ self.front
        x, y = d @ self.side / (z * self.t * self.aspect), d @ self.up / (z * self.t)
        return (1 - y) / 2 * self.height, (x + 1) / 2 * self.width  # (row, col), continuous


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
    margin = EDGE * 2 * cam.t * 12.0 / cam.height

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


def _assert_box_depth(depth, centre, half, cam=None, region=True):
    """The box's depth where its pixels clearly hit it, the far plane where they clearly miss it (in region)."""
    d, inside, outside = _box_hits(cam or Camera(), centre, half)
    inside, outside = inside & region, outside & region
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


def _centre_depth(depth):
    """The depth at the image centre (the four pixels around it agree for a surface facing the camera)."""
    return depth[H // 2 - 1:H // 2 + 1, W // 2 - 1:W // 2 + 1]


@pytest.mark.parametrize("kind, expected", [
    # the nearest surface on the camera's axis (x = y = 0) of each shape centred at the origin along y:
    # radius 1 (capsule, cylinder), the cone's radius at mid height is half its base's
    ("capsule", 9.0), ("cylinder", 9.0), ("cone", 9.5)])
def test_round_shapes_on_the_axis(r, kind, expected):
    draw = getattr(r, f"render_{kind}")
    _, depth = _frame(r, lambda: draw("s", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 1.0, 1.5))
    # 32 segments: the polygon on the camera's axis lies between r cos(pi / 32) and r from the shape's axis
    # (the cone's radius changes by 1/3 per unit of height: the centre pixels' rays are 0.033 above and below y = 0)
    slack = 0.012 if kind == "cone" else 1e-4
    centre = _centre_depth(depth)
    assert (centre >= expected - slack).all()
    assert (centre <= 10.0 - (10.0 - expected) * np.cos(np.pi / 32) + slack).all()
    # a capsule (1.5 + 1 up and down) is taller than the cylinder (1.5)
    row_top, _ = Camera().pixel((0.0, 2.2, 0.0))
    assert (depth[int(row_top), W // 2] < FAR) == (kind == "capsule")


def test_arrow_template_ref_and_plane_checker(r):
    cam = Camera()
    # an arrow along y from the origin: shaft radius 0.2 up to 2, the cap (radius 0.36) up to 2.36
    r.render_arrow("arrow", (-2.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 0.2, 2.0)
    # a template is not drawn; references to it are
    r.render_box("unit_box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (0.25, 0.25, 0.25), is_template=True)
    r.render_ref("ref0", "unit_box", (2.0, -1.0, 0.0), (0.0, 0.0, 0.0, 1.0), (2.0, 2.0, 2.0))
    rgb, depth = _frame(r, lambda: None)
    for y, covered in ((0.1, True), (1.9, True), (2.3, True), (2.45, False), (-0.1, False)):
        row, col = cam.pixel((-2.0, y, 0.0))
        assert (depth[int(row), int(col)] < FAR) == covered, y
    right_half = np.arange(W)[None, :] >= W // 2  # the arrow is on the left
    _assert_box_depth(depth, (2.0, -1.0, 0.0), (0.5, 0.5, 0.5), region=right_half)
    with pytest.raises(KeyError, match="render_ref: no template named 'nothing'"):
        r.render_ref("ref1", "nothing", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0))

    # a plane turned to face the camera (+y to +z): half extents 2, checker cells of one unit
    r.clear()
    c1, c2 = (0.9, 0.1, 0.1), (0.1, 0.1, 0.9)
    turn = (np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4))
    rgb, depth = _frame(r, lambda: r.render_plane("p", (0.0, 0.0, 0.0), turn, 2.0, 2.0, c1, c2))
    for x, y in ((-1.5, 1.5), (-0.5, 0.5), (0.5, -0.5), (-1.5, -0.5), (0.5, 1.5), (1.5, -1.5)):
        # texture u runs along x from -2, v along the plane's z, which the turn points to -y
        cell_u, cell_v = np.floor(x + 2.0), np.floor(-y + 2.0)
        albedo = c1 if (cell_u + cell_v) % 2 == 0 else c2
        row, col = cam.pixel((x, y, 0.0))
        expected = _shade(albedo, (0, 0, 1), np.array([x, y, 0.0]), cam.pos)
        np.testing.assert_allclose(rgb[int(row), int(col)], expected, atol=COLOUR_TOL)
        np.testing.assert_allclose(depth[int(row), int(col)], 10.0, rtol=1e-4)


def test_points_and_line_strips(r):
    cam = Camera()
    points = np.array([[-2.0, 1.0, 0.0], [0.0, 0.0, 0.0], [2.0, -1.0, 1.0]], dtype=np.float32)
    colors = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    radii = np.array([0.3, 0.5, 0.4], dtype=np.float32)
    rgb, depth = _frame(r, lambda: r.render_points("pts", wp.array(points, dtype=wp.vec3), radii, colors))
    for p, c, rad in zip(points, colors, radii):
        row, col = cam.pixel(p)
        # the sphere's (8 x 8 segments) pole faces the camera's axis only for the centre point: compare the hue
        pixel = rgb[int(row), int(col)]
        assert np.argmax(pixel) == np.argmax(c) and pixel.max() > 0.4
        assert 10.0 - p[2] - rad - 0.05 < depth[int(row), int(col)] < 10.0 - p[2]
    row, col = cam.pixel((0.0, 0.0, 0.0))
    np.testing.assert_allclose(depth[int(row), int(col)], 9.5, atol=0.05)

    # a polyline (-2, -1) -> (0, 1) -> (2, 1) of radius 0.1, replacing the points
    r.clear()
    strip = [(-2.0, -1.0, 0.0), (0.0, 1.0, 0.0), (2.0, 1.0, 0.0)]
    rgb, depth = _frame(r, lambda: r.render_line_strip("strip", strip, color=(1.0, 1.0, 0.0), radius=0.1))
    for t in np.linspace(0.1, 0.9, 5):
        for a, b in zip(strip[:-1], strip[1:]):
            p = (1 - t) * np.array(a) + t * np.array(b)
            row, col = cam.pixel(p)
            assert 9.88 < depth[int(row), int(col)] < 10.0
    for p in ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (-1.0, 0.5, 0.0)):  # away from the segments
        row, col = cam.pixel(p)
        assert depth[int(row), int(col)] == FAR
    # the same name again moves the strip; visible=False hides it
    _, depth = _frame(r, lambda: r.render_line_list("strip", np.array(strip), [0, 2], radius=0.1, visible=True))
    row, col = cam.pixel((0.0, 0.0, 0.0))
    assert depth[int(row), int(col)] < 10.0
    row, col = cam.pixel((0.0, 1.0, 0.0))
    assert depth[int(row), int(col)] == FAR


def test_mesh_colours_smoothing_culling_and_errors(r):
    cam = Camera()
    # a square facing the camera (counter-clockwise seen from +z), one colour per vertex
    points = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], dtype=np.float32)
    square = np.array([[0, 1, 2], [0, 2, 3]])
    colors = np.array([[0.2, 0.6, 0.4]] * 4, dtype=np.float32)
    rgb, depth = _frame(r, lambda: r.render_mesh("m", points, square, colors=colors))
    d, hits, inside, outside = _plane_hits(cam, 0.0, 1.0, 1.0)
    np.testing.assert_allclose(rgb[inside], _shade(colors[0], (0, 0, 1), hits, cam.pos)[inside], atol=COLOUR_TOL)
    np.testing.assert_allclose(depth[inside], d[inside], rtol=1e-4)
    assert (depth[outside] == FAR).all()
    # new points, same topology (indices ignored without update_topology), one colour, flat shading
    shifted = points + np.array([0.0, 0.0, 1.0], dtype=np.float32)
    _, depth = _frame(r, lambda: r.render_mesh("m", shifted, None, colors=(1.0, 1.0, 1.0)))
    d, _, inside, _ = _plane_hits(cam, 1.0, 1.0, 1.0)
    np.testing.assert_allclose(depth[inside], d[inside], rtol=1e-4)

    # a roof: two faces folded along y = 0, tilted up and down by 30 degrees; flat shading lights each face with
    # its own normal, the same for every pixel of it but for the highlight
    r.clear()
    c = np.cos(np.pi / 6)
    roof = np.array([[-1, -c, -0.5], [1, -c, -0.5], [1, 0, 0], [-1, 0, 0], [1, c, -0.5], [-1, c, -0.5]],
                    dtype=np.float32)
    faces = np.array([[0, 1, 2], [0, 2, 3], [3, 2, 4], [3, 4, 5]])
    rgb, _ = _frame(r, lambda: r.render_mesh("roof", roof, faces, colors=(0.5, 0.5, 0.9), smooth_shading=False))
    for y, normal in ((-0.4, (0.0, -0.5, c)), (0.4, (0.0, 0.5, c))):
        point = np.array([0.3, y, -np.tan(np.pi / 6) * abs(y)])
        row, col = cam.pixel(point)
        np.testing.assert_allclose(rgb[int(row), int(col)], _shade((0.5, 0.5, 0.9), normal, point, cam.pos),
                                   atol=COLOUR_TOL)

    # the same square wound clockwise seen from the camera: culled, unless backface culling is off
    r.clear()
    _, depth = _frame(r, lambda: r.render_mesh("back", points, square[:, ::-1], smooth_shading=False))
    assert (depth == FAR).all()
    r.enable_backface_culling = False
    _, depth = _frame(r, lambda: None)
    d, _, inside, _ = _plane_hits(cam, 0.0, 1.0, 1.0)
    np.testing.assert_allclose(depth[inside], d[inside], rtol=1e-4)

    with pytest.raises(ValueError, match=r"render_mesh\('bad'\): 4 indices do not group into triangles"):
        r.render_mesh("bad", points, [0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"render_mesh\('bad'\): indices must lie in \[0, 4\), got \[0, 4\]"):
        r.render_mesh("bad", points, [0, 1, 4])


def test_depth_view_wireframe_and_sky(r):
    cam = Camera()
    box = lambda: r.render_box("b", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 0.5, 0.5), color=(1.0, 0.0, 0.0))
    # render_depth shows the eye depth from near (black) to far (white)
    r.render_depth = True
    rgb, _ = _frame(r, box)
    _, _, inside, _ = _plane_hits(cam, 0.5, 1.0, 0.5)
    np.testing.assert_allclose(rgb[inside], (9.5 - NEAR) / (FAR - NEAR), atol=1 / 255)
    # wireframe: the edges of the two triangles of the front face, not the inside of a triangle
    r.render_depth = False
    r.render_wireframe = True
    _, depth = _frame(r, lambda: None)
    row, col = cam.pixel((0.5, -0.2, 0.5))  # away from the face's diagonal y = x / 2 and its edges
    assert depth[int(row), int(col)] == FAR
    row, col = cam.pixel((1.0, 0.0, 0.5))  # on the face's right edge
    assert depth[int(row), int(col) - 1: int(col) + 1].min() < FAR
    r.render_wireframe = False

    # the sky: the background colour straight up, halfway to white at the horizon
    r.clear()
    r.draw_sky = True
    background = np.array(BLACK) if r.background_color == BLACK else np.array(r.background_color)
    r.background_color = (0.2, 0.4, 0.6)
    try:
        r.update_view_matrix(cam_front=(0.0, 1.0, 0.0), cam_up=(0.0, 0.0, -1.0))
        rgb, _ = _frame(r, lambda: None)
        np.testing.assert_allclose(_centre_depth(rgb), np.broadcast_to((0.2, 0.4, 0.6), (2, 2, 3)), atol=1 / 255)
        r.update_view_matrix(cam_front=(0.0, 0.0, -1.0), cam_up=(0.0, 1.0, 0.0))
        rgb, _ = _frame(r, lambda: None)
        # the rows just above the centre look slightly up: smoothstep(0, 0.6, e) of their elevation e
        row = H // 2 - 5
        e = Camera().rays()[row, W // 2]
        e = e[1] / np.linalg.norm(e)
        s = (e / 0.6) ** 2 * (3 - 2 * e / 0.6)
        expected = (1 - s) * (0.5 * np.array([0.2, 0.4, 0.6]) + 0.5) + s * np.array([0.2, 0.4, 0.6])
        np.testing.assert_allclose(rgb[row, W // 2], expected, atol=1.5 / 255)
    finally:
        r.background_color = tuple(background)
        r.draw_sky = False


def test_get_pixels_uint8_and_bad_targets(r):
    _frame(r, lambda: r.render_box("b", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 0.5, 0.5),
                                   color=(1.0, 0.0, 0.0)))
    as_float = wp.zeros((H, W, 3), dtype=wp.float32)
    as_bytes = wp.zeros((H, W, 3), dtype=wp.uint8)
    r.get_pixels(as_float, split_up_tiles=False)
    r.get_pixels(as_bytes, split_up_tiles=False, use_uint8=True)
    np.testing.assert_array_equal(np.round(as_float.numpy() * 255).astype(np.uint8), as_bytes.numpy())
    assert as_bytes.numpy()[H // 2, W // 2, 0] > 100
    with pytest.raises(ValueError, match=r"get_pixels: target_image must have shape \(120, 160, 1\) for mode "
                                         r"'depth', got \(120, 160, 3\)"):
        r.get_pixels(as_float, mode="depth")
    with pytest.raises(ValueError, match=r"get_pixels: target_image must have dtype float32 for mode 'rgb', got "
                                         r"uint8"):
        r.get_pixels(as_bytes)
    with pytest.raises(ValueError, match=r"get_pixels: mode must be 'rgb' or 'depth', got 'normals'"):
        r.get_pixels(as_float, mode="normals")


def test_tiles_draw_their_instances_through_their_views(r):
    # instance ids count from 0 in the order instances are added: the box is 0, the sphere 1
    r.render_box("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 0.5, 0.5))
    r.render_sphere("sphere", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 1.5)
    from_x = OpenGLRenderer.compute_view_matrix(r, (10.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    r.setup_tiled_rendering([[0], [1], [0, 1], []], view_matrices=[None, None, from_x, None])
    assert (r.tiled_rendering, r.num_tiles, r.tile_width, r.tile_height) == (True, 4, W // 2, H // 2)
    r.begin_frame(0.0)
    r.end_frame()
    tiles = wp.zeros((4, H // 2, W // 2, 1), dtype=wp.float32)
    r.get_pixels(tiles, mode="depth")
    tiles = tiles.numpy()[..., 0]
    cam = Camera(width=W // 2, height=H // 2)
    # tile 0: the box alone, its silhouette and depth as in the whole frame (same field of view and aspect)
    d, inside, outside = _box_hits(cam, (0.0, 0.0, 0.0), (1.0, 0.5, 0.5))
    np.testing.assert_allclose(tiles[0][inside], d[inside], rtol=1e-4)
    np.testing.assert_allclose(tiles[0][outside], FAR, rtol=1e-5)
    # tile 1: the sphere alone (its 32-segment polygon within 0.015 of radius 1.5 on the axis)
    centre = tiles[:, H // 4 - 1:H // 4 + 1, W // 4 - 1:W // 4 + 1]
    assert ((centre[1] > 8.5 - 1e-4) & (centre[1] < 8.5 + 0.015)).all()
    # tile 2: both, seen from +x: the sphere (x up to 1.5) is in front of the box (x up to 1)
    assert ((centre[2] > 8.5 - 1e-4) & (centre[2] < 8.5 + 0.015)).all()
    d, inside, _ = _box_hits(Camera(pos=(10.0, 0.0, 0.0), front=(-1.0, 0.0, 0.0), width=W // 2, height=H // 2),
                             (0.0, 0.0, 0.0), (1.0, 0.5, 0.5))
    assert (tiles[2][inside] < 9.0 + 1e-3).all()
    # tile 3: nothing
    assert (tiles[3] == FAR).all()
    # the whole frame holds the tiles row by row from the top left
    whole = wp.zeros((H, W, 1), dtype=wp.float32)
    r.get_pixels(whole, split_up_tiles=False, mode="depth")
    whole = whole.numpy()[..., 0]
    np.testing.assert_array_equal(whole[:H // 2, :W // 2], tiles[0])
    np.testing.assert_array_equal(whole[H // 2:, W // 2:], tiles[3])
    r.update_tile(3, instances=[0])
    r.begin_frame(0.0)
    r.end_frame()
    rgb = wp.zeros((4, H // 2, W // 2, 3), dtype=wp.uint8)
    r.get_pixels(rgb, use_uint8=True)
    np.testing.assert_array_equal(rgb.numpy()[3], rgb.numpy()[0])
    with pytest.raises(ValueError, match=r"get_pixels: target_image must have shape \(4, 60, 80, 3\) for mode 'rgb' "
                                         r"split up in tiles, got \(120, 160, 3\)"):
        r.get_pixels(wp.zeros((H, W, 3), dtype=wp.float32))
    with pytest.raises(ValueError, match=r"setup_tiled_rendering: view_matrices has 1 entries for 2 tiles"):
        r.setup_tiled_rendering([[0], [1]], view_matrices=[from_x])


# a windowed renderer in a child process (pyglet picks its window system once per process): the centred box's
# centre pixel colour and depth, or the context error
WINDOWED_SCENE = f"""
import json, mlwarp as wp
from mlwarp.render import OpenGLRenderer
from mlwarp.render.opengl_gl import OpenGLContextError
try:
    r = OpenGLRenderer(headless=False, camera_pos=(0.0, 0.0, 10.0), **{PLAIN!r})
except OpenGLContextError as e:
    print(json.dumps({{"error": str(e)}}))
    raise SystemExit
assert not r.headless and r.window.visible
for frame in range(3):
    r.begin_frame(frame / 60)
    r.render_box("b", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 0.5, 0.5), color=(1.0, 0.0, 0.0))
    r.end_frame()
rgb = wp.zeros(({H}, {W}, 3), dtype=wp.float32)
depth = wp.zeros(({H}, {W}, 1), dtype=wp.float32)
r.get_pixels(rgb, split_up_tiles=False)
r.get_pixels(depth, split_up_tiles=False, mode="depth")
print(json.dumps({{"rgb": rgb.numpy()[{H // 2}, {W // 2}].tolist(), "depth": float(depth.numpy()[{H // 2}, {W // 2}, 0]),
                  "running": r.is_running()}}))
r.close()
print(json.dumps({{"closed": not r.is_running()}}))
"""


def _child_env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env


def _start_xvfb():
    """An Xvfb server on a free display number (Xvfb -displayfd), or None where Xvfb is not installed."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        return None, None
    read_end, write_end = os.pipe()
    server = subprocess.Popen([xvfb, "-displayfd", str(write_end), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                              pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    return server, f":{number}"


def test_windowed_renderer_on_a_display():
    server = None
    display = os.environ.get("DISPLAY")
    if not display:
        server, display = _start_xvfb()
        if server is None:
            pytest.skip("no display ($DISPLAY) and no Xvfb to start one (Debian: apt-get install xvfb)")
    try:
        out = subprocess.run([sys.executable, "-c", WINDOWED_SCENE], env=_child_env(DISPLAY=display),
                             capture_output=True, text=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    assert out.returncode == 0, out.stderr
    import json

    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if "error" in lines[0]:
        pytest.skip(f"no OpenGL context can be created on the display: {lines[0]['error']}")
    cam = Camera()
    centre = np.array([0.0, 0.0, 0.5])
    # the centre pixel's ray meets the face within half a pixel of the axis: its shade differs by < 1e-3
    np.testing.assert_allclose(lines[0]["rgb"], _shade((1.0, 0.0, 0.0), (0, 0, 1), centre, cam.pos), atol=COLOUR_TOL)
    np.testing.assert_allclose(lines[0]["depth"], 9.5, rtol=1e-4)
    assert lines[0]["running"] and lines[1]["closed"]


def test_without_a_display_the_error_names_what_is_missing():
    out = subprocess.run([sys.executable, "-c", WINDOWED_SCENE], env=_child_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    message = out.stdout.strip()
    assert "OpenGLRenderer could not create a windowed OpenGL context (NoSuchDisplayException" in message
    assert "a window needs a display ($DISPLAY, e.g. Xvfb)" in message
    assert "a headless context needs EGL with an OpenGL 3.3 driver" in message


def test_one_window_system_per_process(renderer):
    # the module's renderer loaded pyglet's headless (EGL) windows into this process
    with pytest.raises(OpenGLContextError, match=r"OpenGLRenderer\(headless=False\): pyglet's windows are already "
                                                 r"headless \(EGL\) in this process"):
        OpenGLRenderer(headless=False, **PLAIN)


def test_mouse_and_keys_turn_the_camera_and_pause(r):
    from pyglet.window import key, mouse

    pressed = []
    r.register_key_press_callback(lambda symbol, modifiers: pressed.append(symbol))
    # a drag of 100 pixels right and 50 up turns the camera 10 degrees to the right (yaw) and 5 up (pitch)
    # events reach the renderer when a frame is updated (headless: those queued by dispatch_event)
    r.window.dispatch_event("on_mouse_drag", 0, 0, 100, 50, mouse.LEFT, 0)
    r.update()
    yaw, pitch = np.radians(-90.0 + 10.0), np.radians(5.0)
    expected = (np.cos(yaw) * np.cos(pitch), np.sin(pitch), np.sin(yaw) * np.cos(pitch))
    np.testing.assert_allclose(tuple(r.camera_front), expected, atol=1e-9)
    fov = r.camera_fov
    try:
        r.window.dispatch_event("on_mouse_scroll", 0, 0, 0, 2)  # scrolling up zooms in by a degree per step
        r.update()
        assert r.camera_fov == fov - 2
    finally:
        r.camera_fov = fov
        r.update_projection_matrix()
    r.window.dispatch_event("on_key_press", key.SPACE, 0)
    r.window.dispatch_event("on_key_release", key.SPACE, 0)
    r.update()
    assert r.paused and pressed == [key.SPACE]
    r.window.dispatch_event("on_key_press", key.SPACE, 0)
    r.window.dispatch_event("on_key_release", key.SPACE, 0)
    r.update()
    assert not r.paused
    # W held for a frame moves the camera forward by CAMERA_SPEED per second of that frame
    before = np.array(r.camera_pos)
    r.window.dispatch_event("on_key_press", key.W, 0)
    r.update()  # each update while W is held moves the camera along its front, CAMERA_SPEED per second
    r.window.dispatch_event("on_key_release", key.W, 0)
    r.update()
    moved = np.array(r.camera_pos) - before
    assert np.linalg.norm(moved) > 0
    np.testing.assert_allclose(moved / np.linalg.norm(moved), expected, atol=1e-9)
    r.enable_mouse_interaction = False
    try:
        r.window.dispatch_event("on_mouse_drag", 0, 0, 100, 50, mouse.LEFT, 0)
        r.update()
        np.testing.assert_allclose(tuple(r.camera_front), expected, atol=1e-9)
    finally:
        r.enable_mouse_interaction = True
        r._key_callbacks.clear()
