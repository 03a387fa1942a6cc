"""A shared library from an LLVM-dialect module: the runtime's and the compiler's own native helpers (the CPU thread
pool, runtime/cpu_pool.py; the passes' op finder, compiler/passes/op_finder.py), built by the kernels' LLVM and
linker once per machine, into the library cache or the kernel cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from mlir import ir


def build(source: str, path: str, write_object) -> None:
    """Compiles the LLVM-dialect module `source` with `write_object` (compiler/targets/cpu/object_code.py, passed in:
    the passes below it cannot import it) and links it into the shared library `path`, written next to it and
    renamed into place (whole or not at all: another process may be building it too)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    name = os.path.splitext(os.path.basename(path))[0]
    tmp = tempfile.mkdtemp(prefix=f".{name}.", dir=folder)
    try:
        context = ir.Context(load_on_create_dialects=[])
        context.enable_multithreading(False)
        with context, ir.Location.unknown():
            context.get_dialect_descriptor("llvm")
            obj = os.path.join(tmp, f"{name}.o")
            write_object(ir.Module.parse(source), obj)
        so = os.path.join(tmp, f"{name}.so")
        ld = None if os.environ.get("CC") else shutil.which("ld")
        subprocess.run([ld or os.environ.get("CC", "cc"), "-shared", "-o", so, obj], check=True, capture_output=True)
        os.replace(so, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
