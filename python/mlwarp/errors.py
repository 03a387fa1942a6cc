"""Exceptions raised to users; defined in mlwarp.core.errors (the compiler and the runtime raise them)."""

from mlwarp.core.errors import *  # noqa: F401,F403
