"""`warp.render.OpenGLRenderer` for mlwarp: Warp 1.19's interactive renderer, with its constructor's signature.

Warp's renderer draws through pyglet (>= 2.0) in an OpenGL context: a window on a display, or with
`pyglet.options["headless"] = True` an EGL context without one. What it computes without a context is here and
runs anywhere: the shapes' triangle meshes and the camera matrices (opengl_meshes.py, also as this class's static
methods, as Warp has them) and the kernels that fill its vertex and instance buffers and read frames back
(opengl_kernels.py).

Constructing one needs pyglet: without it, it raises an ImportError that says so, as Warp does. The OpenGL
drawing itself (windows, shaders, buffer objects, frame read-back) is not in mlwarp: with pyglet installed the
constructor raises NotImplementedError naming that part, rather than opening a window that draws nothing.
"""

from __future__ import annotations

import numpy as np

from mlwarp.render.opengl_meshes import (
    DEFAULT_NUM_SEGMENTS, compute_model_matrix, create_arrow_mesh, create_box_mesh, create_capsule_mesh,
    create_cone_mesh, create_cylinder_mesh, create_sphere_mesh, perspective_projection,
)

PYGLET_REQUIREMENT = (
    "OpenGLRenderer requires pyglet (version >= 2.0) to be installed (pip install pyglet), and an OpenGL "
    "context: a display, or EGL with pyglet.options['headless'] = True"
)


def _require_pyglet():
    """pyglet, imported, or the ImportError that names what is missing."""
    try:
        import pyglet
    except ImportError as e:
        raise ImportError(PYGLET_REQUIREMENT) from e
    major = int(str(getattr(pyglet, "version", "0")).split(".")[0] or 0)
    if major < 2:
        raise ImportError(f"{PYGLET_REQUIREMENT}; found pyglet {pyglet.version}")
    return pyglet


class OpenGLRenderer:
    """Interactive OpenGL-based renderer for real-time 3D visualization (Warp 1.19's `warp.render.OpenGLRenderer`).

    Requires pyglet (version >= 2.0) and an OpenGL context; see the module's docstring for what mlwarp has of it.
    The static methods (camera matrices, shape meshes) need neither.
    """

    # number of segments to use for rendering spheres, capsules, cones and cylinders
    default_num_segments = DEFAULT_NUM_SEGMENTS

    gl = None  # pyglet's OpenGL bindings, imported by initialize_gl

    @classmethod
    def initialize_gl(cls):
        """Import and cache pyglet's OpenGL bindings (pyglet.gl)."""
        if cls.gl is None:
            _require_pyglet()
            from pyglet import gl

            cls.gl = gl

    def __init__(
        self,
        title: str = "Warp",
        scaling: float = 1.0,
        fps: int = 60,
        up_axis: str = "Y",
        screen_width: int = 1024,
        screen_height: int = 768,
        near_plane: float = 1.0,
        far_plane: float = 100.0,
        camera_fov: float = 45.0,
        camera_pos: tuple[float, float, float] = (0.0, 2.0, 10.0),
        camera_front: tuple[float, float, float] = (0.0, 0.0, -1.0),
        camera_up: tuple[float, float, float] = (0.0, 1.0, 0.0),
        background_color: tuple[float, float, float] = (0.53, 0.8, 0.92),
        draw_grid: bool = True,
        draw_sky: bool = True,
        draw_axis: bool = True,
        show_info: bool = True,
        render_wireframe: bool = False,
        render_depth: bool = False,
        axis_scale: float = 1.0,
        vsync: bool = False,
        headless: bool | None = None,
        enable_backface_culling: bool = True,
        enable_mouse_interaction: bool = True,
        enable_keyboard_interaction: bool = True,
        device=None,
        use_legacy_opengl: bool | None = None,
    ):
        """Open a window (or a headless context) and set up the scene; the arguments are Warp's (title, scaling,
        fps, up_axis, screen size, near/far planes, camera_fov in degrees, camera position/front/up, background
        color, grid/sky/axis/info overlays, wireframe or depth rendering, vsync, headless, backface culling,
        mouse/keyboard interaction, the device of its buffers, legacy OpenGL).

        Raises:
            ImportError: pyglet (>= 2.0) is not installed.
            NotImplementedError: pyglet is there, but mlwarp has no OpenGL drawing path.
        """
        _require_pyglet()
        raise NotImplementedError(
            "mlwarp's OpenGLRenderer has no OpenGL drawing path (window, shaders, vertex and instance buffers, frame "
            "read-back): use warp.render.UsdRenderer, or the renderer's meshes, camera matrices and buffer kernels "
            "(mlwarp.render.opengl_meshes, mlwarp.render.opengl_kernels)")

    @staticmethod
    def compute_projection_matrix(fov: float, aspect_ratio: float, near_plane: float, far_plane: float) -> np.ndarray:
        """The perspective projection of a vertical field of view `fov` (degrees), as 16 column-major floats."""
        return perspective_projection(fov, aspect_ratio, near_plane, far_plane)

    @staticmethod
    def compute_model_matrix(camera_axis: int, scaling: float) -> np.ndarray:
        """The model matrix for the given up-axis (0, 1, 2) and scaling, as 16 column-major floats."""
        return compute_model_matrix(camera_axis, scaling)

    _create_sphere_mesh = staticmethod(create_sphere_mesh)
    _create_capsule_mesh = staticmethod(create_capsule_mesh)
    _create_cone_mesh = staticmethod(create_cone_mesh)
    _create_cylinder_mesh = staticmethod(create_cylinder_mesh)
    _create_arrow_mesh = staticmethod(create_arrow_mesh)
    _create_box_mesh = staticmethod(create_box_mesh)
