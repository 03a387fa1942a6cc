"""Warp's builtins as its C library exports them (`warp._src.context.runtime.core.wp_builtin_<name>_<types>`),
served by mlwarp's Python-scope builtins.

Warp compiles every builtin overload with concrete argument types into its shared library as
`wp_builtin_<key>_<argument type names>` (`wp_builtin_mul_transformf_transformf`), and some clients call those
symbols through ctypes to skip Python-scope overload resolution (Newton 1.8's host_transform.py). Warp's calling
convention (warp/_src/context.py: `export_builtin`, `call_builtin_from_desc`):

- a scalar argument is a ctypes value of its type (`ctypes.c_float(2.0)`; a Python int passes as a C int);
- a vector, matrix, quaternion or transform argument is passed by reference: the value itself (ctypes passes
  an array by pointer), `ctypes.byref(value)` or its address;
- the result is written through one more pointer argument (a tuple result, `svd3`, through one per element),
  and the function returns None;
- a builtin whose arguments do not name its scalar type names it in the symbol instead
  (`wp_builtin_quat_identity_float32(byref(q))`: `wp.quat_identity(dtype=wp.float32)`).

Here the symbol's name is parsed into the builtin and its argument types, the arguments are read as values of
those types, and the builtin that `wp.<key>(...)` calls at Python scope computes the result, which is written
where the result pointer points. There is no second implementation: the results are those of `wp.<key>`.
"""

from __future__ import annotations

import ctypes
import inspect

import mlwarp
from mlwarp.compiler.builtins import table
from mlwarp.core import types as wt
from mlwarp.core.matrix_type import matrix
from mlwarp.core.quaternion_type import quaternion
from mlwarp.core.transform_type import transformation
from mlwarp.core.vector_components import to_python, to_raw
from mlwarp.core.vector_type import vector

PREFIX = "wp_builtin_"


def _export_type_names() -> dict:
    """Warp's export names of the argument types (`float32`, `vec3f`, `mat44d`, `spatial_vectorf`, ...) -> the
    mlwarp type. Warp spells the 6-vectors and 6x6 matrices by their spatial names."""
    names = {("bool" if t is wt.bool_ else t.__name__): t for t in wt.scalar_types}
    for s in wt.scalar_types:
        if s is wt.bool_ or s is wt.bfloat16:  # Warp has no named composites of these
            continue
        for n in (2, 3, 4):
            names[wt.type_name(vector(n, s))] = vector(n, s)
        if wt.is_float(s):
            for n in (2, 3, 4):
                names[wt.type_name(matrix((n, n), s))] = matrix((n, n), s)
            suffix = wt.type_name(vector(3, s))[len("vec3"):]
            names["quat" + suffix] = quaternion(s)
            names["transform" + suffix] = transformation(s)
            names["spatial_vector" + suffix] = vector(6, s)
            names["spatial_matrix" + suffix] = matrix((6, 6), s)
    return names


TYPE_NAMES = _export_type_names()
_MULTI_TOKEN = ("spatial_vector", "spatial_matrix")


def _parse_types(tokens: list) -> list | None:
    """The argument types a symbol's tail names, or None if a token names no type."""
    types, i = [], 0
    while i < len(tokens):
        name = tokens[i]
        if any(m.startswith(name + "_") for m in _MULTI_TOKEN) and i + 1 < len(tokens):
            name, i = f"{name}_{tokens[i + 1]}", i + 1
        t = TYPE_NAMES.get(name)
        if t is None:
            return None
        types.append(t)
        i += 1
    return types


def _python_scope_builtin(key: str):
    """`wp.<key>` when it is a builtin callable at Python scope (not a type, not a module)."""
    obj = getattr(mlwarp, key, None)
    if obj is None or isinstance(obj, type) or inspect.ismodule(obj) or not callable(obj):
        return None
    return obj


def _template_scalar(function) -> bool:
    """Whether `function` takes the scalar type to compute in as its only parameter (`quat_identity(dtype)`)."""
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return params == ["dtype"]


def _accepts(function, types: list) -> bool:
    """Whether `function` has an overload taking arguments of `types`, as Warp exports one symbol per overload."""
    entry = getattr(function, "_wp_builtin_", None)
    if entry is not None:  # a builtin of the table: its type rules decide
        try:
            table.resolve(entry, list(types))
        except (TypeError, KeyError):
            return False
        return True
    overloads = getattr(function, "user_overloads", None)
    if overloads:  # a @wp.func builtin (`svd3`): one overload per signature, as the symbols are
        return any(list(o.input_types.values()) == list(types) for o in overloads.values()) or \
            bool(getattr(function, "user_templates", None))
    try:
        inspect.signature(function).bind(*types)
    except TypeError:
        return False
    except ValueError:  # no signature to read: the call decides
        return True
    return True


class ExportedBuiltin:
    """One `wp_builtin_<key>_<types>` symbol: a callable with Warp's C calling convention."""

    def __init__(self, symbol: str, key: str, function, arg_types: list, template_scalar):
        self.__name__ = symbol
        self.key = key
        self.arg_types = arg_types
        self._function = function
        self._template_scalar = template_scalar

    def __repr__(self):
        return f"<mlwarp exported builtin {self.__name__}>"

    def __call__(self, *args):
        n = len(self.arg_types)
        if len(args) < n:
            raise TypeError(f"{self.__name__}() takes {n} argument(s) and a pointer per result, got {len(args)} "
                            f"argument(s)")
        values = [_read_argument(self.__name__, i, t, a) for i, (t, a) in enumerate(zip(self.arg_types, args))]
        if self._template_scalar is not None:
            result = self._function(dtype=self._template_scalar)
        else:
            result = self._function(*values)
        results = () if result is None else result if isinstance(result, tuple) else (result,)
        pointers = args[n:]
        if len(pointers) != len(results):
            raise TypeError(f"{self.__name__}() writes {len(results)} result(s), got {len(pointers)} result "
                            f"pointer(s)")
        for k, (pointer, value) in enumerate(zip(pointers, results)):
            _write_result(self.__name__, n + k, pointer, value)
        return None


def _referenced_object(arg):
    """The ctypes object that `ctypes.byref(obj)` or `ctypes.pointer(obj)` refers to, else None."""
    if type(arg).__name__ == "CArgObject":
        return arg._obj
    if isinstance(arg, ctypes._Pointer):
        return arg.contents
    return None


def _address(arg) -> int | None:
    """The address a pointer argument carries: `byref(x)`, `pointer(x)`, `c_void_p`, an int, or a ctypes object
    itself (which ctypes passes by reference)."""
    target = _referenced_object(arg)
    if target is not None:
        return ctypes.addressof(target)
    if isinstance(arg, ctypes.c_void_p):
        return arg.value
    if isinstance(arg, int) and not isinstance(arg, bool):
        return arg
    if isinstance(arg, ctypes._SimpleCData) or isinstance(arg, (ctypes.Array, ctypes.Structure)):
        return ctypes.addressof(arg)
    return None


def _read_argument(symbol: str, index: int, t, arg):
    """Argument `index` of `symbol`, declared of type `t`, as the mlwarp value the Python-scope builtin takes."""
    if wt.is_composite(t):
        target = _referenced_object(arg)
        if target is None and isinstance(arg, ctypes.Array):
            target = arg
        if target is not None and ctypes.sizeof(target) == ctypes.sizeof(t):
            return t.from_buffer_copy(target) if type(target) is not t else target
        address = _address(arg) if target is None else None
        if address:
            return t.from_buffer_copy((ctypes.c_char * ctypes.sizeof(t)).from_address(address))
        raise TypeError(f"{symbol}(): argument {index} is a {wt.type_name(t)}, passed by reference (the value, "
                        f"ctypes.byref(value) or its address); got {type(arg).__name__}")
    raw = arg
    target = _referenced_object(arg)
    if target is not None:  # a scalar passed by reference, which Warp's C functions would misread
        raise TypeError(f"{symbol}(): argument {index} is a {wt.type_name(t)}, passed by value; got a pointer")
    if isinstance(arg, ctypes._SimpleCData):
        raw = arg.value
    try:
        return t(to_python(t, raw) if isinstance(arg, ctypes._SimpleCData) else raw)
    except (TypeError, ValueError):
        raise TypeError(f"{symbol}(): argument {index} is a {wt.type_name(t)}; got {type(arg).__name__}") from None


def _result_type(value):
    """The Warp type of a Python-scope builtin's result (int32/float32/bool come back as Python numbers)."""
    if wt.is_composite(type(value)) or isinstance(value, wt.scalar_base):
        return type(value)
    if isinstance(value, bool):
        return wt.bool_
    if isinstance(value, int):
        return wt.int32
    if isinstance(value, float):
        return wt.float32
    raise TypeError(f"a result of type {type(value).__name__} has no C layout")


def _write_result(symbol: str, index: int, pointer, value) -> None:
    address = _address(pointer)
    if not address:
        raise TypeError(f"{symbol}(): argument {index} is the result pointer (ctypes.byref(out), "
                        f"ctypes.pointer(out) or an address); got {type(pointer).__name__}")
    t = _result_type(value)
    if wt.is_composite(t):
        ctypes.memmove(address, ctypes.addressof(value), ctypes.sizeof(t))
        return
    raw = value.value if isinstance(value, wt.scalar_base) else value
    t._ctype_.from_address(address).value = to_raw(t, raw)


def resolve(symbol: str) -> ExportedBuiltin | None:
    """The builtin Warp exports as `symbol`, or None when no Python-scope builtin of those types exists."""
    if not symbol.startswith(PREFIX):
        return None
    tokens = symbol[len(PREFIX):].split("_")
    for split in range(len(tokens), 0, -1):  # the longest key first: `transform_point`, not `transform`
        key = "_".join(tokens[:split])
        function = _python_scope_builtin(key)
        if function is None:
            continue
        types = _parse_types(tokens[split:])
        if types is None:
            continue
        if _template_scalar(function):
            if len(types) != 1 or not wt.is_scalar(types[0]):
                continue
            return ExportedBuiltin(symbol, key, function, [], types[0])
        if not _accepts(function, types):
            continue
        return ExportedBuiltin(symbol, key, function, types, None)
    return None


class NativeLibrary:
    """`warp._src.context.runtime.core`: the `wp_builtin_*` functions of Warp's C library, looked up by name."""

    def __init__(self):
        self._cache = {}

    @staticmethod
    def wp_is_mathdx_enabled() -> bool:
        """False: mlwarp's tile Cholesky, solve and FFT are its own lowerings, not NVIDIA's MathDx (what Warp's
        tests and clients read this for: which tile paths exist)."""
        return False

    @staticmethod
    def wp_cuda_toolkit_version() -> int:
        """0, Warp's answer for a library built without the CUDA toolkit: mlwarp emits PTX through MLIR and
        drives the GPU with the driver API, linking no toolkit."""
        return 0

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        found = self._cache.get(name)
        if found is None:
            found = resolve(name)
            if found is None:
                raise AttributeError(
                    f"mlwarp has no native library: of Warp's C functions it serves the exported builtins "
                    f"`{PREFIX}<name>_<argument types>` of the builtins callable from Python, and {name!r} is none")
            self._cache[name] = found
        return found
