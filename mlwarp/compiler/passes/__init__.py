"""warp -> warp passes, and the registry shared with the lowering passes."""

from .registry import PASSES, Pass, PassError, register
from . import bounds_check  # noqa: F401,E402  (registers warp-bounds-check)

__all__ = ["PASSES", "Pass", "PassError", "register"]
