"""`wp.map(func, *inputs, out=None, return_kernel=False, block_dim=256, device=None)`: a function mapped over
the elements of arrays, as Warp's.

`func` is a @wp.func, a builtin (`wp.add`, `wp.sin`, ...), or a Python function or lambda of Warp operations
(made a @wp.func whose parameters are all `typing.Any`). The inputs are arrays, whose shapes broadcast as
numpy's do, and values passed to every element (Python numbers, Warp scalars, vectors, structs). The result
types of the call decide the output arrays' dtypes (a tuple result fills one output per element).

The generated kernel takes each array at its own rank and reads it at the output index, with index 0 on its
dimensions of size 1 (the ones it broadcasts along); its parameters are generic (`Any`), instantiated for the
call's types (arrays, indexed arrays, values). One kernel per (function, inputs' types, ranks and size-1
dimensions): repeated maps reuse it (`map_cache`). Generated source lives in linecache entries, where the
frontend reads kernel sources (core/source.py).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import re
import threading
import types
import typing

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, empty
from mlwarp.library.builtins import BuiltinFunction, functions as _builtin_handles
from mlwarp.compiler.builtins.table import BUILTINS, COMPOSITE_ONLY, OVERLOADS, converted_arg_types, resolve
from mlwarp.core import generics
from mlwarp.core.refs import strip_reference
from mlwarp.errors import CompileError
from mlwarp.kernels.func import Function, func
from mlwarp.arrays.indexed import indexedarray
from mlwarp.kernels.kernel import Kernel
from mlwarp.launching.launch import launch

Any = typing.Any

# (function key, input descriptors) -> (output dtypes, generic kernel)
map_cache: dict = {}
_probe_types: dict = {}  # (function key, argument types, its captures' fingerprint) -> result types
_lock = threading.Lock()


def map(func, *inputs, out=None, return_kernel: bool = False, block_dim: int = 256, device=None):
    """Maps `func` over the elements of the arrays among `inputs` (numpy broadcasting); the other inputs are
    passed to every call as they are. Returns the output array (a list of them for a tuple result), or, with
    `return_kernel=True`, the kernel that does it (launched with the inputs, then the outputs)."""
    target = _Target.of(func)
    if len(inputs) not in target.arities:
        raise TypeError(f"Number of input arguments ({len(inputs)}) does not match expected number of function "
                        f"arguments ({target.arities[0]})")
    arg_types, descriptors = [], []
    for value in inputs:
        if _is_array_value(value):
            if device is None:
                device = value.device
            arg_types.append(value.dtype)
            descriptors.append((True, wt.type_key(value.dtype), value.ndim, tuple(d == 1 for d in value.shape)))
        else:
            t = _value_type(value)
            arg_types.append(t)
            descriptors.append((False, wt.type_key(t)))
    cache_key = (target.key, tuple(descriptors))
    out_dtypes = _result_types(target, arg_types)

    shapes = [tuple(v.shape) for v in inputs if _is_array_value(v)]
    if not shapes:
        raise ValueError("map requires at least one warp.array input")
    out_shape = broadcast_shapes(shapes)
    outputs = _outputs(out, out_dtypes, out_shape, inputs, device)

    with _lock:
        found = map_cache.get(cache_key)
        if found is None:
            found = map_cache[cache_key] = (out_dtypes, _make_kernel(target, descriptors, len(out_shape),
                                                                     len(out_dtypes)))
    kernel = found[1].add_overload([_kernel_type(v) for v in list(inputs) + outputs])
    kernel.recapture_if_modified()  # the mapped function's cells were just set to this call's closure values
    if return_kernel:
        return kernel
    launch(kernel, dim=out_shape, inputs=list(inputs), outputs=outputs, device=device, block_dim=block_dim)
    return outputs[0] if len(outputs) == 1 else outputs


def broadcast_shapes(shapes) -> tuple:
    """The shape numpy broadcasts `shapes` to (aligned at their last dimensions, a 1 stretches)."""
    result = tuple(shapes[0])
    for shape in shapes[1:]:
        shape = tuple(shape)
        n = max(len(result), len(shape))
        a = (1,) * (n - len(result)) + result
        b = (1,) * (n - len(shape)) + shape
        dims = []
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                raise ValueError(f"Shapes {result} and {shape} are not broadcastable")
            dims.append(y if x == 1 else x)
        result = tuple(dims)
    return result


# -- the mapped function ------------------------------------------------------------------------------------
class _Target:
    """What a kernel calls: `callee` (a Function or a builtin handle), named `name` in messages."""

    origin = None  # where a lambda was written: its compile errors say so

    def __init__(self, callee, key, name, arities, overloads=None):
        self.callee, self.key, self.name, self.arities, self.overloads = callee, key, name, arities, overloads

    @staticmethod
    def of(func) -> "_Target":
        if isinstance(func, Function):
            arities = [len(o.params) for o in func.overloads]
            return _Target(func, func, _qualified(func), arities, func.overloads)
        if isinstance(func, BuiltinFunction):
            name = func._wp_builtin_
            if name is None:
                raise TypeError(f"wp.{func.__name__}() cannot be mapped over arrays")
            arities = [len(b.args) for b in OVERLOADS.get(name, ())]
            if name in BUILTINS and name not in COMPOSITE_ONLY:
                arities.insert(0, len(BUILTINS[name].args))
            return _Target(func, name, name, arities or [0])
        if not callable(func):
            raise TypeError("func must be a callable function or a warp.Function")
        if isinstance(func, types.FunctionType):
            fn = _python_function(func)
        else:
            raise TypeError("func must be a callable function or a warp.Function")
        target = _Target(fn, fn, fn.key, [len(fn.overloads[0].params)], fn.overloads)
        if func.__name__ == "<lambda>":
            target.origin = f"the lambda passed to wp.map at {func.__code__.co_filename}:{func.__code__.co_firstlineno}"
        return target

    def check_overload(self, arg_types) -> None:
        if self.overloads is None:
            return
        for o in self.overloads:
            if len(o.annotations) == len(arg_types) and all(
                    _annotation_matches(t, a) for t, a in zip(arg_types, o.annotations)):
                return
        raise TypeError(f"Function {self.name} does not support the provided argument types "
                        f"{', '.join(wt.type_repr(t) for t in arg_types)}")


def _qualified(function) -> str:
    """A @wp.func's name as Warp's messages give it: its qualified name, `.` as `__`, other symbols dropped."""
    name = getattr(function, "__qualname__", None) or function.key
    return re.sub("[^0-9a-zA-Z_]+", "", name.replace(".", "__"))


def _annotation_matches(t, annotation) -> bool:
    annotation = strip_reference(annotation)
    if generics.is_generic(annotation):
        return generics.matches_template(t, annotation)
    return wt.types_equal(t, annotation)


def _is_array_value(value) -> bool:
    """A wp.array (not an annotation) or another array kind (wp.indexedarray), read element by element."""
    if getattr(type(value), "_wp_indexed_", None) is True:
        return not value.is_annotation
    return wt.is_array(value) and not isinstance(value, type) and not getattr(value, "is_annotation", False)


def _kernel_type(value):
    """The type a kernel parameter takes for `value`: arrays as array types, an indexed array as the struct it
    is in kernels (python/mlwarp/arrays/indexed.py), other values as their Warp type."""
    indexed = getattr(value, "_wp_indexed_struct_", None)
    if indexed is not None and getattr(type(value), "_wp_indexed_", None) is True:
        return indexed
    return _value_type(value)


def _value_type(value):
    t = generics.value_type(value)
    if t is None:
        raise TypeError(f"wp.map cannot pass a {type(value).__name__} to a Warp function")
    return t


_functions: dict = {}  # code object -> (its Function, {free variable: the cell the Function reads})


def _python_function(func) -> Function:
    """A Python function or lambda as a @wp.func with `Any` parameters, one per code object (a function
    defined anew at each call of its enclosing one is the same Function): its free variables are cells of
    its own, set from `func`'s at each use (a kernel compiled with other values compiles again, as for any
    captured value)."""
    code = func.__code__
    found = _functions.get(code)
    if found is None:
        if func.__name__ == "<lambda>":
            code_, params, name = _lambda_code(func)
        else:
            code_, params, name = code, list(inspect.signature(func).parameters), func.__name__
        cells = {v: types.CellType() for v in code_.co_freevars}
        py = types.FunctionType(code_, func.__globals__, name, None if code_ is not code else func.__defaults__,
                                tuple(cells[v] for v in code_.co_freevars))
        if code_ is code:
            py.__qualname__, py.__module__ = func.__qualname__, func.__module__
        py.__annotations__ = dict.fromkeys(params, Any)
        found = _functions[code] = (Function(py), cells)
    fn, cells = found
    for v, cell in zip(code.co_freevars, func.__closure__ or ()):
        if v in cells:
            try:
                cells[v].cell_contents = cell.cell_contents
            except ValueError:  # a free variable not yet assigned: the compile reports the name
                pass
    return fn


def _lambda_code(lam):
    """(code, parameters, name) of `def map_lambda_<hash>(params): return <body>`, the lambda's body from its
    file's AST; the source is a linecache entry. The code's free variables are the lambda's that its body
    names."""
    node = _lambda_node(lam)
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
        raise ValueError("wp.map takes lambdas with plain positional parameters only")
    params = [p.arg for p in a.args]
    body = ast.unparse(node.body)
    name = "map_lambda_" + hashlib.sha256(f"{params}:{body}".encode()).hexdigest()[:16]
    text = (f"def _make({', '.join(lam.__code__.co_freevars)}):\n"
            f"    def {name}({', '.join(params)}):\n"
            f"        return {body}\n"
            f"    return {name}\n")
    namespace: dict = {}
    exec(compile(text, _source_file(name, text), "exec"), namespace)  # noqa: S102
    inner = next(c for c in namespace["_make"].__code__.co_consts if inspect.iscode(c))
    return inner, params, name


def _lambda_node(lam) -> ast.Lambda:
    """The lambda's AST in its file: the lambdas that start on its first line with its parameters, the one
    whose span holds its code's positions when there are several."""
    code = lam.__code__
    lines = linecache.getlines(code.co_filename, lam.__globals__)
    tree = _parsed_file(code.co_filename, "".join(lines)) if lines else None
    if tree is None:
        raise ValueError("Could not extract lambda source code")
    params = list(code.co_varnames[:code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and [p.arg for p in n.args.args] == params]
    if len(found) > 1:
        starts = [(line, col) for line, _, col, _ in code.co_positions() if line is not None and col is not None]
        if starts:
            first = min(starts)
            found = [n for n in found if (n.lineno, n.col_offset) <= first <= (n.end_lineno, n.end_col_offset)] \
                or found
    if not found:
        raise ValueError("Could not extract lambda source code")
    return found[-1] if len(found) > 1 else found[0]


_trees: dict = {}


def _parsed_file(filename, text):
    key = (filename, hashlib.sha256(text.encode()).hexdigest())
    if key not in _trees:
        try:
            _trees[key] = ast.parse(text)
        except SyntaxError:
            _trees[key] = None
    return _trees[key]


def _source_file(name: str, text: str) -> str:
    """A linecache entry holding `text` (kept: it has no file to be checked against), named by its content."""
    filename = f"<mlwarp.map {name} {hashlib.sha256(text.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    return filename


# -- result types ---------------------------------------------------------------------------------------------
_probes: dict = {}  # (function key, argument count) -> a probe `def map_probe(a0, ...): return _map_f(a0, ...)`


def _result_types(target: _Target, arg_types) -> tuple:
    target.check_overload(arg_types)
    # a function's source and captured values can change its result types (a closure variable now a vector)
    captured = target.callee._wp_fingerprint_(set()) if target.overloads is not None else None
    key = (target.key, tuple(wt.type_key(t) for t in arg_types), captured)
    found = _probe_types.get(key)
    if found is None:
        found = _declared_result(target, arg_types)
    if found is not None:
        _probe_types[key] = found
    else:
        from mlwarp.compiler.frontend.probe import call_result_types  # lazy: MLIR

        probe = _probe(target, len(arg_types))
        try:
            found = call_result_types(probe, {f"a{i}": t for i, t in enumerate(arg_types)})
        except CompileError as e:
            if target.overloads is not None:
                if target.origin is not None:
                    e.add_note(f"({target.origin})")
                raise
            raise TypeError(f"Function {target.name} does not support the provided argument types "
                            f"{', '.join(wt.type_repr(t) for t in arg_types)}") from e
        if not found:
            raise TypeError("The provided function must return a value")
        found = _probe_types[key] = tuple(found)
    return found


def _declared_result(target: _Target, arg_types) -> tuple | None:
    """The result type without the compiler where the builtin table or a concrete return annotation gives it
    (as the frontend would: the table's typing, after its argument conversions); None: ask the frontend."""
    if target.overloads is None:
        if target.key not in BUILTINS:
            return None
        try:
            rt = resolve(target.key, converted_arg_types(target.key, list(arg_types)))
        except Exception:  # noqa: BLE001  (the frontend reports it in its words)
            return None
        return (rt,) if wt.is_scalar(rt) or wt.is_composite(rt) else None
    for o in target.overloads:
        if len(o.annotations) == len(arg_types) and all(_annotation_matches(t, a)
                                                        for t, a in zip(arg_types, o.annotations)):
            if any(generics.is_generic(strip_reference(a)) for a in o.annotations):
                return None
            rt = wt.canonical_type(o.return_annotation) if o.return_annotation is not inspect.Parameter.empty \
                else None
            return (rt,) if rt is not None and not generics.is_generic(rt) else None
    return None


def _probe(target: _Target, n: int):
    key = (target.key, n)
    found = _probes.get(key)
    if found is None:
        args = ", ".join(f"a{i}" for i in range(n))
        text = f"def map_probe({args}):\n    return _map_f({args})\n"
        namespace = {"_map_f": target.callee, "__name__": __name__}
        exec(compile(text, _source_file("probe", text), "exec"), namespace)  # noqa: S102
        found = _probes[key] = namespace["map_probe"]
    return found


# -- outputs ----------------------------------------------------------------------------------------------------
def _differentiable(dtype) -> bool:
    return wt.is_struct(dtype) or wt.is_float(wt.scalar_type_of(dtype))


def _outputs(out, out_dtypes, out_shape, inputs, device) -> list:
    if out is None:
        requires_grad = any(getattr(v, "requires_grad", False) for v in inputs if _is_array_value(v))
        return [empty(out_shape, dtype=t, device=device, requires_grad=requires_grad and _differentiable(t))
                for t in out_dtypes]
    if len(out_dtypes) == 1 and _is_array_value(out):
        if not wt.types_equal(out.dtype, out_dtypes[0]):
            raise TypeError(f"Output array dtype {wt.type_repr(out.dtype)} does not match expected dtype "
                            f"{wt.type_repr(out_dtypes[0])}")
        if tuple(out.shape) != out_shape:
            raise TypeError(f"Output array shape {tuple(out.shape)} does not match expected shape {out_shape}")
        return [out]
    if len(out_dtypes) > 1 and isinstance(out, (list, tuple)):
        if len(out) != len(out_dtypes):
            raise TypeError(f"Number of provided output arrays ({len(out)}) does not match expected number of "
                            f"function outputs ({len(out_dtypes)})")
        for i, (o, t) in enumerate(zip(out, out_dtypes)):
            if not wt.types_equal(o.dtype, t):
                raise TypeError(f"Output array {i} dtype {wt.type_repr(o.dtype)} does not match expected dtype "
                                f"{wt.type_repr(t)}")
            if tuple(o.shape) != out_shape:
                raise TypeError(f"Output array {i} shape {tuple(o.shape)} does not match expected shape "
                                f"{out_shape}")
        return list(out)
    raise TypeError(f"Invalid output provided, expected {len(out_dtypes)} Warp arrays with shape {out_shape} and "
                    f"dtypes ({', '.join(wt.type_repr(t) for t in out_dtypes)})")


# -- the kernel ---------------------------------------------------------------------------------------------------
def _make_kernel(target: _Target, descriptors, out_ndim: int, n_out: int) -> Kernel:
    tids = [f"t{i}" for i in range(out_ndim)]
    params, lines, args = [], [], []
    for i, d in enumerate(descriptors):
        if d[0]:
            ndim, ones = d[2], d[3]
            params.append(f"a{i}_array: Any")
            index = ["0" if ones[k] else tids[out_ndim - ndim + k] for k in range(ndim)]
            lines.append(f"    a{i} = a{i}_array[{', '.join(index)}]")
        else:
            params.append(f"a{i}: Any")
        args.append(f"a{i}")
    params += [f"out{j}: Any" for j in range(n_out)]
    at = ", ".join(tids)
    call = f"_map_f({', '.join(args)})"
    if n_out == 1:
        lines.append(f"    out0[{at}] = {call}")
    else:
        lines.append(f"    {', '.join(f'r{j}' for j in range(n_out))} = {call}")
        lines += [f"    out{j}[{at}] = r{j}" for j in range(n_out)]
    text = f"def map_kernel({', '.join(params)}):\n    {at} = tid()\n" + "\n".join(lines) + "\n"
    namespace = {"_map_f": target.callee, "tid": _builtin_handles["tid"], "Any": Any,
                 "__name__": __name__}
    exec(compile(text, _source_file("kernel", text), "exec"), namespace)  # noqa: S102
    key = re.sub("[^0-9a-zA-Z_]+", "_", target.name)
    key = key if key.startswith("map_") else f"map_{key}"
    return Kernel(namespace["map_kernel"], key=key, module=key, register=False)


# -- Python operators on arrays, as Warp's: element-wise through wp.map ------------------------------------------
def _operator(builtin: str, reflected: bool = False, in_place: bool = False):
    f = _builtin_handles[builtin]
    if in_place:
        def op(self, other):
            map(f, self, other, out=self)
            return self
    elif reflected:
        def op(self, other):
            return map(f, other, self)
    else:
        def op(self, other):
            return map(f, self, other)
    return op


@func
def _positive(x: Any):
    return +x  # wp.pos has no scalar entry in the builtin table: `+a` of any element type


def _unary(builtin):
    f = _builtin_handles[builtin] if isinstance(builtin, str) else builtin

    def op(self):
        return map(f, self)
    return op


ARRAY_OPERATORS = {f"__{name}__": _operator(builtin) for name, builtin in (
    ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("floordiv", "floordiv"),
    ("mod", "mod"), ("pow", "pow"))}
ARRAY_OPERATORS.update({f"__r{name}__": _operator(builtin, reflected=True) for name, builtin in (
    ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("floordiv", "floordiv"),
    ("mod", "mod"), ("pow", "pow"))})
ARRAY_OPERATORS.update({f"__i{name}__": _operator(builtin, in_place=True) for name, builtin in (
    ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("floordiv", "floordiv"))})
ARRAY_OPERATORS.update({"__neg__": _unary("neg"), "__pos__": _unary(_positive)})


def add_array_operators(cls) -> None:
    """Gives an array class Warp's arithmetic operators (`a + b`, `2.0 * a`, `-a`, `a += 1.0`, ...), each a
    wp.map of the builtin; the operators the class defines itself stay. wp.array and wp.indexedarray get them
    here (their modules are below this one)."""
    for name, op in ARRAY_OPERATORS.items():
        if name not in vars(cls):
            setattr(cls, name, op)


add_array_operators(array)
add_array_operators(indexedarray)
