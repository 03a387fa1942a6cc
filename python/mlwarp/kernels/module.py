"""Warp's modules: the kernels of one Python module, with the options they are compiled with.

A kernel belongs to the module of the Python module that defines it, to a named module
(`@wp.kernel(module="name")`, `wp.get_module("name")`), or to a module of its own (`module="unique"`, named
after the kernel and its content, so that the same definition made twice is one kernel). Underneath, each
kernel is still its own cached library: a module is the unit users load (`wp.load_module`, `Module.load`),
hash (`hash_module`), unload and set options on (`wp.set_module_options`); options apply to every kernel of
the module that does not set its own.

Options mlwarp's CPU and CUDA targets read: `mode` ("debug" builds bounds-checked kernels), `enable_backward`,
`max_unroll`. The others Warp defines are kept and validated, but change nothing in mlwarp's code (fast_math
and fuse_fp: LLVM contracts where the target allows it; block_dim: CPU launches are not blocked).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import types
import weakref

from mlwarp.config import DeterministicMode, config
from mlwarp.core import types as wt
from mlwarp.kernels.captures import referenced_objects
from mlwarp.kernels.parallel_compile import compile_ahead
from mlwarp.runtime.device import get_device


def default_options() -> dict:
    """Warp 1.19's module options and their defaults (those from wp.config read when the module is made)."""
    return {
        "max_unroll": config.max_unroll,
        "enable_backward": getattr(config, "enable_backward", True),
        "enable_mathdx_gemm": None,
        "enable_mathdx_solver": None,
        "enable_mathdx_fft": None,
        "fast_math": False,
        "fuse_fp": True,
        "lineinfo": getattr(config, "lineinfo", False),
        "cuda_output": None,
        "mode": None,
        "optimization_level": None,
        "cpu_compiler_flags": None,
        "block_dim": 256,
        "compile_time_trace": False,
        "strip_hash": False,
        "extra_build_options": None,
        "deterministic": config.deterministic,
        "deterministic_max_records": config.deterministic_max_records,
        "default_grid_stride": None,
    }


class Module:
    """The kernels registered under one name and their shared options."""

    def __init__(self, name: str | None, loader=None):
        self.name = name if name is not None else "None"
        self.loader = loader
        self.kernels: dict = {}  # key -> Kernel (the latest definition of that key)
        self.functions: dict = {}
        self.structs: dict = {}
        self.options = default_options()
        # Bumped by every change that makes Warp rebuild the module (a kernel or function defined in it,
        # mark_modified, new options): the kernels capture globals again only then (Warp's rule: a global
        # changed after the module was built is not seen until the module is modified or reloaded)
        self.generation = 0
        _every_module.add(self)  # (wp.Module("name") made by hand, too: its dependents are found)

    def __repr__(self):
        return f"<mlwarp module {self.name!r}: {len(self.kernels)} kernel(s)>"

    def register_kernel(self, kernel) -> None:
        self.kernels[kernel.key] = kernel
        self.generation += 1

    def register_function(self, function) -> None:
        """A @wp.func defined in this module (the latest of its key): the module's kernels are rebuilt."""
        self.functions[function.key] = function
        self.generation += 1
        FunctionDefinitions.count += 1

    def register_struct(self, struct) -> None:
        """Registers a @wp.struct with this module (under its key, or its qualified name), as Warp's; the module's
        kernels are rebuilt (mark_modified)."""
        self.structs[getattr(struct, "key", None) or struct.__qualname__] = struct
        self.mark_modified()

    def resolve_options(self, config, block_dim: int | None = None) -> dict:
        """A copy of the module's options with Warp's "None: inherit" entries resolved from `config` (mode,
        optimization_level, cpu_compiler_flags, enable_mathdx_*, default_grid_stride), `block_dim` in place of
        the module's when given, the values checked, and the wp.config settings Warp folds in. Those that
        change nothing in mlwarp (docs/surface.md) are resolved all the same."""
        options = dict(self.options)
        if block_dim is not None:
            options["block_dim"] = block_dim
        for name, setting in (("mode", "mode"), ("optimization_level", "optimization_level"),
                              ("cpu_compiler_flags", "cpu_compiler_flags"), ("enable_mathdx_gemm", None),
                              ("enable_mathdx_solver", None), ("enable_mathdx_fft", None),
                              ("default_grid_stride", None)):
            if options.get(name) is None:
                options[name] = getattr(config, setting or name)
        check_values(options)
        for name in ("verify_fp", "line_directives", "enable_vector_component_overwrites", "llvm_cuda",
                     "use_precompiled_headers", "verify_autograd_array_access", "enable_tiles_in_stack_memory"):
            options[name] = getattr(config, name)
        extra = options.pop("extra_build_options", None)
        for field in ("extra_cuda_include_dirs", "extra_cpu_include_dirs"):
            options[field] = tuple(str(path) for path in getattr(extra, field, None) or ())
        for field in ("extra_cuda_preamble", "extra_cpu_preamble"):
            options[field] = getattr(extra, field, None) or ""
        options["extra_build_dependencies"] = tuple(getattr(extra, "extra_build_dependencies", None) or ())
        return options

    def get_module_identifier(self, block_dim: int | None = None) -> str:
        """Warp's short name for cache folders: wp_<name>, then the first 7 hex digits of the module's hash
        unless its strip_hash option is set."""
        if self.options.get("strip_hash"):
            return f"wp_{self.name}"
        return f"wp_{self.name}_{self.hash_module(block_dim).hex()[:7]}"

    @property
    def references(self) -> set:
        """The other modules whose content this module's code uses (Warp's dependency edges): the modules of
        the @wp.func its kernels and functions call or bind (by name, through a Python module, as a local, as a
        wp.Function argument or default) and of the structs its kernels take. Read from the code as it is now:
        a redefinition in either module is seen without re-registering."""
        found = set()
        for kernel in list(self.kernels.values()):
            found.update(_modules_used_by(kernel.func))
            for param in getattr(kernel, "params", ()) if not kernel.is_generic else ():
                if wt.is_struct(param):
                    found.add(get_module(param.__module__))
        for function in list(self.functions.values()):
            for overload in getattr(function, "overloads", ()):
                found.update(_modules_used_by(overload.func))
        found.discard(self)
        return found

    @property
    def dependents(self) -> set:
        """The modules whose references hold this one (Warp's reverse edges)."""
        return {m for m in list(_every_module) if m is not self and self in m.references}

    @property
    def hashers(self) -> dict:
        """Warp's record of the module's loaded builds, by block_dim: empty until a kernel of the module is loaded
        and again after `unload()` (Warp's tests read it to see what a reload unloaded)."""
        loaded = any(k._compiled for k in self._instances())
        return {self.options["block_dim"]: self.hash_module()} if loaded else {}

    def _instances(self) -> list:
        """Every launchable kernel: the non-generic ones and the instances of generic ones."""
        out = []
        for k in self.kernels.values():
            out.extend(k.overloads.values() if k.is_generic else [k])
        return out

    def hash_module(self, block_dim=None) -> bytes:
        """A digest of everything the module's code depends on: each kernel's source, argument types, options
        and captured constants, and the compiler (the kernels' cache keys), and the module's options."""
        h = hashlib.sha256(repr(sorted((k, repr(v)) for k, v in self.options.items())).encode())
        if block_dim is not None:
            h.update(f"block_dim={block_dim}".encode())
        for k in sorted(self.kernels.values(), key=lambda k: k.key):  # (not the module's name or file: Warp's)
            h.update(k.identity(location=False).encode())
        return h.digest()

    def get_module_hash(self, block_dim=None) -> bytes:
        return self.hash_module(block_dim)

    def load(self, device=None, block_dim=None, max_workers=None) -> bool:
        """Compiles (or loads from the cache) every kernel of the module for `device`; on the CPU the kernels the
        cache misses compile `max_workers` at a time in compile processes (Warp's parallel loads: None takes
        wp.config.load_module_max_workers, 0 one after the other)."""
        d = get_device(device)
        instances = list(self._instances())
        workers = _load_workers(max_workers)
        if workers > 1:
            compile_ahead(instances, d, workers)
        for k in instances:
            k.compiled(d)
        return True

    def unload(self) -> None:
        """Drops the loaded code of every kernel: the next launch loads it again (from the disk cache)."""
        for k in self.kernels.values():
            k.unload()

    def mark_modified(self) -> None:
        """Warp's way to make kernels see globals changed since they were built: the next launch captures
        them again (and recompiles what changed)."""
        self.generation += 1
        self.unload()


_modules: dict = {}
_every_module: weakref.WeakSet = weakref.WeakSet()


class FunctionDefinitions:
    """How many @wp.func definitions were made anywhere: a kernel built before the last one checks, at its next
    launch, whether a function it calls was redefined (a reloaded module) and must be rebuilt (Warp unloads a
    reloaded module's dependents)."""
    count = 0


def _modules_used_by(py_func) -> set:
    out = set()
    for obj in referenced_objects(py_func):
        module = getattr(obj, "module", None) if getattr(obj, "_wp_function_", False) is True else None
        if isinstance(module, Module):
            out.add(module)
    return out


def get_module(name: str) -> Module:
    """The module registered under `name`, made on first use."""
    found = _modules.get(name)
    if found is None:
        found = _modules[name] = Module(name)
    return found


def unique_module(kernel) -> Module:
    """The module of a kernel defined with `module="unique"`: named after its key and content (not where it is
    written, as Warp's content hash); the same definition made again, here or on another line, finds the module
    (and so the kernel) made the first time."""
    digest = hashlib.sha256(kernel.identity(location=False).encode()).hexdigest()[:8]
    return get_module(f"{kernel.key}_{digest}")


def module_of(obj) -> Module:
    """A Module, a module name, a Python module, or None (the caller's caller's module)."""
    if isinstance(obj, Module):
        return obj
    if isinstance(obj, str):
        return get_module(obj)
    if isinstance(obj, types.ModuleType):
        return get_module(obj.__name__)
    if obj is None:
        frame = inspect.currentframe().f_back.f_back
        return get_module(frame.f_globals.get("__name__", "__main__"))
    raise TypeError(f"expected a wp.Module, a module name or a Python module, got {type(obj).__name__}")


def _check_options(options, where: str, valid: dict) -> None:
    if not isinstance(options, dict):
        raise TypeError(f"{where}: module options must be a dict, got {type(options).__name__}.")
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"{where}: unknown module options: {', '.join(repr(k) for k in unknown)}. "
                         f"Valid options are: {', '.join(repr(k) for k in sorted(valid))}.")
    check_values(options)


def check_values(options: dict) -> None:
    """The option values Warp validates: deterministic_max_records a non-negative int, deterministic a mode."""
    records = options.get("deterministic_max_records", 0)
    if isinstance(records, bool) or not isinstance(records, int):
        raise TypeError(f"deterministic_max_records must be an int, got {type(records).__name__}")
    if records < 0:
        raise ValueError(f"deterministic_max_records must be non-negative, got {records}")
    mode = options.get("deterministic", DeterministicMode.NOT_GUARANTEED)
    if not isinstance(mode, (bool, int)) or int(mode) not in tuple(DeterministicMode):
        raise ValueError(f"deterministic must be a wp.DeterministicMode, got {mode!r}")


def is_deterministic(options: dict) -> bool:
    return int(options.get("deterministic") or 0) != DeterministicMode.NOT_GUARANTEED


def set_module_options(options: dict, module=None) -> None:
    """Options for the kernels of `module` (a wp.Module, a module name or a Python module; default: the
    caller's module). Kernels already loaded are rebuilt on their next launch when an option changes them."""
    m = module if module is not None else module_of(None)
    m = module_of(m)
    _check_options(options, "wp.set_module_options", m.options)
    m.options.update(options)
    m.mark_modified()


def get_module_options(module=None) -> dict:
    m = module_of(module) if module is not None else module_of(None)
    return m.options


def _load_workers(max_workers) -> int:
    """Warp's rule: None takes wp.config.load_module_max_workers, whose None is min(cpu count, 4); 0 is serial."""
    if max_workers is None:
        max_workers = config.load_module_max_workers
        if max_workers is None:
            max_workers = min(os.cpu_count() or 1, 4)
    return int(max_workers)


def load_module(module=None, device=None, recursive: bool = False, block_dim=None, max_workers=None) -> None:
    """Loads the kernels of `module` (default: the caller's module) for `device`; `recursive` also loads the
    modules whose names start with `module`'s name and a dot."""
    m = module_of(module) if module is not None else module_of(None)
    targets = [m]
    if recursive:
        prefix = m.name + "."
        targets += [x for name, x in list(_modules.items()) if name.startswith(prefix)]
    force_load(device=device, modules=targets, block_dim=block_dim, max_workers=max_workers)


def force_load(device=None, modules=None, block_dim=None, max_workers=None) -> None:
    """Loads `modules` (default: every module) for `device` (a device, a list of them, or None: the current
    one)."""
    devices = device if isinstance(device, (list, tuple)) else [device]
    for m in (list(_modules.values()) if modules is None else modules):
        for d in devices:
            m.load(d, block_dim, max_workers)
