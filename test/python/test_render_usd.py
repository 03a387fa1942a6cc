"""mlwarp.render.UsdRenderer (Warp's warp.render.UsdRenderer) against the stage warp-lang 1.19.0 writes: the same
calls (render_usd_scenario.py: every shape, meshes, arrows, lines, points, templates and their instances, a body,
a reference, visibility, three frames) give the same prims, types, transforms, attributes and time samples as
render_usd_reference.json, recorded from warp-lang's UsdRenderer. Also: the ground plane of a plane equation
(closed form), saving, and the errors of bad arguments."""

import json
import math
import os
import pathlib
import sys

import numpy as np
import pytest

pxr = pytest.importorskip("pxr", reason="usd-core (pxr) has wheels for Python 3.11+ only")

from pxr import Usd, UsdGeom  # noqa: E402

import mlwarp.render  # noqa: E402
from mlwarp.render import UsdRenderer  # noqa: E402

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from render_usd_scenario import render_scene, stage_data  # noqa: E402


def _assert_close(actual, expected, where=""):
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), where
        for key in expected:
            _assert_close(actual[key], expected[key], f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_close(a, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, abs=2e-5), where
    else:
        assert actual == expected, where


def test_stage_matches_warp_lang(tmp_path):
    renderer = render_scene(UsdRenderer, str(tmp_path / "scene.usda"))
    expected = json.loads((HERE / "render_usd_reference.json").read_text())
    _assert_close(stage_data(renderer.stage), expected)


def test_save_writes_the_stage_and_an_existing_stage_is_used(tmp_path):
    path = tmp_path / "saved.usda"
    stage = Usd.Stage.CreateNew(str(path))
    renderer = UsdRenderer(stage, fps=24)
    assert renderer.stage is stage
    renderer.begin_frame(0.5)  # time code round(0.5 * 24)
    renderer.render_sphere("ball", (1.0, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0), 0.5)
    assert renderer.save()
    reopened = Usd.Stage.Open(str(path))
    sphere = UsdGeom.Sphere(reopened.GetPrimAtPath("/root/ball"))
    assert sphere.GetRadiusAttr().GetTimeSamples() == [12.0]
    assert tuple(sphere.GetPrim().GetAttribute("xformOp:translate").Get(12.0)) == (1.0, 2.0, 3.0)
    assert reopened.GetEndTimeCode() == 12.0 and reopened.GetFramesPerSecond() == 24.0


@pytest.mark.parametrize("up_axis", ["Y", "Z"])
def test_ground_of_a_plane_equation(tmp_path, up_axis):
    """render_ground(plane=(n, d)): the quad's normals are n and its points x satisfy n.x = d, spanning
    2 size along two directions orthogonal to n."""
    renderer = UsdRenderer(str(tmp_path / "ground.usda"), up_axis=up_axis)
    normal = np.array([1.0, 2.0, 2.0]) / 3.0
    renderer.render_ground(size=4.0, plane=(*(normal * 3.0), 1.5))  # an unnormalised normal is normalised
    mesh = UsdGeom.Mesh(renderer.stage.GetPrimAtPath("/root/ground"))
    points = np.array(mesh.GetPointsAttr().Get(), dtype=float)
    normals = np.array(mesh.GetNormalsAttr().Get(), dtype=float)
    np.testing.assert_allclose(normals, np.tile(normal, (4, 1)), atol=1e-5)
    np.testing.assert_allclose(points @ normal, 1.5, atol=1e-5)
    centre = points.mean(axis=0)
    np.testing.assert_allclose(centre, 1.5 * normal, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(points - centre, axis=1), 4.0 * math.sqrt(2.0), rtol=1e-5)
    assert list(mesh.GetFaceVertexIndicesAttr().Get()) == [0, 2, 3, 1]


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match=r"UsdRenderer: stage must be a file path \(str\) or a pxr Usd.Stage, "
                                        r"got int"):
        UsdRenderer(3)
    with pytest.raises(ValueError, match=r"UsdRenderer: up_axis must be 'X', 'Y' or 'Z', got 'W'"):
        UsdRenderer(str(tmp_path / "a.usda"), up_axis="W")
    with pytest.raises(ValueError, match=r"UsdRenderer: a USD stage's up axis can only be 'Y' or 'Z', not 'X'"):
        UsdRenderer(str(tmp_path / "x.usda"), up_axis="x")


def test_missing_pxr_is_named(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pxr", None)  # what an interpreter without usd-core sees
    with pytest.raises(ImportError, match=r"Failed to import pxr. Please install USD \(e.g. via `pip install "
                                          r"usd-core`"):
        UsdRenderer(str(tmp_path / "b.usda"))


def test_the_module_is_warps():
    assert mlwarp.render.__all__ == ["OpenGLRenderer", "UsdRenderer", "utils"]
    assert os.path.basename(mlwarp.render.usd.__file__) == "usd.py"
