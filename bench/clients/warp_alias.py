"""Make `import warp` (and `import warp.<anything>`) be mlwarp, for running a library written for Warp unchanged.

`warp` is bound to the mlwarp package, and every `warp.x.y` to the module `mlwarp.x.y` itself (one module
object under two names: loading `mlwarp/x/y.py` a second time as `warp.x.y` would make a second set of types
and a second runtime state). A finder on `sys.meta_path` does it for submodules imported later, Warp's
internal paths included (`warp._src.thirdparty.appdirs` is mlwarp/_src/thirdparty/appdirs.py; docs/clients.md).
`warp.types`, `warp.utils` and `warp.config` are bound up front: the package binds `wp.config` (the settings)
over its submodule of that name, and the import system would rebind it to the module on a later import.
"""

import importlib
import importlib.abc
import importlib.util
import sys

import mlwarp


class _MlwarpAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("warp."):
            return None
        if importlib.util.find_spec("ml" + fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self):
        self._own_specs = {}

    def create_module(self, spec):
        module = importlib.import_module("ml" + spec.name)
        self._own_specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has set the module's __spec__ to the alias's; the module keeps its own
        module.__spec__ = self._own_specs[module.__name__]


def install() -> None:
    sys.modules["warp"] = mlwarp
    for name in ("types", "utils", "config"):
        sys.modules[f"warp.{name}"] = importlib.import_module(f"mlwarp.{name}")
    if not any(isinstance(finder, _MlwarpAlias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MlwarpAlias())
