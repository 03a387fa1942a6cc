"""`warp._src`: the paths of Warp's internals that libraries built on Warp import, kept for them.

Warp 1.x moved its implementation under `warp._src` and keeps only the documented API at `warp.*`, yet real
clients still import a few internals by their `_src` path (Newton 1.8: `warp._src.thirdparty.appdirs` for its
cache directory, `warp._src.types` for the generic annotations `Any`, `Int`, `Vector`). When such a client runs
on mlwarp with `import warp` made to be mlwarp, these imports resolve here. This package holds only what real
clients import, each name bound to mlwarp's own object (docs/clients.md lists them and why); it is not an API
of mlwarp's own.

Its modules import mlwarp by absolute path: imported as `warp._src.x` (through the `warp` alias), a relative
import would load a second copy of an mlwarp module under the name `warp.*`.
"""

import importlib as _importlib

# Warp's `import warp` imports these, so clients reach them as attributes (`wp._src.context.runtime.core`).
_SUBMODULES = frozenset({"codegen", "context", "types", "thirdparty"})


def __getattr__(name):
    """A submodule read as an attribute, as Warp's, loaded under this package's own name (`warp._src` or
    `mlwarp._src`): never a second copy of the module."""
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (mlwarp keeps only the internals clients "
                         f"use: docs/clients.md)")
