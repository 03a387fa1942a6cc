"""Compile-time values: `wp.constant` and `wp.static`.

`wp.constant(x)` marks a module-level value for kernels and returns it: as in
Warp, kernels capture globals by value when their module is built; a constant
changed later is seen once the module is modified (a kernel or function
defined in it, `Module.mark_modified()`, new options, a reload).
`wp.static(expr)` inside a kernel or function is evaluated in Python when the
kernel or function is declared (core/statics.py), with its globals and
closure, unless it names a variable of an enclosing `for` loop or a local:
then when it compiles, seeing the constant locals too. Its value becomes a
constant (or, when it is a function, the function called:
`wp.static(funcs[k])(x)`). In Python scope it returns its argument.
"""

from __future__ import annotations

from mlwarp.core import types as wt


def constant(x):
    """Warp's `wp.constant`: a value (scalar, vector, matrix...) kernels may read; returned unchanged."""
    ok = isinstance(x, (bool, int, float, wt.scalar_base)) or wt.is_composite(type(x))
    if not ok:
        raise TypeError(f"Invalid constant type: {type(x)}")  # Warp's message (a scalar or composite is valid)
    return x


def static(expr):
    """In a kernel: `expr` evaluated at compile time. In Python scope: `expr` itself."""
    return expr


static._wp_static_ = True
