"""`warp.render.OpenGLRenderer` for mlwarp: Warp 1.19's interactive renderer, with its constructor's signature.

It draws through pyglet (>= 2.0) in an OpenGL 3.3 context: a window on a display, or with `headless=True` (or
`pyglet.options["headless"] = True`) an invisible EGL context without one. Each frame is drawn into the renderer's
own framebuffer (colour and depth), which get_pixels reads back and which is copied to the window.

- opengl_gl.py: the context, the GLSL programs (and the shading model), vertex-array objects, read-back.
- opengl_scene.py: shapes, instances and Warp's render_* calls.
- opengl_meshes.py, opengl_kernels.py: the shapes' meshes and camera matrices, and the kernels that fill the
  instance buffers and turn frames into images; they need no context.

Without pyglet the constructor raises an ImportError that says so, as Warp does; where no context can be created
(no display, no EGL, no OpenGL 3.3 driver) an OpenGLContextError that names what is missing.
"""

from __future__ import annotations

import time

import numpy as np

from mlwarp.render.opengl_gl import (
    LINE_FRAGMENT_SHADER, LINE_VERTEX_SHADER, SHAPE_FRAGMENT_SHADER, SHAPE_VERTEX_SHADER, SKY_FRAGMENT_SHADER,
    SKY_VERTEX_SHADER, GLLines, GLProgram, GLScreenTriangle, OpenGLContextError, axis_lines, grid_lines, open_window,
)
from mlwarp.render.opengl_meshes import (
    DEFAULT_NUM_SEGMENTS, compute_model_matrix, create_arrow_mesh, create_box_mesh, create_capsule_mesh,
    create_cone_mesh, create_cylinder_mesh, create_sphere_mesh, look_at, perspective_projection,
)
from mlwarp.render.opengl_frame import FrameMixin
from mlwarp.render.opengl_scene import SceneMixin
from mlwarp.runtime.device import get_device

PYGLET_REQUIREMENT = (
    "OpenGLRenderer requires pyglet (version >= 2.0) to be installed (pip install pyglet), and an OpenGL "
    "context: a display, or EGL with pyglet.options['headless'] = True"
)

UP_AXES = {"X": 0, "Y": 1, "Z": 2}
# camera motion per second of the keys WASD/QE, in units of the scene (times the renderer's scaling)
CAMERA_SPEED = 4.0
# degrees of yaw/pitch per pixel of a mouse drag
MOUSE_SENSITIVITY = 0.1

__all__ = ["OpenGLRenderer", "OpenGLContextError"]


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


def _vec3(values) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=np.float64)


class OpenGLRenderer(SceneMixin, FrameMixin):
    """Interactive OpenGL-based renderer for real-time 3D visualization (Warp 1.19's `warp.render.OpenGLRenderer`).

    Requires pyglet (version >= 2.0) and an OpenGL 3.3 context (a display, or EGL when headless); see the module's
    docstring. The static methods (camera matrices, shape meshes) need neither.
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
        fps, up_axis, screen size, near/far planes, camera_fov in degrees, camera position/front/up in the
        renderer's y-up frame, background color, grid/sky/axis/info overlays, wireframe or depth rendering, vsync,
        headless (None: pyglet.options["headless"]), backface culling, mouse/keyboard interaction, the device of
        its buffers and kernels). use_legacy_opengl is accepted; mlwarp always draws with OpenGL 3.3 core.

        Raises:
            ImportError: pyglet (>= 2.0) is not installed.
            OpenGLContextError: no OpenGL 3.3 context could be created (the message says what is missing).
        """
        pyglet = _require_pyglet()
        if str(up_axis).upper() not in UP_AXES:
            raise ValueError(f"OpenGLRenderer: up_axis must be 'X', 'Y' or 'Z', got {up_axis!r}")
        if headless is None:
            headless = bool(pyglet.options.get("headless", False))
        pyglet.options["debug_gl"] = False
        self.window = open_window(pyglet, headless, title, screen_width, screen_height, vsync)
        self._closed = False
        self.initialize_gl()
        self.headless = headless
        self.app = pyglet.app
        self._device = get_device(device)
        self._title = title
        self._fps = fps
        self._up_axis_index = UP_AXES[str(up_axis).upper()]
        self._scaling = float(scaling)
        self.camera_near_plane = near_plane
        self.camera_far_plane = far_plane
        self.camera_fov = camera_fov
        self.background_color = tuple(background_color)
        self.draw_grid = draw_grid
        self.draw_sky = draw_sky
        self.draw_axis = draw_axis
        self.show_info = show_info
        self.render_wireframe = render_wireframe
        self.render_depth = render_depth
        self.axis_scale = axis_scale
        self.enable_backface_culling = enable_backface_culling
        self.enable_mouse_interaction = enable_mouse_interaction
        self.enable_keyboard_interaction = enable_keyboard_interaction
        self.screen_width, self.screen_height = self.window.get_framebuffer_size()
        self._camera_pos = _vec3(camera_pos)
        self._camera_front = _vec3(camera_front) / np.linalg.norm(camera_front)
        self._camera_up = _vec3(camera_up) / np.linalg.norm(camera_up)
        self._paused = False
        self.skip_rendering = False
        self.time = 0.0
        self._start_time = time.perf_counter()
        self._frame_count = 0
        self._fps_value = 0.0
        self._last_fps_time = self._start_time
        self._last_update_time = self._start_time
        self.clock_time = 0.0  # seconds since the renderer was created, at the last update()
        self.render_2d_callbacks = []  # called after each frame is shown, on the window's framebuffer
        self.render_3d_callbacks = []  # called after the shapes are drawn, in the frame's 3-D view
        self.use_legacy_opengl = False
        self._key_callbacks = []
        self._input_processors = []
        self._keys_down = set()

        self._init_scene()
        self._init_tiles()
        gl = self.gl
        self._shape_program = GLProgram(gl, SHAPE_VERTEX_SHADER, SHAPE_FRAGMENT_SHADER)
        self._line_program = GLProgram(gl, LINE_VERTEX_SHADER, LINE_FRAGMENT_SHADER)
        self._sky_program = GLProgram(gl, SKY_VERTEX_SHADER, SKY_FRAGMENT_SHADER)
        self._sky = GLScreenTriangle(gl)
        self._grid = GLLines(gl, grid_lines(50, 1.0))
        self._axes = GLLines(gl, axis_lines(1.0))
        self._frame_buffer = None
        self._create_frame_buffer()
        self._info_label = None
        if show_info:
            self._info_label = pyglet.text.Label("", font_size=12, x=10, y=self.screen_height - 10,
                                                 anchor_x="left", anchor_y="top", color=(255, 255, 255, 255))
        self.update_model_matrix()
        self.update_projection_matrix()
        self.update_view_matrix()
        self._setup_events()

    # -- camera ------------------------------------------------------------------------------------------------

    @staticmethod
    def compute_projection_matrix(fov: float, aspect_ratio: float, near_plane: float, far_plane: float) -> np.ndarray:
        """The perspective projection of a vertical field of view `fov` (degrees), as 16 column-major floats."""
        return perspective_projection(fov, aspect_ratio, near_plane, far_plane)

    @staticmethod
    def compute_model_matrix(camera_axis: int, scaling: float) -> np.ndarray:
        """The model matrix for the given up-axis (0, 1, 2) and scaling, as 16 column-major floats."""
        return compute_model_matrix(camera_axis, scaling)

    def compute_view_matrix(self, cam_pos, cam_front, cam_up) -> np.ndarray:
        """The view matrix (16 column-major floats) of a camera at cam_pos looking along cam_front."""
        cam_pos = _vec3(cam_pos)
        return look_at(cam_pos, cam_pos + _vec3(cam_front), _vec3(cam_up))

    def update_projection_matrix(self):
        """Recompute the projection from the field of view, the near/far planes and the window's aspect ratio."""
        aspect = self.screen_width / max(self.screen_height, 1)
        self._projection_matrix = np.asarray(
            self.compute_projection_matrix(self.camera_fov, aspect, self.camera_near_plane, self.camera_far_plane), np.float32)

    def update_view_matrix(self, cam_pos=None, cam_front=None, cam_up=None, stiffness=1.0):
        """Move the camera towards the given position/front/up (stiffness 1: all the way, as a smoothing factor
        below 1) and recompute the view matrix."""
        for target, attr, unit in ((cam_pos, "_camera_pos", False), (cam_front, "_camera_front", True),
                                   (cam_up, "_camera_up", True)):
            if target is not None:
                current = getattr(self, attr)
                value = current + float(stiffness) * (_vec3(target) - current)
                setattr(self, attr, value / np.linalg.norm(value) if unit else value)
        self._view_matrix = self.compute_view_matrix(self._camera_pos, self._camera_front, self._camera_up)

    def update_model_matrix(self, model_matrix=None):
        """Set the model matrix that takes the scene to the renderer's y-up frame: 16 floats in OpenGL's
        column-major order (a 4x4 array is flattened row by row, as Warp does); None: the scaling, and the rotation
        that turns the up axis to y (compute_model_matrix's 16 floats, read row by row: read as columns they would
        turn y to the up axis instead)."""
        if model_matrix is None:
            model_matrix = compute_model_matrix(self._up_axis_index, self._scaling).reshape(4, 4).T
        self._model_matrix = np.asarray(model_matrix, dtype=np.float32).ravel()

    def _vec3_out(self, value):
        from pyglet.math import Vec3

        return Vec3(*(float(v) for v in value))

    @property
    def camera_pos(self):
        """Current camera position (pyglet Vec3, in the renderer's y-up frame)."""
        return self._vec3_out(self._camera_pos)

    @camera_pos.setter
    def camera_pos(self, value):
        self.update_view_matrix(cam_pos=value)

    @property
    def camera_front(self):
        """Current camera forward vector (unit)."""
        return self._vec3_out(self._camera_front)

    @camera_front.setter
    def camera_front(self, value):
        self.update_view_matrix(cam_front=value)

    @property
    def camera_up(self):
        """Current camera up vector (unit)."""
        return self._vec3_out(self._camera_up)

    @camera_up.setter
    def camera_up(self, value):
        self.update_view_matrix(cam_up=value)

    @property
    def scaling(self) -> float:
        """Global scene scaling factor."""
        return self._scaling

    @scaling.setter
    def scaling(self, value: float):
        self._scaling = float(value)
        self.update_model_matrix()

    @property
    def paused(self) -> bool:
        """Whether rendering is paused (end_frame keeps the last frame)."""
        return self._paused

    @paused.setter
    def paused(self, value: bool):
        self._paused = bool(value)

    # -- frames ------------------------------------------------------------------------------------------------

    def begin_frame(self, t: float | None = None):
        """Mark the start of a frame at time t (None: seconds since the renderer was created)."""
        self.time = float(t) if t is not None else self.clock_time

    def end_frame(self):
        """Finalize the frame: upload changed instances, draw it and show it (update())."""
        self.update()

    def update(self):
        """Process the window's events, then draw a frame unless paused, and show it."""
        now = time.perf_counter()
        self.clock_time = now - self._start_time
        self.window.dispatch_events()  # headless: the events queued by dispatch_event
        self._move_camera_with_keys(now - self._last_update_time)
        self._last_update_time = now
        for processor in self._input_processors:
            processor(self._keys_down)
        if self.has_exit:
            return
        self._frame_count += 1
        if now - self._last_fps_time >= 0.5:
            self._fps_value = self._frame_count / (now - self._last_fps_time)
            self._frame_count = 0
            self._last_fps_time = now
        if self._paused or self.skip_rendering:
            return
        self.window.switch_to()
        if self._instances_dirty:
            self.update_shape_instances()
        self._draw()
        self.window.flip()

    def is_running(self) -> bool:
        """Whether the window is still open."""
        return not self.has_exit

    @property
    def has_exit(self) -> bool:
        """Whether the window was closed (or asked to close)."""
        return bool(getattr(self.window, "has_exit", False))

    def save(self):
        """Keep drawing frames until the window is closed (returns at once when headless)."""
        if self.headless:
            return
        while self.is_running():
            self.update()
        self.close()

    def close(self):
        """Close the window and release the renderer's OpenGL resources."""
        if self._closed:
            return
        self.clear()
        self.window.close()
        self.window.has_exit = True
        self._closed = True

    def clear(self):
        """Release the shapes' buffers and forget every shape, instance and tile."""
        self.window.switch_to()
        for shape in self._shapes:
            if shape is not None:
                shape.delete()
        self._init_scene()
        self._init_tiles()

    def register_key_press_callback(self, callback):
        """Call callback(symbol, modifiers) on each key press (windowed mode)."""
        self._key_callbacks.append(callback)

    def register_input_processor(self, callback):
        """Call callback(keys_down) each frame, with the set of pyglet key symbols held down."""
        self._input_processors.append(callback)

    # -- interaction (windowed) --------------------------------------------------------------------------------

    def _setup_events(self):
        window = self.window

        @window.event
        def on_resize(width, height):
            self.screen_width, self.screen_height = window.get_framebuffer_size()
            if self.screen_width > 0 and self.screen_height > 0:
                window.switch_to()
                self._create_frame_buffer()
                self.update_projection_matrix()

        @window.event
        def on_key_press(symbol, modifiers):
            from pyglet.window import key

            self._keys_down.add(symbol)
            if self.enable_keyboard_interaction:
                if symbol == key.SPACE:
                    self._paused = not self._paused
                elif symbol == key.TAB:
                    self.skip_rendering = not self.skip_rendering
                elif symbol == key.C:
                    self.enable_backface_culling = not self.enable_backface_culling
                elif symbol == key.X:
                    self.render_wireframe = not self.render_wireframe
                elif symbol == key.ESCAPE:
                    window.has_exit = True
            for callback in self._key_callbacks:
                callback(symbol, modifiers)

        @window.event
        def on_key_release(symbol, modifiers):
            self._keys_down.discard(symbol)

        @window.event
        def on_mouse_drag(x, y, dx, dy, buttons, modifiers):
            from pyglet.window import mouse

            if self.enable_mouse_interaction and buttons & mouse.LEFT:
                self._turn_camera(dx * MOUSE_SENSITIVITY, dy * MOUSE_SENSITIVITY)

        @window.event
        def on_mouse_scroll(x, y, scroll_x, scroll_y):
            if self.enable_mouse_interaction:
                self.camera_fov = float(np.clip(self.camera_fov - scroll_y, 15.0, 150.0))
                self.update_projection_matrix()

    def _turn_camera(self, yaw_degrees: float, pitch_degrees: float):
        front = self._camera_front
        pitch = np.degrees(np.arcsin(np.clip(front[1], -1.0, 1.0))) + pitch_degrees
        yaw = np.degrees(np.arctan2(front[2], front[0])) + yaw_degrees
        pitch = np.radians(np.clip(pitch, -89.0, 89.0))
        yaw = np.radians(yaw)
        self.update_view_matrix(cam_front=(np.cos(yaw) * np.cos(pitch), np.sin(pitch), np.sin(yaw) * np.cos(pitch)))

    def _move_camera_with_keys(self, dt: float):
        if not self.enable_keyboard_interaction or not self._keys_down:
            return
        from pyglet.window import key

        step = CAMERA_SPEED * self._scaling * dt
        side = np.cross(self._camera_front, self._camera_up)
        side /= np.linalg.norm(side)
        move = np.zeros(3)
        for symbols, direction in (((key.W, key.UP), self._camera_front), ((key.S, key.DOWN), -self._camera_front),
                                   ((key.D, key.RIGHT), side), ((key.A, key.LEFT), -side),
                                   ((key.E,), self._camera_up), ((key.Q,), -self._camera_up)):
            if any(s in self._keys_down for s in symbols):
                move += direction
        if move.any():
            self.update_view_matrix(cam_pos=self._camera_pos + step * move)

    # -- the shapes' meshes, as Warp has them ------------------------------------------------------------------

    _create_sphere_mesh = staticmethod(create_sphere_mesh)
    _create_capsule_mesh = staticmethod(create_capsule_mesh)
    _create_cone_mesh = staticmethod(create_cone_mesh)
    _create_cylinder_mesh = staticmethod(create_cylinder_mesh)
    _create_arrow_mesh = staticmethod(create_arrow_mesh)
    _create_box_mesh = staticmethod(create_box_mesh)
