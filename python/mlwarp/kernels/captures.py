"""What a kernel's or function's code captures from Python, for the kernel cache key.

The frontend folds captured globals and closure variables into the IR as
compile-time values (Warp's rule), and resolves the functions a kernel calls
by the objects its names denote. So the cache key hashes, for every name and
dotted path (`wp.sin`, `params.scale`) the body refers to, a fingerprint of
the object it denotes now: a changed constant, or a closure that binds
another builtin or @wp.func, gives another key and a recompile.

Stdlib only: computing a key must not load the compiler.
"""

from __future__ import annotations

import ast
import builtins as py_builtins
import hashlib
import inspect

from mlwarp.core import types as wt
from mlwarp.core import statics
from mlwarp.core.stamps import per_text
from mlwarp.core.source import function_source, per_code

_MISSING = object()


def _source(func) -> str:
    try:
        return function_source(func).text
    except (OSError, TypeError, SyntaxError):
        return func.__code__.co_code.hex()


def _scopes(func):
    cells = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:
            pass
    return cells, func.__globals__, vars(py_builtins)


def _lookup(scopes, name):
    for scope in scopes:
        if name in scope:
            return scope[name]
    return _MISSING


def _local_names(tree) -> set:
    """The function's parameters, and the names whose first use in the source is an assignment: the body's
    own variables, which capture nothing (a global of the same name may change at every launch: a loop
    variable `t`, say). A name read before it is assigned stays a capture: the frontend resolves that read
    in Python's scopes."""
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return set()
    a = fn.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg)))}
    first = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            where = (node.lineno, node.col_offset)
            if node.id not in first or where < first[node.id][0]:
                first[node.id] = (where, node.ctx)
    # `x = x + 1`: the target comes first in the text but the value is read first
    reads = {(n.id, n.lineno) for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assigned = {name for name, ((line, _), ctx) in first.items()
                if isinstance(ctx, ast.Store) and (name, line) not in reads}
    return params | assigned


def _paths(tree) -> list:
    """Every loaded name and the longest dotted path built on it (`a.b.c` gives `a.b.c` only), but the
    function's own variables (_local_names)."""
    out = []
    local = _local_names(tree)
    nodes = [node for node in ast.walk(tree) if isinstance(node, (ast.Attribute, ast.Name))]  # one walk
    inner = {id(node.value) for node in nodes
             if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute))}
    for node in nodes:
        if id(node) in inner:
            continue
        parts = []
        cur = node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and (cur is not node or isinstance(node.ctx, ast.Load)) and cur.id not in local:
            out.append(([cur.id, *reversed(parts)], (cur.lineno, cur.col_offset)))
    return out


def fingerprint(value, seen=None) -> str | None:
    """A string that changes when `value` would compile differently; None for objects the frontend treats
    by their type only (modules, plain Python objects)."""
    if isinstance(value, bool | int | float | str):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, wt.scalar_base):
        return repr(value)
    custom = getattr(value, "_wp_fingerprint_", None)  # @wp.func, structs, composite constants
    if custom is not None and (not isinstance(value, type) or inspect.ismethod(custom)):
        return custom(seen if seen is not None else set())
    builtin = getattr(value, "_wp_builtin_", None) or getattr(value, "_wp_intrinsic_", None)
    if builtin is not None:
        return f"builtin:{builtin}"
    if isinstance(value, type):
        return f"type:{value.__module__}.{value.__qualname__}"
    if inspect.isfunction(value):
        return f"pyfunc:{value.__module__}.{value.__qualname__}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}:{[fingerprint(v, seen) for v in value]!r}"
    return None


def captured_values(func, seen=None) -> list:
    """(dotted path, fingerprint) for each outside object `func`'s body names."""
    seen = set() if seen is None else seen
    scopes = _scopes(func)
    out = []
    for path in _cached_paths(func, statics.declared_values(func)):
        obj = _lookup(scopes, path[0])
        for attr in path[1:]:
            if obj is _MISSING:
                break
            obj = getattr(obj, attr, _MISSING)
        if obj is _MISSING:
            continue
        fp = fingerprint(obj, seen)
        if fp is not None:
            out.append((".".join(path), fp))
    for where, value in statics.declared_values(func).items():  # wp.static() values taken at declaration
        out.append((f"wp.static@{where}", fingerprint(value, seen) or f"{type(value).__qualname__}:{value!r}"))
    return sorted(set(out))


def function_fingerprint(func, seen: set) -> str:
    """Source and captures of a @wp.func's Python function (recursion stops at functions already seen)."""
    if id(func) in seen:
        return f"recursive:{func.__qualname__}"
    seen.add(id(func))
    h = hashlib.sha256(_source(func).encode())
    h.update(repr(captured_values(func, seen)).encode())
    return h.hexdigest()[:16]


# -- a cheap check, at every launch, that the captured constants are still the ones compiled -----------
_paths_cache: dict = {}


def _cached_paths(func, declared_statics=None) -> list:
    """The paths `func`'s body names, less those inside the wp.static() calls resolved at its declaration
    (their value is the capture; reading `box.value` again could run a getter twice)."""
    found = per_code(_paths_cache, func, _paths_of)
    if not declared_statics:
        return [path for path, _ in found]
    spans = list(declared_statics)
    return [path for path, (line, col) in found
            if not any((l0, c0) <= (line, col) < (l1, c1) for l0, c0, l1, c1 in spans)]


def _paths_of(func) -> list:
    try:
        src = function_source(func)
    except (OSError, TypeError, SyntaxError):
        return []
    if src.transformers:  # (the text alone does not say what the transformed tree names)
        return _paths(src.tree)
    return per_text("captured-paths-3", src.text, lambda: _paths(src.tree))  # a warm start parses nothing


def _resolve(func, path):
    obj = _lookup(_scopes(func), path[0])
    for attr in path[1:]:
        if obj is _MISSING:
            break
        obj = getattr(obj, attr, _MISSING)
    return obj


def _constant_key(value):
    if isinstance(value, bool | int | float | str):
        return (type(value), value)
    if isinstance(value, wt.scalar_base):
        return (type(value), value.value)
    if wt.is_composite(type(value)) and not wt.is_struct(type(value)):  # a captured wp.vec3(...) constant
        return (type(value), value._wp_fingerprint_())
    if _is_function_target(value):  # a global naming a @wp.func or builtin (a wp.Function argument's target)
        return ("function", id(value))
    if getattr(value, "_wp_native_", False) is True:  # a @wp.func_native: its snippets are compiled in
        return ("native", value._wp_fingerprint_())
    return None


def _is_function_target(value) -> bool:
    return (getattr(value, "_wp_function_", False) is True and not isinstance(value, type)) or \
        isinstance(getattr(value, "_wp_builtin_", None), str)


def captured_constants(func, seen=None) -> list:
    """(function, path, value key) for each constant `func` and the @wp.func it calls capture: what a launch
    re-checks (`constants_changed`) to recompile after a global changed, as Warp's rule asks."""
    seen = set() if seen is None else seen
    if id(func) in seen:
        return []
    seen.add(id(func))
    out = []
    for path in _cached_paths(func, statics.declared_values(func)):
        obj = _resolve(func, path)
        key = _constant_key(obj)
        if key is not None:
            out.append((func, path, key))
        if getattr(obj, "_wp_function_", False) and not isinstance(obj, type):  # (not wp.Function itself)
            for o in obj.overloads:
                out += captured_constants(o.func, seen)
    return out


def referenced_objects(func) -> list:
    """The outside objects `func` names (its body's names and dotted paths, resolved now) and its default
    argument values (a wp.Function parameter's default target): where a module's references come from."""
    found = [_resolve(func, path) for path in _cached_paths(func)]
    found += list(func.__defaults__ or ()) + list((func.__kwdefaults__ or {}).values())
    return [obj for obj in found if obj is not _MISSING]


def constants_changed(recorded) -> bool:
    return any(_constant_key(_resolve(func, path)) != key for func, path, key in recorded)


def callees_changed(recorded) -> bool:
    """Whether a name that denoted a @wp.func or native function now denotes another (its module reloaded, the
    function redefined): the code calls the new one, whatever Warp's rule says of plain constants."""
    return any(key[0] in ("function", "native") and _constant_key(_resolve(func, path)) != key
               for func, path, key in recorded)
