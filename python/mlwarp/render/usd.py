"""`warp.render.UsdRenderer` for mlwarp: Warp 1.19's renderer that writes shapes, meshes, lines and points to a
USD stage (Pixar's `pxr` from the `usd-core` package), one time sample per frame, for USD viewers and renderers.

The stage it writes has Warp's layout, prim for prim: a `/root` transform scaled by `scaling` (the stage's
default prim), `/dome_light` and `/distant_light`, and under `/root` one prim per rendered name (a body's shapes
under `/root/<body>`, instanceable templates under `/root/_template_shapes/<name>`), each with the translate,
orient and scale ops Warp gives it, set at the time code `round(time * fps)` of the current frame.

One difference from Warp: `render_ground(plane=...)` turns the up axis onto the plane's normal (Warp's rotation
fails with a numpy axis, and its angle and axis do not carry the up axis to the normal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mlwarp.launching.logger import log_error, log_info

from mlwarp.render.usd_shapes import UP_AXIS_TOKEN, UP_AXIS_VEC, UsdShapes, add_xform_ops, set_xform

if TYPE_CHECKING:
    from pxr import Usd


def _compute_segment_xform(pos0, pos1):
    """(midpoint, rotation, scale) that turn a unit-height capsule along z into the segment pos0 -> pos1."""
    from pxr import Gf

    mid = (pos0 + pos1) * 0.5
    height = (pos1 - pos0).GetLength()

    dir = (pos1 - pos0) / height

    rot = Gf.Rotation()
    rot.SetRotateInto((0.0, 0.0, 1.0), Gf.Vec3d(dir))

    scale = Gf.Vec3f(1.0, 1.0, height)

    return (mid, Gf.Quath(rot.GetQuat()), scale)


class UsdRenderer(UsdShapes):
    """USD-based renderer for creating 3D visualizations and animations.

    This renderer writes geometric primitives, meshes, and point clouds to
    Universal Scene Description (USD) files, which can be viewed in USD-compatible
    applications such as USDView, applications built with the Omniverse Kit SDK,
    or Blender. It supports time-varying animations by recording geometry at
    different time codes.

    The renderer provides methods to visualize geometric shapes (spheres, boxes,
    capsules, cylinders, cones), custom meshes, line primitives, and point clouds.
    All geometry is organized under a root transform that can be scaled uniformly.

    Note:
        Requires USD to be installed. Install ``usd-core`` (``pip install usd-core``)
        or ``usd-exchange`` (``pip install usd-exchange``) on Linux aarch64 systems
        where ``usd-core`` is not available.

    Args:
        stage: A USD stage (either a file path or a ``Usd.Stage`` object).
            If a string path is provided, a new USD stage will be created at that location.
        up_axis: The upfacing axis of the stage. Can be ``"X"``, ``"Y"``, or ``"Z"``.
        fps: The number of frames per second for animation playback.
        scaling: Uniform scaling factor applied to all entities in the scene.
    """

    def __init__(self, stage: str | Usd.Stage, up_axis: str = "Y", fps: int = 60, scaling: float = 1.0):
        try:
            from pxr import Gf, Sdf, Usd, UsdGeom, UsdLux
        except ImportError as e:
            raise ImportError(
                "Failed to import pxr. Please install USD"
                " (e.g. via `pip install usd-core`, or `pip install usd-exchange` on Linux aarch64)."
            ) from e

        if not isinstance(up_axis, str) or up_axis.upper() not in UP_AXIS_TOKEN:
            raise ValueError(f"UsdRenderer: up_axis must be 'X', 'Y' or 'Z', got {up_axis!r}")
        if up_axis.upper() == "X":
            # USD's stage metrics have no x up axis (pxr raises deep in UsdGeom.SetStageUpAxis, as under Warp)
            raise ValueError("UsdRenderer: a USD stage's up axis can only be 'Y' or 'Z', not 'X'")
        if isinstance(stage, str):
            self.stage = stage = Usd.Stage.CreateNew(stage)
        elif isinstance(stage, Usd.Stage):
            self.stage = stage
        else:
            # Warp logs this and then fails on the missing stage; the argument's error says what to pass
            raise TypeError(f"UsdRenderer: stage must be a file path (str) or a pxr Usd.Stage, got "
                            f"{type(stage).__name__}")
        self.up_axis = up_axis.upper()
        self.fps = float(fps)
        self.time = 0.0

        self.draw_points = True
        self.draw_springs = False
        self.draw_triangles = False

        self.root = UsdGeom.Xform.Define(stage, "/root")

        # mapping from shape ID to UsdGeom class
        self._shape_constructors = {}
        # optional scaling applied to shape instances (e.g. cubes)
        self._shape_custom_scale = {}

        # apply scaling
        self.root.ClearXformOpOrder()
        s = self.root.AddScaleOp()
        s.Set(Gf.Vec3d(float(scaling), float(scaling), float(scaling)), 0.0)

        self.stage.SetDefaultPrim(self.root.GetPrim())
        self.stage.SetStartTimeCode(0.0)
        self.stage.SetEndTimeCode(0.0)
        self.stage.SetFramesPerSecond(self.fps)

        UsdGeom.SetStageUpAxis(self.stage, {"Y": UsdGeom.Tokens.y, "Z": UsdGeom.Tokens.z}[self.up_axis])

        dome_light = UsdLux.DomeLight.Define(stage, "/dome_light")
        dome_light.AddRotateXYZOp().Set((-90.0, -30.0, 0.0))
        dome_light.GetEnableColorTemperatureAttr().Set(True)
        dome_light.GetColorTemperatureAttr().Set(6150.0)
        dome_light.GetIntensityAttr().Set(1.0)
        dome_light.GetExposureAttr().Set(9.0)
        dome_light.GetPrim().CreateAttribute("visibleInPrimaryRay", Sdf.ValueTypeNames.Bool).Set(False)

        distant_light = UsdLux.DistantLight.Define(stage, "/distant_light")
        distant_light.AddRotateXYZOp().Set((-35.0, 45.0, 0.0))
        distant_light.GetEnableColorTemperatureAttr().Set(True)
        distant_light.GetColorTemperatureAttr().Set(7250.0)
        distant_light.GetIntensityAttr().Set(1.0)
        distant_light.GetExposureAttr().Set(10.0)

    def begin_frame(self, time):
        """Set the current time code for subsequent writes.

        Args:
            time: Time in seconds.
        """
        self.time = round(time * self.fps)
        self.stage.SetEndTimeCode(self.time)

    def end_frame(self):
        """End the current frame (no-op for USD)."""
        pass

    def register_body(self, body_name):
        """Create a transform prim for a body.

        Args:
            body_name: Name of the body prim under ``/root``.
        """
        from pxr import UsdGeom

        xform = UsdGeom.Xform.Define(self.stage, self.root.GetPath().AppendChild(body_name))

        add_xform_ops(xform)

    def add_shape_instance(
        self,
        name: str,
        shape: int,
        body,
        pos: tuple,
        rot: tuple,
        scale: tuple = (1.0, 1.0, 1.0),
        color1=None,
        color2=None,
        custom_index: int = -1,
        visible: bool = True,
    ):
        """Instance a previously defined shape.

        Args:
            name: Name for the instance prim.
            shape: Shape prim path returned by a ``render_*`` method.
            body: Optional parent body name.
            pos: Position tuple ``(x, y, z)``.
            rot: Orientation quaternion ``(x, y, z, w)``.
            scale: Scale tuple.
            color1: Optional color override (currently unused).
            color2: Optional secondary color override (currently unused).
            custom_index: Optional custom instance index (currently unused).
            visible: Whether the instance is visible.
        """
        if not visible:
            return
        sdf_path = self._resolve_path(name, body)
        instance = self._shape_constructors[shape.name].Define(self.stage, sdf_path)
        instance.GetPrim().GetReferences().AddInternalReference(shape)

        add_xform_ops(instance)
        if shape.name in self._shape_custom_scale:
            cs = self._shape_custom_scale[shape.name]
            scale = (scale[0] * cs[0], scale[1] * cs[1], scale[2] * cs[2])
        set_xform(instance, pos, rot, scale, self.time)

    def render_ref(self, name: str, path: str, pos: tuple, rot: tuple, scale: tuple, color: tuple | None = None):
        """Reference an external USD asset.

        Args:
            name: Name for the reference prim.
            path: Path to the USD file.
            pos: Position tuple ``(x, y, z)``.
            rot: Orientation quaternion ``(x, y, z, w)``.
            scale: Scale tuple.
            color: Optional display color applied to referenced prims.
        """
        from pxr import Gf, Usd, UsdGeom

        ref_path = "/root/" + name

        ref = UsdGeom.Xform.Get(self.stage, ref_path)
        if not ref:
            ref = UsdGeom.Xform.Define(self.stage, ref_path)
            ref.GetPrim().GetReferences().AddReference(path)
            add_xform_ops(ref)

        # update transform
        set_xform(ref, pos, rot, scale, self.time)

        if color is not None:
            it = iter(Usd.PrimRange(ref.GetPrim()))
            for prim in it:
                if prim.IsA(UsdGeom.Gprim):
                    UsdGeom.Gprim(prim).GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)
                    it.PruneChildren()

    def render_mesh(
        self,
        name: str,
        points,
        indices,
        colors=None,
        pos=(0.0, 0.0, 0.0),
        rot=(0.0, 0.0, 0.0, 1.0),
        scale=(1.0, 1.0, 1.0),
        update_topology=False,
        parent_body: str | None = None,
        is_template: bool = False,
        smooth_shading: bool = True,
        visible: bool = True,
    ):
        """Create or update a mesh prim.

        Args:
            name: Name for the mesh prim.
            points: Vertex positions.
            indices: Triangle indices.
            colors: Display colors (constant or per-vertex).
            pos: Position tuple ``(x, y, z)``.
            rot: Orientation quaternion ``(x, y, z, w)``.
            scale: Scale tuple.
            update_topology: Whether to update index data.
            parent_body: Optional parent body name.
            is_template: Whether to create an instanced template.
            smooth_shading: Reserved for future use.
            visible: Whether the mesh is visible.

        Returns:
            The prim path of the mesh or template.
        """
        from pxr import UsdGeom

        prim_path, mesh_path = self._shape_paths(name, parent_body, is_template, "mesh")

        mesh = UsdGeom.Mesh.Get(self.stage, mesh_path)
        if not mesh:
            mesh = UsdGeom.Mesh.Define(self.stage, mesh_path)
            if colors is not None and len(colors) == 3:
                color_interp = "constant"
            else:
                color_interp = "vertex"

            UsdGeom.Primvar(mesh.GetDisplayColorAttr()).SetInterpolation(color_interp)
            add_xform_ops(mesh)

            # force topology update on first frame
            update_topology = True

        mesh.GetPointsAttr().Set(points, self.time)

        if update_topology:
            idxs = np.array(indices).reshape(-1, 3)
            mesh.GetFaceVertexIndicesAttr().Set(idxs, self.time)
            mesh.GetFaceVertexCountsAttr().Set([3] * len(idxs), self.time)

        if colors is not None:
            if len(colors) == 3:
                colors = (colors,)

            mesh.GetDisplayColorAttr().Set(colors, self.time)

        self._shape_constructors[name] = UsdGeom.Mesh
        self._shape_custom_scale[name] = scale

        if not is_template:
            set_xform(mesh, pos, rot, scale, self.time)

        mesh.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_arrow(
        self,
        name: str,
        pos: tuple,
        rot: tuple,
        base_radius: float,
        base_height: float,
        cap_radius: float | None = None,
        cap_height: float | None = None,
        parent_body: str | None = None,
        is_template: bool = False,
        up_axis: int = 1,
        color: tuple[float, float, float] | None = None,
        visible: bool = True,
    ):
        """Render an arrow composed of a cylinder and a cone.

        Args:
            name: Name for the arrow prim.
            pos: Position tuple ``(x, y, z)``.
            rot: Orientation quaternion ``(x, y, z, w)``.
            base_radius: Radius of the arrow shaft.
            base_height: Height of the arrow shaft.
            cap_radius: Radius of the arrow head.
            cap_height: Height of the arrow head.
            parent_body: Optional parent body name.
            is_template: Whether to create an instanced template.
            up_axis: Up-axis index (0=X, 1=Y, 2=Z).
            color: Optional display color.
            visible: Whether the arrow is visible.

        Returns:
            The prim path of the arrow.
        """
        from pxr import Gf, UsdGeom

        prim_path, arrow_path = self._shape_paths(name, parent_body, is_template, "arrow")

        arrow = UsdGeom.Xform.Get(self.stage, arrow_path)
        if not arrow:
            arrow = UsdGeom.Xform.Define(self.stage, arrow_path)
            add_xform_ops(arrow)

        base_path = arrow_path.AppendChild("base")
        base = UsdGeom.Xform.Get(self.stage, base_path)
        if not base:
            base = UsdGeom.Cylinder.Define(self.stage, base_path)
            add_xform_ops(base)

        base.GetRadiusAttr().Set(float(base_radius))
        base.GetHeightAttr().Set(float(base_height))
        base.GetAxisAttr().Set(UP_AXIS_TOKEN[up_axis])
        set_xform(base, UP_AXIS_VEC[up_axis] * base_height * 0.5)

        cap_path = arrow_path.AppendChild("cap")
        cap = UsdGeom.Xform.Get(self.stage, cap_path)
        if not cap:
            cap = UsdGeom.Cone.Define(self.stage, arrow_path.AppendChild("cap"))
            add_xform_ops(cap)

        cap.GetRadiusAttr().Set(float(cap_radius))
        cap.GetHeightAttr().Set(float(cap_height))
        cap.GetAxisAttr().Set(UP_AXIS_TOKEN[up_axis])
        set_xform(cap, UP_AXIS_VEC[up_axis] * (base_height + cap_height * 0.5))

        if color is not None:
            base.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)
            cap.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        self._shape_constructors[name] = UsdGeom.Xform

        if not is_template:
            set_xform(arrow, pos, rot, (1.0, 1.0, 1.0), self.time)

        arrow.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return prim_path

    def render_line_list(
        self,
        name: str,
        vertices,
        indices,
        color: tuple[float, float, float] | None = None,
        radius: float = 0.01,
        visible: bool = True,
    ):
        """Debug helper to add a line list as a set of capsules

        Args:
            vertices: The vertices of the line-strip
            color: The color of the line
        """

        from pxr import Gf, UsdGeom

        num_lines = int(len(indices) / 2)

        if num_lines < 1:
            return

        # look up rope point instancer
        instancer_path = self.root.GetPath().AppendChild(name)
        instancer = UsdGeom.PointInstancer.Get(self.stage, instancer_path)

        if not instancer:
            instancer = UsdGeom.PointInstancer.Define(self.stage, instancer_path)
            instancer_capsule = UsdGeom.Capsule.Define(self.stage, instancer.GetPath().AppendChild("capsule"))
            instancer_capsule.GetRadiusAttr().Set(radius)
            instancer.CreatePrototypesRel().SetTargets([instancer_capsule.GetPath()])
            # instancer.CreatePrimvar("displayColor", Sdf.ValueTypeNames.Float3Array, "constant", 1)

        line_positions = []
        line_rotations = []
        line_scales = []

        for i in range(num_lines):
            pos0 = vertices[indices[i * 2 + 0]]
            pos1 = vertices[indices[i * 2 + 1]]

            (pos, rot, scale) = _compute_segment_xform(
                Gf.Vec3f(float(pos0[0]), float(pos0[1]), float(pos0[2])),
                Gf.Vec3f(float(pos1[0]), float(pos1[1]), float(pos1[2])),
            )

            line_positions.append(pos)
            line_rotations.append(rot)
            line_scales.append(scale)
            # line_colors.append(Gf.Vec3f((float(i)/num_lines, 0.5, 0.5)))

        instancer.GetPositionsAttr().Set(line_positions, self.time)
        instancer.GetOrientationsAttr().Set(line_rotations, self.time)
        instancer.GetScalesAttr().Set(line_scales, self.time)
        instancer.GetProtoIndicesAttr().Set([0] * num_lines, self.time)

        # instancer.GetPrimvar("displayColor").Set(line_colors, time)

        instancer.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)

    def render_line_strip(
        self,
        name: str,
        vertices,
        color: tuple[float, float, float] | None = None,
        radius: float = 0.01,
        visible: bool = True,
    ):
        """Render a line strip as capsules.

        Args:
            name: Name for the line strip prim.
            vertices: Polyline vertices.
            color: Display color for the capsules.
            radius: Capsule radius.
            visible: Whether the line strip is visible.
        """
        from pxr import Gf, UsdGeom

        num_lines = int(len(vertices) - 1)

        if num_lines < 1:
            return

        # look up rope point instancer
        instancer_path = self.root.GetPath().AppendChild(name)
        instancer = UsdGeom.PointInstancer.Get(self.stage, instancer_path)

        if not instancer:
            instancer = UsdGeom.PointInstancer.Define(self.stage, instancer_path)
            instancer_capsule = UsdGeom.Capsule.Define(self.stage, instancer.GetPath().AppendChild("capsule"))
            instancer_capsule.GetRadiusAttr().Set(radius)
            instancer.CreatePrototypesRel().SetTargets([instancer_capsule.GetPath()])

        line_positions = []
        line_rotations = []
        line_scales = []

        for i in range(num_lines):
            pos0 = vertices[i]
            pos1 = vertices[i + 1]

            (pos, rot, scale) = _compute_segment_xform(
                Gf.Vec3f(float(pos0[0]), float(pos0[1]), float(pos0[2])),
                Gf.Vec3f(float(pos1[0]), float(pos1[1]), float(pos1[2])),
            )

            line_positions.append(pos)
            line_rotations.append(rot)
            line_scales.append(scale)

        instancer.GetPositionsAttr().Set(line_positions, self.time)
        instancer.GetOrientationsAttr().Set(line_rotations, self.time)
        instancer.GetScalesAttr().Set(line_scales, self.time)
        instancer.GetProtoIndicesAttr().Set([0] * num_lines, self.time)

        instancer_capsule = UsdGeom.Capsule.Get(self.stage, instancer.GetPath().AppendChild("capsule"))
        instancer_capsule.GetDisplayColorAttr().Set([Gf.Vec3f(color)], self.time)

        instancer.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)

    def render_points(self, name: str, points, radius, colors=None, as_spheres: bool = True, visible: bool = True):
        """Render points as spheres or USD points.

        Args:
            name: Name for the points prim.
            points: Point positions.
            radius: Scalar or per-point radius.
            colors: Optional display colors.
            as_spheres: Whether to render as sphere instances.
            visible: Whether the points are visible.

        Returns:
            The prim path for the points.
        """
        from pxr import Sdf, UsdGeom, Vt

        instancer_path = self._resolve_path(name)

        if np.isscalar(radius):
            radius_interp = "constant"
        else:
            radius_interp = "vertex"

        if colors is None:
            color_interp = "constant"
        elif len(colors) == 3 and all(np.isscalar(x) for x in colors):
            color_interp = "constant"
            is_single_color = True
        else:
            color_interp = "vertex"
            is_single_color = False

        if as_spheres:
            instancer = UsdGeom.PointInstancer.Get(self.stage, instancer_path)
            if not instancer:
                instancer = UsdGeom.PointInstancer.Define(self.stage, instancer_path)
                sphere = UsdGeom.Sphere.Define(self.stage, instancer.GetPath().AppendChild("sphere"))
                primvar_api = UsdGeom.PrimvarsAPI(instancer)

                instancer.CreatePrototypesRel().SetTargets((sphere.GetPath(),))
                instancer.CreateProtoIndicesAttr().Set(Vt.IntArray((0,) * len(points)))

                if colors is not None:
                    primvar_api.CreatePrimvar("displayColor", Sdf.ValueTypeNames.Color3fArray, color_interp, 1)

            instancer.GetPositionsAttr().Set(points, self.time)

            if radius_interp == "constant":
                radius = np.tile(radius, (3, len(points))).T
            else:
                radius = np.tile(radius, (3, 1)).T

            instancer.GetScalesAttr().Set(radius, self.time)

            if colors is not None:
                if is_single_color:
                    colors = (colors,)

                primvar_api = UsdGeom.PrimvarsAPI(instancer)
                primvar_api.GetPrimvar("displayColor").Set(colors, self.time)
        else:
            instancer = UsdGeom.Points.Get(self.stage, instancer_path)
            if not instancer:
                instancer = UsdGeom.Points.Define(self.stage, instancer_path)

                UsdGeom.Primvar(instancer.GetWidthsAttr()).SetInterpolation(radius_interp)
                UsdGeom.Primvar(instancer.GetDisplayColorAttr()).SetInterpolation(color_interp)

            instancer.GetPointsAttr().Set(points, self.time)

            if np.isscalar(radius):
                widths = (radius * 2.0,)
            else:
                widths = np.array(radius) * 2.0

            instancer.GetWidthsAttr().Set(widths, self.time)

            if colors is not None:
                if len(colors) == 3:
                    colors = (colors,)

                instancer.GetDisplayColorAttr().Set(colors, self.time)

        instancer.GetVisibilityAttr().Set("inherited" if visible else "invisible", self.time)
        return instancer.GetPath()

    def save(self):
        """Save the USD stage to disk.

        Returns:
            ``True`` if saving succeeded, ``False`` otherwise.
        """
        try:
            self.stage.Save()
        except Exception as e:
            log_error(f"Failed to save USD stage: {e}")
            return False

        file_path = self.stage.GetRootLayer().realPath
        log_info(f"Saved the USD stage file at '{file_path}'")
        return True
