"""The scene of mlwarp's OpenGLRenderer: registered shapes (one vertex-array object each, deduplicated by a geometry
hash), their named instances (transform, scale, colours, visibility, optional body), and Warp's `render_*` calls
that create or update them. A mixin of OpenGLRenderer (opengl.py), which owns the context and draws.

Instances are drawn per shape from an instance buffer of column-major model matrices (filled by the
update_vbo_transforms kernel from the instances' transforms, scales and body transforms) and colours. Points and
line strips keep their own instance buffers (update_points_positions, update_line_transforms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlwarp.arrays.array import array
from mlwarp.launching.launch import launch
from mlwarp.render import opengl_kernels
from mlwarp.render.opengl_gl import INSTANCE_FLOATS, GLShape
from mlwarp.render.opengl_meshes import (
    create_arrow_mesh, create_box_mesh, create_capsule_mesh, create_cone_mesh, create_cylinder_mesh,
    create_sphere_mesh,
)
from mlwarp.render.utils import tab10_color_map
from mlwarp.core.vector import mat44, transform, vec3

# checker cells per unit of a shape's texture coordinates (a shape's faces span 0..1): visible where color2 differs
SHAPE_CHECKER_CELLS = 8.0
# the colours of the ground's checkerboard
GROUND_COLORS = ((0.7, 0.7, 0.7), (0.5, 0.5, 0.5))


@dataclass
class ShapeInstance:
    instance_id: int
    shape: int
    body: int
    pos: tuple
    rot: tuple
    scale: tuple
    color1: tuple
    color2: tuple
    visible: bool
    custom_index: int


def create_plane_mesh(width: float, length: float):
    """A two-sided rectangle in the local x-z plane (normal +y, and -y on its back), half extents width (x) and
    length (z), texture coordinates 0..1 across it."""
    corners = [(-width, -length, 0, 0), (width, -length, 1, 0), (width, length, 1, 1), (-width, length, 0, 1)]
    rows = [(x, 0.0, z, 0.0, 1.0, 0.0, u, v) for x, z, u, v in corners]
    rows += [(x, 0.0, z, 0.0, -1.0, 0.0, u, v) for x, z, u, v in corners]
    # +y side counter-clockwise seen from above (+y), the -y side from below
    indices = [0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7]
    return np.array(rows, dtype=np.float32), np.array(indices, dtype=np.uint32)


def _color(color):
    return None if color is None else tuple(float(c) for c in np.asarray(color, dtype=float).ravel()[:3])


class SceneMixin:
    """Shapes, instances and Warp's render_* methods (see the module's docstring)."""

    def _init_scene(self):
        self._shapes: list[GLShape | None] = []
        self._shape_geo_hash: dict = {}
        self._shape_checker: list[tuple[float, float]] = []
        self._shape_colors: list[tuple] = []
        self._shape_names: dict[str, int] = {}  # templates and instancers, by name
        self._instancer_shapes: set[int] = set()
        self._instances: dict[str, ShapeInstance] = {}
        self._body_names: dict[str, int] = {}
        self._body_q = None
        self._instances_dirty = False
        self._shape_rows: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per shape: instance rows and their ids
        self._mesh_topology: dict[str, tuple[np.ndarray, bool]] = {}  # render_mesh's triangles and shading, by name
        self._shape_vertex_rows: dict[int, np.ndarray] = {}  # the vertex rows of render_mesh's shapes

    # -- shapes ------------------------------------------------------------------------------------------------

    def register_shape(self, geo_hash, vertices, indices, color1=None, color2=None):
        """Register a shape geometry (rows of position, normal, uv; triangle indices) and upload its buffers;
        the same geo_hash returns the shape registered first. Returns the shape's integer id."""
        if geo_hash in self._shape_geo_hash:
            return self._shape_geo_hash[geo_hash]
        self.window.switch_to()
        shape = len(self._shapes)
        self._shapes.append(GLShape(self.gl, np.asarray(vertices), np.asarray(indices)))
        self._shape_checker.append((SHAPE_CHECKER_CELLS, SHAPE_CHECKER_CELLS))
        self._shape_colors.append((_color(color1), _color(color2)))
        self._shape_geo_hash[geo_hash] = shape
        return shape

    def deregister_shape(self, shape):
        """Remove a registered shape, its buffers and its instances."""
        self.window.switch_to()
        self._shapes[shape].delete()
        self._shapes[shape] = None
        self._shape_geo_hash = {h: s for h, s in self._shape_geo_hash.items() if s != shape}
        self._shape_names = {n: s for n, s in self._shape_names.items() if s != shape}
        self._instancer_shapes.discard(shape)
        for name in [n for n, inst in self._instances.items() if inst.shape == shape]:
            self.remove_shape_instance(name)

    def update_shape_vertices(self, shape, points):
        """Move the vertices of a registered shape to `points` (one per vertex; normals and uvs are kept)."""
        shape_gl = self._shapes[shape]
        points = points.numpy() if isinstance(points, array) else np.asarray(points)
        self.window.switch_to()
        vertices = self._shape_vertex_rows[shape].copy() if shape in self._shape_vertex_rows else None
        if vertices is None:
            raise ValueError(f"update_shape_vertices: shape {shape} was not registered by render_mesh")
        vertices[:, :3] = np.asarray(points, dtype=np.float32).reshape(-1, 3)
        shape_gl.set_vertices(vertices)
        self._shape_vertex_rows[shape] = vertices

    @property
    def num_shapes(self) -> int:
        """Number of registered shape geometries."""
        return sum(s is not None for s in self._shapes)

    @property
    def num_instances(self) -> int:
        """Number of active shape instances."""
        return len(self._instances)

    # -- instances ---------------------------------------------------------------------------------------------

    def register_body(self, name):
        """Register a body name (instances may follow it, see update_body_transforms); returns its id."""
        return self._body_names.setdefault(name, len(self._body_names))

    def _body_id(self, body):
        if body is None:
            return -1
        if isinstance(body, str):
            return self.register_body(body)
        return int(body)

    def add_shape_instance(self, name: str, shape: int, body, pos: tuple, rot: tuple, scale: tuple = (1.0, 1.0, 1.0),
                           color1=None, color2=None, custom_index: int = -1, visible: bool = True):
        """Add an instance of a registered shape (body: a body name or id whose transform it follows, or None);
        returns its integer id."""
        default1, default2 = self._shape_colors[shape]
        color1 = _color(color1) or default1 or tuple(tab10_color_map(len(self._instances)))
        color2 = _color(color2) or default2 or color1
        instance_id = len(self._instances)
        self._instances[name] = ShapeInstance(instance_id, shape, self._body_id(body), tuple(map(float, pos)),
                                              tuple(map(float, rot)), tuple(map(float, scale)), color1, color2,
                                              bool(visible), custom_index)
        self._instances_dirty = True
        return instance_id

    def remove_shape_instance(self, name: str):
        """Remove a shape instance by name."""
        removed = self._instances.pop(name)
        for instance in self._instances.values():
            if instance.instance_id > removed.instance_id:
                instance.instance_id -= 1
        self._instances_dirty = True

    def update_shape_instance(self, name, pos=None, rot=None, color1=None, color2=None, scale=None, visible=None):
        """Update the given properties of the named instance; returns whether it exists."""
        instance = self._instances.get(name)
        if instance is None:
            return False
        if pos is not None:
            instance.pos = tuple(map(float, pos))
        if rot is not None:
            instance.rot = tuple(map(float, rot))
        if scale is not None:
            instance.scale = tuple(map(float, scale))
        if color1 is not None:
            instance.color1 = _color(color1)
        if color2 is not None:
            instance.color2 = _color(color2)
        if visible is not None:
            instance.visible = bool(visible)
        self._instances_dirty = True
        return True

    def update_body_transforms(self, body_tf: array):
        """Set the transforms of the registered bodies (an array of wp.transform, indexed by body id): instances
        attached to a body are drawn at body transform * their own."""
        self._body_q = body_tf
        self._instances_dirty = True

    def allocate_shape_instances(self):
        """Upload every shape's instances (what update_shape_instances does)."""
        self.update_shape_instances()

    def update_instance_colors(self):
        """Upload the instances' colours (with their transforms)."""
        self.update_shape_instances()

    def update_shape_instances(self):
        """Compute the instances' model matrices (update_vbo_transforms) and upload each shape's visible ones."""
        self._instances_dirty = False
        instances = sorted(self._instances.values(), key=lambda inst: inst.instance_id)
        per_shape = {s: [] for s in range(len(self._shapes)) if s not in self._instancer_shapes}
        if instances:
            device = self._device
            tfs = array([inst.pos + inst.rot for inst in instances], dtype=transform, device=device)
            scalings = array([inst.scale for inst in instances], dtype=vec3, device=device)
            bodies = array([inst.body for inst in instances], dtype=int, device=device)
            ids = array(np.arange(len(instances)), dtype=int, device=device)
            matrices = array(shape=len(instances), dtype=mat44, device=device)
            body_q = self._body_q if self._body_q is not None else array(shape=0, dtype=transform, device=device)
            launch(opengl_kernels.update_vbo_transforms, dim=len(instances),
                   inputs=[ids, bodies if any(i.body >= 0 for i in instances) else None, tfs, scalings,
                           body_q if self._body_q is not None else None],
                   outputs=[matrices], device=device)
            # a body that has no transform yet: its instances are not drawn
            drawn = np.array([inst.body < 0 or (self._body_q is not None and inst.body < len(body_q))
                              for inst in instances])
            rows = matrices.numpy().reshape(len(instances), 16)
            for k, inst in enumerate(instances):
                if inst.visible and drawn[k] and per_shape.get(inst.shape) is not None:
                    per_shape[inst.shape].append((np.concatenate([rows[k], inst.color1, inst.color2]),
                                                  inst.instance_id))
        self._shape_rows = {
            shape: (np.array([row for row, _ in entries], dtype=np.float32).reshape(-1, INSTANCE_FLOATS),
                    np.array([i for _, i in entries], dtype=np.int64))
            for shape, entries in per_shape.items()}
        self.window.switch_to()
        self._upload_instances(None)  # all of them (tiles upload their own before they are drawn)

    # -- Warp's render_* calls ---------------------------------------------------------------------------------

    def _render_shape(self, name, geo_hash, make_mesh, pos, rot, parent_body, is_template, color, visible,
                      scale=(1.0, 1.0, 1.0), color2=None):
        """Register the shape (make_mesh() -> vertices, indices) once per geo_hash; a template is registered under
        `name`; otherwise the instance `name` is created, or updated (moved to this shape if it changed)."""
        shape = self._shape_geo_hash.get(geo_hash)
        if shape is None:
            shape = self.register_shape(geo_hash, *make_mesh())
        if is_template:
            self._shape_names[name] = shape
            return shape
        instance = self._instances.get(name)
        if instance is None:
            self.add_shape_instance(name, shape, parent_body, pos, rot, scale, color, color2, visible=visible)
        else:
            instance.shape = shape
            self.update_shape_instance(name, pos, rot, color, color2 if color2 is not None else color, scale,
                                       visible)
        return shape

    def render_box(self, name: str, pos: tuple, rot: tuple, extents: tuple, parent_body: str | None = None,
                   is_template: bool = False, color: tuple[float, float, float] | None = None, visible: bool = True):
        """Add (or move) a box of half extents `extents` for visualization."""
        extents = tuple(float(e) for e in extents)
        return self._render_shape(name, ("box", extents), lambda: create_box_mesh(extents), pos, rot, parent_body,
                                  is_template, color, visible)

    def render_sphere(self, name: str, pos: tuple, rot: tuple, radius: float, parent_body: str | None = None,
                      is_template: bool = False, color: tuple[float, float, float] | None = None,
                      visible: bool = True):
        """Add (or move) a sphere for visualization."""
        return self._render_shape(name, ("sphere", float(radius)), lambda: create_sphere_mesh(radius), pos, rot,
                                  parent_body, is_template, color, visible)

    def render_capsule(self, name: str, pos: tuple, rot: tuple, radius: float, half_height: float,
                       parent_body: str | None = None, is_template: bool = False, up_axis: int = 1,
                       color: tuple[float, float, float] | None = None, visible: bool = True):
        """Add (or move) a capsule (hemispheres at +-half_height along up_axis) for visualization."""
        key = ("capsule", float(radius), float(half_height), up_axis)
        return self._render_shape(name, key, lambda: create_capsule_mesh(radius, half_height, up_axis), pos, rot,
                                  parent_body, is_template, color, visible)

    def render_cylinder(self, name: str, pos: tuple, rot: tuple, radius: float, half_height: float,
                        parent_body: str | None = None, is_template: bool = False, up_axis: int = 1,
                        color: tuple[float, float, float] | None = None, visible: bool = True):
        """Add (or move) a capped cylinder (from -half_height to +half_height along up_axis) for visualization."""
        key = ("cylinder", float(radius), float(half_height), up_axis)
        return self._render_shape(name, key, lambda: create_cylinder_mesh(radius, half_height, up_axis), pos, rot,
                                  parent_body, is_template, color, visible)

    def render_cone(self, name: str, pos: tuple, rot: tuple, radius: float, half_height: float,
                    parent_body: str | None = None, is_template: bool = False, up_axis: int = 1,
                    color: tuple[float, float, float] | None = None, visible: bool = True):
        """Add (or move) a cone (base at -half_height, apex at +half_height along up_axis) for visualization."""
        key = ("cone", float(radius), float(half_height), up_axis)
        return self._render_shape(name, key, lambda: create_cone_mesh(radius, half_height, up_axis), pos, rot,
                                  parent_body, is_template, color, visible)

    def render_arrow(self, name: str, pos: tuple, rot: tuple, base_radius: float, base_height: float,
                     cap_radius: float | None = None, cap_height: float | None = None, parent_body: str | None = None,
                     is_template: bool = False, up_axis: int = 1, color: tuple[float, float, float] | None = None,
                     visible: bool = True):
        """Add (or move) an arrow (a cylinder of base_radius/base_height and a conical cap) along up_axis."""
        key = ("arrow", float(base_radius), float(base_height), cap_radius, cap_height, up_axis)
        return self._render_shape(
            name, key, lambda: create_arrow_mesh(base_radius, base_height, cap_radius, cap_height, up_axis), pos,
            rot, parent_body, is_template, color, visible)

    def render_plane(self, name: str, pos: tuple, rot: tuple, width: float, length: float,
                     color: tuple = (1.0, 1.0, 1.0), color2=None, parent_body: str | None = None,
                     is_template: bool = False, u_scaling=1.0, v_scaling=1.0, visible: bool = True):
        """Add (or move) a two-sided plane in its local x-z plane (half extents width, length), a checkerboard of
        color and color2 with one cell per unit of length (times u_scaling, v_scaling) where color2 is given."""
        key = ("plane", float(width), float(length), float(u_scaling), float(v_scaling))
        shape = self._render_shape(name, key, lambda: create_plane_mesh(width, length), pos, rot, parent_body,
                                   is_template, color, visible, color2=color2 if color2 is not None else color)
        self._shape_checker[shape] = (2.0 * width * u_scaling, 2.0 * length * v_scaling)
        return shape

    def render_ground(self, size: float = 1000.0, plane=None):
        """Add a ground plane (a checkerboard of unit cells) of half extent `size`: through the origin normal to the
        up axis, or the plane n . x = d of plane = (nx, ny, nz, d)."""
        if plane is None:
            normal, offset = np.eye(3)[self._up_axis_index], 0.0
        else:
            normal = np.asarray(plane[:3], dtype=float)
            normal, offset = normal / np.linalg.norm(normal), float(plane[3]) / np.linalg.norm(normal)
        rot = _rotation_from_y(normal)
        return self.render_plane("ground", tuple(normal * offset), rot, size, size, GROUND_COLORS[0],
                                 GROUND_COLORS[1])

    def render_ref(self, name: str, path: str, pos: tuple, rot: tuple, scale: tuple,
                   color: tuple[float, float, float] | None = None):
        """Add (or move) an instance `name` of the template registered under `path` (a render_* call with
        is_template=True and name=path)."""
        if path not in self._shape_names:
            raise KeyError(f"render_ref: no template named {path!r} (render it first with is_template=True)")
        shape = self._shape_names[path]
        if name in self._instances:
            self._instances[name].shape = shape
            self.update_shape_instance(name, pos, rot, color, color, scale)
        else:
            self.add_shape_instance(name, shape, None, pos, rot, scale, color, color)

    def render_mesh(self, name: str, points, indices, colors=None, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0),
                    scale=(1.0, 1.0, 1.0), update_topology: bool = False, parent_body: str | None = None,
                    is_template: bool = False, smooth_shading: bool = True, visible: bool = True) -> int:
        """Create or update a triangle mesh (points (n, 3), indices flat or (m, 3)); colors: one RGB for the mesh,
        or one per point. Returns the shape id."""
        points = np.asarray(points.numpy() if isinstance(points, array) else points, dtype=np.float32).reshape(-1, 3)
        mesh_key = ("mesh", name)
        shape = self._shape_geo_hash.get(mesh_key)
        if shape is None or update_topology:
            idx = np.asarray(indices.numpy() if isinstance(indices, array) else indices).ravel()
            if idx.size % 3 != 0:
                raise ValueError(f"render_mesh({name!r}): {idx.size} indices do not group into triangles")
            if idx.size and (idx.min() < 0 or idx.max() >= min(len(points), 2**31)):
                raise ValueError(f"render_mesh({name!r}): indices must lie in [0, {len(points)}), got "
                                 f"[{idx.min()}, {idx.max()}]")
            self._mesh_topology[name] = (idx.astype(np.int32).reshape(-1, 3), smooth_shading)
        tris, smooth = self._mesh_topology[name]
        vertices, gfx_indices = _mesh_rows(points, tris, smooth)
        vertex_colors = None
        color = None
        if colors is not None:
            colors = np.asarray(colors.numpy() if isinstance(colors, array) else colors, dtype=np.float32)
            if colors.size == 3:
                color = tuple(colors.ravel())
            else:
                vertex_colors = colors.reshape(-1, 3)
                if not smooth:
                    vertex_colors = vertex_colors[tris.ravel()]
        if shape is None:
            shape = self.register_shape(mesh_key, vertices, gfx_indices)
            self._shape_vertex_rows[shape] = vertices
        else:
            self.window.switch_to()
            self._shapes[shape].set_geometry(vertices, gfx_indices)
            self._shape_vertex_rows[shape] = vertices
        self._shapes[shape].set_vertex_colors(vertex_colors)
        if is_template:
            self._shape_names[name] = shape
            return shape
        if name in self._instances:
            self.update_shape_instance(name, pos, rot, color, color, scale, visible)
        else:
            self.add_shape_instance(name, shape, parent_body, pos, rot, scale, color, color, visible=visible)
        return shape

    def _instancer(self, name, geo_hash, make_mesh):
        """The shape drawn with its own instance buffer under `name` (points, line strips)."""
        shape = self._shape_names.get(name)
        if shape is None or self._shape_geo_hash.get(geo_hash) != shape:
            if shape is not None:
                self.deregister_shape(shape)
            shape = self.register_shape(geo_hash, *make_mesh())
            self._shape_names[name] = shape
            self._instancer_shapes.add(shape)
        return shape

    def _set_instancer_rows(self, shape, matrices: array, colors, visible: bool):
        n = matrices.shape[0]
        rows = np.zeros((n if visible else 0, INSTANCE_FLOATS), dtype=np.float32)
        if visible and n:
            rows[:, :16] = matrices.numpy().reshape(n, 16)
            colors = np.broadcast_to(np.asarray(colors, dtype=np.float32).reshape(-1, 3), (n, 3))
            rows[:, 16:19] = colors
            rows[:, 19:22] = colors
        self.window.switch_to()
        self._shapes[shape].set_instances(rows)

    def render_points(self, name: str, points, radius, colors=None, as_spheres: bool = True, visible: bool = True):
        """Add (or update) a set of points drawn as spheres of `radius` (a scalar or one per point), or with
        as_spheres=False as cubes of that half extent; colors: one RGB or one per point."""
        device = self._device
        points = points if isinstance(points, array) else array(np.asarray(points, dtype=np.float32).reshape(-1, 3),
                                                                dtype=vec3, device=device)
        n = points.shape[0]
        radius_np = np.asarray(radius.numpy() if isinstance(radius, array) else radius, dtype=np.float32)
        shape = self._instancer(name, ("points", as_spheres), lambda: create_sphere_mesh(1.0, 8, 8) if as_spheres
                                else create_box_mesh((1.0, 1.0, 1.0)))
        scalings = array(np.repeat(np.broadcast_to(radius_np.reshape(-1), (n,))[:, None], 3, axis=1), dtype=vec3,
                         device=device)
        matrices = array(shape=n, dtype=mat44, device=device)
        launch(opengl_kernels.update_points_positions, dim=n, inputs=[points.to(device), scalings],
               outputs=[matrices], device=device)
        if colors is None:
            colors = tab10_color_map(shape)
        colors = np.asarray(colors.numpy() if isinstance(colors, array) else colors, dtype=np.float32)
        self._set_instancer_rows(shape, matrices, colors, visible)
        return shape

    def render_line_list(self, name: str, vertices, indices, color: tuple[float, float, float] | None = None,
                         radius: float = 0.01, visible: bool = True):
        """Add (or update) line segments vertices[indices[2k]] - vertices[indices[2k+1]] as cylinders of radius."""
        vertices = np.asarray(vertices.numpy() if isinstance(vertices, array) else vertices, dtype=np.float32)
        indices = np.asarray(indices.numpy() if isinstance(indices, array) else indices).ravel()
        self._render_segments(name, vertices.reshape(-1, 3)[indices].reshape(-1, 2, 3), color, radius, visible)

    def render_line_strip(self, name: str, vertices, color: tuple[float, float, float] | None = None,
                          radius: float = 0.01, visible: bool = True):
        """Add (or update) the polyline through `vertices` as cylinders of radius."""
        vertices = np.asarray(vertices.numpy() if isinstance(vertices, array) else vertices,
                              dtype=np.float32).reshape(-1, 3)
        self._render_segments(name, np.stack([vertices[:-1], vertices[1:]], axis=1), color, radius, visible)

    def _render_segments(self, name, segments: np.ndarray, color, radius, visible):
        # a unit-length cylinder along y: update_line_transforms stretches it along each segment
        shape = self._instancer(name, ("line", float(radius)),
                                lambda: create_cylinder_mesh(radius, 0.5, 1, segments=8))
        n = len(segments)
        lines = array(segments, dtype=vec3, device=self._device)
        matrices = array(shape=n, dtype=mat44, device=self._device)
        if n:
            launch(opengl_kernels.update_line_transforms, dim=n, inputs=[lines], outputs=[matrices],
                   device=self._device)
        self._set_instancer_rows(shape, matrices, color if color is not None else tab10_color_map(shape), visible)


def _rotation_from_y(direction) -> tuple:
    """The quaternion (x, y, z, w) that turns +y to the unit vector `direction`."""
    y = np.array([0.0, 1.0, 0.0])
    d = np.asarray(direction, dtype=float)
    c = float(np.dot(y, d))
    if c < -1.0 + 1e-9:
        return (1.0, 0.0, 0.0, 0.0)
    axis = np.cross(y, d)
    q = np.array([*axis, 1.0 + c])
    return tuple(q / np.linalg.norm(q))


def _mesh_rows(points: np.ndarray, tris: np.ndarray, smooth: bool):
    """Vertex rows (position, normal, uv=0) and indices of a triangle mesh: shared vertices with area-weighted
    averaged normals (smooth), or three vertices per triangle with its face normal."""
    p0, p1, p2 = (points[tris[:, k]] for k in range(3))
    face = np.cross(p1 - p0, p2 - p0)
    if smooth:
        corners = tris.ravel()
        normals = np.stack([np.bincount(corners, weights=np.repeat(face[:, axis], 3), minlength=len(points))
                            for axis in range(3)], axis=1)
        positions, indices = points, corners
    else:
        positions = points[tris.ravel()]
        normals = np.repeat(face, 3, axis=0)
        indices = np.arange(len(positions))
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    rows = np.zeros((len(positions), 8), dtype=np.float32)
    rows[:, :3] = positions
    rows[:, 3:6] = normals
    return rows, indices.astype(np.uint32)
