"""The compiler's part of the kernel cache key: a hash of the sources that decide generated code and of the
MLIR/LLVM distributions that compile it, computed once a process.

A warm first launch spends most of its time here (one `os.stat` of each of ~350 sources: core/stamps.py), so
the package starts computing it in a thread of its own when its user API loads (`prefetch`): the stats release
the interpreter's lock, and the API's imports, which wait on files too, leave the thread room to finish before
the first launch asks for the result. Imports only the standard library and mlwarp.core.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading

from mlwarp import _source_layout
from mlwarp.core.stamps import dist_info_folders, per_file, source_digest, source_stamps

# The distributions that compile kernels: mlwarp's `compiler` extra (pyproject.toml) names them.
_COMPILER_EXTRA = "compiler"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:==\s*([^;,\s]+))?[^;]*"
                          r";\s*extra\s*==\s*[\"']([^\"']+)[\"']\s*$")


def _code_roots() -> list:
    """(label, folder) of the sources that decide what code a kernel compiles to: the compiler, the runtime
    (the launch ABI, the error-record layout warp-bounds-check writes) and mlwarp's own modules that the
    compiler reads (types, vector, func, struct, source, captures, ...). Found without importing the compiler."""
    import importlib.util

    return [("mlwarp", importlib.util.find_spec("mlwarp").submodule_search_locations[0])] + [
        (sub, importlib.util.find_spec(f"mlwarp.{sub}").submodule_search_locations[0])  # not imported
        for sub in ("core", "compiler", "runtime")]


@functools.lru_cache(maxsize=None)
def _compiler_fingerprint() -> str:
    """Hash of the sources that decide generated code (_code_roots; they travel with the package, MLIR need
    not be installed) and of the versions of the MLIR/LLVM distributions that compile it."""
    # size and mtime, not contents: a warm start stats ~350 files and reads none (core/stamps.py); an installed
    # mlwarp holds compiler/ and runtime/, each walked under its own label
    stamps = source_stamps(_code_roots())
    toolchain = ";".join(f"{name}=={version}" for name, version in _toolchain())
    return hashlib.sha256(f"{toolchain}\n{';'.join(stamps)}".encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def _portable_compiler_fingerprint() -> str:
    """_compiler_fingerprint by the sources' contents, not their mtimes: the key of CUDA entries, which are
    compiled on one machine and loaded on another (a GPU machine without MLIR, with its own checkout of the
    same sources). Reads the ~2 MB of sources once a process, only when a CUDA kernel is looked up."""
    toolchain = ";".join(f"{name}=={version}" for name, version in _toolchain())
    return hashlib.sha256(f"{toolchain}\n{source_digest(_code_roots())}".encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def _toolchain() -> tuple:
    """((distribution, version), ...) of the distributions that compile kernels (the MLIR bindings and LLVM),
    from their installed metadata. Where one is not installed (a machine that only loads cached kernels), the
    version mlwarp's `compiler` extra pins: what compiled the entries it finds, unless another was installed
    there."""
    found = []
    for name, pinned in _compiler_requirements():
        installed = _installed_metadata(name).get("Version")
        found.append((name, installed[0] if installed else pinned or "not installed"))
    if not found:  # mlwarp run from a source tree, without its metadata: ask importlib (slow, complete)
        from importlib import metadata

        provided = metadata.packages_distributions()
        found = [(name, metadata.version(name)) for top in ("mlir", "llvm") for name in provided.get(top, ())]
    return tuple(sorted(set(found)))


def _compiler_requirements() -> list:
    """[(distribution, pinned version or None)] of mlwarp's `compiler` extra, from its installed metadata
    (memoised with the file: core/stamps.py)."""
    folder = _dist_info_folders().get("mlwarp")
    if not folder:  # a checkout put on sys.path without installing it: the pins of its pyproject.toml
        return _checkout_compiler_requirements()

    def parse(path):
        found = []
        for line in _metadata_headers(path).get("Requires-Dist", []):
            m = _REQUIREMENT.match(line)
            if m and m.group(3) == _COMPILER_EXTRA:
                found.append((m.group(1), m.group(2)))
        return found

    return per_file(os.path.join(folder, "METADATA"), parse, "requirements")


def _checkout_compiler_requirements() -> list:
    """[(distribution, pinned version or None)] of the `compiler` extra in the checkout's pyproject.toml, when
    mlwarp runs from a checkout that was not installed (bench/gpu_smoke.py on a GPU machine)."""
    root = _source_layout.checkout_root()
    if root is None:
        return []
    path = os.path.join(root, "pyproject.toml")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    extra = re.search(rf"^{_COMPILER_EXTRA}\s*=\s*\[(.*?)\]", text, re.M | re.S)
    if extra is None:
        return []
    found = []
    for requirement in re.findall(r"[\"']([^\"']+)[\"']", extra.group(1)):
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:==\s*([^;,\s]+))?", requirement)
        if m:
            found.append((m.group(1), m.group(2)))
    return found


def _installed_metadata(name: str) -> dict:
    """The header fields ({"Version": [...], "Requires-Dist": [...]}) of `name`'s installed metadata, the first
    `<name>-<version>.dist-info` on sys.path as importlib.metadata finds it; {} when there is none. Read here,
    not through importlib.metadata, whose import (the email package) would cost a warm start ~30 ms."""
    folder = _dist_info_folders().get(_normalized(name))
    return per_file(os.path.join(folder, "METADATA"), _metadata_headers) if folder else {}


@functools.lru_cache(maxsize=None)
def _dist_info_folders() -> dict:
    """normalized distribution name -> its .dist-info folder, the first on sys.path (one listing per entry,
    memoised while the entries keep their mtimes: core/stamps.py)."""
    return dist_info_folders(_normalized)


def _normalized(name: str) -> str:
    """PEP 503's re.sub(r"[-_.]+", "-", name).lower(), without compiling a pattern on a warm start."""
    name = name.lower().replace("_", "-").replace(".", "-")
    while "--" in name:
        name = name.replace("--", "-")
    return name


def _metadata_headers(path: str) -> dict:
    fields = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break  # the headers end here; the description follows
                key, sep, value = line.partition(":")
                if sep and not line[0].isspace():
                    fields.setdefault(key.strip(), []).append(value.strip())
    except OSError:
        return {}
    return fields


# held while the fingerprint is computed: the first launch waits for a prefetch in flight instead of computing it
# again, and a fork waits for it too (a child must not inherit the memo half updated, or a lock no thread frees)
_computing = threading.Lock()
os.register_at_fork(before=_computing.acquire, after_in_parent=_computing.release,
                    after_in_child=_computing.release)


def compiler_fingerprint() -> str:
    """The cache key's hash of the compiler's sources and toolchain (_compiler_fingerprint), computed once."""
    with _computing:
        return _compiler_fingerprint()


def portable_compiler_fingerprint() -> str:
    """The CUDA cache key's hash, by the sources' contents (_portable_compiler_fingerprint)."""
    with _computing:
        return _portable_compiler_fingerprint()


def prefetch() -> None:
    """Starts computing compiler_fingerprint() in a daemon thread; the first kernel lookup waits for it."""
    threading.Thread(target=compiler_fingerprint, name="mlwarp-fingerprint", daemon=True).start()
