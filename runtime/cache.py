"""The on-disk kernel cache.

An entry is a folder `<cache>/<key>/` holding the compiled files and
`meta.json` (each file's sha256). Entries are written into a temporary folder
and renamed into place, so concurrent compiles of one key leave one complete
entry; an entry whose files do not match their checksums is removed and
rebuilt, never loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings

from mlwarp.core.config import config

META = "meta.json"


def default_dir() -> str:
    return (config.kernel_cache_dir or os.environ.get("MLWARP_CACHE_DIR")
            or os.path.join(os.path.expanduser("~"), ".cache", "mlwarp"))


def library_dir() -> str:
    """The library cache: mlwarp's own kernels (the geometry structures' build and refit kernels), compiled ahead
    when mlwarp is installed (`python -m mlwarp.kernels.precompile`, run by scripts/setup-env.sh), as Warp ships
    its mesh and BVH code compiled in its wheel. It belongs to the installation (the environment's share/ folder),
    not to the user: wp.clear_kernel_cache() and an empty MLWARP_CACHE_DIR leave it, and launches only read it (an
    installation owned by another user works as well). Its entries have the kernel cache's keys, which hold the
    compiler fingerprint: after a compiler change they miss, and the kernels compile into the kernel cache as any
    other kernel. MLWARP_LIBRARY_CACHE_DIR names another folder."""
    return (os.environ.get("MLWARP_LIBRARY_CACHE_DIR")
            or os.path.join(sys.prefix, "share", "mlwarp", "kernel-library"))


def lookup_library(key: str) -> dict | None:
    """The library cache's valid entry for `key` (with "dir"), or None. Read only: a corrupt entry is skipped,
    not removed (the folder may not be this user's). wp.config.cache_kernels = False finds nothing here too."""
    if not config.cache_kernels:
        return None
    return lookup(key, library_dir(), remove_corrupt=False)


_fallback_dir = None


def cache_dir() -> str:
    """The cache folder, created if needed; an unwritable one falls back to a temporary folder."""
    global _fallback_dir
    d = default_dir()
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    if _fallback_dir is None:
        _fallback_dir = tempfile.mkdtemp(prefix="mlwarp-cache-")
        warnings.warn(f"mlwarp: kernel cache folder '{d}' is not writable; using '{_fallback_dir}'", RuntimeWarning,
                      stacklevel=3)
    return _fallback_dir


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def lookup(key: str, root: str | None = None, remove_corrupt: bool = True) -> dict | None:
    """The metadata of a valid entry (with "dir" added), or None; a corrupt entry is removed (unless
    `remove_corrupt` is False). `root`: another folder of entries (an AOT module_dir, the library cache) instead
    of the cache. wp.config.cache_kernels = False
    (Warp's): nothing is found in the cache, so every kernel is compiled again (and its entry replaced)."""
    if root is None and not config.cache_kernels:
        return None
    entry = os.path.join(root or cache_dir(), key)
    try:
        with open(os.path.join(entry, META)) as f:
            meta = json.load(f)
        for name, digest in meta["files"].items():
            if _sha256(os.path.join(entry, name)) != digest:
                raise ValueError(f"checksum mismatch in {name}")
    except FileNotFoundError:
        if remove_corrupt and os.path.isdir(entry) and not os.path.exists(os.path.join(entry, META)):
            _remove(entry)
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        if not remove_corrupt:
            warnings.warn(f"mlwarp: skipping corrupt kernel cache entry {entry}: {e}", RuntimeWarning, stacklevel=3)
            return None
        warnings.warn(f"mlwarp: discarding corrupt kernel cache entry {key}: {e}", RuntimeWarning, stacklevel=3)
        _remove(entry)
        return None
    meta["dir"] = entry
    return meta


def store(key: str, build, root: str | None = None) -> dict:
    """Builds an entry with `build(folder) -> metadata` (its "files": the names written) and moves it
    into place atomically, in the cache or in `root`."""
    if root:
        os.makedirs(root, exist_ok=True)
    root = root or cache_dir()
    tmp = tempfile.mkdtemp(prefix=f".{key}.", dir=root)
    try:
        meta = build(tmp)
        meta["files"] = {n: _sha256(os.path.join(tmp, n)) for n in meta["files"]}
        with open(os.path.join(tmp, META), "w") as f:
            json.dump(meta, f)
        final = os.path.join(root, key)
        try:
            os.rename(tmp, final)
        except OSError:  # another process won the race, or a stale entry is in the way
            existing = lookup(key, root)
            if existing is not None:
                return existing
            _remove(final)
            os.rename(tmp, final)
    finally:
        if os.path.isdir(tmp):
            _remove(tmp)
    meta["dir"] = final
    return meta


def _remove(path: str) -> None:
    # rename first, so that a reader never sees a half-deleted entry under the key
    trash = f"{path}.trash.{os.getpid()}"
    try:
        os.rename(path, trash)
    except OSError:
        trash = path
    shutil.rmtree(trash, ignore_errors=True)


# A temporary entry folder younger than this is a build in flight (in this process or another one sharing the
# cache): clearing the cache leaves it, or that build would lose the folder it is writing its objects into. An
# older one was left by a process that died mid-build.
IN_FLIGHT_SECONDS = 3600.0


def _in_flight(path: str, name: str) -> bool:
    if not name.startswith(".") or ".trash." in name:
        return False
    try:
        return time.time() - os.stat(path).st_mtime < IN_FLIGHT_SECONDS
    except OSError:
        return False


def clear() -> None:
    """Removes every entry (and whatever else is in the cache folder) but the builds in flight."""
    root = cache_dir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        path = os.path.join(root, name)
        if _in_flight(path, name):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            _remove(path)
        else:
            try:
                os.remove(path)
            except OSError:
                pass


def size_bytes() -> int:
    total = 0
    for dirpath, _, files in os.walk(cache_dir()):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
    return total
