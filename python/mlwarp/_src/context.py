"""`warp._src.context`: the module that holds Warp's runtime. Clients reach into it for `runtime.core`, Warp's
C library loaded with ctypes, to call the builtins it exports (`wp_builtin_mul_transformf_transformf`); mlwarp
serves those from its Python-scope builtins (exported_builtins.py). Nothing else of Warp's runtime is here.
"""

from mlwarp._src.exported_builtins import NativeLibrary


class Runtime:
    """Warp's `runtime` object, of which mlwarp keeps `core`: the exported builtins, by their C names."""

    def __init__(self):
        self.core = NativeLibrary()


runtime = Runtime()
