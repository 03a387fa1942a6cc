"""The analytic shapes of `UsdRenderer` (usd.py): plane, ground, sphere, capsule, cylinder, cone and box prims
as Warp 1.19 writes them, and the transform ops every shape prim gets (translate, orient, scale, in that order).

A shape is either a prim at `/root[/<body>]/<name>`, or with is_template=True an instanceable class prim at
`/root/_template_shapes/<name>` holding the shape, which `add_shape_instance` references.
"""

from __future__ import annotations

import numpy as np

from mlwarp.library.builtins import namespace as wp  # quat_between_vectors, transform_point: the builtins, in Python scope
from mlwarp.core.vector import transform, vec3

UP_AXIS_TOKEN = ("X", "Y", "Z")
UP_AXIS_VEC = (
    np.array((1.0, 0.0, 0.0), dtype=float),
    np.array((0.0, 1.0, 0.0), dtype=float),
    np.array((0.0, 0.0, 1.0), dtype=float),
)


def add_xform_ops(prim):
    from pxr import UsdGeom

    prim = UsdGeom.Xform(prim)
    prim.ClearXformOpOrder()

    prim.AddTranslateOp()
    prim.AddOrientOp()
    prim.AddScaleOp()


def set_xform(
    xform,
    pos: tuple | None = None,
    rot: tuple | None = None,
    scale: tuple | None = None,
    time: float = 0.0,
):
    from pxr import Gf, UsdGeom

    xform = UsdGeom.Xform(xform)

    xform_ops = xform.GetOrderedXformOps()

    if pos is not None:
        xform_ops[0].Set(Gf.Vec3d(float(pos[0]), float(pos[1]), float(pos[2])), time)
    if rot is not None:
        xform_ops[1].Set(Gf.Quatf(float(rot[3]), float(rot[0]), float(rot[1]), float(rot[2])), time)
    if scale is not None:
        xform_ops[2].Set(Gf.Vec3d(float(scale[0]), float(scale[1]), float(scale[2])), time)


class UsdShapes:
    """The shape methods of UsdRenderer (its base class): they need its `stage`, `root`, `time`, `up_axis` and
    its maps of shape names to prim classes and custom scales."""

    def _resolve_path(self, name, parent_body=None, is_template=False):
        # resolve the path to the prim with the given name and optional parent body
        if is_template:
            return self.root.GetPath().AppendChild("_template_shapes").AppendChild(name)
        if parent_body is None:
            return self.root.GetPath().AppendChild(name)
        else:
            return self.root.GetPath().AppendChild(parent_body).AppendChild(name)

    def _shape_paths(self, name, parent_body, is_template, child):
        """(the path render_* returns, the path of the shape's prim): a template is an instanceable class prim
        (a Scope) that holds the shape as `child`, for add_shape_instance to reference."""
        from pxr import Sdf, UsdGeom

        if not is_template:
            path = self._resolve_path(name, parent_body)
            return path, path
        prim_path = self._resolve_path(name, parent_body, is_template)
        blueprint_prim = UsdGeom.Scope.Define(self.stage, prim_path).GetPrim()
        blueprint_prim.SetInstanceable(True)
        blueprint_prim.SetSpecifier(Sdf.SpecifierClass)
        return prim_path, prim_path.AppendChild(child)

    def render_plane(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        width: float,
        length: float,
        color: tuple[float, float, float] = (1.0, 1.0, 1.0),
        color2=None,
        parent_body: str | None = None,
        is_template: bool = False,
        u_scaling: float = 1.0,
        v_scaling: float = 1.0,
        visible: bool = True,
    ):
        """Render a plane with the given dimensions.

        Args:
            name: Name of the plane
            pos: Position of the plane
            rot: Rotation of the plane
            width: Width of the plane
            length: Length of the plane
            color: Color of the plane
            parent_body: Name of the parent body
            is_template: Whether the plane is a template
        """
        from pxr import UsdGeom

        prim_path, plane_path = self._shape_paths(name, parent_body, is_template, "plane")

        plane = UsdGeom.Mesh.Get(self.stage, plane_path)
        if not plane:
            plane = UsdGeom.Mesh.Define(self.stage, plane_path)
            plane.CreateDoubleSidedAttr().Set(True)

            width = width if width > 0.0 else 100.0
            length = length if length > 0.0 else 100.0
            points = ((-width, 0.0, -length), (width, 0.0, -length), (width, 0.0, length), (-width, 0.0, length))
            normals = ((0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0))
            counts = (4,)
            indices = [0, 1, 2, 3]

            plane.GetPointsAttr().Set(points)
            plane.GetNormalsAttr().Set(normals)
            plane.GetFaceVertexCountsAttr().Set(counts)
            plane.GetFaceVertexIndicesAttr().Set(indices)
            add_xform_ops(plane)

        self._shape_constructors[name] = UsdGeom.Mesh

        if not is_template:
            set_xform(plane, pos, rot, (1.0, 1.0, 1.0), 0.0)

        plane.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_ground(self, size: float = 100.0, plane=None):
        """Render a ground plane.

        Args:
            size: Half-extent of the plane along each axis.
            plane: Optional plane equation ``(nx, ny, nz, d)`` to orient and
                offset the plane.
        """
        from pxr import UsdGeom

        mesh = UsdGeom.Mesh.Define(self.stage, self.root.GetPath().AppendChild("ground"))
        mesh.CreateDoubleSidedAttr().Set(True)

        if self.up_axis == "X":
            points = ((0.0, size, -size), (0.0, -size, -size), (0.0, size, size), (0.0, -size, size))
            normals = ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 0.0, 0.0))
        elif self.up_axis == "Y":
            points = ((-size, 0.0, -size), (size, 0.0, -size), (-size, 0.0, size), (size, 0.0, size))
            normals = ((0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0))
        elif self.up_axis == "Z":
            points = ((-size, size, 0.0), (size, size, 0.0), (-size, -size, 0.0), (size, -size, 0.0))
            normals = ((0.0, 0.0, 1.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0))
        if plane is not None:
            # The plane (nx, ny, nz, d) holds the points x with n.x = d: rotate the up axis onto n, offset by d n.
            normal = np.array(plane[:3], dtype=float)
            normal /= np.linalg.norm(normal)
            up = UP_AXIS_VEC["XYZ".index(self.up_axis)]
            rotation = wp.quat_between_vectors(vec3(*up), vec3(*normal))
            tf = transform(vec3(*(plane[3] * normal)), rotation)
            points = [wp.transform_point(tf, vec3(*p)) for p in points]
            normals = [wp.transform_vector(tf, vec3(*n)) for n in normals]
        counts = (4,)
        indices = [0, 2, 3, 1]

        mesh.GetPointsAttr().Set(points)
        mesh.GetNormalsAttr().Set(normals)
        mesh.GetFaceVertexCountsAttr().Set(counts)
        mesh.GetFaceVertexIndicesAttr().Set(indices)

    def render_sphere(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        radius: float,
        parent_body: str | None = None,
        is_template: bool = False,
        color: tuple[float, float, float] | None = None,
        visible: bool = True,
    ):
        """Debug helper to add a sphere for visualization

        Args:
            pos: The position of the sphere
            radius: The radius of the sphere
            name: A name for the USD prim on the stage
            color: The color of the sphere
        """

        from pxr import Gf, UsdGeom

        prim_path, sphere_path = self._shape_paths(name, parent_body, is_template, "sphere")

        sphere = UsdGeom.Sphere.Get(self.stage, sphere_path)
        if not sphere:
            sphere = UsdGeom.Sphere.Define(self.stage, sphere_path)
            add_xform_ops(sphere)

        sphere.GetRadiusAttr().Set(radius, self.time)

        if color is not None:
            sphere.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        self._shape_constructors[name] = UsdGeom.Sphere

        if not is_template:
            set_xform(sphere, pos, rot, (1.0, 1.0, 1.0), self.time)

        sphere.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_capsule(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        radius: float,
        half_height: float,
        parent_body: str | None = None,
        is_template: bool = False,
        up_axis: int = 1,
        color: tuple[float, float, float] | None = None,
        visible: bool = True,
    ):
        """Debug helper to add a capsule for visualization

        Args:
            pos: The position of the capsule
            radius: The radius of the capsule
            half_height: The half height of the capsule
            name: A name for the USD prim on the stage
            color: The color of the capsule
        """

        from pxr import Gf, UsdGeom

        prim_path, capsule_path = self._shape_paths(name, parent_body, is_template, "capsule")

        capsule = UsdGeom.Capsule.Get(self.stage, capsule_path)
        if not capsule:
            capsule = UsdGeom.Capsule.Define(self.stage, capsule_path)
            add_xform_ops(capsule)

        capsule.GetRadiusAttr().Set(float(radius))
        capsule.GetHeightAttr().Set(float(half_height * 2.0))
        capsule.GetAxisAttr().Set(UP_AXIS_TOKEN[up_axis])

        if color is not None:
            capsule.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        self._shape_constructors[name] = UsdGeom.Capsule

        if not is_template:
            set_xform(capsule, pos, rot, (1.0, 1.0, 1.0), self.time)

        capsule.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_cylinder(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        radius: float,
        half_height: float,
        parent_body: str | None = None,
        is_template: bool = False,
        up_axis: int = 1,
        color: tuple[float, float, float] | None = None,
        visible: bool = True,
    ):
        """Debug helper to add a cylinder for visualization

        Args:
            pos: The position of the cylinder
            radius: The radius of the cylinder
            half_height: The half height of the cylinder
            name: A name for the USD prim on the stage
            color: The color of the cylinder
        """

        from pxr import Gf, UsdGeom

        prim_path, cylinder_path = self._shape_paths(name, parent_body, is_template, "cylinder")

        cylinder = UsdGeom.Cylinder.Get(self.stage, cylinder_path)
        if not cylinder:
            cylinder = UsdGeom.Cylinder.Define(self.stage, cylinder_path)
            add_xform_ops(cylinder)

        cylinder.GetRadiusAttr().Set(float(radius))
        cylinder.GetHeightAttr().Set(float(half_height * 2.0))
        cylinder.GetAxisAttr().Set(UP_AXIS_TOKEN[up_axis])

        if color is not None:
            cylinder.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        self._shape_constructors[name] = UsdGeom.Cylinder

        if not is_template:
            set_xform(cylinder, pos, rot, (1.0, 1.0, 1.0), self.time)

        cylinder.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_cone(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        radius: float,
        half_height: float,
        parent_body: str | None = None,
        is_template: bool = False,
        up_axis: int = 1,
        color: tuple[float, float, float] | None = None,
        visible: bool = True,
    ):
        """Debug helper to add a cone for visualization

        Args:
            pos: The position of the cone
            radius: The radius of the cone
            half_height: The half height of the cone
            name: A name for the USD prim on the stage
            color: The color of the cone
        """

        from pxr import Gf, UsdGeom

        prim_path, cone_path = self._shape_paths(name, parent_body, is_template, "cone")

        cone = UsdGeom.Cone.Get(self.stage, cone_path)
        if not cone:
            cone = UsdGeom.Cone.Define(self.stage, cone_path)
            add_xform_ops(cone)

        cone.GetRadiusAttr().Set(float(radius))
        cone.GetHeightAttr().Set(float(half_height * 2.0))
        cone.GetAxisAttr().Set(UP_AXIS_TOKEN[up_axis])

        if color is not None:
            cone.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        self._shape_constructors[name] = UsdGeom.Cone

        if not is_template:
            set_xform(cone, pos, rot, (1.0, 1.0, 1.0), self.time)

        cone.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_box(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        extents: tuple,
        parent_body: str | None = None,
        is_template: bool = False,
        color: tuple[float, float, float] | None = None,
        visible: bool = True,
    ):
        """Debug helper to add a box for visualization

        Args:
            pos: The position of the box
            extents: The radius of the box
            name: A name for the USD prim on the stage
            color: The color of the box
        """

        from pxr import Gf, UsdGeom

        prim_path, cube_path = self._shape_paths(name, parent_body, is_template, "cube")

        cube = UsdGeom.Cube.Get(self.stage, cube_path)
        if not cube:
            cube = UsdGeom.Cube.Define(self.stage, cube_path)
            add_xform_ops(cube)

        if color is not None:
            cube.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        self._shape_constructors[name] = UsdGeom.Cube
        self._shape_custom_scale[name] = extents

        if not is_template:
            set_xform(cube, pos, rot, extents, self.time)

        cube.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path
