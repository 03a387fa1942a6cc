"""Compile-time name resolution: what a name or `a.b.c` in a kernel refers to in Python."""

from __future__ import annotations

import ast
import enum
import builtins as py_builtins
import sys

from mlwarp.core import statics
from mlwarp.core import types as wt
from mlwarp.core import vector as wv
from mlwarp.core.intrinsics import KernelOnly

_MISSING = object()


class Denoted(ast.Name):
    """A name the frontend synthesizes that denotes `obj` whatever the user's scopes hold: its own calls of a known
    function (a `for` loop over a query variable calls the query's next function through one)."""

    def __init__(self, obj, **location):
        super().__init__(id=f"$denoted_{getattr(obj, '__name__', 'object')}", ctx=ast.Load(), **location)
        self.obj = obj


def closure_vars(func) -> dict:
    cells = func.__closure__ or ()
    out = {}
    for name, cell in zip(func.__code__.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an unfilled cell
            pass
    return out


def lookup(func, name: str):
    """The object `name` denotes in `func`'s closure, globals or Python's builtins, else the Warp builtin or
    type of that name (`expect_eq(...)`, `vec3(...)` without `wp.`, as Warp resolves them); _MISSING if none."""
    scopes = (closure_vars(func), func.__globals__, vars(py_builtins))
    for scope in scopes:
        if name in scope:
            return scope[name]
    return warp_name(name)


_KERNEL_CALLABLE = ("_wp_builtin_", "_wp_intrinsic_", "_wp_function_", "_wp_stateful_", "_wp_scalar_type_",
                    "_wp_tile_", "_wp_dtype_dispatch_")


def warp_name(name: str):
    """`wp.<name>` when it is something kernels call (a builtin, an intrinsic, a @wp.func, a Warp type).
    Read from the loaded user API (sys.modules: the kernel being compiled was defined through it), not imported:
    the compiler stays below the API."""
    api = sys.modules.get("mlwarp")
    obj = getattr(api, name, _MISSING) if api is not None and not name.startswith("_") else _MISSING
    if obj is _MISSING:
        return _KERNEL_ONLY.get(name, _MISSING)
    if wt.is_scalar(obj) or wt.is_composite(obj) or any(getattr(obj, a, None) for a in _KERNEL_CALLABLE):
        return obj
    return _MISSING


# Warp builtins that kernels call as `wp.<name>` although the package has no such attribute: the anonymous
# constructors (`wp.matrix(1.0, 2.0, 3.0, 4.0, shape=(2, 2))`), which are `wp.types.<name>` at Python scope,
# and Python's scalar names spelt through wp (`wp.float(0.0)`, `wp.int(n)`: float32 and int32, as in Warp).
_KERNEL_ONLY = {"vector": wv.vector, "matrix": wv.matrix, "quaternion": wv.quaternion,
                "transformation": wv.transformation, "float": wt.float32, "int": wt.int32, "len": len,
                "cast": KernelOnly("cast", "cast(a, dtype): a's bits read as a dtype of the same size"),
                "breakpoint": KernelOnly("breakpoint", "breakpoint(): stops in an attached debugger")}


def resolve_path(func, node: ast.AST):
    """Resolves `Name` / `Attribute` chains (`wp.sin`, `math.pi`) to a Python object, or _MISSING;
    `wp.static(expr)` resolves to the value of `expr`."""
    if isinstance(node, Denoted):
        return node.obj
    if is_static_call(func, node):
        return static_value(func, node)
    if isinstance(node, ast.Name):
        return lookup(func, node.id)
    if isinstance(node, ast.Attribute):
        base = resolve_path(func, node.value)
        if base is _MISSING:
            return _MISSING
        obj = getattr(base, node.attr, _MISSING)
        if node.attr in _KERNEL_ONLY and base is sys.modules.get("mlwarp") and \
                (obj is _MISSING or isinstance(obj, type(sys))):  # wp.matrix: no attribute; wp.vector: a module
            return _KERNEL_ONLY[node.attr]  # a builtin only kernels have
        return obj
    return _MISSING


def missing_function_message(func, node: ast.AST) -> str:
    """Warp's text for a call of a name or path that resolves to nothing: the first missing part of `wp.foo.bar.tid`
    when it is not the last, else the whole path."""
    if isinstance(node, ast.Attribute):
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node)
            node = node.value
        for part in reversed(chain[1:]):  # the intermediates, outermost base first
            base = resolve_path(func, part.value)
            if base is not _MISSING and resolve_path(func, part) is _MISSING:
                return f"Error, `{part.attr}` is not an attribute of '{dotted_name(part.value)}'"
        node = chain[0]
    return (f"Could not find function {dotted_name(node)} as a built-in or user-defined function. Note that user "
            "functions must be annotated with a @wp.func decorator to be called from a kernel.")


def dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted_name(node.value)}.{node.attr}"
    return type(node).__name__


MISSING = _MISSING


# Python functions that stand for builtins inside kernels, as in Warp: Python's abs/min/max/pow/round and
# the `math` module's functions, by the table name they share (plus math's C spellings fabs and fmod).
_PYTHON_ALIASES = {"fabs": "abs", "fmod": "mod"}
_python_functions: dict | None = None


def python_function_builtin(obj) -> str | None:
    """The builtin table entry a Python builtin or `math` function denotes in a kernel, or None."""
    global _python_functions
    if _python_functions is None:
        import math

        from ..builtins import BUILTINS

        found = {}
        for module in (math, py_builtins):
            for name in dir(module):
                target = _PYTHON_ALIASES.get(name, name)
                fn = getattr(module, name)
                if target in BUILTINS and callable(fn) and not isinstance(fn, type):
                    found.setdefault(id(fn), target)
        _python_functions = found
    return _python_functions.get(id(obj))


class StaticError(Exception):
    """A wp.static() expression that Python could not evaluate; the frontend reports it at the call."""


def is_static_call(func, node) -> bool:
    """`wp.static(...)`: a call resolved at declaration (even if its alias was rebound since), or whose callee is
    wp.static now."""
    return isinstance(node, ast.Call) and (statics.declared(func, node) is not statics.MISSING or
                                           # (a callee that is itself a call, wp.static(fs[i])(x), is not
                                           # wp.static: not evaluated here, where loop constants are unseen)
                                           not isinstance(node.func, ast.Call) and
                                           getattr(resolve_path(func, node.func), "_wp_static_", False) is True)


def static_value(func, node: ast.Call, local_values=None):
    """`wp.static(expr)`'s value: the one it took when the function was declared (core/statics.py), else
    `expr` evaluated in Python now, with the function's globals and closure, and the `local_values` the caller
    gives (constant locals, loop variables, tuple and tile locals, so `wp.static(len(t))` works). Errors in
    Warp's words."""
    if len(node.args) != 1 or node.keywords:
        raise StaticError("warp.static() requires a single argument or keyword")
    found = statics.declared(func, node)
    if found is not statics.MISSING:  # evaluated when the function was declared (Warp's rule)
        return _checked_static(found, node)
    expr = ast.Expression(node.args[0])
    ast.fix_missing_locations(expr)
    try:
        value = eval(compile(expr, func.__code__.co_filename, "eval"), func.__globals__,  # noqa: S307
                     {**closure_vars(func), **(local_values or {})})
    except NameError as e:
        raise StaticError(f"Error evaluating static expression: {e}. Make sure all variables used in the static "
                          f"expression are constant.") from None
    except Exception as e:
        raise StaticError(f"Error evaluating static expression: {e} while evaluating the following code generated "
                          f"from the static expression:\n{ast.unparse(node.args[0])}") from None
    return _checked_static(value, node)


def _checked_static(value, node):
    """Warp's checks of a static value: an IntEnum is its int; None and arrays cannot be kernel values."""
    if isinstance(value, enum.IntEnum | enum.IntFlag):
        return int(value)
    why = "None is returned" if value is None else \
        "a Warp array cannot be created inside Warp kernels" if wt.is_array(value) else None
    if why is not None:
        raise StaticError(f"Static expression returns an unsupported value: {why} while evaluating the following code "
                          f"generated from the static expression:\n{ast.unparse(node.args[0])}")
    return value
