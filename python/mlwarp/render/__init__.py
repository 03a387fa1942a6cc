"""`warp.render` for mlwarp: Warp 1.19's renderers. Import it as Warp's: `import mlwarp.render`.

- `UsdRenderer` writes the scene to a USD stage (needs `pxr`, from the `usd-core` package): usd.py.
- `OpenGLRenderer` is Warp's interactive renderer (needs pyglet and an OpenGL context): opengl.py says what of
  it mlwarp has; its meshes, camera matrices and buffer kernels run without a display.
- `utils`: Warp's color maps and `solidify_mesh`.
"""

from mlwarp.render import utils
from mlwarp.render.opengl import OpenGLRenderer
from mlwarp.render.usd import UsdRenderer

__all__ = ["OpenGLRenderer", "UsdRenderer", "utils"]
