"""The geometry of Warp 1.19's OpenGLRenderer that needs no OpenGL context: the triangle meshes of its analytic
shapes (vertices as rows of position, normal and texture coordinates, with uint32 triangle indices), and the
camera matrices its shaders get, as pyglet's Mat4 lays them out (16 floats, column-major, OpenGL conventions).

One difference from Warp: a capsule along x or z (up_axis 0 or 2) has its hemispheres at the ends of that axis.
"""

import numpy as np

# segments of the spheres, capsules, cones and cylinders the renderer draws
DEFAULT_NUM_SEGMENTS = 32


def perspective_projection(fov: float, aspect_ratio: float, near_plane: float, far_plane: float) -> np.ndarray:
    """The OpenGL perspective projection (gluPerspective) of a vertical field of view `fov` in degrees: eye
    space (looking down -z) to clip space, depths near_plane..far_plane to -1..1 after the division by w."""
    f = 1.0 / np.tan(np.radians(fov) / 2.0)
    depth = near_plane - far_plane
    return np.array([f / aspect_ratio, 0.0, 0.0, 0.0,
                     0.0, f, 0.0, 0.0,
                     0.0, 0.0, (far_plane + near_plane) / depth, -1.0,
                     0.0, 0.0, 2.0 * far_plane * near_plane / depth, 0.0])


def look_at(eye, target, up) -> np.ndarray:
    """The view matrix (gluLookAt) of a camera at `eye` looking at `target`: world space to eye space, where
    the camera looks down -z with `up` (made orthogonal) along +y."""
    eye, target, up = (np.asarray(v, dtype=float) for v in (eye, target, up))
    front = (target - eye) / np.linalg.norm(target - eye)
    side = np.cross(front, up / np.linalg.norm(up))
    side /= np.linalg.norm(side)
    true_up = np.cross(side, front)
    return np.array([side[0], true_up[0], -front[0], 0.0,
                     side[1], true_up[1], -front[1], 0.0,
                     side[2], true_up[2], -front[2], 0.0,
                     -side @ eye, -true_up @ eye, front @ eye, 1.0], dtype=np.float32)


def compute_model_matrix(camera_axis: int, scaling: float) -> np.ndarray:
    """The model matrix (16 floats, column-major) that scales the scene and turns its up axis (0, 1, 2: x, y, z)
    to the renderer's y."""
    if camera_axis == 0:
        return np.array((0, 0, scaling, 0, scaling, 0, 0, 0, 0, scaling, 0, 0, 0, 0, 0, 1), dtype=np.float32)
    elif camera_axis == 2:
        return np.array((0, scaling, 0, 0, 0, 0, scaling, 0, scaling, 0, 0, 0, 0, 0, 0, 1), dtype=np.float32)

    return np.array((scaling, 0, 0, 0, 0, scaling, 0, 0, 0, 0, scaling, 0, 0, 0, 0, 1), dtype=np.float32)


def create_sphere_mesh(
    radius=1.0,
    num_latitudes=DEFAULT_NUM_SEGMENTS,
    num_longitudes=DEFAULT_NUM_SEGMENTS,
    reverse_winding=False,
):
    """A UV sphere of `radius` about the origin, poles on y.

    Returns:
        (vertices, indices): float32 rows (position, normal, uv), 8 per vertex, and uint32 triangle indices.
    """
    vertices = []
    indices = []

    for i in range(num_latitudes + 1):
        theta = i * np.pi / num_latitudes
        sin_theta = np.sin(theta)
        cos_theta = np.cos(theta)

        for j in range(num_longitudes + 1):
            phi = j * 2 * np.pi / num_longitudes
            sin_phi = np.sin(phi)
            cos_phi = np.cos(phi)

            x = cos_phi * sin_theta
            y = cos_theta
            z = sin_phi * sin_theta

            u = float(j) / num_longitudes
            v = float(i) / num_latitudes

            vertices.append([x * radius, y * radius, z * radius, x, y, z, u, v])

    for i in range(num_latitudes):
        for j in range(num_longitudes):
            first = i * (num_longitudes + 1) + j
            second = first + num_longitudes + 1

            if reverse_winding:
                indices.extend([first, second, first + 1, second, second + 1, first + 1])
            else:
                indices.extend([first, first + 1, second, second, first + 1, second + 1])

    return np.array(vertices, dtype=np.float32), np.array(indices, dtype=np.uint32)

def create_capsule_mesh(radius, half_height, up_axis=1, segments=DEFAULT_NUM_SEGMENTS):
    """A capsule along axis `up_axis`: hemispheres of `radius` centred at +-half_height on that axis.

    Returns:
        (vertices, indices): float32 rows (position, normal, uv), 8 per vertex, and uint32 triangle indices.
    """
    vertices = []
    indices = []

    # The hemispheres are split by the sign of the generated x (the longitude's sine), so x must become the up
    # axis. (Warp 1.19's table has the entries of axes 0 and 2 swapped, which splits those capsules across.)
    x_dir, y_dir, z_dir = ((0, 1, 2), (2, 0, 1), (1, 2, 0))[up_axis]
    up_vector = np.zeros(3)
    up_vector[up_axis] = half_height

    for i in range(segments + 1):
        theta = i * np.pi / segments
        sin_theta = np.sin(theta)
        cos_theta = np.cos(theta)

        for j in range(segments + 1):
            phi = j * 2 * np.pi / segments
            sin_phi = np.sin(phi)
            cos_phi = np.cos(phi)

            z = cos_phi * sin_theta
            y = cos_theta
            x = sin_phi * sin_theta

            u = cos_theta * 0.5 + 0.5
            v = cos_phi * sin_theta * 0.5 + 0.5

            xyz = x, y, z
            x, y, z = xyz[x_dir], xyz[y_dir], xyz[z_dir]
            xyz = np.array((x, y, z), dtype=np.float32) * radius
            if j < segments // 2:
                xyz += up_vector
            else:
                xyz -= up_vector

            vertices.append([*xyz, x, y, z, u, v])

    nv = len(vertices)
    for i in range(segments + 1):
        for j in range(segments + 1):
            first = (i * (segments + 1) + j) % nv
            second = (first + segments + 1) % nv
            indices.extend([first, second, (first + 1) % nv, second, (second + 1) % nv, (first + 1) % nv])

    vertex_data = np.array(vertices, dtype=np.float32)
    index_data = np.array(indices, dtype=np.uint32)

    return vertex_data, index_data

def create_cone_mesh(radius, half_height, up_axis=1, segments=DEFAULT_NUM_SEGMENTS):
    """A cone along `up_axis`, base of `radius` at -half_height, apex at +half_height (a cylinder whose top
    radius is 0, so the sides get the cone's normals).

    Returns:
        (vertices, indices): float32 rows (position, normal, uv), 8 per vertex, and uint32 triangle indices.
    """
    # render it as a cylinder with zero top radius so we get correct normals on the sides
    return create_cylinder_mesh(radius, half_height, up_axis, segments, 0.0)

def create_cylinder_mesh(radius, half_height, up_axis=1, segments=DEFAULT_NUM_SEGMENTS, top_radius=None):
    """A capped cylinder along `up_axis` from -half_height to +half_height (the top of radius `top_radius`,
    `radius` when None).

    Returns:
        (vertices, indices): float32 rows (position, normal, uv), 8 per vertex, and uint32 triangle indices.
    """
    if up_axis not in (0, 1, 2):
        raise ValueError("up_axis must be between 0 and 2")

    x_dir, y_dir, z_dir = (
        (1, 2, 0),
        (0, 1, 2),
        (2, 0, 1),
    )[up_axis]

    indices = []

    cap_vertices = []
    side_vertices = []

    # create center cap vertices
    position = np.array([0, -half_height, 0])[[x_dir, y_dir, z_dir]]
    normal = np.array([0, -1, 0])[[x_dir, y_dir, z_dir]]
    cap_vertices.append([*position, *normal, 0.5, 0.5])
    cap_vertices.append([*-position, *-normal, 0.5, 0.5])

    if top_radius is None:
        top_radius = radius
    side_slope = -np.arctan2(top_radius - radius, 2 * half_height)

    # create the cylinder base and top vertices
    for j in (-1, 1):
        center_index = max(j, 0)
        if j == 1:
            radius = top_radius
        for i in range(segments):
            theta = 2 * np.pi * i / segments

            cos_theta = np.cos(theta)
            sin_theta = np.sin(theta)

            x = cos_theta
            y = j * half_height
            z = sin_theta

            position = np.array([radius * x, y, radius * z])

            normal = np.array([x, side_slope, z])
            normal = normal / np.linalg.norm(normal)
            uv = (i / (segments - 1), (j + 1) / 2)
            vertex = np.hstack([position[[x_dir, y_dir, z_dir]], normal[[x_dir, y_dir, z_dir]], uv])
            side_vertices.append(vertex)

            normal = np.array([0, j, 0])
            uv = (cos_theta * 0.5 + 0.5, sin_theta * 0.5 + 0.5)
            vertex = np.hstack([position[[x_dir, y_dir, z_dir]], normal[[x_dir, y_dir, z_dir]], uv])
            cap_vertices.append(vertex)

            cs = center_index * segments
            indices.extend([center_index, i + cs + 2, (i + 1) % segments + cs + 2][::-j])

    # create the cylinder side indices
    for i in range(segments):
        index1 = len(cap_vertices) + i + segments
        index2 = len(cap_vertices) + ((i + 1) % segments) + segments
        index3 = len(cap_vertices) + i
        index4 = len(cap_vertices) + ((i + 1) % segments)

        indices.extend([index1, index2, index3, index2, index4, index3])

    vertex_data = np.array(np.vstack((cap_vertices, side_vertices)), dtype=np.float32)
    index_data = np.array(indices, dtype=np.uint32)

    return vertex_data, index_data

def create_arrow_mesh(
    base_radius, base_height, cap_radius=None, cap_height=None, up_axis=1, segments=DEFAULT_NUM_SEGMENTS
):
    """An arrow along `up_axis` from the origin: a cylinder shaft of base_height, then a cone cap (radius
    1.8 base_radius and height 0.18 base_height by default).

    Returns:
        (vertices, indices): float32 rows (position, normal, uv), 8 per vertex, and uint32 triangle indices.
    """
    if up_axis not in (0, 1, 2):
        raise ValueError("up_axis must be between 0 and 2")
    if cap_radius is None:
        cap_radius = base_radius * 1.8
    if cap_height is None:
        cap_height = base_height * 0.18

    up_vector = np.array([0, 0, 0])
    up_vector[up_axis] = 1

    base_vertices, base_indices = create_cylinder_mesh(
        base_radius, base_height / 2, up_axis, segments
    )
    cap_vertices, cap_indices = create_cone_mesh(cap_radius, cap_height / 2, up_axis, segments)

    base_vertices[:, :3] += base_height / 2 * up_vector
    # move cap slightly lower to avoid z-fighting
    cap_vertices[:, :3] += (base_height + cap_height / 2 - 1e-3 * base_height) * up_vector

    vertex_data = np.vstack((base_vertices, cap_vertices))
    index_data = np.hstack((base_indices, cap_indices + len(base_vertices)))

    return vertex_data, index_data

def create_box_mesh(extents):
    """A box of half extents `extents` about the origin, 4 vertices per face (their own normals).

    Returns:
        (vertices, indices): float32 rows (position, normal, uv), 8 per vertex, and uint32 triangle indices.
    """
    x_extent, y_extent, z_extent = extents

    vertices = [
        # Position                        Normal    UV
        [-x_extent, -y_extent, -z_extent, -1, 0, 0, 0, 0],
        [-x_extent, -y_extent, z_extent, -1, 0, 0, 1, 0],
        [-x_extent, y_extent, z_extent, -1, 0, 0, 1, 1],
        [-x_extent, y_extent, -z_extent, -1, 0, 0, 0, 1],
        [x_extent, -y_extent, -z_extent, 1, 0, 0, 0, 0],
        [x_extent, -y_extent, z_extent, 1, 0, 0, 1, 0],
        [x_extent, y_extent, z_extent, 1, 0, 0, 1, 1],
        [x_extent, y_extent, -z_extent, 1, 0, 0, 0, 1],
        [-x_extent, -y_extent, -z_extent, 0, -1, 0, 0, 0],
        [-x_extent, -y_extent, z_extent, 0, -1, 0, 1, 0],
        [x_extent, -y_extent, z_extent, 0, -1, 0, 1, 1],
        [x_extent, -y_extent, -z_extent, 0, -1, 0, 0, 1],
        [-x_extent, y_extent, -z_extent, 0, 1, 0, 0, 0],
        [-x_extent, y_extent, z_extent, 0, 1, 0, 1, 0],
        [x_extent, y_extent, z_extent, 0, 1, 0, 1, 1],
        [x_extent, y_extent, -z_extent, 0, 1, 0, 0, 1],
        [-x_extent, -y_extent, -z_extent, 0, 0, -1, 0, 0],
        [-x_extent, y_extent, -z_extent, 0, 0, -1, 1, 0],
        [x_extent, y_extent, -z_extent, 0, 0, -1, 1, 1],
        [x_extent, -y_extent, -z_extent, 0, 0, -1, 0, 1],
        [-x_extent, -y_extent, z_extent, 0, 0, 1, 0, 0],
        [-x_extent, y_extent, z_extent, 0, 0, 1, 1, 0],
        [x_extent, y_extent, z_extent, 0, 0, 1, 1, 1],
        [x_extent, -y_extent, z_extent, 0, 0, 1, 0, 1],
    ]

    # fmt: off
    indices = [
        0, 1, 2,
        0, 2, 3,
        4, 6, 5,
        4, 7, 6,
        8, 10, 9,
        8, 11, 10,
        12, 13, 14,
        12, 14, 15,
        16, 17, 18,
        16, 18, 19,
        20, 22, 21,
        20, 23, 22,
    ]
    # fmt: on
    return np.array(vertices, dtype=np.float32), np.array(indices, dtype=np.uint32)
