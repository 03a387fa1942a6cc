"""What this CPU offers the CPU build: the libmvec ISAs (warp-cpu-vector-math's default, and the no-AVX-512 table's
`isa`). Imports no MLIR: the stage table reads it when it is built."""

from __future__ import annotations

import functools
import os

from mlwarp.core.host import cpu_flags

_HOST_FLAGS = {"sse4": "sse4_1", "avx2": "avx2", "avx512": "avx512f"}
_LIB_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")


@functools.lru_cache(maxsize=None)
def libmvec_path() -> str | None:
    for d in _LIB_DIRS:
        path = os.path.join(d, "libmvec.so.1")
        if os.path.exists(path):
            return path
    return None


@functools.lru_cache(maxsize=None)
def host_isas() -> tuple:
    """The ISAs of this CPU that libmvec has variants for; none without libmvec."""
    if os.uname().machine != "x86_64" or libmvec_path() is None:
        return ()
    return tuple(isa for isa, flag in _HOST_FLAGS.items() if flag in cpu_flags())
