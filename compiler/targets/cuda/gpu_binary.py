"""PTX and cubin from a module lowered to NVVM (the "nvvm" CUDA stage).

PTX comes from `gpu-module-to-binary{format=isa}` (LLVM's NVPTX backend; math
calls resolved by linking libdevice). The cubin is assembled from that PTX by
`ptxas -arch=sm_XX`, the same tool `format=bin` would call, so one LLVM code
generation gives both files. A kernel whose PTX still names an external
function (a libdevice function that was not linked, say) is refused here: the
driver would only fail later, at load time, on the GPU machine."""

from __future__ import annotations

import re
import subprocess

from mlir import ir
from mlir.dialects import gpu
from mlir.passmanager import PassManager

from .cuda_tools import WHERE, ptxas_path

_EXTERN = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([A-Za-z0-9_$.]+)", re.M)


class GpuCompileError(RuntimeError):
    """PTX or cubin generation failed; the message says which tool and why."""


def emit_ptx(module: ir.Module, defined_later=frozenset()) -> bytes:
    """Runs gpu-module-to-binary{format=isa} on `module` (in its context) and returns the PTX text. Functions in
    `defined_later` (the @wp.func_native entry points, which splice_ptx adds) may stay external."""
    pm = PassManager.parse("builtin.module(gpu-module-to-binary{format=isa})")
    pm.run(module.operation)
    binaries = [op for op in module.body.operations if op.operation.name == "gpu.binary"]
    if len(binaries) != 1:
        raise GpuCompileError(f"expected one gpu.binary after gpu-module-to-binary, found {len(binaries)}")
    ptx = gpu.ObjectAttr(binaries[0].attributes["objects"][0]).object
    check_ptx(ptx, defined_later)
    return ptx


# Device functions the CUDA driver itself provides: PTX's system calls (print -> vprintf; malloc/free: the device
# heap, which a tile buffer carried through a loop under a branch is allocated from)
_DRIVER_FUNCTIONS = {"vprintf", "malloc", "free"}


def check_ptx(ptx: bytes, defined_later=frozenset()) -> None:
    unresolved = [f for f in _EXTERN.findall(ptx.decode("utf-8", "replace"))
                  if f not in _DRIVER_FUNCTIONS and f not in defined_later]
    if unresolved:
        raise GpuCompileError(f"PTX calls external function(s) {sorted(set(unresolved))} that no library "
                              f"defines (libdevice, which the MLIR wheel embeds, has no such function: a builtin lowered "
                              f"to a libm call the GPU target lacks)")


def assemble_cubin(ptx_path: str, arch: int, out_path: str) -> None:
    """ptxas -arch=sm_<arch> -O3; raises GpuCompileError with ptxas' own message when it refuses the PTX."""
    ptxas = ptxas_path()
    if ptxas is None:
        raise GpuCompileError(f"ptxas was not found ({WHERE})")
    r = subprocess.run([ptxas, f"-arch=sm_{arch}", "-O3", ptx_path, "-o", out_path], capture_output=True, text=True)
    if r.returncode != 0:
        raise GpuCompileError(f"ptxas -arch=sm_{arch} rejected {ptx_path}:\n{r.stderr.strip()}")
