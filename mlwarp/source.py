"""A function's source text, read once per code object: defined in mlwarp.core.source."""

from .core.source import *  # noqa: F401,F403
