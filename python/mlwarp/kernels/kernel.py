"""`@wp.kernel`: a Python function compiled on first launch, one cached library per kernel."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import platform
import re
import sys
import threading
import time

from mlwarp.core import types as wt
from mlwarp.core import generics, statics
from mlwarp.core.refs import is_reference
from mlwarp.core.annotations import closure_cells, resolve_annotation
from mlwarp.kernels.subscript_annotations import refuse_unions
from mlwarp.kernels import module as modules
from mlwarp.launching import cuda_compile
from mlwarp.kernels import parallel_compile
from mlwarp.kernels.captures import callees_changed, captured_constants, captured_values, constants_changed
from mlwarp.config import config
from mlwarp.kernels.fingerprint import compiler_fingerprint, portable_compiler_fingerprint
from mlwarp.compiler import insert as inserted_passes  # imports no MLIR
from mlwarp.errors import CompileError, CompileTypeError
from mlwarp.runtime import cache
from mlwarp.runtime.abi import ArrayParam, launch_struct
from mlwarp.runtime.cpu import CpuKernel, cpu_flags
from mlwarp.launching.debug import hidden_params
from mlwarp.core.source import function_source, override_source

@functools.lru_cache(maxsize=None)
def _host_fingerprint() -> str:
    """CPU objects are built for this CPU; a changed CPU never reuses them (CUDA code does not depend on it)."""
    return platform.machine() + (" ".join(cpu_flags()) or platform.processor())


def _param_type(kernel_name, func, name, annotation):
    written = annotation
    annotation = resolve_annotation(func, annotation, default=None)
    indexed = getattr(annotation, "_wp_indexed_struct_", None)  # wp.indexedarray[...]: a struct (python/mlwarp/arrays/indexed.py)
    if indexed is not None:
        return indexed
    if wt.is_array(annotation) and getattr(annotation, "is_annotation", False):
        return ArrayParam(wt.array_element_type(annotation.dtype), annotation.ndim)
    if generics.is_generic(annotation):
        return annotation  # instantiated per argument types (Kernel.add_overload)
    if is_reference(annotation):
        code = func.__code__
        raise CompileTypeError(f"argument '{name}' is annotated {annotation!r}: wp.ref[T] is not allowed in "
                               f"@wp.kernel signatures; pass addressable values to a @wp.func's wp.ref[T] "
                               f"parameter instead", code.co_filename, code.co_firstlineno, None, kernel_name)
    t = wt.canonical_type(annotation) if annotation is not inspect.Parameter.empty else None
    if t is None:
        code = func.__code__
        raise CompileError(f"argument '{name}' needs a type annotation Warp supports (a scalar type or "
                           f"wp.array(dtype=..., ndim=...)), got {written!r}", code.co_filename,
                           code.co_firstlineno, None, kernel_name)
    return t


_SCALAR_ARGUMENTS = (bool, int, float)


def _argument_kinds(args):
    """What decides a launch argument's inferred type (generics.value_type) for the common arguments: a Python
    scalar's type, an array's class, dtype and ndim; None when another argument (a struct, a vector value, a
    NumPy scalar) is among them: its type is inferred each time."""
    kinds = []
    for value in args:
        t = type(value)
        if t in _SCALAR_ARGUMENTS:
            kinds.append(t)
        elif getattr(t, "_wp_array_", False) is True and not getattr(value, "is_annotation", False):
            kinds.append((t, value.dtype, value.ndim))
        else:
            return None
    return tuple(kinds)


class Kernel:
    def __init__(self, func, key=None, module=None, options=None, code_transformers=None, source=None, *,
                 register=True, declare=True):
        # Warp's source= (the function's text) and code_transformers= (ast.NodeTransformers applied to its tree)
        # belong to this kernel: it compiles a copy of the function that carries them
        func = override_source(func, source, code_transformers or ())
        self.func = func
        self.key = key or func.__name__
        self.options = dict(options or {})
        sig = inspect.signature(func)
        self.arg_names = list(sig.parameters)
        refuse_unions(func, {n: resolve_annotation(func, p.annotation) for n, p in sig.parameters.items()}, "kernel")
        self.params = [_param_type(self.key, func, n, p.annotation) for n, p in sig.parameters.items()]
        self._compiled = {}
        self._captured = None  # captured_constants(): the global values the kernels in _compiled were built with
        self._captured_generation = -1  # the module generation _captured was last checked at
        self._captured_definitions = -1  # modules.FunctionDefinitions.count then
        self._lock = threading.Lock()
        self._struct = None
        self._first_lookup = None  # (device alias, cache key, cached entry): looked up at a first launch (lookup)
        self.is_generic = any(generics.is_generic(p) for p in self.params)
        self.overloads = {}  # concrete parameter types -> Kernel (a generic kernel's instances)
        self.generic_parent = None
        self.module = modules.module_of(module) if module is not None else modules.get_module(func.__module__)
        if declare:  # (a variant of a declared kernel keeps its values: the globals may have changed since)
            statics.declare(func)  # its wp.static() values are the ones at its definition (Warp's rule)
        if register:
            self.module.register_kernel(self)
        functools.update_wrapper(self, func)

    # -- generic kernels: one instance per concrete argument types, as Warp's templates ---------------------
    def _signature(self, arg_types) -> tuple:
        """(signature, concrete types) of an instance for `arg_types`; TypeError where one does not fit."""
        if len(arg_types) != len(self.params):
            raise RuntimeError(f"Invalid number of arguments for kernel {self.key}")
        concrete = []
        for name, t, template in zip(self.arg_names, arg_types, self.params):
            t = getattr(t, "_wp_indexed_struct_", None) or t  # wp.indexedarray[...]: its struct
            if wt.is_array(t) or isinstance(t, wt.ArrayT):
                t = ArrayParam(wt.array_element_type(t.dtype), t.ndim)
            elif not generics.is_generic(t):
                t = wt.canonical_type(t) or t
            if generics.is_generic(t):
                raise TypeError(f"Kernel {self.key} argument '{name}' cannot be generic, got "
                                f"{generics.describe(t)}")
            if not generics.matches_template(t, template):
                raise TypeError(f"Kernel {self.key} argument '{name}' type mismatch: expected "
                                f"{generics.describe(template)}, got {generics.describe(t)}")
            concrete.append(t)
        sig = tuple(wt.type_key(p.dtype) + f"[{p.ndim}]" if isinstance(p, ArrayParam) else wt.type_key(p)
                    for p in concrete)
        return sig, concrete

    def add_overload(self, arg_types) -> "Kernel":
        """The instance of this generic kernel for `arg_types` (one per parameter: scalar, composite or struct
        types, array annotations), made on first request."""
        if not self.is_generic:
            raise RuntimeError(f"Only generic kernels can be overloaded.  Kernel {self.key} is not generic")
        sig, concrete = self._signature(arg_types)
        with self._lock:
            found = self.overloads.get(sig)
            if found is None:
                found = object.__new__(Kernel)
                found.__dict__.update(self.__dict__)
                found.params, found.is_generic, found.overloads = concrete, False, {}
                found._compiled, found._captured, found._struct, found._first_lookup = {}, None, None, None
                found._captured_generation = found._captured_definitions = -1
                found._lock, found.generic_parent = threading.Lock(), self
                found.sig = "_".join(sig)
                self.overloads[sig] = found
        return found

    def get_overload(self, arg_types):
        """The instance made for `arg_types` (add_overload, a launch), or None: none is made here."""
        try:
            sig, _ = self._signature(arg_types)
        except TypeError:
            return None
        return self.overloads.get(sig)

    def infer_argument_types(self, args) -> list:
        """The parameter types a launch with `args` instantiates: generic parameters take the arguments'
        types."""
        if len(args) != len(self.params):
            raise RuntimeError(f"Invalid number of arguments for kernel {self.key}")
        types = []
        for name, template, value in zip(self.arg_names, self.params, args):
            if not generics.is_generic(template):
                types.append(template)
                continue
            t = generics.value_type(value)
            if t is None:
                raise TypeError(f"Error launching kernel '{self.key}': Unable to infer the type of argument "
                                f"'{name}' from {type(value).__name__}")
            types.append(t)
        return types

    def instance_for(self, args) -> "Kernel":
        """The instance for a launch's arguments: generic parameters take the arguments' types."""
        if len(args) != len(self.params):
            return self  # the launch reports the count
        # A generic kernel launched again with arguments of the same kinds (a training loop's every step) finds
        # its instance by their Python types, dtypes and ndims, without inferring and checking the types again
        # (~0.1 ms a launch). The memo belongs to this kernel's `overloads`: a variant that copies this kernel's
        # fields (a CPU lane build) starts its own with its own overloads.
        memo = self.__dict__.get("_instances_by_kind")
        if memo is None or memo[0] is not self.overloads:
            memo = self._instances_by_kind = (self.overloads, {})
        kinds = _argument_kinds(args)
        try:
            found = memo[1].get(kinds) if kinds is not None else None
        except TypeError:  # a dtype that does not hash
            kinds = found = None
        if found is not None:
            return found
        types = self.infer_argument_types(args)
        try:
            found = self.add_overload(types)
        except TypeError as e:
            raise TypeError(f"Error launching kernel '{self.key}': {e}") from None
        if kinds is not None:
            memo[1][kinds] = found
        return found

    # -- Warp's descriptive members --------------------------------------------------------------------------
    sig = ""  # an instance of a generic kernel: its argument types' signature

    @property
    def arg_indices(self) -> dict:
        return {name: i for i, name in enumerate(self.arg_names)}

    @property
    def return_annotation(self):
        """The function's return annotation (None without one); kernels return nothing."""
        found = getattr(self.func, "__annotations__", {}).get("return")
        return None if found is type(None) else found

    @property
    def uses_warp_entry_point_abi(self) -> bool:
        return self.options.get("entry_point_abi", "warp") == "warp"

    @property
    def grid_stride(self) -> bool:
        """The grid_stride option resolved as Warp resolves it (the kernel's, else its module's
        default_grid_stride, else wp.config's); mlwarp's CUDA launches are grid-strided whatever it says."""
        for found in (self.options.get("grid_stride"), self.module.options.get("default_grid_stride")):
            if found is not None:
                return bool(found)
        return bool(_config().default_grid_stride)

    @property
    def hash(self) -> bytes:
        """A digest of what the kernel's code depends on (source, argument types, options, captured values)."""
        return hashlib.sha256(self.identity(location=False).encode()).digest()

    def get_mangled_name(self, *, kernel_hash: bytes | None = None) -> str:
        """Warp's symbol name: the key, with the first 8 hex digits of the hash unless the module strips it."""
        if self.module.options.get("strip_hash"):
            return self.key
        return f"{self.key}_{(self.hash if kernel_hash is None else kernel_hash).hex()[:8]}"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"kernel '{self.key}' must be launched with wp.launch(), not called")

    @property
    def launch_struct(self):
        if self.is_generic:
            raise RuntimeError(f"kernel '{self.key}' is generic: launch it with arguments, or instantiate it "
                               f"with wp.overload(kernel, [types])")
        if self._struct is None:
            self._struct = launch_struct(self.params + hidden_params(self))  # debug: + error record
        return self._struct

    def identity(self, location: bool = True) -> str:
        """What this kernel's code depends on, on any device (unique-module names; without its file and line,
        its module's hash, which Warp keeps the same for the same code loaded from another file)."""
        if self.is_generic:  # (its options too: two generic kernels differing only in them stay two)
            return f"{self.key}:generic:" + ";".join(sorted(k.identity(location) for k in self.overloads.values())) \
                + f":{self._source_key()}:{sorted(self.options.items(), key=repr)!r}"
        # (the return annotation's value too: `-> Ret` redefined with another Ret is another kernel, refused or not)
        return self.cache_key("any", location) + repr(getattr(self.func, "__annotations__", {}).get("return"))

    def _source_key(self) -> str:
        try:
            src = function_source(self.func)
            return hashlib.sha256((src.text + src.transformed_dump).encode()).hexdigest()[:16] + \
                repr(_captured_constants(self.func)) + \
                repr(getattr(self.func, "__annotations__", {}).get("return"))  # `-> Ret`: refused unless None
        except (OSError, TypeError):
            return self.func.__code__.co_code.hex()

    def unload(self) -> None:
        """Forgets the loaded code: the next launch loads it again (from the disk cache, else the compiler)."""
        with self._lock:
            self._compiled, self._first_lookup = {}, None
            self.__dict__.pop("_launch_plan", None)  # launch_plan.py's plan holds the loaded code's entry
        for k in self.overloads.values():
            k.unload()

    def cache_key(self, device, location: bool = True) -> str:
        h = hashlib.sha256()
        try:
            src = function_source(self.func)
            # where, too: debug builds and expect_* messages carry the kernel's file:line
            where = f"{os.path.basename(src.filename)}:{src.first_line}" if location else ""
            h.update(f"{where}\n{src.text}\n{src.transformed_dump}".encode())
        except (OSError, TypeError):
            h.update(self.func.__code__.co_code.hex().encode())
        h.update(repr([(n, f"array({wt.type_key(p.dtype)}, {p.ndim})" if isinstance(p, ArrayParam) else
                        wt.type_key(p)) for n, p in zip(self.arg_names, self.params)]).encode())
        h.update(repr(sorted((k, v) for k, v in self.options.items() if k != "passes")).encode())
        h.update(f"backward={self.declares_backward()}".encode())  # (its module's option, when not its own)
        h.update(inserted_passes.fingerprint(self.options).encode())  # the kernel's and the global ones
        h.update(repr(_captured_constants(self.func)).encode())
        h.update(f"max_unroll={_config().max_unroll}".encode())  # warp-unroll-loops' default limit
        h.update(str(device).encode())
        if str(device).startswith("sm_"):  # "sm_90": a CUDA target (python/mlwarp/launching/cuda_compile.py), built for other hosts
            h.update(portable_compiler_fingerprint().encode())
        else:
            h.update(compiler_fingerprint().encode())
            h.update(_host_fingerprint().encode())
        return f"{self.key}-{h.hexdigest()[:24]}"

    def compiled(self, device):
        """The loaded kernel for `device`: from memory, else the disk cache, else the compiler."""
        if self._captured_generation != self.module.generation:
            self.recapture_if_modified()
        elif self._captured_definitions != modules.FunctionDefinitions.count:
            self.recapture_if_modified(callees_only=True)
        found = self._compiled.get(device.alias)
        if found is not None:
            return found
        with self._lock:
            found = self._compiled.get(device.alias)
            if found is None:
                found = self._load_or_compile(device)
                self._compiled[device.alias] = found
        return found

    def recapture_if_modified(self, callees_only: bool = False) -> bool:
        """Warp's rule for globals: a kernel captures them when its module is built, and sees a changed global
        only once the module was modified since (a kernel or function defined in it, mark_modified, new
        options, a reload). `callees_only`: only whether a function it calls was redefined (a @wp.func was
        defined somewhere since: a reloaded module, whose dependents Warp unloads). True if the captured values
        changed, so the loaded code was dropped."""
        generation, definitions = self.module.generation, modules.FunctionDefinitions.count
        if self._captured is not None:
            if not (callees_changed if callees_only else constants_changed)(self._captured):
                self._captured_generation, self._captured_definitions = generation, definitions
                return False
        first = self._captured is None  # (nothing was loaded with other values yet)
        with self._lock:
            if not first:
                self._compiled, self._first_lookup = {}, None  # (a lookup made before holds the old key)
                self.__dict__.pop("_launch_plan", None)  # launch_plan.py's plan holds the dropped code's entry
            self._captured = captured_constants(self.func)
            self._captured_generation, self._captured_definitions = generation, definitions
        return not first

    def _load_or_compile(self, device):
        if device.is_cuda:
            return cuda_compile.load(self, device)
        t0 = time.perf_counter()
        looked_up, self._first_lookup = self._first_lookup, None
        if looked_up is not None and looked_up[0] == device.alias:  # (by this launch, a moment ago: lookup)
            key, meta = looked_up[1], looked_up[2]
        else:
            key, meta = self.cache_key(device), None
        parallel_compile.wait_for(key)  # (one started in the background: kernels/parallel_compile.py)
        if meta is None:
            meta = self.cached_entry(key)
        compiled_now = meta is None
        if compiled_now:
            meta = cache.store(key, self._build)
            if not self.options.get("with_adjoint"):
                parallel_compile.note_forward_compile(self, time.perf_counter() - t0)
        loaded = CpuKernel.from_record(meta, meta["entry"])
        loaded.deterministic = modules.is_deterministic(self.module.options)  # one thread, in thread order
        loaded.meta = meta  # a with_adjoint library's meta["adj_entry"] is opened by python/mlwarp/autodiff/adjoint.py
        if _print_timings():
            what = "compiled" if compiled_now else "loaded from cache"
            stages = "".join(f", {k} {v:.1f} ms" for k, v in meta.get("timings_ms", {}).items()) if compiled_now else ""
            stages += f", load {loaded.load_ms:.1f} ms"
            print(f"Module {self.key} {what} in {(time.perf_counter() - t0) * 1e3:.2f} ms{stages}", file=sys.stderr)
        return loaded

    def lookup(self, device):
        """(cache key, cached CPU library or None) for `device`, kept for the load or compile of this launch (its
        first: launching/compile_ahead.py looks before it, to know whether the kernel's module is compiled)."""
        key = self.cache_key(device)
        self._first_lookup = (device.alias, key, self.cached_entry(key))
        return self._first_lookup[1:]

    def cached_entry(self, key: str):
        """The compiled CPU library under `key`: the kernel cache's entry, else (a kernel of mlwarp's own) the
        library cache's (runtime/cache.py library_dir: compiled ahead at install); None when neither has it."""
        meta = cache.lookup(key)
        if meta is None and self.is_library_kernel():
            meta = cache.lookup_library(key)
        return meta

    def is_library_kernel(self) -> bool:
        """Whether mlwarp's own modules define this kernel (whose compiled code the library cache may hold)."""
        return (getattr(self.func, "__module__", None) or "").startswith("mlwarp.")  # (exec'd code: None)

    def _frontend_types(self) -> dict:
        return {n: wt.ArrayT(p.dtype, p.ndim) if isinstance(p, ArrayParam) else p
                for n, p in zip(self.arg_names, self.params)}

    def to_mlir(self, stage: str = "warp") -> str:
        """The kernel's IR after a compiler stage ("warp", "warp-opt", "lowered", "llvm"), as text."""
        from mlwarp.compiler.driver import emit_ir  # lazy: MLIR

        return emit_ir(self.func, self._frontend_types(), stage, self.options)

    def _library_options(self) -> dict:
        # The forward library leaves the adjoint out: most launches never need it, and it costs about
        # twice the kernel's own LLVM time. adjoint.py compiles a library with it on the first adjoint launch.
        if self.options.get("with_adjoint"):
            return self.options
        return {**self.options, "enable_backward": False, "adjoint_declared": self.declares_backward()}

    def declares_backward(self) -> bool:
        """Whether the kernel has a backward pass: its own enable_backward, else its module's (Warp's rule)."""
        declared = self.options.get("enable_backward")
        if declared is None:
            declared = (getattr(getattr(self, "module", None), "options", None) or {}).get("enable_backward", True)
        return declared is not False

    def _build(self, folder):
        from mlwarp.compiler.driver import compile_cpu  # the only place that loads the compiler (and MLIR)

        meta = compile_cpu(self.func, self._frontend_types(), folder, self._library_options())
        return dict(meta, kernel=self.key, files=[meta["library"]])


def _config():
    return config


def _print_timings() -> bool:
    return config.print_timings or os.environ.get("MLWARP_TIMINGS") == "1"


def _captured_constants(func) -> list:
    """Fingerprints of the globals and closure values a kernel names, which the frontend folds in as
    constants or resolves as functions (Warp's rule): see captures.py."""
    return captured_values(func)


def kernel(f=None, *, name=None, enable_backward=None, launch_bounds=None, cuda_max_registers=None,
           enable_cuda_smem_spilling=None, cluster_dim=None, module=None, module_options=None, entry_point_abi=None,
           grid_stride=None, key=None, passes=None):
    """Decorator: `@wp.kernel` or `@wp.kernel(enable_backward=False, module="unique", ...)`, Warp's options.
    `launch_bounds`, `cuda_max_registers`, `enable_cuda_smem_spilling`, `cluster_dim` and `grid_stride` are
    validated and kept in the kernel's options (CUDA code generation does not read them yet). `passes`:
    InsertedPass entries this kernel's builds get (compiler/insert.py)."""
    options = {} if enable_backward is None else {"enable_backward": bool(enable_backward)}
    if launch_bounds is not None:
        options["launch_bounds"] = launch_bounds
    if cuda_max_registers is not None:
        if launch_bounds is not None:
            raise ValueError("cuda_max_registers and launch_bounds cannot be specified together")
        options["cuda_max_registers"] = cuda_max_registers
    if enable_cuda_smem_spilling:
        options["enable_cuda_smem_spilling"] = True
    if grid_stride is not None:
        options["grid_stride"] = bool(grid_stride)
    if cluster_dim is not None:
        options["cluster_dim"] = cluster_dim
    if entry_point_abi is not None:
        if entry_point_abi not in ("warp", "external_constant_params"):
            raise ValueError(f"entry_point_abi must be 'warp' or 'external_constant_params', got {entry_point_abi!r}")
        if entry_point_abi == "external_constant_params" and enable_backward is not False:
            raise ValueError("entry_point_abi='external_constant_params' requires enable_backward=False")
        if entry_point_abi != "warp":
            raise NotImplementedError("entry_point_abi='external_constant_params' (a CUDA constant-memory entry "
                                      "point) is not supported by mlwarp")
    if passes:
        options["passes"] = inserted_passes.as_inserted(passes)
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name)}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError("name must be a non-empty valid C++ identifier matching [A-Za-z_][A-Za-z0-9_]*")
        key = name

    def wrap(func):
        if module_options is not None:
            if not isinstance(module_options, dict):
                raise TypeError(f"@wp.kernel for '{func.__name__}': module_options must be a dict, "
                                f"got {type(module_options).__name__}.")
            if module != "unique":
                raise ValueError(f"@wp.kernel for '{func.__name__}': module_options requires module=\"unique\". "
                                 "Use wp.set_module_options() to set module-level options for a shared module.")
            unknown = sorted(set(module_options) - set(modules.default_options()))
            if unknown:
                raise ValueError(f"@wp.kernel for '{func.__name__}': unknown module_options: "
                                 f"{', '.join(repr(k) for k in unknown)}. Valid options are: "
                                 f"{', '.join(repr(k) for k in sorted(modules.default_options()))}.")
            modules.check_values(module_options)
        if module == "unique":
            k = Kernel(func, key=key, options={**options, **_compile_options(module_options or {})},
                       register=False)
            k.module = modules.unique_module(k)
            k.module.options.update(module_options or {})
            existing = k.module.kernels.get(k.key)
            if existing is not None:
                return existing  # the same definition again: the same kernel
            k.module.register_kernel(k)
        else:
            k = Kernel(func, key=key, module=module, options=options)
        _KERNELS.setdefault((func.__module__, func.__qualname__), {})[k.key] = k
        return k

    return wrap(f) if f is not None else wrap


def _compile_options(module_options: dict) -> dict:
    """The module options that change a unique module's kernel code (the rest are its module's)."""
    return {k: v for k, v in module_options.items() if k in ("mode", "enable_backward") and v is not None}


# (module, qualified name) -> {key: the latest Kernel of that key defined there}: what `@wp.overload` stubs name
_KERNELS: dict = {}


def overload(kernel, arg_types=None):
    """`wp.overload(kernel, [types])` or `wp.overload(kernel, {name: type})`: the instance of a generic kernel
    for those types. As a decorator on a body-less stub with concrete annotations (`@wp.overload def k(a:
    wp.array[float]): ...`), instantiates the generic kernel of the same name and returns that kernel."""
    if isinstance(kernel, Kernel):
        if not kernel.is_generic:
            raise RuntimeError(f"Only generic kernels can be overloaded.  Kernel {kernel.key} is not generic")
        if isinstance(arg_types, dict):
            types = list(kernel.params)
            for name, t in arg_types.items():
                if name not in kernel.arg_names:
                    raise RuntimeError(f"Invalid argument name '{name}' in overload of kernel {kernel.key}")
                types[kernel.arg_names.index(name)] = t
        elif isinstance(arg_types, (list, tuple)):
            types = list(arg_types)
        elif arg_types is None:
            types = []
        else:
            raise TypeError("Kernel overload types must be given in a list or dict")
        return kernel.add_overload(types)
    if inspect.isfunction(kernel):
        stub = kernel
        found = _KERNELS.get((stub.__module__, stub.__qualname__), {})
        if not found:
            raise RuntimeError(f"Failed to find a kernel named '{stub.__name__}' in module {stub.__module__}")
        if len(found) > 1:  # one function made into kernels under several names (name=...)
            keys = ", ".join(repr(k) for k in sorted(found))
            raise RuntimeError(f"Ambiguous kernel lookup for overload '{stub.__qualname__}': it names the kernels "
                               f"{keys}; call wp.overload(kernel, [types]) on the one you mean")
        (generic,) = found.values()
        if not generic.is_generic:
            raise RuntimeError(f"Only generic kernels can be overloaded.  Kernel {generic.key} is not generic")
        _check_stub_body(stub)
        hints = dict(getattr(stub, "__annotations__", {}))
        returns = hints.pop("return", None)
        if returns is not None and returns not in ("None", type(None), "types.NoneType", "NoneType"):
            raise TypeError("Return annotations are not allowed on @wp.overload stubs; omit the return "
                            "annotation or use `-> None`.")
        names = list(inspect.signature(stub).parameters)
        if any(n not in hints for n in names):
            raise RuntimeError(f"Incomplete argument annotations on kernel overload {stub.__name__}")
        types = [_resolved(stub, hints[n]) for n in names]
        generic.add_overload(types)
        return generic
    raise RuntimeError("wp.overload() called with invalid argument!")


def _resolved(func, annotation):
    resolved = resolve_annotation(func, annotation, default=None)
    if isinstance(annotation, str) and resolved is None:
        return eval(annotation, func.__globals__, closure_cells(func))  # noqa: S307  (the user's NameError)
    return resolved


def _check_stub_body(stub) -> None:
    """An overload stub has no body: only `pass`, `...`, comments and docstrings."""
    src = function_source(stub)
    tree = ast.parse(src.text)
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
    if body is None:
        raise RuntimeError(f"Kernel overload '{stub.__name__}' must begin with a function definition")
    for node in body:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                                          and (isinstance(node.value.value, str) or node.value.value is ...)):
            continue
        raise RuntimeError("Illegal statement in kernel overload definition.  Only pass, ellipsis (...), "
                           "comments, or docstrings are allowed")
