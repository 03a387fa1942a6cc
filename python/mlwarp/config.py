"""`wp.config`, as Warp's: defined in mlwarp.core.config (the compiler and the runtime read it)."""

from mlwarp.core.config import (  # noqa: F401
    LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARNING, DeterministicMode, LaunchArrayAccessMode, config,
)
