"""Closest-point queries report Warp's face when two or more are exactly as close (a point nearest a shared
edge or vertex: the tree's traversal order decides, and it is Warp's), and skip sliver triangles by Warp's
test, also after a refit changes which triangles are slivers."""

import numpy as np

import mlwarp as wp
from test_geometry_mesh import make_mesh, ref_closest, uv_sphere


@wp.kernel
def closest_faces(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), faces: wp.array(dtype=int, ndim=2),
                  dist: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, xs[i], 1.0e6)
    faces[i, 0] = q.face
    dist[i] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - xs[i])
    q = wp.mesh_query_point_sign_normal(mesh, xs[i], 1.0e6)
    faces[i, 1] = q.face


def tie_points(pts, tris):
    """Points off every 37th shared edge's midpoint and every 23rd vertex of the sphere, at radius 1.25 and 0.6:
    two or more faces exactly as near each."""
    edges = sorted({tuple(sorted((int(t[i]), int(t[(i + 1) % 3])))) for t in tris for i in range(3)})
    mids = np.array([(pts[a] + pts[b]) / 2 for a, b in edges[::37]])
    dirs = np.concatenate([mids, pts[1:-1:23]]).astype(np.float64)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return np.concatenate([1.25 * dirs, 0.6 * dirs]).astype(np.float32)


# recorded from warp-lang 1.19.0 (CPU): the same mesh and points, mesh_query_point_no_sign's and
# mesh_query_point_sign_normal's faces
WARP_NO_SIGN = [0, 29, 22, 78, 103, 96, 151, 176, 170, 226, 250, 277, 299, 324, 346, 0, 29, 74, 121, 168, 214, 293,
                337, 0, 28, 55, 77, 102, 129, 152, 177, 203, 225, 251, 244, 300, 325, 346, 47, 62, 107, 153, 201, 213,
                260, 306]
WARP_SIGN_NORMAL = [0, 29, 22, 78, 103, 96, 151, 176, 170, 226, 250, 277, 299, 324, 346, 0, 29, 74, 121, 168, 214,
                    293, 337, 0, 28, 55, 78, 102, 129, 152, 177, 203, 225, 251, 244, 299, 325, 346, 47, 62, 107, 153,
                    201, 213, 260, 306]


def test_equally_near_faces_resolve_as_warps():
    pts, tris = uv_sphere(1.0)
    xs = tie_points(pts, tris)
    mesh = make_mesh(pts, tris)
    faces, dist = wp.zeros((len(xs), 2), dtype=int), wp.zeros(len(xs), dtype=float)
    wp.launch(closest_faces, dim=len(xs), inputs=[mesh.id, wp.array(xs, dtype=wp.vec3), faces, dist])
    ref = np.array([ref_closest(pts, tris, x.astype(np.float64)).min() for x in xs])
    np.testing.assert_allclose(dist.numpy(), ref, atol=1e-5)
    np.testing.assert_array_equal(faces.numpy()[:, 0], WARP_NO_SIGN)
    np.testing.assert_array_equal(faces.numpy()[:, 1], WARP_SIGN_NORMAL)


def is_sliver(p, q, r):
    """Warp's test in float32: |(q - p) x (r - p)| / (sum of squared edge lengths) < 1e-6."""
    e0, e1, e2 = q - p, r - p, r - q
    return np.linalg.norm(np.cross(e0, e1)) / (e0 @ e0 + e1 @ e1 + e2 @ e2) < np.float32(1e-6)


def test_slivers_are_skipped_and_a_refit_renews_the_test():
    # face 0: a sliver through the query point's foot (its third corner 1e-6 off the line); face 1: a regular
    # triangle farther away
    pts = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1e-6, 0.0],
                    [-1.0, -1.0, 2.0], [1.0, -1.0, 2.0], [0.0, 1.0, 2.0]], np.float32)
    tris = np.array([[0, 1, 2], [3, 4, 5]], np.int32)
    assert is_sliver(*pts[:3]) and not is_sliver(*pts[3:])
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    xs = wp.array(np.array([[0.0, 0.0, 0.5]], np.float32), dtype=wp.vec3)
    faces, dist = wp.zeros((1, 2), dtype=int), wp.zeros(1, dtype=float)
    wp.launch(closest_faces, dim=1, inputs=[mesh.id, xs, faces, dist])
    np.testing.assert_array_equal(faces.numpy()[0], [1, 1])
    np.testing.assert_allclose(dist.numpy()[0], 1.5, atol=1e-6)
    # the third corner moved up: face 0 is a triangle now, and the nearer one
    pts[2] = [0.0, 1.0, 0.0]
    assert not is_sliver(*pts[:3])
    points.assign(pts)
    mesh.refit()
    wp.launch(closest_faces, dim=1, inputs=[mesh.id, xs, faces, dist])
    np.testing.assert_array_equal(faces.numpy()[0], [0, 0])
    np.testing.assert_allclose(dist.numpy()[0], 0.5, atol=1e-6)
