"""`wp.config`, as Warp's: defined in mlwarp.core.config (the compiler and the runtime read it)."""

from .core.config import config  # noqa: F401
