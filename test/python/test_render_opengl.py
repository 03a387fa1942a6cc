"""mlwarp.render's OpenGLRenderer parts that run without a display, against closed forms and numpy: the error of
a machine without pyglet, the shapes' meshes (on their surfaces, unit normals, outward windings), the camera
matrices (gluPerspective / gluLookAt), the kernels that fill the renderer's buffers and read frames back, and
Warp's render utils (color maps, solidify_mesh)."""

import sys

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.render import OpenGLRenderer, opengl_kernels as k, utils
from mlwarp.render.opengl_meshes import look_at


def _quat_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _unit_quats(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_without_pyglet_the_renderer_names_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyglet", None)  # what an interpreter without pyglet sees
    with pytest.raises(ImportError, match=r"OpenGLRenderer requires pyglet \(version >= 2.0\) to be installed "
                                          r"\(pip install pyglet\), and an OpenGL context"):
        OpenGLRenderer(headless=True)
    monkeypatch.setattr(OpenGLRenderer, "gl", None)
    with pytest.raises(ImportError, match="OpenGLRenderer requires pyglet"):
        OpenGLRenderer.initialize_gl()


def _triangles(vertices, indices):
    return vertices[indices.reshape(-1, 3), :3]


def _assert_outward(vertices, indices, centre_of):
    """Every triangle's winding normal points away from the shape's axis/centre (centre_of: point -> centre)."""
    tri = _triangles(vertices, indices)
    winding = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    big = np.linalg.norm(winding, axis=1) > 1e-9  # degenerate pole triangles have no direction
    centroid = tri.mean(axis=1)
    outward = centroid - np.array([centre_of(c) for c in centroid])
    assert np.all(np.einsum("ij,ij->i", winding[big], outward[big]) < 0) or \
        np.all(np.einsum("ij,ij->i", winding[big], outward[big]) > 0)


def test_sphere_and_box_meshes():
    v, i = OpenGLRenderer._create_sphere_mesh(2.0, 8, 12)
    assert v.shape == (9 * 13, 8) and v.dtype == np.float32 and i.dtype == np.uint32
    assert i.size == 8 * 12 * 6 and i.max() < len(v)
    np.testing.assert_allclose(np.linalg.norm(v[:, :3], axis=1), 2.0, rtol=1e-6)
    np.testing.assert_allclose(v[:, 3:6] * 2.0, v[:, :3], atol=1e-6)  # normals are the radial directions
    assert v[:, 6:].min() >= 0.0 and v[:, 6:].max() <= 1.0
    _assert_outward(v, i, lambda c: np.zeros(3))

    v, i = OpenGLRenderer._create_box_mesh((1.0, 2.0, 3.0))
    assert v.shape == (24, 8) and i.size == 36
    np.testing.assert_array_equal(np.abs(v[:, :3]), np.tile([1.0, 2.0, 3.0], (24, 1)))
    tri = _triangles(v, i)
    winding = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    # each face's triangles lie on the face its vertices' normal names, wound the same way for all faces
    face_normals = v[i.reshape(-1, 3)[:, 0], 3:6]
    signs = np.sign(np.einsum("ij,ij->i", winding, face_normals))
    assert np.all(signs == signs[0])


@pytest.mark.parametrize("up_axis", [0, 1, 2])
def test_capsule_cylinder_cone_and_arrow_meshes(up_axis):
    axis = np.eye(3)[up_axis]
    v, i = OpenGLRenderer._create_capsule_mesh(0.5, 1.5, up_axis, segments=16)
    p = v[:, :3].astype(float)
    along = p @ axis
    closest = np.clip(along, -1.5, 1.5)[:, None] * axis  # nearest point of the capsule's segment
    np.testing.assert_allclose(np.linalg.norm(p - closest, axis=1), 0.5, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(v[:, 3:6], axis=1), 1.0, rtol=1e-5)
    assert i.max() < len(v)

    v, i = OpenGLRenderer._create_cylinder_mesh(0.5, 1.5, up_axis, segments=16)
    p = v[:, :3].astype(float)
    along = p @ axis
    radial = np.linalg.norm(p - along[:, None] * axis, axis=1)
    np.testing.assert_allclose(np.abs(along), 1.5, rtol=1e-6)  # every vertex is on a cap's plane
    assert np.all((np.abs(radial - 0.5) < 1e-6) | (radial < 1e-6))  # on the rim or a cap's centre
    assert i.size == 16 * 2 * 3 * 2 and i.max() < len(v)
    _assert_outward(v, i, lambda c: np.zeros(3))  # convex about the origin

    v, _ = OpenGLRenderer._create_cone_mesh(0.5, 1.5, up_axis, segments=16)
    p = v[:, :3].astype(float)
    top = p[p @ axis > 0]
    np.testing.assert_allclose(np.linalg.norm(top - (top @ axis)[:, None] * axis, axis=1), 0.0, atol=1e-6)

    v, i = OpenGLRenderer._create_arrow_mesh(0.1, 2.0, up_axis=up_axis, segments=8)
    along = v[:, :3].astype(float) @ axis
    # shaft from 0 to 2; cap (radius 0.18, height 0.36 by default) sunk 1e-3 * 2 into it
    assert along.min() == pytest.approx(0.0, abs=1e-6)
    assert along.max() == pytest.approx(2.0 + 0.36 - 2e-3, rel=1e-5)
    radial = np.linalg.norm(v[:, :3] - along[:, None] * axis, axis=1)
    assert radial.max() == pytest.approx(0.18, rel=1e-5)
    with pytest.raises(ValueError, match="up_axis must be between 0 and 2"):
        OpenGLRenderer._create_cylinder_mesh(0.5, 1.0, 3)


def test_camera_matrices():
    fov, aspect, near, far = 60.0, 1.5, 0.5, 50.0
    P = OpenGLRenderer.compute_projection_matrix(fov, aspect, near, far).reshape(4, 4).T  # column-major
    f = 1.0 / np.tan(np.radians(fov) / 2)
    np.testing.assert_allclose(P, [[f / aspect, 0, 0, 0], [0, f, 0, 0],
                                   [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
                                   [0, 0, -1, 0]])
    for depth, ndc in ((near, -1.0), (far, 1.0)):
        clip = P @ [0.0, 0.0, -depth, 1.0]
        assert clip[2] / clip[3] == pytest.approx(ndc)
    # a point on the top edge of the view at any depth maps to y = 1
    clip = P @ [0.0, 7.0 * np.tan(np.radians(fov) / 2), -7.0, 1.0]
    assert clip[1] / clip[3] == pytest.approx(1.0)

    for axis in range(3):
        # read row by row, as Warp's compute_view_matrix applies it to the camera: the up axis becomes y
        M = OpenGLRenderer.compute_model_matrix(axis, 2.5).reshape(4, 4)
        np.testing.assert_allclose(M[:3, :3] @ np.eye(3)[axis], [0.0, 2.5, 0.0])
        assert abs(np.linalg.det(M[:3, :3])) == pytest.approx(2.5**3)

    eye, target, up = np.array([1.0, 2.0, 3.0]), np.array([-2.0, 0.5, 1.0]), np.array([0.0, 1.0, 0.2])
    V = look_at(eye, target, up).reshape(4, 4).T
    np.testing.assert_allclose(V @ [*eye, 1.0], [0, 0, 0, 1], atol=1e-6)
    seen = V @ [*target, 1.0]
    np.testing.assert_allclose(seen[:3], [0, 0, -np.linalg.norm(target - eye)], atol=1e-5)
    np.testing.assert_allclose(V[:3, :3] @ V[:3, :3].T, np.eye(3), atol=1e-6)
    assert (V[:3, :3] @ up)[1] > 0 and abs((V[:3, :3] @ up)[0]) < 1e-6


def test_instance_transform_kernels():
    rng = np.random.default_rng(3)
    n = 5
    positions, quats, scales = rng.normal(size=(n, 3)), _unit_quats(rng, n), rng.uniform(0.5, 2.0, (n, 3))
    body_q = np.hstack([rng.normal(size=(2, 3)), _unit_quats(rng, 2)])
    bodies = np.array([-1, 0, 1, 0, -1], dtype=np.int32)
    ids = np.array([4, 0, 2, 1, 3], dtype=np.int32)
    out = wp.zeros(n, dtype=wp.mat44)
    wp.launch(k.update_vbo_transforms, n, inputs=[wp.array(ids, dtype=int), wp.array(bodies, dtype=int),
                                                  wp.array(np.hstack([positions, quats]), dtype=wp.transform),
                                                  wp.array(scales, dtype=wp.vec3),
                                                  wp.array(body_q, dtype=wp.transform)], outputs=[out])
    for slot, instance in enumerate(ids):
        R, p = _quat_matrix(quats[instance]), positions[instance]
        if bodies[instance] >= 0:
            Rb, pb = _quat_matrix(body_q[bodies[instance], 3:]), body_q[bodies[instance], :3]
            R, p = Rb @ R, Rb @ p + pb
        expected = np.eye(4)
        expected[:3, :3], expected[:3, 3] = R * scales[instance], p
        np.testing.assert_allclose(out.numpy()[slot], expected.T, atol=1e-5)  # stored transposed (column-major)

    lines = rng.normal(size=(n, 2, 3))
    out = wp.zeros(n, dtype=wp.mat44)
    wp.launch(k.update_line_transforms, n, inputs=[wp.array(lines, dtype=wp.vec3)], outputs=[out])
    for m, (p0, p1) in zip(out.numpy(), lines):
        M = m.T  # the unit segment along y, centred at the origin, becomes p0 -> p1
        np.testing.assert_allclose(M @ [0.0, -0.5, 0.0, 1.0], [*p0, 1.0], atol=1e-4)
        np.testing.assert_allclose(M @ [0.0, 0.5, 0.0, 1.0], [*p1, 1.0], atol=1e-4)

    out = wp.zeros(n, dtype=wp.mat44)
    wp.launch(k.update_points_positions, n, inputs=[wp.array(positions, dtype=wp.vec3),
                                                    wp.array(scales, dtype=wp.vec3)], outputs=[out])
    for m, p, s in zip(out.numpy(), positions, scales):
        np.testing.assert_allclose(m.T, [[s[0], 0, 0, p[0]], [0, s[1], 0, p[1]], [0, 0, s[2], p[2]], [0, 0, 0, 1]],
                                   atol=1e-6)


def test_vertex_kernels():
    rng = np.random.default_rng(5)
    vertices = rng.normal(size=(6, 3)).astype(np.float32)
    faces = np.array([[0, 1, 2], [0, 2, 3], [3, 4, 5], [1, 5, 4]], dtype=np.int32)
    scale = np.array([1.0, 2.0, 0.5])
    v_arr, f_arr = wp.array(vertices, dtype=wp.vec3), wp.array(faces, dtype=int)

    flat = wp.zeros((len(faces) * 3, 6), dtype=float)
    wp.launch(k.compute_gfx_vertices, len(faces), inputs=[f_arr, v_arr, wp.vec3(*scale)], outputs=[flat])
    tri = vertices[faces] * scale
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    np.testing.assert_allclose(flat.numpy()[:, :3], tri.reshape(-1, 3), rtol=1e-5)
    np.testing.assert_allclose(flat.numpy()[:, 3:], np.repeat(normal, 3, axis=0), atol=1e-5)

    normals, counts = wp.zeros(len(vertices), dtype=wp.vec3), wp.zeros(len(vertices), dtype=int)
    wp.launch(k.compute_average_normals, len(faces), inputs=[f_arr, v_arr, wp.vec3(*scale)],
              outputs=[normals, counts])
    smooth = wp.zeros((len(vertices), 6), dtype=float)
    wp.launch(k.assemble_gfx_vertices, len(vertices), inputs=[v_arr, normals, counts, wp.vec3(*scale)],
              outputs=[smooth])
    expected_sum, expected_count = np.zeros((6, 3)), np.zeros(6)
    for face, n in zip(faces, normal):
        np.add.at(expected_sum, face, n)
        np.add.at(expected_count, face, 1)
    np.testing.assert_array_equal(counts.numpy(), expected_count)
    np.testing.assert_allclose(smooth.numpy()[:, :3], vertices * scale, rtol=1e-5)
    np.testing.assert_allclose(smooth.numpy()[:, 3:], expected_sum / expected_count[:, None], atol=1e-5)

    packed = wp.zeros((len(vertices), 3), dtype=float)
    wp.launch(k.update_vbo_vertices, len(vertices), inputs=[v_arr], outputs=[packed])
    np.testing.assert_array_equal(packed.numpy(), vertices)


def test_frame_readback_kernels():
    rng = np.random.default_rng(11)
    width, height, near, far = 5, 4, 0.1, 20.0
    rgb = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)  # OpenGL rows: bottom first
    pixels = wp.array(rgb.reshape(-1), dtype=wp.uint8)
    image = wp.zeros((height, width, 3), dtype=float)
    wp.launch(k.copy_rgb_frame, (width, height), inputs=[pixels, width, height], outputs=[image])
    np.testing.assert_allclose(image.numpy(), rgb[::-1] / 255.0, rtol=1e-6)
    image8 = wp.zeros((height, width, 3), dtype=wp.uint8)
    wp.launch(k.copy_rgb_frame_uint8, (width, height), inputs=[pixels, width, height], outputs=[image8])
    np.testing.assert_array_equal(image8.numpy(), rgb[::-1])

    depth = rng.uniform(0.0, 1.0, size=(height, width)).astype(np.float32)
    out = wp.zeros((height, width, 1), dtype=wp.float32)
    wp.launch(k.copy_depth_frame, (width, height), inputs=[wp.array(depth.reshape(-1)), width, height, near, far],
              outputs=[out])
    ndc = 2.0 * depth - 1.0  # the window depth back to eye-space distance (inverse of the projection)
    linear = 2.0 * near * far / (far + near - ndc * (far - near))
    np.testing.assert_allclose(out.numpy()[..., 0], linear[::-1], rtol=1e-4)

    # two 3x2 tiles, the second running past the screen's right edge (black there)
    positions = np.array([[0, 0], [3, 2]], dtype=np.int32)
    tiles = wp.zeros((2, 2, 3, 3), dtype=float)
    wp.launch(k.copy_rgb_frame_tiles, (2, 3, 2), inputs=[pixels, wp.array(positions, dtype=int), width, height, 2],
              outputs=[tiles])
    for t, (x0, y0) in enumerate(positions):
        expected = np.zeros((2, 3, 3))
        for y in range(2):
            for x in range(3):
                if x0 + x < width and y0 + y < height:
                    expected[2 - y - 1, x] = rgb[y0 + y, x0 + x] / 255.0
        np.testing.assert_allclose(tiles.numpy()[t], expected, rtol=1e-6)


def test_color_maps_and_solidify_mesh():
    # Bourke's map: blue at low, cyan at 1/4, green at 1/2, yellow at 3/4, red at high (clamped outside)
    for v, rgb in ((-5.0, [0, 0, 1]), (0.0, [0, 0, 1]), (1.0, [0, 1, 1]), (2.0, [0, 1, 0]), (3.0, [1, 1, 0]),
                   (4.0, [1, 0, 0]), (9.0, [1, 0, 0]), (0.5, [0, 0.5, 1])):
        np.testing.assert_allclose(utils.bourke_color_map(0.0, 4.0, v), rgb, atol=1e-12)
    # matplotlib's tab10: its first and last colors (#1f77b4, #17becf), cycling
    np.testing.assert_allclose(utils.tab10_color_map(0), np.array([0x1F, 0x77, 0xB4]) / 255)
    np.testing.assert_allclose(utils.tab10_color_map(19), np.array([0x17, 0xBE, 0xCF]) / 255)

    vertices = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    faces = np.array([[0, 1, 2], [1, 3, 2]])
    thickness = [0.1, 0.2, 0.3, 0.4]
    out_faces, out_vertices = utils.solidify_mesh(faces, vertices, thickness)
    # the surface's normal is +z: vertex i becomes i*2 (offset +t_i) and i*2+1 (offset -t_i)
    expected = np.repeat(vertices, 2, axis=0)
    expected[0::2, 2] += thickness
    expected[1::2, 2] -= thickness
    np.testing.assert_allclose(out_vertices, expected, rtol=1e-6)
    assert out_faces.shape == (16, 3)
    # each wedge is a closed, consistently wound shell: every directed edge of its 8 triangles meets its reverse
    for wedge in (out_faces[:8], out_faces[8:]):
        directed = [(t[a], t[(a + 1) % 3]) for t in wedge for a in range(3)]
        assert sorted(directed) == sorted((b, a) for a, b in directed) and len(set(directed)) == 24
    top = out_faces[0]
    assert sorted(top) == [0, 2, 4] and all(v % 2 == 0 for v in top)
    _, uniform = utils.solidify_mesh(faces, vertices, 0.25)
    np.testing.assert_allclose(np.abs(uniform[:, 2]), 0.25, rtol=1e-6)
