"""What a kernel's first CPU launch starts compiling in the background, beside its own compile
(kernels/parallel_compile.py's background compiles, at a low priority: the program's own work keeps its cores, and a
launch that needs one of these libraries waits for it instead of compiling it again).

Warp builds a whole module, each kernel with its backward pass, at the first launch of any of its kernels. mlwarp
compiles a kernel at its first launch, so a program that launches its module's kernels one after another waited for
each compile in turn while the other cores idled. So the first launch of a kernel also starts:

- its adjoint library, where gradients are in sight (autodiff/adjoint.py);
- the first time a kernel of a Python module misses the kernel cache on a device (a module not compiled before), the
  module's other kernels, in the order they are defined, each with its adjoint library where gradients are in sight.
  Only the kernels defined at the module's top level (a kernel that a function makes may never be launched as it
  is), concrete ones (a generic kernel's types come with its launch) and the program's own (mlwarp's are compiled
  at install) are compiled ahead. A kernel the program never launches costs it only idle cores' time: its compile
  runs at low priority and stops at exit.
"""

from __future__ import annotations

import weakref

from mlwarp.autodiff.adjoint import compile_adjoint_ahead, gradients_in_sight
from mlwarp.kernels.kernel import Kernel
from mlwarp.kernels.parallel_compile import compile_in_background, compiles_in_background

# Module -> the devices (aliases) on which its first launched kernel was looked up (Kernel.lookup, which its load then
# uses): once a module, a warm one included
_modules_ahead = weakref.WeakKeyDictionary()


def compile_ahead_of_first_launch(kernel, args, device) -> None:
    """Called at `kernel`'s first launch on `device`, before its own library is loaded or compiled."""
    if not device.is_cpu or device.alias in kernel._compiled:
        return
    try:
        gradients = gradients_in_sight(args)
        if gradients:
            compile_adjoint_ahead(kernel, device)
        _compile_module_ahead(kernel, device, gradients)
    except Exception:  # noqa: BLE001 (a guess: the launch goes on whatever happens here)
        pass


def _compile_module_ahead(kernel, device, gradients: bool) -> None:
    module = getattr(kernel, "module", None)
    if module is None or module.kernels.get(kernel.key) is not kernel or not compiles_in_background(device) or \
            not _compiled_with_its_module(kernel):
        return  # (a variant: a debug build, a with_adjoint library; their modules' kernels are not built so)
    devices = _modules_ahead.setdefault(module, set())
    if device.alias in devices:
        return
    devices.add(device.alias)
    if kernel.lookup(device)[1] is not None:
        return  # a module compiled before: its other kernels most likely are too (their launches load them)
    for other in list(module.kernels.values()):
        if other is kernel or not _compiled_with_its_module(other) or device.alias in other._compiled:
            continue
        try:
            compile_in_background(other, device)
            if gradients:
                compile_adjoint_ahead(other, device)
        except Exception:  # noqa: BLE001 (a kernel that cannot be compiled yet: its launch compiles it, or says why)
            continue


def _compiled_with_its_module(kernel) -> bool:
    return type(kernel) is Kernel and not kernel.is_generic and not kernel.is_library_kernel() and \
        "<locals>" not in getattr(kernel.func, "__qualname__", "<locals>")
