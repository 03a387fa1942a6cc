"""What this machine is: its CPU's feature flags, which the kernel cache key, the CPU build's ISAs
(compiler/targets/cpu/host.py) and its matmul vectors read."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def cpu_flags() -> tuple:
    """This CPU's feature flags (/proc/cpuinfo), () where there is none."""
    try:
        with open("/proc/cpuinfo", "rb") as f:  # bytes, the first CPU's block: a warm start reads this
            head = f.read(1 << 14)
    except OSError:
        return ()
    start = head.find(b"\nflags")
    end = head.find(b"\n", start + 1)
    if start < 0 or end < 0:
        return ()
    return tuple(head[start:end].partition(b":")[2].decode("ascii", "replace").split())
