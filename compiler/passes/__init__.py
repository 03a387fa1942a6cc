"""warp -> warp passes, and the registry shared with the lowering passes (registry.py declares them all)."""

from .registry import PASSES, Pass, PassError, pass_class

__all__ = ["PASSES", "Pass", "PassError", "pass_class"]
