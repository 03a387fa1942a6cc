"""warp -> warp passes, and the registry shared with the lowering passes."""

from .registry import PASSES, Pass, PassError, register

__all__ = ["PASSES", "Pass", "PassError", "register"]
