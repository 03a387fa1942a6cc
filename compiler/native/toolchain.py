"""Compiling a kernel's @wp.func_native snippets: an object file for the CPU (the host's C++ compiler: $CXX, else
g++, c++ or clang++; `__CUDA_ARCH__` undefined), PTX for CUDA (nvcc -ptx -rdc: the functions stay callable from the
kernel's PTX, which splice_ptx joins them to). A snippet that does not compile is a CompileError naming the user's
file and line (the #line directives of source.py) with the compiler's own message."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile

from mlwarp.core.errors import CompileError

from .source import HEADER_DIR, NativeSpec, translation_unit

RECORD_ATTR = "warp.native_functions"  # on the module: {symbol: NativeSpec.record()} (frontend/native_calls.py)
CPU_OBJECT = "native.o"
_HOST_COMPILERS = ("g++", "c++", "clang++")
# CUDA 13's wheel layout under site-packages/nvidia/, then CUDA 12's
_WHEEL_NVCC = ("cu13/bin/nvcc", "cuda_nvcc/bin/nvcc")


def host_compiler() -> str | None:
    given = os.environ.get("CXX")
    if given:
        return given
    return next((found for c in _HOST_COMPILERS if (found := shutil.which(c))), None)


def nvcc_path() -> str | None:
    given = os.environ.get("MLWARP_NVCC")
    if given:
        return given
    spec = importlib.util.find_spec("nvidia")
    for folder in (spec.submodule_search_locations if spec else ()):
        for rel in _WHEEL_NVCC:
            path = os.path.join(folder, rel)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return None


def specs_of(records: dict) -> list:
    return [NativeSpec.from_record(r) for _, r in sorted(records.items())]


def native_entry_points(records: dict) -> frozenset:
    """The symbols the kernel may call: each function's entry, adjoint and replay."""
    out = set()
    for spec in specs_of(records):
        out.add(spec.symbol)
        if spec.has_adjoint:
            out.add(spec.adjoint_symbol)
        if spec.has_replay:
            out.add(spec.replay_symbol)
    return frozenset(out)


# `file:line:col: error: message` (gcc, clang) and `file(line): error: message` (nvcc's front end)
_DIAGNOSTIC = re.compile(r'^(?P<file>[^:\n(]+?)(?::(?P<line>\d+)(?::\d+)?|\((?P<line2>\d+)\)):\s*(?:fatal )?error:?\s*'
                         r'(?P<message>.*)$', re.M)


def compile_error(specs, output: str, tool: str) -> CompileError:
    """The compiler's complaint about the snippets as a CompileError at the first error's place in the user's file
    (the first snippet's decorator when the compiler names no user line)."""
    users = {os.path.abspath(s.filename): s for s in specs}
    for m in _DIAGNOSTIC.finditer(output):
        path = os.path.abspath(m.group("file").strip())
        if path in users:
            line = int(m.group("line") or m.group("line2"))
            spec = users[path]
            return CompileError(f"the native snippet of '{spec.name}' does not compile ({tool}): "
                                f"{m.group('message').strip()}\n{output.strip()}", spec.filename, line,
                                None, spec.name)
    spec = specs[0]
    return CompileError(f"the native snippets do not compile ({tool}):\n{output.strip()}", spec.filename, spec.line,
                        None, spec.name)


def _run(cmd, specs, tool) -> None:
    try:
        # (the C locale: plain quotes in the messages, which the CompileError carries)
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    except FileNotFoundError:
        raise CompileError(f"compiling the native snippets needs {tool}; '{cmd[0]}' was not found",
                           specs[0].filename, specs[0].line, None, specs[0].name) from None
    if r.returncode != 0:
        raise compile_error(specs, r.stderr + r.stdout, tool)


def compile_cpu_object(records: dict, out_dir: str) -> str:
    """Compiles the snippets for the host into `out_dir`/native.o; returns its path."""
    specs = specs_of(records)
    cxx = host_compiler()
    if cxx is None:
        raise CompileError("compiling @wp.func_native snippets for the CPU needs a C++ compiler (g++, c++ or "
                           "clang++ on PATH, or $CXX)", specs[0].filename, specs[0].line, None, specs[0].name)
    source = os.path.join(out_dir, "native.cpp")
    with open(source, "w") as f:
        f.write(translation_unit(specs, source))
    obj = os.path.join(out_dir, CPU_OBJECT)
    try:
        _run([cxx, "-std=c++17", "-O2", "-fPIC", "-fno-exceptions", "-w", "-I", HEADER_DIR, "-c", source, "-o", obj],
             specs, os.path.basename(cxx))
    finally:
        os.remove(source)
    return obj


def compile_ptx(records: dict, arch: int) -> bytes:
    """The snippets compiled by nvcc for sm_<arch>, as PTX whose entry points the kernel's PTX calls."""
    specs = specs_of(records)
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("compiling @wp.func_native snippets for CUDA needs nvcc (the nvidia-cuda-nvcc wheel, "
                           "$MLWARP_NVCC, PATH, $CUDA_HOME or /usr/local/cuda)", specs[0].filename, specs[0].line,
                           None, specs[0].name)
    with tempfile.TemporaryDirectory(prefix="mlwarp-native-") as tmp:
        source = os.path.join(tmp, "native.cu")
        with open(source, "w") as f:
            f.write(translation_unit(specs, source))
        out = os.path.join(tmp, "native.ptx")
        _run([nvcc, "-ptx", "-rdc=true", f"-arch=sm_{arch}", "-std=c++17", "-w", "-I", HEADER_DIR, source, "-o", out],
             specs, "nvcc")
        with open(out, "rb") as f:
            return f.read()


_HEADER_LINE = re.compile(r"^\s*\.(version|target|address_size)\b.*$", re.M)


def splice_ptx(kernel_ptx: bytes, native_ptx: bytes, symbols) -> bytes:
    """One PTX module: the kernel's, its `.extern .func` declarations of the native entry points replaced by the
    native PTX's definitions (placed after the kernel's header; the higher of the two PTX ISA versions)."""
    kernel, native = kernel_ptx.decode(), native_ptx.decode()
    for sym in symbols:
        kernel = re.sub(r"\.extern\s+\.func\s+(?:\([^)]*\)\s*)?" + re.escape(sym) + r"\s*(?:\([^)]*\))?\s*;", "",
                        kernel)
    versions = [tuple(int(x) for x in m) for m in re.findall(r"^\s*\.version\s+(\d+)\.(\d+)", kernel + "\n" + native,
                                                             re.M)]
    body = _HEADER_LINE.sub("", native)
    last = list(_HEADER_LINE.finditer(kernel))[-1]
    kernel = kernel[:last.end()] + "\n" + body + "\n" + kernel[last.end():]
    if versions:
        major, minor = max(versions)
        kernel = re.sub(r"^(\s*)\.version\s+\d+\.\d+", rf"\g<1>.version {major}.{minor}", kernel, count=1, flags=re.M)
    return kernel.encode()
