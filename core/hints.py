"""Hints for the compiler, called in kernel-language code like builtins; they change no value.

`prefetch(a[i])`: the cache line holding array element a[i] is fetched ahead of its first read (a geometry
traversal's next node or leaf, whose loads otherwise wait one after another). It reads nothing the program
sees: an index past the array's end is harmless (a prefetch cannot fault) and no bounds check applies. mlwarp's
own kernel functions use it (python/mlwarp/geometry/mesh_ray_queries.py); it is not part of Warp's API."""

from __future__ import annotations

from .intrinsics import KernelOnly


prefetch = KernelOnly("prefetch", "prefetch(a[i]): fetch the cache line of array element a[i] ahead of its read",
                      "prefetch() can only be called inside a @wp.kernel or @wp.func body", "mlwarp.core.hints")

__all__ = ["prefetch"]
