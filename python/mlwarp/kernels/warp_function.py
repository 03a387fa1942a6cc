"""`wp.utils.create_warp_function`: a Python function or lambda as a generic Warp function (what `wp.map` maps)."""

import ast
import hashlib
import inspect
import linecache
import textwrap
import types
import typing

from mlwarp.kernels.func import Function
from mlwarp.kernels.module import get_module


def _lambda_body(func) -> str | None:
    """The source of a lambda's body expression, from the lines that define it; None when they cannot be read
    or hold several lambdas with the same parameters."""
    try:
        lines, _ = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return None
    text = textwrap.dedent("".join(lines))
    tree = None
    for candidate in (text, f"(\n{text}\n)", text.rstrip().rstrip(",;")):
        try:
            tree = ast.parse(candidate)
            text = candidate
            break
        except SyntaxError:
            continue
    if tree is None:
        return None
    params = list(func.__code__.co_varnames[:func.__code__.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and [a.arg for a in n.args.args] == params]
    if len(found) != 1:
        return None
    return ast.get_source_segment(text, found[0].body)


def create_warp_function(func):
    """A Warp function (`@wp.func`, every parameter generic: `typing.Any`) from a Python function or lambda,
    and the module it belongs to (`map_<key>`). A lambda's function is named `func_<hash of its body>`, the
    same in every process."""
    code = func.__code__
    params = list(code.co_varnames[:code.co_argcount])
    name = getattr(func, "__name__", None)
    namespace = dict(func.__globals__)
    if func.__closure__:
        namespace.update(zip(code.co_freevars, (c.cell_contents for c in func.__closure__)))
    if name == "<lambda>":
        body = _lambda_body(func)
        if body is None:
            raise ValueError("Could not extract lambda source code")
        key = f"func_{hashlib.sha256(body.encode('utf-8')).hexdigest()[:16]}"
        body = " ".join(line.strip() for line in body.splitlines())  # one line: a parenthesized body spans several
        source = f"def {key}({', '.join(params)}):\n    return {body}\n"
        filename = f"<mlwarp create_warp_function {key}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # what the frontend reads
        namespace["__name__"] = func.__globals__.get("__name__", "__main__")
        exec(compile(source, filename, "exec"), namespace)
        py_func = namespace[key]
    else:
        key = getattr(func, "__qualname__", name)
        key = key.replace(".", "_").replace(" ", "_").replace("<", "").replace(">", "_")
        py_func = types.FunctionType(code, func.__globals__, key, func.__defaults__, func.__closure__)
        py_func.__qualname__ = key
        py_func.__module__ = func.__module__
    py_func.__annotations__ = {p: typing.Any for p in params}
    fn = Function(py_func)
    fn.module = get_module(f"map_{key}")
    return fn, fn.module
