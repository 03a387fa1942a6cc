"""Drawing a frame of mlwarp's OpenGLRenderer and reading it back: the renderer's own framebuffer (RGB8 colour and
32-bit float depth), the 3-D view (sky, grid, axes, shapes) drawn into the whole frame or into each tile of Warp's
tiled rendering (several views, each of its own instances, in one frame), showing the frame in the window, and
get_pixels. A mixin of OpenGLRenderer (opengl.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlwarp.arrays.array import array
from mlwarp.launching.launch import launch
from mlwarp.render import opengl_kernels
from mlwarp.render.opengl_gl import (
    AMBIENT, DIFFUSE, SHININESS, SPECULAR, SUN_DIRECTION, OpenGLContextError, read_framebuffer,
)
from mlwarp.render.opengl_meshes import perspective_projection
from mlwarp.types import float32, uint8


@dataclass
class Tile:
    instances: np.ndarray  # the instance ids drawn in this tile
    projection: np.ndarray | None  # 16 column-major floats; None: the renderer's camera settings
    view: np.ndarray | None  # 16 column-major floats; None: the renderer's camera
    size: tuple[int, int]  # (width, height) in pixels
    position: tuple[int, int]  # (x, y) of its lower left corner, in OpenGL's window coordinates (y up)


def _matrix16(matrix) -> np.ndarray | None:
    """A matrix given as 16 floats or a 4x4 array (flattened row by row, as Warp does), or None."""
    return None if matrix is None else np.asarray(matrix, dtype=np.float32).ravel()


class FrameMixin:
    """The frame buffer, the drawing of the 3-D view, tiles and get_pixels (see the module's docstring)."""

    def _init_tiles(self):
        self._tiles: list[Tile] = []
        self._tile_width = self._tile_height = None
        self._buffers_hold_tile_subsets = False

    # -- the frame ---------------------------------------------------------------------------------------------

    def _create_frame_buffer(self):
        """The framebuffer each frame is drawn into: an RGB colour and a 32-bit float depth renderbuffer."""
        gl = self.gl
        if self._frame_buffer is not None:
            gl.glDeleteFramebuffers(1, self._frame_buffer)
            gl.glDeleteRenderbuffers(2, self._frame_renderbuffers)
        self._frame_buffer = gl.GLuint()
        gl.glGenFramebuffers(1, self._frame_buffer)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self._frame_buffer)
        self._frame_renderbuffers = (gl.GLuint * 2)()
        gl.glGenRenderbuffers(2, self._frame_renderbuffers)
        for renderbuffer, storage, attachment in ((self._frame_renderbuffers[0], gl.GL_RGB8, gl.GL_COLOR_ATTACHMENT0),
                                                  (self._frame_renderbuffers[1], gl.GL_DEPTH_COMPONENT32F,
                                                   gl.GL_DEPTH_ATTACHMENT)):
            gl.glBindRenderbuffer(gl.GL_RENDERBUFFER, renderbuffer)
            gl.glRenderbufferStorage(gl.GL_RENDERBUFFER, storage, self.screen_width, self.screen_height)
            gl.glFramebufferRenderbuffer(gl.GL_FRAMEBUFFER, attachment, gl.GL_RENDERBUFFER, renderbuffer)
        status = gl.glCheckFramebufferStatus(gl.GL_FRAMEBUFFER)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        if status != gl.GL_FRAMEBUFFER_COMPLETE:
            raise OpenGLContextError(f"OpenGLRenderer: the OpenGL driver cannot make an RGB8 + 32-bit float depth "
                                     f"framebuffer (status 0x{status:x})")

    def _draw(self):
        gl = self.gl
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self._frame_buffer)
        gl.glViewport(0, 0, self.screen_width, self.screen_height)
        gl.glDisable(gl.GL_BLEND)
        gl.glClearColor(*self.background_color, 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        if self._tiles:
            for tile in self._tiles:
                width, height = tile.size
                projection = tile.projection if tile.projection is not None else np.asarray(
                    perspective_projection(self.camera_fov, width / max(height, 1), self.camera_near_plane,
                                           self.camera_far_plane), np.float32)
                view = tile.view if tile.view is not None else self._view_matrix
                self._upload_instances(tile.instances)
                self._draw_view(*tile.position, width, height, projection, view)
            self._buffers_hold_tile_subsets = True
        else:
            if self._buffers_hold_tile_subsets:
                self._upload_instances(None)
                self._buffers_hold_tile_subsets = False
            self._draw_view(0, 0, self.screen_width, self.screen_height, self._projection_matrix, self._view_matrix)
        for callback in self.render_3d_callbacks:
            callback()
        self._show_frame()

    def _upload_instances(self, instance_ids):
        """Upload each shape's instance rows, only those of instance_ids (None: all)."""
        for shape, (rows, ids) in self._shape_rows.items():
            if self._shapes[shape] is not None:
                self._shapes[shape].set_instances(rows if instance_ids is None else rows[np.isin(ids, instance_ids)])

    def _draw_view(self, x, y, width, height, projection, view):
        """The sky, grid, axes and shapes, seen through (projection, view) in the viewport (x, y, width, height)."""
        gl = self.gl
        gl.glViewport(x, y, width, height)
        gl.glEnable(gl.GL_SCISSOR_TEST)
        gl.glScissor(x, y, width, height)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        gl.glDisable(gl.GL_SCISSOR_TEST)
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        camera_pos = np.linalg.inv(np.asarray(view, np.float64).reshape(4, 4).T)[:3, 3]
        if self.draw_sky and not self.render_depth:
            gl.glDisable(gl.GL_DEPTH_TEST)
            gl.glDisable(gl.GL_CULL_FACE)
            program = self._sky_program
            program.use()
            view_projection = np.asarray(projection, np.float64).reshape(4, 4).T @ np.asarray(
                view, np.float64).reshape(4, 4).T
            program["inverseViewProjection"] = tuple(np.linalg.inv(view_projection).T.ravel())
            program["viewPos"] = tuple(camera_pos)
            program["up"] = (0.0, 1.0, 0.0)
            zenith = np.asarray(self.background_color, dtype=float)
            program["zenithColor"] = tuple(zenith)
            program["horizonColor"] = tuple(0.5 * zenith + 0.5)
            program["groundColor"] = tuple(0.6 * zenith)
            self._sky.draw()
        gl.glEnable(gl.GL_DEPTH_TEST)
        gl.glDepthFunc(gl.GL_LESS)
        if self.draw_grid or self.draw_axis:
            program = self._line_program
            program.use()
            if self.draw_grid:
                self._set_camera_uniforms(program, np.diag([self._scaling] * 3 + [1.0]).ravel(), projection, view)
                self._grid.draw()
            if self.draw_axis:
                axis_model = np.asarray(self._model_matrix, np.float64).reshape(4, 4).T @ np.diag(
                    [self.axis_scale] * 3 + [1.0])
                self._set_camera_uniforms(program, axis_model.T.ravel(), projection, view)
                self._axes.draw()
        if self.enable_backface_culling:
            gl.glEnable(gl.GL_CULL_FACE)
            gl.glCullFace(gl.GL_BACK)
        else:
            gl.glDisable(gl.GL_CULL_FACE)
        if self.render_wireframe:
            gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_LINE)
        program = self._shape_program
        program.use()
        self._set_camera_uniforms(program, self._model_matrix, projection, view)
        program["viewPos"] = tuple(camera_pos)
        program["sunDirection"] = tuple(SUN_DIRECTION)
        program["ambient"] = AMBIENT
        program["diffuse"] = DIFFUSE
        program["specular"] = SPECULAR
        program["shininess"] = SHININESS
        program["renderDepth"] = int(bool(self.render_depth))
        program["nearPlane"] = float(self.camera_near_plane)
        program["farPlane"] = float(self.camera_far_plane)
        for shape, gl_shape in enumerate(self._shapes):
            if gl_shape is None or gl_shape.instance_count == 0:
                continue
            program["checkerScale"] = tuple(float(c) for c in self._shape_checker[shape])
            program["useVertexColor"] = int(gl_shape.color_buffer is not None)
            gl_shape.draw()
        gl.glUseProgram(0)
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        gl.glDisable(gl.GL_CULL_FACE)

    @staticmethod
    def _set_camera_uniforms(program, model, projection, view):
        program["model"] = model
        program["view"] = view
        program["projection"] = projection

    def _show_frame(self):
        """Copy the frame to the window's framebuffer, then draw the info overlay and the 2-D callbacks."""
        gl = self.gl
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self._frame_buffer)
        gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, 0)
        width, height = self.window.get_framebuffer_size()
        gl.glBlitFramebuffer(0, 0, self.screen_width, self.screen_height, 0, 0, width, height,
                             gl.GL_COLOR_BUFFER_BIT, gl.GL_LINEAR)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        gl.glViewport(0, 0, width, height)
        gl.glDisable(gl.GL_DEPTH_TEST)
        if self._info_label is not None and self.show_info:
            self._info_label.text = (f"{self._title}  {self._fps_value:.1f} fps  shapes: {self.num_shapes}  "
                                     f"instances: {self.num_instances}" + ("  (paused)" if self._paused else ""))
            self._info_label.y = height - 10
            self._info_label.draw()
        for callback in self.render_2d_callbacks:
            callback()

    # -- reading frames back -----------------------------------------------------------------------------------

    def get_pixels(self, target_image: array, split_up_tiles=True, mode="rgb", use_uint8=False) -> bool:
        """Read the last frame into target_image (on any device), top row first.

        Whole frame (split_up_tiles False, or no tiles set up): shape (screen_height, screen_width, 3) for mode
        "rgb", float32 in [0, 1] (uint8 in [0, 255] with use_uint8), or (screen_height, screen_width, 1) float32
        eye-space depth for mode "depth" (distance along the view direction; the far plane where nothing was
        drawn). With tiles: shape (num_tiles, tile_height, tile_width, channels), each tile's own pixels.
        Returns whether the pixels were read.
        """
        if mode not in ("rgb", "depth"):
            raise ValueError(f"get_pixels: mode must be 'rgb' or 'depth', got {mode!r}")
        channels = 3 if mode == "rgb" else 1
        tiled = bool(split_up_tiles and self._tiles)
        if tiled:
            if any(tile.size != (self._tile_width, self._tile_height) for tile in self._tiles):
                raise ValueError("get_pixels: split_up_tiles needs tiles of one size, these have "
                                 f"{sorted({tile.size for tile in self._tiles})}")
            expected_shape = (len(self._tiles), self._tile_height, self._tile_width, channels)
        else:
            expected_shape = (self.screen_height, self.screen_width, channels)
        if tuple(target_image.shape) != expected_shape:
            raise ValueError(f"get_pixels: target_image must have shape {expected_shape} for mode {mode!r}"
                             f"{' split up in tiles' if tiled else ''}, got {tuple(target_image.shape)}")
        expected_dtype = uint8 if (mode == "rgb" and use_uint8) else float32
        if target_image.dtype != expected_dtype:
            raise ValueError(f"get_pixels: target_image must have dtype {expected_dtype.__name__} for mode "
                             f"{mode!r}{' with use_uint8' if use_uint8 else ''}, got {target_image.dtype.__name__}")
        gl = self.gl
        self.window.switch_to()
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self._frame_buffer)
        data = read_framebuffer(gl, 0, 0, self.screen_width, self.screen_height, mode)
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
        device = target_image.device
        frame = array(data, dtype=uint8 if mode == "rgb" else float32, device=device)
        size = [self.screen_width, self.screen_height]
        depth_range = [float(self.camera_near_plane), float(self.camera_far_plane)]
        if tiled:
            positions = array(np.array([tile.position for tile in self._tiles], dtype=np.int32), dtype=int,
                              device=device)
            dim = (len(self._tiles), self._tile_width, self._tile_height)
            inputs = [frame, positions, *size, self._tile_height]
            kernels = (opengl_kernels.copy_depth_frame_tiles, opengl_kernels.copy_rgb_frame_tiles,
                       opengl_kernels.copy_rgb_frame_tiles_uint8)
        else:
            dim = tuple(size)
            inputs = [frame, *size]
            kernels = (opengl_kernels.copy_depth_frame, opengl_kernels.copy_rgb_frame,
                       opengl_kernels.copy_rgb_frame_uint8)
        if mode == "depth":
            kernel, inputs = kernels[0], inputs + depth_range
        else:
            kernel = kernels[2] if use_uint8 else kernels[1]
        launch(kernel, dim=dim, inputs=inputs, outputs=[target_image], device=device)
        return True

    # -- tiles -------------------------------------------------------------------------------------------------

    @property
    def tiled_rendering(self) -> bool:
        """Whether tiled rendering is set up."""
        return bool(self._tiles)

    @property
    def num_tiles(self) -> int:
        """Number of tiles configured for tiled rendering."""
        return len(self._tiles)

    @property
    def tile_width(self):
        """Tile width in pixels (of the first tile), or None if unset."""
        return self._tile_width

    @property
    def tile_height(self):
        """Tile height in pixels (of the first tile), or None if unset."""
        return self._tile_height

    def setup_tiled_rendering(self, instances: list[list[int]], rescale_window: bool = False, tile_width=None,
                              tile_height=None, tile_ncols=None, tile_nrows=None, tile_positions=None,
                              tile_sizes=None, projection_matrices=None, view_matrices=None):
        """Split the frame into tiles, tile i drawing the shape instances of ids instances[i] (points and lines:
        in every tile) through its own projection and view matrices (None, or a None entry: the renderer's camera,
        following it as it moves). Without tile_positions the tiles fill a grid of tile_ncols x tile_nrows
        (default: the smallest square grid) row by row from the top left; without tile_width/tile_height (and
        tile_sizes) they share the frame evenly; rescale_window resizes the frame to fit the grid."""
        count = len(instances)
        if count == 0:
            raise ValueError("setup_tiled_rendering: instances must list the instance ids of at least one tile")
        ncols = tile_ncols or int(np.ceil(np.sqrt(count)))
        nrows = tile_nrows or int(np.ceil(count / ncols))
        if ncols * nrows < count:
            raise ValueError(f"setup_tiled_rendering: a grid of {ncols} x {nrows} tiles has no room for {count}")
        if rescale_window and tile_width and tile_height:
            self._resize_frame(ncols * tile_width, nrows * tile_height)
        tile_width = tile_width or self.screen_width // ncols
        tile_height = tile_height or self.screen_height // nrows
        if tile_sizes is None:
            tile_sizes = [(tile_width, tile_height)] * count
        if tile_positions is None:
            tile_positions = [((i % ncols) * tile_width, self.screen_height - (i // ncols + 1) * tile_height)
                              for i in range(count)]
        for name, values in (("tile_positions", tile_positions), ("tile_sizes", tile_sizes),
                             ("projection_matrices", projection_matrices), ("view_matrices", view_matrices)):
            if values is not None and len(values) != count:
                raise ValueError(f"setup_tiled_rendering: {name} has {len(values)} entries for {count} tiles")
        self._tiles = [
            Tile(np.asarray(instances[i], dtype=np.int64),
                 _matrix16(projection_matrices[i]) if projection_matrices is not None else None,
                 _matrix16(view_matrices[i]) if view_matrices is not None else None,
                 tuple(int(v) for v in tile_sizes[i]), tuple(int(v) for v in tile_positions[i]))
            for i in range(count)]
        self._tile_width, self._tile_height = self._tiles[0].size

    def update_tile(self, tile_id, instances: list[int] | None = None, projection_matrix=None, view_matrix=None,
                    tile_size: tuple[int] | None = None, tile_position: tuple[int] | None = None):
        """Change what the tile draws (instance ids), its projection or view matrix, its size or position."""
        tile = self._tiles[tile_id]
        if instances is not None:
            tile.instances = np.asarray(instances, dtype=np.int64)
        if projection_matrix is not None:
            tile.projection = _matrix16(projection_matrix)
        if view_matrix is not None:
            tile.view = _matrix16(view_matrix)
        if tile_size is not None:
            tile.size = tuple(int(v) for v in tile_size)
        if tile_position is not None:
            tile.position = tuple(int(v) for v in tile_position)
        self._tile_width, self._tile_height = self._tiles[0].size

    def _resize_frame(self, width: int, height: int):
        """Resize the window (where there is one) and the frame to width x height pixels."""
        if not self.headless:
            self.window.set_size(width, height)
        self.screen_width, self.screen_height = width, height
        self.window.switch_to()
        self._create_frame_buffer()
        self.update_projection_matrix()
