"""`warp._src.thirdparty`: the vendored packages of Warp that clients import (only `appdirs`)."""
