"""A guess, before a kernel compiles, at how long its compile will take: the size of its code (Python's byte code), with
the @wp.func it calls, each once (a mesh query's traversal too: mlwarp's queries are @wp.func), and an adjoint
library ADJOINT_COST times its kernel's.

kernels/parallel_compile.py starts the largest of its queued compiles first. A program waits for the longest of
its background compiles (a module's kernels and their adjoints, started at its first launch): started after
smaller ones, it ends last, while started first it runs beside them (the "longest processing time first" rule for
jobs on fewer machines than jobs). Stdlib only, as captures.py: it runs before the compiler is loaded.
"""

from __future__ import annotations

from mlwarp.kernels.captures import referenced_objects

# an adjoint library (the kernel's replay and its reverse sweep) against the kernel's own, in compile time: 1.6x
# (diffray's draw_kernel) to 2.5x (its vertex_normal_sum_kernel) on 2026-12-07
ADJOINT_COST = 2.0


def estimated_cost(kernel) -> float:
    """The relative cost of compiling `kernel`'s library (a with_adjoint variant's: its adjoint's); 0 where its
    code cannot be read (a guess must not stop a compile)."""
    try:
        size = code_size(kernel.func)
    except Exception:  # noqa: BLE001
        return 0.0
    return size * ADJOINT_COST if kernel.options.get("with_adjoint") else float(size)


def code_size(func) -> int:
    """Byte code of `func` and of the overloads of every @wp.func it reaches through its calls, each once (what
    their bodies name is known already: the kernel's cache key walks the same calls, captures.py)."""
    total, seen, stack = 0, set(), [func]
    while stack:
        f = stack.pop()
        code = getattr(f, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        total += _byte_code_size(code)
        for obj in referenced_objects(f):
            if getattr(obj, "_wp_function_", False) is True and not isinstance(obj, type):
                stack.extend(o.func for o in getattr(obj, "overloads", ()))
    return total


def _byte_code_size(code) -> int:
    """Bytes of `code` and of the code it holds (comprehensions, lambdas): no source read, nothing parsed."""
    return len(code.co_code) + sum(_byte_code_size(c) for c in code.co_consts if hasattr(c, "co_code"))
