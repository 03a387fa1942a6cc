"""The OpenGL side of mlwarp's OpenGLRenderer: opening a context through pyglet (a window, or pyglet's headless EGL
context), the renderer's GLSL programs, and the vertex-array objects its shapes are drawn from.

Everything here talks to OpenGL 3.3 core through pyglet.gl (ctypes bindings) and moves data as numpy arrays; the
renderer fills those arrays with its kernels (opengl_kernels.py) on any device.

Shading model of the shapes (the renderer's tests compute pixels from it in closed form): a directional light
`SUN_DIRECTION` (in the renderer's y-up frame) of white light, and per fragment
    colour = albedo * (AMBIENT + DIFFUSE * max(n . l, 0)) + SPECULAR * max(n . h, 0) ** SHININESS
with n the unit normal, l the unit sun direction, h the unit half vector of l and the direction to the camera,
clamped to [0, 1]. The albedo is the instance's color1, or where its checker pattern (texture coordinates times
CHECKER_SCALE, shape by shape) has odd parity, its color2.
"""

from __future__ import annotations

import ctypes

import numpy as np

SUN_DIRECTION = np.array([0.4, 0.8, 0.45]) / np.linalg.norm([0.4, 0.8, 0.45])
AMBIENT = 0.3
DIFFUSE = 0.7
SPECULAR = 0.15
SHININESS = 32.0

# floats per instance in an instance buffer: the column-major model matrix, color1, color2
INSTANCE_FLOATS = 16 + 3 + 3
# floats per vertex of a shape: position, normal, texture coordinates (the layout opengl_meshes.py writes)
VERTEX_FLOATS = 8

SHAPE_VERTEX_SHADER = """
#version 330 core
layout (location = 0) in vec3 aPos;
layout (location = 1) in vec3 aNormal;
layout (location = 2) in vec2 aTexCoord;
layout (location = 3) in mat4 aInstanceTransform;  // locations 3..6
layout (location = 7) in vec3 aColor1;
layout (location = 8) in vec3 aColor2;
layout (location = 9) in vec3 aVertexColor;

uniform mat4 model;
uniform mat4 view;
uniform mat4 projection;

out vec3 Normal;
out vec3 FragPos;
out vec2 TexCoord;
out vec3 Color1;
out vec3 Color2;
out vec3 VertexColor;

void main()
{
    mat4 world = model * aInstanceTransform;
    vec4 worldPos = world * vec4(aPos, 1.0);
    gl_Position = projection * view * worldPos;
    FragPos = worldPos.xyz;
    Normal = mat3(transpose(inverse(world))) * aNormal;
    TexCoord = aTexCoord;
    Color1 = aColor1;
    Color2 = aColor2;
    VertexColor = aVertexColor;
}
"""

SHAPE_FRAGMENT_SHADER = """
#version 330 core
in vec3 Normal;
in vec3 FragPos;
in vec2 TexCoord;
in vec3 Color1;
in vec3 Color2;
in vec3 VertexColor;
out vec4 FragColor;

uniform vec3 viewPos;
uniform vec3 sunDirection;
uniform float ambient;
uniform float diffuse;
uniform float specular;
uniform float shininess;
uniform vec2 checkerScale;
uniform int useVertexColor;
uniform int renderDepth;
uniform float nearPlane;
uniform float farPlane;

void main()
{
    if (renderDepth != 0) {
        // linear eye depth, near..far to 0..1, as grey
        float ndc = gl_FragCoord.z * 2.0 - 1.0;
        float depth = 2.0 * nearPlane * farPlane / (farPlane + nearPlane - ndc * (farPlane - nearPlane));
        FragColor = vec4(vec3((depth - nearPlane) / (farPlane - nearPlane)), 1.0);
        return;
    }
    vec3 albedo = Color1;
    if (useVertexColor != 0) {
        albedo = VertexColor;
    } else {
        vec2 cell = floor(TexCoord * checkerScale);
        if (mod(cell.x + cell.y, 2.0) >= 1.0)
            albedo = Color2;
    }
    vec3 n = normalize(Normal);
    vec3 l = normalize(sunDirection);
    vec3 v = normalize(viewPos - FragPos);
    vec3 h = normalize(l + v);
    float lit = ambient + diffuse * max(dot(n, l), 0.0);
    float highlight = specular * pow(max(dot(n, h), 0.0), shininess);
    FragColor = vec4(clamp(albedo * lit + vec3(highlight), 0.0, 1.0), 1.0);
}
"""

LINE_VERTEX_SHADER = """
#version 330 core
layout (location = 0) in vec3 aPos;
layout (location = 1) in vec3 aColor;
uniform mat4 model;
uniform mat4 view;
uniform mat4 projection;
out vec3 Color;
void main()
{
    gl_Position = projection * view * model * vec4(aPos, 1.0);
    Color = aColor;
}
"""

LINE_FRAGMENT_SHADER = """
#version 330 core
in vec3 Color;
out vec4 FragColor;
void main()
{
    FragColor = vec4(Color, 1.0);
}
"""

# the sky: a triangle covering the screen at the far plane, coloured by the elevation of each pixel's view ray
SKY_VERTEX_SHADER = """
#version 330 core
layout (location = 0) in vec2 aPos;
out vec2 Ndc;
void main()
{
    gl_Position = vec4(aPos, 1.0, 1.0);
    Ndc = aPos;
}
"""

SKY_FRAGMENT_SHADER = """
#version 330 core
in vec2 Ndc;
out vec4 FragColor;
uniform mat4 inverseViewProjection;
uniform vec3 viewPos;
uniform vec3 up;
uniform vec3 zenithColor;
uniform vec3 horizonColor;
uniform vec3 groundColor;
void main()
{
    vec4 far = inverseViewProjection * vec4(Ndc, 1.0, 1.0);
    vec3 dir = normalize(far.xyz / far.w - viewPos);
    float elevation = dot(dir, normalize(up));
    vec3 sky = mix(horizonColor, zenithColor, smoothstep(0.0, 0.6, elevation));
    FragColor = vec4(elevation >= 0.0 ? sky : mix(horizonColor, groundColor, smoothstep(0.0, 0.2, -elevation)), 1.0);
}
"""

CONTEXT_REQUIREMENTS = (
    "a headless context needs EGL with an OpenGL 3.3 driver (on Debian: apt-get install libegl1 libegl-mesa0 "
    "libgl1-mesa-dri); a window needs a display ($DISPLAY, e.g. Xvfb) and libGL (libgl1 libglx-mesa0 "
    "libgl1-mesa-dri)"
)


class OpenGLContextError(RuntimeError):
    """No OpenGL context could be created: the message names what is missing."""


def open_window(pyglet, headless: bool, title: str, width: int, height: int, vsync: bool):
    """A pyglet window (invisible and backed by EGL when headless) whose context is current, or an
    OpenGLContextError that names what is missing."""
    pyglet.options["headless"] = headless
    mode = "headless (EGL)" if headless else "windowed"
    try:
        import pyglet.window  # picks the window system (EGL when headless) on its first import in a process

        loaded_headless = pyglet.window.Window.__module__ == "pyglet.window.headless"
        if loaded_headless != headless:
            raise OpenGLContextError(
                f"OpenGLRenderer(headless={headless}): pyglet's windows are already "
                f"{'headless (EGL)' if loaded_headless else 'windowed'} in this process (pyglet picks its window "
                f"system when pyglet.window or pyglet.gl is first imported; set pyglet.options['headless'] before)")
        config = pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True, double_buffer=True,
                                  depth_size=24)
        try:
            window = pyglet.window.Window(width=width, height=height, caption=title, resizable=not headless,
                                          vsync=vsync, visible=not headless, config=config)
        except pyglet.window.NoSuchConfigException:
            window = pyglet.window.Window(width=width, height=height, caption=title, resizable=not headless,
                                          vsync=vsync, visible=not headless)
    except OpenGLContextError:
        raise
    except Exception as e:  # pyglet raises many kinds (NoSuchDisplayException, ImportError of libEGL, ...)
        raise OpenGLContextError(
            f"OpenGLRenderer could not create a {mode} OpenGL context ({type(e).__name__}: {e}); "
            f"{CONTEXT_REQUIREMENTS}") from e
    window.switch_to()
    version = pyglet.gl.gl_info.get_version()
    if tuple(version[:2]) < (3, 3):
        window.close()
        raise OpenGLContextError(
            f"OpenGLRenderer needs OpenGL 3.3, the {mode} context has {version[0]}.{version[1]} "
            f"({pyglet.gl.gl_info.get_renderer()}); {CONTEXT_REQUIREMENTS}")
    return window


class GLProgram:
    """A linked GLSL program; `program[name] = value` sets a uniform: an int (GLSL int), a float, 2 or 3 floats
    (vec2, vec3) or 16 floats (mat4, column-major)."""

    def __init__(self, gl, vertex_source: str, fragment_source: str):
        self.gl = gl
        shaders = [_compile_shader(gl, gl.GL_VERTEX_SHADER, vertex_source),
                   _compile_shader(gl, gl.GL_FRAGMENT_SHADER, fragment_source)]
        self.id = gl.glCreateProgram()
        for shader in shaders:
            gl.glAttachShader(self.id, shader)
        gl.glLinkProgram(self.id)
        for shader in shaders:
            gl.glDeleteShader(shader)
        status = gl.GLint()
        gl.glGetProgramiv(self.id, gl.GL_LINK_STATUS, ctypes.byref(status))
        if not status.value:
            raise OpenGLContextError(f"OpenGLRenderer: linking a shader program failed: {_info_log(gl, self.id, True)}")
        self._locations = {}

    def use(self):
        self.gl.glUseProgram(self.id)

    def __setitem__(self, name: str, value):
        gl = self.gl
        location = self._locations.get(name)
        if location is None:
            location = self._locations[name] = gl.glGetUniformLocation(self.id, name.encode())
        if isinstance(value, (bool, int, np.integer)):
            gl.glUniform1i(location, int(value))
            return
        if isinstance(value, (float, np.floating)):
            gl.glUniform1f(location, float(value))
            return
        values = np.asarray(value, dtype=np.float32).ravel()
        if values.size == 16:
            gl.glUniformMatrix4fv(location, 1, gl.GL_FALSE, (gl.GLfloat * 16)(*values))
        elif values.size == 3:
            gl.glUniform3f(location, *map(float, values))
        elif values.size == 2:
            gl.glUniform2f(location, *map(float, values))
        else:
            raise ValueError(f"uniform {name}: {values.size} floats")


def _info_log(gl, handle, is_program: bool) -> str:
    length = gl.GLint()
    (gl.glGetProgramiv if is_program else gl.glGetShaderiv)(handle, gl.GL_INFO_LOG_LENGTH, ctypes.byref(length))
    log = ctypes.create_string_buffer(max(length.value, 1))
    (gl.glGetProgramInfoLog if is_program else gl.glGetShaderInfoLog)(handle, len(log), None, log)
    return log.value.decode(errors="replace")


def _compile_shader(gl, kind, source: str):
    shader = gl.glCreateShader(kind)
    encoded = source.encode()
    text = ctypes.c_char_p(encoded)
    gl.glShaderSource(shader, 1, ctypes.cast(ctypes.pointer(text), ctypes.POINTER(ctypes.POINTER(ctypes.c_char))),
                      None)
    gl.glCompileShader(shader)
    status = gl.GLint()
    gl.glGetShaderiv(shader, gl.GL_COMPILE_STATUS, ctypes.byref(status))
    if not status.value:
        raise OpenGLContextError(f"OpenGLRenderer: compiling a shader failed: {_info_log(gl, shader, False)}")
    return shader


def _float_buffer(gl, data: np.ndarray | None, usage):
    buffer = gl.GLuint()
    gl.glGenBuffers(1, buffer)
    gl.glBindBuffer(gl.GL_ARRAY_BUFFER, buffer)
    if data is not None:
        data = np.ascontiguousarray(data, dtype=np.float32)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, data.nbytes, data.ctypes.data_as(ctypes.c_void_p), usage)
    return buffer


def _attribute(gl, location: int, size: int, stride_floats: int, offset_floats: int, divisor: int = 0):
    gl.glEnableVertexAttribArray(location)
    gl.glVertexAttribPointer(location, size, gl.GL_FLOAT, gl.GL_FALSE, stride_floats * 4,
                             ctypes.c_void_p(offset_floats * 4))
    gl.glVertexAttribDivisor(location, divisor)


class GLShape:
    """One shape's vertex-array object: its vertices (position, normal, uv), triangle indices, optional per-vertex
    colours, and the instance buffer (model matrix, color1, color2 per instance) it is drawn with."""

    def __init__(self, gl, vertices: np.ndarray, indices: np.ndarray):
        self.gl = gl
        self.vao = gl.GLuint()
        gl.glGenVertexArrays(1, self.vao)
        gl.glBindVertexArray(self.vao)
        self.vertex_buffer = _float_buffer(gl, None, gl.GL_DYNAMIC_DRAW)
        for location, size, offset in ((0, 3, 0), (1, 3, 3), (2, 2, 6)):
            _attribute(gl, location, size, VERTEX_FLOATS, offset)
        self.index_buffer = gl.GLuint()
        gl.glGenBuffers(1, self.index_buffer)
        gl.glBindBuffer(gl.GL_ELEMENT_ARRAY_BUFFER, self.index_buffer)
        self.instance_buffer = _float_buffer(gl, None, gl.GL_DYNAMIC_DRAW)
        for column in range(4):
            _attribute(gl, 3 + column, 4, INSTANCE_FLOATS, 4 * column, divisor=1)
        _attribute(gl, 7, 3, INSTANCE_FLOATS, 16, divisor=1)
        _attribute(gl, 8, 3, INSTANCE_FLOATS, 19, divisor=1)
        self.color_buffer = None
        gl.glBindVertexArray(0)
        self.instance_count = 0
        self.index_count = 0
        self.set_geometry(vertices, indices)

    def set_geometry(self, vertices: np.ndarray, indices: np.ndarray):
        gl = self.gl
        vertices = np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, VERTEX_FLOATS)
        indices = np.ascontiguousarray(indices, dtype=np.uint32).ravel()
        gl.glBindVertexArray(self.vao)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vertex_buffer)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, vertices.nbytes, vertices.ctypes.data_as(ctypes.c_void_p),
                        gl.GL_DYNAMIC_DRAW)
        gl.glBufferData(gl.GL_ELEMENT_ARRAY_BUFFER, indices.nbytes, indices.ctypes.data_as(ctypes.c_void_p),
                        gl.GL_STATIC_DRAW)
        gl.glBindVertexArray(0)
        self.vertex_count = len(vertices)
        self.index_count = indices.size

    def set_vertices(self, vertices: np.ndarray):
        """Replace the vertex rows (same count), keeping the indices."""
        gl = self.gl
        vertices = np.ascontiguousarray(vertices, dtype=np.float32)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vertex_buffer)
        gl.glBufferData(gl.GL_ARRAY_BUFFER, vertices.nbytes, vertices.ctypes.data_as(ctypes.c_void_p),
                        gl.GL_DYNAMIC_DRAW)

    def set_vertex_colors(self, colors: np.ndarray | None):
        """Per-vertex RGB colours (one row per vertex) that replace the instances' colours, or None for those."""
        gl = self.gl
        gl.glBindVertexArray(self.vao)
        if colors is None:
            gl.glDisableVertexAttribArray(9)
            self.color_buffer = None
        else:
            colors = np.ascontiguousarray(colors, dtype=np.float32).reshape(-1, 3)
            if self.color_buffer is None:
                self.color_buffer = _float_buffer(gl, colors, gl.GL_DYNAMIC_DRAW)
            else:
                gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.color_buffer)
                gl.glBufferData(gl.GL_ARRAY_BUFFER, colors.nbytes, colors.ctypes.data_as(ctypes.c_void_p),
                                gl.GL_DYNAMIC_DRAW)
            _attribute(gl, 9, 3, 3, 0)
        gl.glBindVertexArray(0)

    def set_instances(self, instance_data: np.ndarray):
        """Upload the instances' rows (INSTANCE_FLOATS floats each) this shape is drawn with."""
        gl = self.gl
        instance_data = np.ascontiguousarray(instance_data, dtype=np.float32).reshape(-1, INSTANCE_FLOATS)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.instance_buffer)
        pointer = instance_data.ctypes.data_as(ctypes.c_void_p) if instance_data.nbytes else None
        gl.glBufferData(gl.GL_ARRAY_BUFFER, max(instance_data.nbytes, 4), pointer, gl.GL_DYNAMIC_DRAW)
        self.instance_count = len(instance_data)

    def draw(self):
        if self.instance_count == 0 or self.index_count == 0:
            return
        gl = self.gl
        gl.glBindVertexArray(self.vao)
        gl.glDrawElementsInstanced(gl.GL_TRIANGLES, self.index_count, gl.GL_UNSIGNED_INT, None, self.instance_count)
        gl.glBindVertexArray(0)

    def delete(self):
        gl = self.gl
        for buffer in (self.vertex_buffer, self.index_buffer, self.instance_buffer, self.color_buffer):
            if buffer is not None:
                gl.glDeleteBuffers(1, buffer)
        gl.glDeleteVertexArrays(1, self.vao)


class GLLines:
    """Coloured line segments (GL_LINES): rows of position and colour."""

    def __init__(self, gl, vertices: np.ndarray):
        self.gl = gl
        self.vao = gl.GLuint()
        gl.glGenVertexArrays(1, self.vao)
        gl.glBindVertexArray(self.vao)
        vertices = np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, 6)
        self.buffer = _float_buffer(gl, vertices, gl.GL_STATIC_DRAW)
        _attribute(gl, 0, 3, 6, 0)
        _attribute(gl, 1, 3, 6, 3)
        gl.glBindVertexArray(0)
        self.count = len(vertices)

    def draw(self):
        gl = self.gl
        gl.glBindVertexArray(self.vao)
        gl.glDrawArrays(gl.GL_LINES, 0, self.count)
        gl.glBindVertexArray(0)

    def delete(self):
        self.gl.glDeleteBuffers(1, self.buffer)
        self.gl.glDeleteVertexArrays(1, self.vao)


class GLScreenTriangle:
    """One triangle that covers the whole viewport (2-D clip-space positions), for the sky."""

    def __init__(self, gl):
        self.gl = gl
        self.vao = gl.GLuint()
        gl.glGenVertexArrays(1, self.vao)
        gl.glBindVertexArray(self.vao)
        self.buffer = _float_buffer(gl, np.array([-1, -1, 3, -1, -1, 3], dtype=np.float32), gl.GL_STATIC_DRAW)
        _attribute(gl, 0, 2, 2, 0)
        gl.glBindVertexArray(0)

    def draw(self):
        gl = self.gl
        gl.glBindVertexArray(self.vao)
        gl.glDrawArrays(gl.GL_TRIANGLES, 0, 3)
        gl.glBindVertexArray(0)

    def delete(self):
        self.gl.glDeleteBuffers(1, self.buffer)
        self.gl.glDeleteVertexArrays(1, self.vao)


def grid_lines(half_extent: int, spacing: float, color=(0.5, 0.5, 0.5)) -> np.ndarray:
    """Rows (position, colour) of the grid's GL_LINES on the y = 0 plane of the renderer's frame."""
    rows = []
    for i in range(-half_extent, half_extent + 1):
        c = i * spacing
        e = half_extent * spacing
        rows += [(c, 0.0, -e, *color), (c, 0.0, e, *color), (-e, 0.0, c, *color), (e, 0.0, c, *color)]
    return np.array(rows, dtype=np.float32)


def axis_lines(length: float) -> np.ndarray:
    """Rows (position, colour) of the x (red), y (green) and z (blue) axes from the origin."""
    rows = []
    for axis in range(3):
        end = [0.0, 0.0, 0.0]
        end[axis] = length
        color = [0.0, 0.0, 0.0]
        color[axis] = 1.0
        rows += [(0.0, 0.0, 0.0, *color), (*end, *color)]
    return np.array(rows, dtype=np.float32)


def read_framebuffer(gl, x: int, y: int, width: int, height: int, mode: str) -> np.ndarray:
    """The bottom-up pixels of a rectangle of the current framebuffer: RGB bytes (flat, 3 per pixel) or depth in
    [0, 1] (flat float32)."""
    gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
    if mode == "rgb":
        data = np.empty(width * height * 3, dtype=np.uint8)
        gl.glReadPixels(x, y, width, height, gl.GL_RGB, gl.GL_UNSIGNED_BYTE, data.ctypes.data_as(ctypes.c_void_p))
    else:
        data = np.empty(width * height, dtype=np.float32)
        gl.glReadPixels(x, y, width, height, gl.GL_DEPTH_COMPONENT, gl.GL_FLOAT,
                        data.ctypes.data_as(ctypes.c_void_p))
    return data
