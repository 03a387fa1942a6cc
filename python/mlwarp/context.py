"""`wp.context`: the module that held Warp's runtime in older releases (`warp.context.init()`,
`warp.context.Device`). Guides written for it still call `wp.context.init()` (the Paddle examples of Warp's
interop guide do); Warp 1.19 no longer has the module (AttributeError: its runtime is `warp._src.context`),
mlwarp keeps these names of it.
"""

from mlwarp.runtime.device import Device, get_device  # noqa: F401


def init():
    """Optional, as in Warp: mlwarp initialises itself lazily."""
