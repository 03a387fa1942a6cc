"""mlwarp: Warp's kernel language on an MLIR compiler. `import mlwarp as wp`.

Importing mlwarp never imports MLIR: the compiler is loaded on the first
compile that misses the kernel cache.

The package loads its user API (python/mlwarp/_api.py: arrays, kernels, launches, the builtins, ...) on the first
use of one of its names, so that `import mlwarp.compiler...` or `import mlwarp.runtime` (which run this file
first) load only what they import. Once loaded, the package's namespace is the API's, name for name.
"""

import sys as _sys
import threading as _threading
import types as _types

from mlwarp import _source_layout

_source_layout.install()  # a source checkout: mlwarp.compiler, .core, .runtime, .tools from the folders beside python/

# Submodules whose name the API binds to something else (`wp.launch` is the function, `wp.config` the settings
# object): importing such a submodule before the API is loaded must not bind the module under that name.
# test_import_graph checks that this set is complete.
_SHADOWED = frozenset({"config"})


class _Package(_types.ModuleType):
    def __getattr__(self, name):
        if _loader == _threading.get_ident() or (_loader is None and _api_module_initializing()):
            # `from . import debug` in an API module while it loads: the import system then imports the
            # submodule (or takes it from sys.modules), as inside any package; the API loads on a later use
            raise AttributeError(name)
        namespace = _load_api()  # (another thread loading it: waits for it)
        if name in namespace:
            return namespace[name]
        if name in namespace["_lazy_names"]:  # a name of a subpackage loaded on its first use (_api._lazy_names)
            import importlib

            module = importlib.import_module(namespace["_lazy_names"][name])
            value = module if module.__name__ == f"{__name__}.{name}" else getattr(module, name)
            namespace[name] = value
            return value
        if name in namespace["_deprecated_names"]:  # Warp's old names: resolved (and warned about) on each use
            return namespace["_deprecated_names"][name]()
        raise AttributeError(f"module 'mlwarp' has no attribute '{name}'")

    def __dir__(self):
        _load_api()
        return sorted(vars(self))

    def __setattr__(self, name, value):
        if name in _SHADOWED and isinstance(value, _types.ModuleType) and "__all__" not in vars(self):
            return  # the import system binding a submodule; the API binds the name when it loads
        super().__setattr__(name, value)


_lock = _threading.Lock()
_loader = None  # the thread loading the API


def _api_module_initializing() -> bool:
    """Whether a module of the API is being imported right now (`import mlwarp.launch` before any `wp.*`)."""
    return any(getattr(getattr(module, "__spec__", None), "_initializing", False)
               for name, module in list(_sys.modules.items()) if name.startswith("mlwarp."))


def _load_api() -> dict:
    global _loader
    namespace = vars(_sys.modules[__name__])
    with _lock:
        if "__all__" in namespace:
            return namespace
        _loader = _threading.get_ident()
        try:
            from mlwarp.kernels import fingerprint  # (with the API: `import mlwarp.compiler...` loads neither)

            fingerprint.prefetch()  # the warm first launch's ~1 ms of source stats, beside the API's imports
            from mlwarp import _api  # the user API (it imports no MLIR either)
        finally:
            _loader = None
        names = {k: v for k, v in vars(_api).items() if not k.startswith("__")}
        for value in names.values():
            if isinstance(value, _types.FunctionType) and value.__module__ == _api.__name__:
                value.__module__ = __name__  # wp.init, wp.get_kernel_cache_dir, ... are mlwarp's
        namespace.update(names)
        namespace["__version__"] = _api.__version__
        public = {k for k in (*namespace, *_api._lazy_names) if not k.startswith("_")}
        namespace["__all__"] = sorted(public)  # last: the API is loaded
    return namespace


_sys.modules[__name__].__class__ = _Package
