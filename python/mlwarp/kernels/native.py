"""`@wp.func_native(snippet, adj_snippet=None, replay_snippet=None)`: Warp's functions written as inline C++/CUDA.

The decorated stub gives the parameter types (its annotations, `wp.ref[T]` for a reference) and the return
type; the snippet is the body of a C++ function of those parameters, with Warp's C++ names for the types
(compiler/native/warp_snippet.h). A kernel's call of such a function is a call of that C++ function,
compiled with the kernel by the machine's C++ compiler (CPU) or nvcc (CUDA) and linked with it
(compiler/native/). `adj_snippet` is the body of its adjoint, which takes the parameters, then `adj_<name>`
for each of them by reference, then `adj_ret` (Warp's convention); `replay_snippet` replaces the snippet in
the adjoint kernel's replay of the forward pass.

One kind of snippet compiles to no native code: a barrier of the block's threads alone (`WP_TILE_SYNC();` or
`__syncthreads();`), which is the block barrier mlwarp's tile lowering already has (Warp's CPU lanes meet there).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
import typing

from mlwarp.core.annotations import resolved_annotations
from mlwarp.core.errors import CompileError
from mlwarp.kernels.module import module_of
from mlwarp.kernels.subscript_annotations import refuse_unions

# Snippets that are only a barrier of the block's threads (Warp's WP_TILE_SYNC macro, CUDA's __syncthreads):
# a kernel's call of such a function is the frontend's block barrier (warp.tile_sync), nothing native
_BARRIER_SNIPPET = re.compile(r"^\s*(?:(?:WP_TILE_SYNC|__syncthreads)\s*\(\s*\)\s*;\s*)+$")


class NativeFunction:
    """A `@wp.func_native` function: its stub's parameters and return type, and its snippets."""

    _wp_native_ = True

    def __init__(self, py_func, snippet: str, adj_snippet=None, replay_snippet=None):
        self.func = py_func
        self.key = py_func.__name__
        self.native_snippet = snippet
        self.adj_native_snippet = adj_snippet
        self.replay_snippet = replay_snippet
        functools.update_wrapper(self, py_func)
        self.signature = inspect.signature(py_func)
        self.params = list(self.signature.parameters.values())
        hints = _annotations(py_func)
        refuse_unions(py_func, hints, "function")
        missing = [p.name for p in self.params if p.name not in hints]
        if missing:
            code = py_func.__code__
            raise CompileError(f"Incomplete argument annotations on function {self.key}: {', '.join(missing)} "
                               f"need(s) a type", code.co_filename, code.co_firstlineno, None, self.key)
        self.annotations = [hints[p.name] for p in self.params]
        returned = hints.get("return", None)
        self.return_annotation = None if returned is type(None) else returned
        self.filename = py_func.__code__.co_filename
        self.first_line = py_func.__code__.co_firstlineno  # the decorator's line
        # a barrier-only snippet (`@wp.func_native("WP_TILE_SYNC();")`) compiles: the block's barrier
        self._wp_native_barrier_ = bool(_BARRIER_SNIPPET.match(snippet)) and not self.params and \
            (adj_snippet is None or not adj_snippet.strip() or bool(_BARRIER_SNIPPET.match(adj_snippet)))

    def snippet_lines(self) -> dict:
        """{"snippet"/"adj_snippet"/"replay_snippet": the line of the user's file where that snippet's first line
        is, when the file holds its text verbatim (a string literal without escapes), else None}."""
        try:
            with open(self.filename, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            text = ""
        out = {}
        for kind, snippet in (("snippet", self.native_snippet), ("adj_snippet", self.adj_native_snippet),
                              ("replay_snippet", self.replay_snippet)):
            at = text.find(snippet) if snippet and snippet.strip() else -1
            out[kind] = text.count("\n", 0, at) + 1 if at >= 0 else None
        return out

    def _wp_fingerprint_(self, seen=None) -> str:
        """What a kernel's code depends on: the snippets and the stub's signature."""
        h = hashlib.sha256()
        for part in (self.native_snippet, self.adj_native_snippet, self.replay_snippet,
                     repr([(p.name, repr(a)) for p, a in zip(self.params, self.annotations)]),
                     repr(self.return_annotation)):
            h.update(f"{part}\x00".encode())
        return "native:" + h.hexdigest()[:16]

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"'{self.key}' is a @wp.func_native function (C++/CUDA source): it can be called from "
                           f"kernels and @wp.func functions only")

    def __repr__(self):
        return f"<mlwarp native function {self.key}>"


def _annotations(py_func) -> dict:
    try:
        return typing.get_type_hints(py_func)
    except Exception:  # annotations that are not types (wp.array(...) instances), or names from a closure
        return resolved_annotations(py_func)


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Decorator: `@wp.func_native("...C++...")` on a typed stub (see the module docstring)."""
    if not isinstance(snippet, str):
        raise TypeError("wp.func_native() takes the native snippet (a string): @wp.func_native(\"...\")")
    for name, value in (("adj_snippet", adj_snippet), ("replay_snippet", replay_snippet)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"wp.func_native(): {name} must be a string or None, got {type(value).__name__}")

    def wrap(py_func):
        fn = NativeFunction(py_func, snippet, adj_snippet, replay_snippet)
        # the module's kernels see the new definition (a snippet redefined under the same name: Warp recompiles)
        fn.module = module_of(py_func.__module__)
        fn.module.register_function(fn)
        return fn

    return wrap


__all__ = ["NativeFunction", "func_native"]
