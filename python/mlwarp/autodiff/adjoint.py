"""The adjoint launch: `wp.launch(k, dim, inputs, outputs, adj_inputs=[...], adj_outputs=[...], adjoint=True)`.

Runs `<k>_adj_cpu` from the kernel's library (the warp-autodiff pass put it
there). Its arguments are the kernel's arguments followed by one adjoint per
argument: for an array, the array receiving (inputs) or holding (outputs) the
gradient, of the same dtype and shape; for a scalar, a number that is ignored
(Warp does not return gradients of scalar arguments); for a vector, matrix,
quaternion or transform passed by value, a value of that type (accumulated into
and dropped, as Warp does); for a struct, a struct of the same type whose array
fields receive the gradients of the argument's array fields (what
`Tape.backward` passes: each field array's `.grad`). An adjoint given as None
is zero: a zero-filled scratch array for an array (also for an array field of a
struct adjoint), so a kernel never writes through a null pointer. Last, two int64s
whose bit k says that argument k's adjoint is its own `.grad`: the adjoint of a
store into such an array clears the stored element's gradient, as Warp 1.19's; the
first leaves out arrays with retain_grad, the second (for stores through a row or
slice taken in the kernel, which drop that flag in Warp) does not.
"""

from __future__ import annotations

import ctypes

import numpy as np

from mlwarp.arrays.array import array, zeros
from mlwarp.autodiff.overwrites import struct_arrays
from mlwarp.autodiff.recording import recording
from mlwarp.arrays.cuda_array import allocate_like
from mlwarp.launching.debug import after_launch, attach_record, for_launch, hidden_params
from mlwarp.errors import CompileError, LaunchError
from mlwarp.launching.cpu_lanes import block_count
from mlwarp.launching.launch_args import check_arg_count, check_array_arg, check_composite_arg, check_scalar_arg, fold_dims, \
    launch_device, pack_array
from mlwarp.core import types as wt
from mlwarp.kernels.kernel import Kernel
from mlwarp.kernels.parallel_compile import compile_in_background, compiles_in_background
from mlwarp.runtime.abi import ArrayParam, launch_struct
from mlwarp.runtime.cpu import CpuKernel


def with_adjoint(kernel):
    """The variant of `kernel` whose CPU library also holds `<k>_adj_cpu`, compiled on first use
    (the forward library leaves the adjoint out: see Kernel._library_options)."""
    return _variant(kernel, "_with_adjoint", with_adjoint=True)


def with_adjoint_atomics(kernel):
    """The variant of with_adjoint(kernel) whose library keeps the atomic form of each entry beside its `_private`
    copy: with_adjoint's library has `_private` only (warp-cpu-privatize-scatter{replace-entry}), which a parallel
    launch runs with private copies of the arrays it sums into; where those do not apply (an array over the
    runtime's size limit, or overlapping another), that launch runs on one thread and this library is compiled in
    the background for the launches after it (adjoint_kernel)."""
    return _variant(kernel, "_with_adjoint_atomics", with_adjoint=True, adjoint_atomics=True)


def _variant(kernel, slot: str, **options):
    """The kernel with `options` added, made once and kept in the kernel's `slot`."""
    variant = kernel.__dict__.get(slot)
    if variant is None:
        # (its kernel's module, not registered there: the module's kernel stays the one its launches and
        # wp.load_module find)
        variant = type(kernel)(kernel.func, key=kernel.key, module=kernel.module, options={**kernel.options, **options},
                               register=False, declare=False)
        if getattr(kernel, "generic_parent", None) is not None:  # a generic kernel's instance: its concrete types
            variant.params, variant.is_generic = list(kernel.params), False
        kernel.__dict__[slot] = variant
    return variant


def has_adjoint_library(kernel) -> bool:
    """Whether a CPU launch of `kernel`'s adjoint loads it from a with_adjoint library."""
    return type(kernel) is Kernel and not kernel.is_generic and kernel.declares_backward()


def compile_adjoint_ahead(kernel, device) -> None:
    """Called before a kernel's first CPU launch compiles its own library, where its adjoint will most likely be
    launched (`gradients_in_sight`): the adjoint library starts compiling in the background now, beside the forward
    compile (kernels/parallel_compile.py). Warp compiles every module's backward pass with its forward one; mlwarp
    compiles an adjoint only where gradients are in sight, in a compile process of low priority, which a launch that
    needs that core takes it from. A compile the tape would start after the launch (Tape.adjoint_needed_later)
    starts before the forward compile instead. Only a speed-up: a compile that fails is redone, and reported, where
    the adjoint is launched."""
    if not device.is_cpu or device.alias in kernel._compiled or not has_adjoint_library(kernel):
        return
    try:
        compile_in_background(with_adjoint(kernel), device)
    except Exception:  # noqa: BLE001 (a guess: the launch goes on whatever happens here)
        pass


def gradients_in_sight(args) -> bool:
    """Whether a launch with `args` will most likely have its adjoint launched: a Tape records, or an argument is an
    array that requires grad, or a struct holding one."""
    return bool(recording()) or any(_requires_grad(a) for a in args)


def _requires_grad(value) -> bool:
    if isinstance(value, array):
        return value.requires_grad
    if hasattr(value, "_wp_fields_") and wt.is_struct(type(value)):  # (a fabricarray is a struct type, no fields)
        return any(isinstance(a, array) and a.requires_grad for a in struct_arrays(value))
    return False


def adjoint_library(kernel, device):
    """The loaded library holding the adjoint entry (on CUDA the kernel's own module holds it)."""
    return kernel.compiled(device) if device.is_cuda else with_adjoint(kernel).compiled(device)


def adjoint_kernel(kernel, device) -> CpuKernel:
    """The loaded `<k>_adj_cpu` entry of the kernel's library for `device`."""
    if kernel.options.get("enable_backward") is False:
        raise LaunchError(f"Error launching kernel '{kernel.key}': it was compiled with "
                          f"enable_backward=False, so it has no adjoint")
    compiled = adjoint_library(kernel, device)
    found = getattr(compiled, "adjoint", None)
    if found is not None and getattr(found, "atomics_requested", False):
        found = compiled.adjoint = _with_atomics_when_compiled(kernel, device, found)
    if found is None:
        meta = compiled.meta
        if meta.get("adj_error"):
            raise CompileError(f"kernel '{kernel.key}' cannot be differentiated: {meta['adj_error']}")
        if not meta.get("adj_entry"):
            raise LaunchError(f"Error launching kernel '{kernel.key}': its library has no adjoint entry")
        if device.is_cuda:  # the adjoint entry of the same CUDA module (runtime/cuda/module.py)
            found = compiled.sibling(meta["adj_entry"])
        elif meta.get("entry") == meta["adj_entry"]:  # an adjoint-only library: its entry is the adjoint's
            found = compiled
        else:
            found = CpuKernel.from_record(meta, meta["adj_entry"])
        if device.is_cpu and not getattr(found, "atomic", True):
            found.on_atomic_needed = lambda found=found: _request_atomics(kernel, device, found)
        compiled.adjoint = found
    return found


def _request_atomics(kernel, device, found) -> None:
    """A launch of `found` (an adjoint entry without its atomic form) ran on one thread: the library with that form
    starts compiling in the background, once."""
    if not getattr(found, "atomics_requested", False):
        found.atomics_requested = True
        try:
            variant = with_adjoint_atomics(kernel)
            found.atomics_key = variant.cache_key(device)  # (what each later launch looks for, until it is there)
            compile_in_background(variant, device)
        except Exception:  # noqa: BLE001 (a speed-up: without it the launches stay on one thread)
            found.atomics_key = None


def _with_atomics_when_compiled(kernel, device, found):
    """The adjoint entry of the library with atomics once its background compile has written it, else `found`;
    where nothing compiles in the background (the kernel cache off), that library compiled here, now."""
    variant = with_adjoint_atomics(kernel)
    key = getattr(found, "atomics_key", None)
    if compiles_in_background(device) and (key is None or variant.cached_entry(key) is None):
        return found
    try:
        library = variant.compiled(device)
    except Exception:  # noqa: BLE001 (it failed to compile: the launches stay on one thread)
        found.atomics_requested = False
        found.on_atomic_needed = None
        return found
    return library


def _device_zeros_like(view, device):
    return allocate_like(view, device)


def companion_struct(kernel, name, t, primal, given, primal_name):
    """The adjoint or tangent (`name`) of the struct argument `primal` (`primal_name`) of type `t`: a copy of
    `given` (a `t` or None: zero) in which every array field the primal has but `given` lacks is a zero-filled
    scratch array of the primal field's shape, dtype and device; nested structs likewise."""
    if getattr(primal, "_wp_indexed_", False):  # wp.indexedarray: an indexed array over the data's adjoint
        return primal.companion(given)
    if getattr(t, "_wp_fabric_", None) is not None:  # wp.fabricarray (or a field without one): no adjoint, as
        return primal  # in Warp; the adjoint kernel only reads its bucket rows
    if given is not None and type(given) is not t and not wt.same_struct_layout(type(given), t):
        raise LaunchError(f"Error launching kernel '{kernel.key}', argument '{name}' expects a struct {t.__name__}, "
                          f"but passed value has type {type(given).__name__}.")
    out = t()
    for field, ft in t._wp_fields_:
        value = getattr(primal, field)
        mine = None if given is None else getattr(given, field)
        if wt.is_array(ft):
            if value is None:
                continue
            if mine is None:
                mine = zeros(value.shape, value.dtype, value.device)
            elif mine.shape != value.shape:
                raise LaunchError(f"Error launching kernel '{kernel.key}', argument '{name}.{field}': its shape "
                                  f"{mine.shape} differs from the shape {value.shape} of '{primal_name}.{field}'")
        elif wt.is_struct(ft):
            mine = companion_struct(kernel, f"{name}.{field}", ft, value, mine, f"{primal_name}.{field}")
        elif mine is None:
            continue
        setattr(out, field, mine)
    return out


def companion_value(kernel, name, p, primal, given, primal_name):
    """The adjoint or tangent (`name`) of a by-value composite argument of type `p`: a value of that type,
    zero when `given` is None (structs: see companion_struct)."""
    # (a primal of another type: the launch's check reports it; wp.indexedarray, wp.fabricarray: companion_struct)
    if wt.is_struct(p) and (type(primal) is p or getattr(primal, "_wp_indexed_", False) or
                            getattr(primal, "_wp_fabric_", False)):
        return companion_struct(kernel, name, p, primal, given, primal_name)
    return p() if given is None else given


def _adjoint_struct(kernel):
    s = getattr(kernel, "_adj_struct", None)
    if s is None:  # arguments, their adjoints, the consumed and own-grad bits; debug builds: + the error record
        s = launch_struct(list(kernel.params) + list(kernel.params) + [wt.int64, wt.int64] + hidden_params(kernel))
        kernel._adj_struct = s
    return s


def is_own_grad(primal, adj, keeps_retained=True) -> bool:
    """Whether `adj` is `primal`'s own `.grad` (for a struct: every array field's adjoint is that field's `.grad`,
    what Tape.backward passes). Then the adjoint's stores consume it, as Warp 1.19 clears a stored element's
    gradient only in its own `.grad` (an adjoint buffer the caller passed stays as it was). An array with
    `retain_grad` (Warp 1.19) keeps its gradient: never consumed (nor a struct with such an array field) unless
    `keeps_retained` is False (a row or slice of it taken in the kernel, which drops the flag in Warp)."""
    if adj is None or keeps_retained and getattr(primal, "retain_grad", False):
        return False
    if not wt.is_struct(type(primal)):
        return getattr(primal, "grad", None) is adj
    for field, ft in type(primal)._wp_fields_:
        value, mine = getattr(primal, field), getattr(adj, field, None)
        if wt.is_array(ft) and value is not None and mine is not None and \
                not is_own_grad(value, mine, keeps_retained):
            return False
        if wt.is_struct(ft) and value is not None and not is_own_grad(value, mine, keeps_retained):
            return False
    return True


def _adjoints(kernel, given, count, what):
    if given is None:
        return [None] * count
    given = list(given)
    if len(given) != count:
        raise LaunchError(f"Error launching kernel '{kernel.key}': {what} has {len(given)} entries, expected "
                          f"{count} (one per {what[4:]} argument)")
    return given


def launch_adjoint(kernel, dims, inputs, outputs, adj_inputs, adj_outputs, device) -> None:
    kernel = for_launch(kernel)  # the debug build when debug mode is on (python/mlwarp/launching/debug.py)
    inputs, outputs = list(inputs), list(outputs)
    args = inputs + outputs
    check_arg_count(kernel, args)
    adjs = _adjoints(kernel, adj_inputs, len(inputs), "adj_inputs") + \
        _adjoints(kernel, adj_outputs, len(outputs), "adj_outputs")
    device = launch_device(kernel, device)
    packed = _adjoint_struct(kernel)()
    keep_alive = []
    n = len(kernel.params)
    consumed = own = 0
    for i, (name, p, value, adj) in enumerate(zip(kernel.arg_names, kernel.params, args, adjs)):
        if adj is None and isinstance(p, ArrayParam) and getattr(value, "grad", None) is not None:
            adj = value.grad  # as Warp: a null adjoint array falls back to the array's own .grad
        if i < 63 and is_own_grad(value, adj):
            consumed |= 1 << i
        if i < 63 and is_own_grad(value, adj, keeps_retained=False):
            own |= 1 << i
        if isinstance(p, ArrayParam):
            view = check_array_arg(kernel, name, p, value, device)
            pack_array(view, p.ndim, getattr(packed, f"p{i}"))
            if adj is None:
                adj_view = np.zeros_like(view) if device.is_cpu else _device_zeros_like(view, device)
            else:
                adj_view = check_array_arg(kernel, f"adj_{name}", p, adj, device)
                if adj_view.shape != view.shape:
                    raise LaunchError(f"Error launching kernel '{kernel.key}', argument 'adj_{name}': its shape "
                                      f"{adj_view.shape} differs from the shape {view.shape} of '{name}'")
            pack_array(adj_view, p.ndim, getattr(packed, f"p{n + i}"))
            keep_alive += [view, adj_view]
        elif wt.is_composite(p):  # by value: vectors, matrices, ..., structs (their array fields by reference)
            setattr(packed, f"p{i}", check_composite_arg(kernel, name, p, value))
            adj = companion_value(kernel, f"adj_{name}", p, value, adj, name)
            setattr(packed, f"p{n + i}", check_composite_arg(kernel, f"adj_{name}", p, adj))
            keep_alive += [value, adj]  # a struct's C value points into its arrays
        else:
            setattr(packed, f"p{i}", check_scalar_arg(kernel, name, p, value))
            setattr(packed, f"p{n + i}", check_scalar_arg(kernel, f"adj_{name}", p, 0 if adj is None else adj))
    setattr(packed, f"p{2 * n}", consumed)
    setattr(packed, f"p{2 * n + 1}", own)
    record = attach_record(kernel, packed, 2 * n + 2, device)  # on CUDA: device memory, read back after the launch
    entry = adjoint_kernel(kernel, device)
    full = tuple(dims) + (1,) * (4 - len(dims))
    total = 1
    for d in full:
        total *= d
    full, total, repeats = fold_dims(full, total, adjoint_library(kernel, device).meta.get("tid_dims", 4))
    for d in range(4):
        packed.dims[d] = full[d]
    if device.is_cpu:  # a lane build (cpu_lanes.py): one entry iteration per block
        total = block_count(adjoint_library(kernel, device).meta, total)
    if total:
        for _ in range(repeats):
            entry.run(ctypes.addressof(packed), total)
        after_launch(kernel, adjoint_library(kernel, device), record, args)
    del keep_alive
