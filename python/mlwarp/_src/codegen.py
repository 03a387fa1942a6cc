"""`warp._src.codegen`: the module where Warp defines its code generator's exceptions. Code written for Warp catches
them by this path (`from warp._src.codegen import WarpCodegenError`; Warp's own tests do), so the names here are
the exceptions mlwarp's compiler raises, the same classes as `wp.WarpCodegenError` and friends (a `CompileError`
is a `WarpCodegenError`; the typed ones derive from Python's TypeError, AttributeError, ... as Warp's do).
"""

from mlwarp.core.errors import (
    CompileAttributeError as WarpCodegenAttributeError,
    CompileError as WarpCodegenError,
    CompileIndexError as WarpCodegenIndexError,
    CompileKeyError as WarpCodegenKeyError,
    CompileTypeError as WarpCodegenTypeError,
    CompileValueError as WarpCodegenValueError,
)

__all__ = ["WarpCodegenAttributeError", "WarpCodegenError", "WarpCodegenIndexError", "WarpCodegenKeyError",
           "WarpCodegenTypeError", "WarpCodegenValueError"]
