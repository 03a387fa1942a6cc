"""`wp.context`: the module that held Warp's runtime before Warp 1.10 (`warp.context.init()`,
`warp.context.Device`). Guides written for it still call `wp.context.init()` (the Paddle examples of Warp's
interop guide do); Warp 1.19 no longer has the module (AttributeError), mlwarp keeps these names of it.
"""

from .runtime.device import Device, get_device  # noqa: F401


def init():
    """Optional, as in Warp: mlwarp initialises itself lazily."""
