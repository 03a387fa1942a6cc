"""Warp 1.19's rendering utilities (warp/_src/render/utils.py), which its renderers and examples use: two color
maps, and `solidify_mesh`, which turns a triangle surface into a closed shell of the given thickness (each
triangle a wedge of 8 triangles between the surface offset along its normal by +thickness and -thickness)."""

import numpy as np

from mlwarp.arrays.array import array, zeros
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import int32
from mlwarp.core.vector import vec3


def bourke_color_map(low, high, v):
    """The RGB color of v in [low, high] on Paul Bourke's blue-cyan-green-yellow-red map (v clamped)."""
    c = [1.0, 1.0, 1.0]

    if v < low:
        v = low
    if v > high:
        v = high
    dv = high - low

    if v < (low + 0.25 * dv):
        c[0] = 0.0
        c[1] = 4.0 * (v - low) / dv
    elif v < (low + 0.5 * dv):
        c[0] = 0.0
        c[2] = 1.0 + 4.0 * (low + 0.25 * dv - v) / dv
    elif v < (low + 0.75 * dv):
        c[0] = 4.0 * (v - low - 0.5 * dv) / dv
        c[2] = 0.0
    else:
        c[1] = 1.0 + 4.0 * (low + 0.75 * dv - v) / dv
        c[2] = 0.0

    return c


def tab10_color_map(i):
    """The i-th color (cycling) of matplotlib's "tab10" palette, as RGB in [0, 1]."""
    colors = [
        [31, 119, 180],
        [255, 127, 14],
        [44, 160, 44],
        [214, 39, 40],
        [148, 103, 189],
        [140, 86, 75],
        [227, 119, 194],
        [127, 127, 127],
        [188, 189, 34],
        [23, 190, 207],
    ]
    num_colors = len(colors)
    return [c / 255.0 for c in colors[i % num_colors]]


@kernel(enable_backward=False)
def solidify_mesh_kernel(
    indices: array(dtype=int, ndim=2),
    vertices: array(dtype=vec3, ndim=1),
    thickness: array(dtype=float, ndim=1),
    # outputs
    out_vertices: array(dtype=vec3, ndim=1),
    out_indices: array(dtype=int, ndim=2),
):
    tid = wp.tid()
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]

    vi = vertices[i]
    vj = vertices[j]
    vk = vertices[k]

    normal = wp.normalize(wp.cross(vj - vi, vk - vi))
    ti = normal * thickness[i]
    tj = normal * thickness[j]
    tk = normal * thickness[k]

    # wedge vertices
    vi0 = vi + ti
    vi1 = vi - ti
    vj0 = vj + tj
    vj1 = vj - tj
    vk0 = vk + tk
    vk1 = vk - tk

    i0 = i * 2
    i1 = i * 2 + 1
    j0 = j * 2
    j1 = j * 2 + 1
    k0 = k * 2
    k1 = k * 2 + 1

    out_vertices[i0] = vi0
    out_vertices[i1] = vi1
    out_vertices[j0] = vj0
    out_vertices[j1] = vj1
    out_vertices[k0] = vk0
    out_vertices[k1] = vk1

    oid = tid * 8
    out_indices[oid + 0, 0] = i0
    out_indices[oid + 0, 1] = j0
    out_indices[oid + 0, 2] = k0
    out_indices[oid + 1, 0] = j0
    out_indices[oid + 1, 1] = k1
    out_indices[oid + 1, 2] = k0
    out_indices[oid + 2, 0] = j0
    out_indices[oid + 2, 1] = j1
    out_indices[oid + 2, 2] = k1
    out_indices[oid + 3, 0] = j0
    out_indices[oid + 3, 1] = i1
    out_indices[oid + 3, 2] = j1
    out_indices[oid + 4, 0] = j0
    out_indices[oid + 4, 1] = i0
    out_indices[oid + 4, 2] = i1
    out_indices[oid + 5, 0] = j1
    out_indices[oid + 5, 1] = i1
    out_indices[oid + 5, 2] = k1
    out_indices[oid + 6, 0] = i1
    out_indices[oid + 6, 1] = i0
    out_indices[oid + 6, 2] = k0
    out_indices[oid + 7, 0] = i1
    out_indices[oid + 7, 1] = k0
    out_indices[oid + 7, 2] = k1


def solidify_mesh(faces: np.ndarray, vertices: np.ndarray, thickness: list | float):
    """
    Triangulate mesh around given surface with given thickness.

    Args:
        faces: Array of face indices (Nx3).
        vertices: Array of vertex positions (Mx3).
        thickness: Array of thickness values (Mx1) or single thickness value.

    Returns:
        Tuple of (faces, vertices).
    """
    faces = np.array(faces).reshape(-1, 3)
    out_faces = zeros((len(faces) * 8, 3), dtype=int32)
    out_vertices = zeros(len(vertices) * 2, dtype=vec3)
    if not isinstance(thickness, np.ndarray) and not isinstance(thickness, list):
        thickness = [thickness] * len(vertices)
    launch(
        solidify_mesh_kernel,
        dim=len(faces),
        inputs=[array(faces, dtype=int), array(vertices, dtype=vec3), array(thickness, dtype=float)],
        outputs=[out_vertices, out_faces],
    )
    faces = out_faces.numpy()
    vertices = out_vertices.numpy()
    return faces, vertices
