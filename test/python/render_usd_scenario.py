"""One scene rendered frame by frame through a UsdRenderer (every method, templates and instances, bodies,
visibility, three frames), and the stage it writes reduced to plain data: every prim with its type, specifier,
instanceability, references and relationship targets, and every authored attribute's default and time samples.

test_render_usd.py runs it with mlwarp.render.UsdRenderer and compares the result with render_usd_reference.json,
which is what warp-lang 1.19.0's warp.render.UsdRenderer wrote for the same calls (recorded by running this file
as a script with warp-lang's Python and pxr: `python render_usd_scenario.py OUT.json`)."""

import json
import math
import os
import sys

import numpy as np

FPS = 30


def quat_about(axis, angle):
    """(x, y, z, w) of the rotation by `angle` about `axis`."""
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return (*(axis * math.sin(angle / 2)), math.cos(angle / 2))


def render_scene(UsdRenderer, stage_path):
    """Render the scene into a new stage at stage_path; return the renderer."""
    directory = os.path.dirname(stage_path)
    with open(os.path.join(directory, "asset.usda"), "w") as f:
        f.write('#usda 1.0\n(\n    defaultPrim = "asset"\n)\n\ndef Xform "asset"\n{\n    def Sphere "ball"\n    {\n    }\n}\n')
    r = UsdRenderer(stage_path, up_axis="Z", fps=FPS, scaling=2.0)
    r.register_body("body0")
    box_template = r.render_box("tbox", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (0.5, 0.25, 0.125), is_template=True)
    sphere_template = r.render_sphere("tsphere", None, None, 0.3, is_template=True, color=(0.1, 0.2, 0.3))
    mesh_points = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    mesh_indices = np.array([0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3], dtype=np.int32)
    for frame in range(3):
        t = frame / FPS
        s = 1.0 + 0.5 * frame
        r.begin_frame(t)
        r.render_sphere("sphere", (s, 0.0, 0.5), quat_about((0, 0, 1), 0.3 * frame), 0.25 * s, color=(1.0, 0.0, 0.0))
        r.render_capsule("capsule", (0.0, s, 0.0), quat_about((1, 0, 0), 0.2 * frame), 0.1, 0.4 * s,
                         parent_body="body0", up_axis=frame % 3, color=(0.0, 1.0, 0.0))
        r.render_cylinder("cylinder", (1.0, 1.0, s), quat_about((0, 1, 0), 0.1 * frame), 0.2, 0.3,
                          up_axis=2, visible=frame != 1)
        r.render_cone("cone", (-1.0, 0.0, s), (0.0, 0.0, 0.0, 1.0), 0.3 * s, 0.6, up_axis=0, color=(0.2, 0.4, 0.6))
        r.render_box("box", (0.0, 0.0, -s), quat_about((1, 1, 0), 0.25 * frame), (0.5, 1.0, 1.5 * s),
                     color=(0.9, 0.8, 0.7))
        r.render_plane("plane", (0.0, -1.0, 0.0), (0.0, 0.0, 0.0, 1.0), 2.0 * s, 3.0)
        r.render_mesh("mesh", mesh_points * s, mesh_indices, colors=(0.5, 0.5, 0.0), pos=(0.0, 2.0, 0.0),
                      rot=quat_about((0, 0, 1), 0.5), scale=(1.0, 2.0, 1.0), update_topology=frame == 2)
        r.render_mesh("mesh_colored", mesh_points + frame, mesh_indices, colors=np.eye(4, 3, dtype=np.float32))
        r.render_arrow("arrow", (0.0, 0.0, 3.0), quat_about((0, 1, 0), 0.4), 0.05, 0.8 * s, cap_radius=0.1,
                       cap_height=0.2, up_axis=2, color=(1.0, 1.0, 0.0))
        line_vertices = [(0.0, 0.0, 0.0), (1.0, 0.0, s), (1.0, 1.0, 0.0), (0.0, 2.0, 1.0)]
        r.render_line_list("lines", line_vertices, [0, 1, 2, 3, 1, 2], color=(0.0, 0.0, 1.0), radius=0.02)
        r.render_line_strip("strip", line_vertices, color=(0.3, 0.3, 0.3), radius=0.03)
        points = np.array([[0.0, 0.0, s], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        r.render_points("spheres", points, 0.1 * s, colors=[(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)])
        r.render_points("dots", points * 2.0, [0.1, 0.2, 0.3], colors=(0.4, 0.5, 0.6), as_spheres=False)
        r.add_shape_instance("box_instance", box_template, "body0", (s, s, 0.0), quat_about((0, 0, 1), 0.1),
                             (1.0, 2.0, 3.0))
        r.add_shape_instance("sphere_instance", sphere_template, None, (0.0, s, s), (0.0, 0.0, 0.0, 1.0),
                             (2.0, 2.0, 2.0), visible=frame != 2)
        r.render_ref("ref", "./asset.usda", (0.0, 0.0, s), (0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0),
                     color=(0.6, 0.6, 0.6))
        r.end_frame()
    r.render_ground(size=5.0)
    return r


def _plain(value):
    """A USD value as nested lists of rounded floats, ints, strings or bools."""
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float):
        return round(value, 5)
    try:
        seq = list(value)
    except TypeError:
        pass
    else:
        return [_plain(v) for v in seq]
    for parts in (("real", "imaginary"), ("GetReal", "GetImaginary")):
        if hasattr(value, parts[0]):
            real = getattr(value, parts[0])
            imaginary = getattr(value, parts[1])
            real, imaginary = (real() if callable(real) else real), (imaginary() if callable(imaginary) else imaginary)
            return [_plain(real), _plain(imaginary)]
    return str(value)


def stage_data(stage):
    """The stage's prims (class prims included) and their authored data, keyed by path."""
    from pxr import Usd

    out = {"defaultPrim": str(stage.GetDefaultPrim().GetPath()), "startTimeCode": stage.GetStartTimeCode(),
           "endTimeCode": stage.GetEndTimeCode(), "framesPerSecond": stage.GetFramesPerSecond(),
           "upAxis": str(stage.GetMetadata("upAxis")), "prims": {}}
    for prim in Usd.PrimRange.Stage(stage, Usd.PrimAllPrimsPredicate):
        references = prim.GetMetadata("references")
        entry = {"type": str(prim.GetTypeName()), "specifier": str(prim.GetSpecifier()),
                 "instanceable": prim.IsInstanceable(),
                 "references": str(references) if references else None, "attributes": {}, "relationships": {}}
        for attribute in prim.GetAuthoredAttributes():
            samples = attribute.GetTimeSamples()
            default = attribute.Get(Usd.TimeCode.Default()) if attribute.HasAuthoredValue() else None
            entry["attributes"][attribute.GetName()] = {
                "default": _plain(default),
                "samples": {str(t): _plain(attribute.Get(t)) for t in samples},
                "interpolation": str(attribute.GetMetadata("interpolation") or ""),
            }
        for relationship in prim.GetAuthoredRelationships():
            entry["relationships"][relationship.GetName()] = [str(t) for t in relationship.GetTargets()]
        out["prims"][str(prim.GetPath())] = entry
    return out


if __name__ == "__main__":
    import tempfile

    from warp.render import UsdRenderer

    with tempfile.TemporaryDirectory() as directory:
        renderer = render_scene(UsdRenderer, os.path.join(directory, "scene.usda"))
        data = stage_data(renderer.stage)
    with open(sys.argv[1], "w") as f:
        json.dump(data, f, indent=0, sort_keys=True)
