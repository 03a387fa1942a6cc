"""`@wp.func_native(snippet, adj_snippet=None, replay_snippet=None)`: Warp's functions written as inline C++/CUDA.

mlwarp compiles kernels through MLIR (Python -> warp dialect -> LLVM / NVVM); it has no C++ compiler stage a
snippet could be pasted into. One kind of snippet compiles: a barrier of the block's threads alone
(`WP_TILE_SYNC();` or `__syncthreads();`, taking no arguments), which is the block barrier mlwarp's tile
lowering already has. Decorating works, so modules that define native functions import; calling one
from a kernel or a function is a CompileError naming the function and saying why, and calling it from Python
a RuntimeError.
"""

from __future__ import annotations

import functools
import re

# Snippets that are only a barrier of the block's threads (Warp's WP_TILE_SYNC macro, CUDA's __syncthreads):
# a kernel's call of such a function is the frontend's block barrier (warp.tile_sync), nothing native
_BARRIER_SNIPPET = re.compile(r"^\s*(?:(?:WP_TILE_SYNC|__syncthreads)\s*\(\s*\)\s*;\s*)+$")


class NativeFunction:
    """A `@wp.func_native` stub: its snippets are kept; it cannot be called."""

    def __init__(self, py_func, snippet: str, adj_snippet=None, replay_snippet=None):
        self.func = py_func
        self.key = py_func.__name__
        self.native_snippet = snippet
        self.adj_native_snippet = adj_snippet
        self.replay_snippet = replay_snippet
        functools.update_wrapper(self, py_func)
        # a barrier-only snippet (`@wp.func_native("WP_TILE_SYNC();")`) compiles: the block's barrier
        self._wp_native_barrier_ = bool(_BARRIER_SNIPPET.match(snippet)) and \
            (adj_snippet is None or not adj_snippet.strip() or bool(_BARRIER_SNIPPET.match(adj_snippet)))
        # the frontend raises this message as a CompileError where a kernel calls the function
        self._wp_removed_ = (f"'{self.key}' is a @wp.func_native function (inline C++/CUDA source): mlwarp "
                             f"compiles kernels through MLIR and cannot compile native snippets; write "
                             f"'{self.key}' as a @wp.func instead")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(self._wp_removed_)

    def __repr__(self):
        return f"<mlwarp native function {self.key}>"


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Decorator: `@wp.func_native("...C++...")` on a typed stub. See the module docstring: such functions
    cannot be called in mlwarp."""
    if not isinstance(snippet, str):
        raise TypeError("wp.func_native() takes the native snippet (a string): @wp.func_native(\"...\")")

    def wrap(py_func):
        return NativeFunction(py_func, snippet, adj_snippet, replay_snippet)

    return wrap


__all__ = ["NativeFunction", "func_native"]
