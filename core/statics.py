"""`wp.static(expr)` evaluated when a kernel or function is declared, as Warp does.

Warp evaluates every `wp.static()` expression of a kernel or @wp.func when the decorator runs, with the
function's globals and closure, and compiles that value: a kernel defined in a Python loop sees the loop
variable's value at its definition (`for i in range(3): @wp.kernel def k(): print(wp.static(i))` prints
0, 1, 2), however late it is launched. An expression that names a variable of an enclosing `for` loop of the
function, or that Python cannot evaluate yet (it names a local, or a name defined later), is left to
compile time, where the frontend evaluates it with the function's constant locals.

The values are kept per Python function, by the position of the `wp.static(...)` call in the function's
source (the text the frontend parses: core/source.py), so the frontend finds them without re-evaluating.

Stdlib only: declaring a kernel must not load the compiler.
"""

from __future__ import annotations

import ast
import copy
import builtins as py_builtins
import weakref

from .source import function_source

MISSING = object()

# Python function -> {call position: value}: the wp.static() calls resolved at declaration
_declared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def position(node: ast.AST) -> tuple:
    """Where a `wp.static(...)` call is in the function's source: the key of its declared value."""
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def declared(func, node: ast.AST):
    """The value the `wp.static(...)` call `node` of `func` took at declaration, or MISSING."""
    try:
        values = _declared.get(func)
    except TypeError:  # not weak-referenceable
        return MISSING
    return MISSING if values is None else values.get(position(node), MISSING)


def declared_values(func) -> dict:
    """{call position: value} of `func`'s wp.static() calls resolved at declaration (for the cache key)."""
    try:
        return _declared.get(func) or {}
    except TypeError:
        return {}


def declare(func) -> None:
    """Evaluates `func`'s wp.static() calls that depend only on its globals and closure (Warp's rule)."""
    code = getattr(func, "__code__", None)
    if code is not None and not _names_static(code):
        return  # no `static` in its code: its source is not read (the API's ~130 library functions at load)
    try:
        src = function_source(func)
    except (OSError, TypeError, SyntaxError):
        return
    if "static" not in src.text:  # (no parse for the common function without one)
        return
    try:
        tree = src.tree
    except SyntaxError:
        return
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return
    scopes = (_closure(func), func.__globals__, vars(py_builtins))
    lengths = _parameter_lengths(func, fn)
    values = {}
    loop_names: dict = {}  # the targets of the enclosing for loops, counted (an inner loop may reuse a name)

    def visit(node):
        if isinstance(node, ast.For):
            names = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
            for n in names:
                loop_names[n] = loop_names.get(n, 0) + 1
            for child in ast.iter_child_nodes(node):
                visit(child)
            for n in names:
                loop_names[n] -= 1
                if not loop_names[n]:
                    del loop_names[n]
            return
        if isinstance(node, ast.Call) and _is_static(node.func, scopes) and len(node.args) == 1 \
                and not node.keywords:
            expr = node.args[0]
            if not any(isinstance(n, ast.Name) and n.id in loop_names for n in ast.walk(expr)):
                try:
                    expr = _with_parameter_lengths(expr, lengths)
                    code = compile(ast.fix_missing_locations(ast.Expression(expr)), func.__code__.co_filename,
                                   "eval")
                    values[position(node)] = eval(code, func.__globals__, scopes[0])  # noqa: S307
                    return  # resolved: a static nested in it is not evaluated again
                except Exception:  # noqa: BLE001  (a local or a later name: the frontend evaluates it)
                    pass
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in fn.body:
        visit(statement)
    try:
        if values:
            _declared[func] = values
        else:
            _declared.pop(func, None)
    except TypeError:
        pass


def _parameter_lengths(func, fn) -> dict:
    """{parameter name: len() of its annotated type} for the parameters whose type has a length (vectors, matrices,
    quaternions, transforms: `_shape_[0]`, as Warp's type_length)."""
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    annotations = getattr(func, "__annotations__", {}) or {}
    out = {}
    for name in names:
        shape = getattr(annotations.get(name), "_shape_", None)
        if isinstance(shape, tuple) and shape and isinstance(shape[0], int):
            out[name] = shape[0]
    return out


def _with_parameter_lengths(expr, lengths: dict):
    """`expr` with each `len(p)` of a parameter `p` replaced by its type's length: Warp evaluates len() of the
    function's own arguments from their types, so a parameter shadows a global of the same name there
    (`def k(v: wp.vec2): wp.static(len(v))` is 2 whatever a global `v` holds)."""
    if not lengths:
        return expr

    class Lengths(ast.NodeTransformer):
        def visit_Call(self, node):
            if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1 \
                    and not node.keywords and isinstance(node.args[0], ast.Name) and node.args[0].id in lengths:
                return ast.copy_location(ast.Constant(lengths[node.args[0].id]), node)
            return self.generic_visit(node)

    return Lengths().visit(copy.deepcopy(expr))


def _names_static(code) -> bool:
    """Whether a code object or one nested in it (a lambda, a comprehension) names `static`: a call of
    wp.static, however written (`wp.static`, `static`, a closure's `static`), loads that name."""
    return "static" in code.co_names or "static" in code.co_freevars or any(_names_static(c) for c in code.co_consts if hasattr(c, "co_names"))


def _closure(func) -> dict:
    out = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an unfilled cell
            pass
    return out


def _is_static(node, scopes) -> bool:
    """Whether a callee (`wp.static`, `static`, `warp.static`) is wp.static, resolved in the function's scopes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    obj = next((scope[node.id] for scope in scopes if node.id in scope), MISSING)
    for attr in reversed(parts):
        if obj is MISSING:
            return False
        obj = getattr(obj, attr, MISSING)
    return getattr(obj, "_wp_static_", False) is True
