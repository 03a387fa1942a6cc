"""`warp.render` for mlwarp: Warp 1.19's renderers. Import it as Warp's: `import mlwarp.render`.

- `UsdRenderer` writes the scene to a USD stage (needs `pxr`, from the `usd-core` package): usd.py.
- `OpenGLRenderer` is Warp's interactive renderer: it draws through pyglet in an OpenGL 3.3 context, a window on
  a display or headless (EGL); opengl.py says how it is laid out. Its meshes, camera matrices and buffer kernels
  (opengl_meshes.py, opengl_kernels.py) run without a context.
- `utils`: Warp's color maps and `solidify_mesh`.
"""

from mlwarp.render import utils
from mlwarp.render.opengl import OpenGLRenderer
from mlwarp.render.usd import UsdRenderer

__all__ = ["OpenGLRenderer", "UsdRenderer", "utils"]
