"""`@wp.func`: functions callable from kernels and other functions.

As in Warp, a function's identity is the object the decorator returns, never
its name: redefining a function whose name already denotes a @wp.func in the
defining scope (the module, or the enclosing function's locals) with other
argument annotations adds an overload to that function; with the same
annotations it makes a new function holding the old one's overloads, the old
object unchanged. A function of the same name made anew in another scope or by
another call of a factory is a function of its own. An argument annotated
`typing.Any` makes the function generic, compiled
once per argument types it is called with. In Python scope a function runs
as the plain Python function it is (its builtins evaluate in Python), with
the overload chosen by the arguments' Warp types.

The compiler emits each (overload, argument types) as a private `func.func`
and calls it with `func.call`; the `warp-inline` pass inlines them.
"""

from __future__ import annotations

import functools
import inspect
import typing

from mlwarp.core import types as wt
from mlwarp.core import statics
from mlwarp.core.refs import strip_reference
from mlwarp.core.annotations import resolved_annotations
from mlwarp.core.types import is_generic
from mlwarp.errors import CompileError
from mlwarp.kernels.module import module_of
from mlwarp.kernels.function_surface import FunctionSurface
from mlwarp.kernels.subscript_annotations import refuse_unions

class Overload:
    """One definition: its Python function and its argument annotations."""

    def __init__(self, py_func):
        self.func = py_func
        self.signature = inspect.signature(py_func)
        hints = _annotations(py_func)
        self.params = list(self.signature.parameters.values())
        missing = [p.name for p in self.params if p.name not in hints]
        if missing:
            code = py_func.__code__
            raise CompileError(f"Incomplete argument annotations on function {py_func.__name__}: "
                               f"{', '.join(missing)} need(s) a type (use typing.Any for a generic argument)",
                               code.co_filename, code.co_firstlineno, None, py_func.__name__)
        self.annotations = [hints[p.name] for p in self.params]
        refuse_unions(py_func, hints, "function")
        # the default arguments (Warp's `defaults`): what calls that omit them get, read at each compile
        self.defaults = {p.name: p.default for p in self.params if p.default is not inspect.Parameter.empty}
        self.return_annotation = hints.get("return", inspect.Parameter.empty)
        statics.declare(py_func)  # its wp.static() values are the ones at its definition (Warp's rule)

    def key(self, strip_refs=False) -> tuple:
        return tuple(_annotation_key(strip_reference(a) if strip_refs else a) for a in self.annotations)

    def accepts_types(self, arg_types, kwarg_types) -> bool:
        """Whether arguments of these Warp types (positional, then by name; omitted ones have defaults) bind."""
        names = [p.name for p in self.params]
        if len(arg_types) > len(names) or any(k not in names[len(arg_types):] for k in kwarg_types):
            return False
        given = dict(zip(names, arg_types)) | dict(kwarg_types)
        if any(n not in given and n not in self.defaults for n in names):
            return False
        return all(_type_matches(given[n], strip_reference(a)) for n, a in zip(names, self.annotations) if n in given)

    def bind(self, args, kwargs):
        """The call's arguments bound to this overload's parameters (defaults filled in), or None."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return None
        for name, value in self.defaults.items():
            bound.arguments.setdefault(name, value)
        return bound

    def accepts_python(self, args) -> bool:
        if len(args) != len(self.annotations):
            return False
        return all(is_generic(strip_reference(a)) or _python_value_matches(v, strip_reference(a))
                   for v, a in zip(args, self.annotations))


class Function(FunctionSurface):
    """A `@wp.func`: a set of overloads sharing one name."""

    _wp_function_ = True

    def __init__(self, py_func):
        self.key = py_func.__name__
        self.module = py_func.__module__
        self.overloads: list[Overload] = []
        self.add(py_func)
        functools.update_wrapper(self, py_func)

    def replaced(self, py_func) -> "Function":
        """A new function for a redefinition with this function's own annotations (Warp's rule): this one's
        overloads, the new definition in place of the one it redefines; this object is left as it was."""
        fn = object.__new__(Function)
        fn.__dict__.update(self.__dict__)
        fn.overloads = list(self.overloads)
        fn.add(py_func)
        functools.update_wrapper(fn, py_func)
        return fn

    def add(self, py_func) -> None:
        new = Overload(py_func)
        for i, old in enumerate(self.overloads):
            if old.key() == new.key():
                self.overloads[i] = new  # a redefinition with the same annotations replaces the old one
                return
        for old in self.overloads:  # a call could not choose between them (both take the same argument types)
            if old.key(strip_refs=True) == new.key(strip_refs=True):
                raise RuntimeError(f"Cannot overload Warp function '{self.key}' with signatures that differ only by "
                                   f"`wp.ref[T]`; use distinct value types or a different function name.")
        self.overloads.append(new)

    def __call__(self, *args, **kwargs):
        """Python scope: runs the overload whose annotations match the arguments' Warp types."""
        if any(is_function_annotation(a) for o in self.overloads for a in o.annotations):
            return self._call_with_function_arguments(args, kwargs)
        for o in self.overloads:
            bound = o.bind(args, kwargs)
            if bound is None:
                continue
            values = list(bound.arguments.values())
            if o.accepts_python(values):
                self.record_instance(o, [_argument_type(v) for v in values])
                return o.func(*bound.args, **bound.kwargs)
        raise RuntimeError(f"Error calling function '{self.key}', no overload found for arguments {args}")

    def _call_with_function_arguments(self, args, kwargs):
        """Python scope, for a function with a wp.Function parameter: the overload `get_overload` gives for the
        arguments' types (a function's type is wp.Function), as Warp."""
        for o in self.overloads:
            bound = o.bind(args, kwargs)
            if bound is None:
                continue
            values = [bound.arguments[p.name] for p in o.params if p.name in bound.arguments]
            chosen = self.get_overload([Function if _is_function_value(v) else _python_type(v) for v in values], {})
            if chosen is None or (isinstance(chosen, Overload) and chosen is not o):
                continue  # (another overload: bound with its own parameters in its turn)
            expected = len(chosen.params) if isinstance(chosen, Overload) else len(chosen.overloads[0].params)
            if expected != len(values):
                raise RuntimeError(f"Invalid number of arguments for function '{self.key}', expected {expected}, "
                                   f"got {len(values)}")
            return chosen.func(*values)
        raise RuntimeError(f"Error calling function '{self.key}', no overload found for arguments {args}")

    @property
    def defaults(self) -> dict:
        """The first definition's default arguments (Warp's `Function.defaults`; assignable)."""
        return self.overloads[0].defaults

    @defaults.setter
    def defaults(self, value: dict) -> None:
        self.overloads[0].defaults = dict(value)

    def get_overload(self, arg_types, kwarg_types):
        """The overload that arguments of these types (Warp types; `wp.Function` for a function) bind to, or
        None."""
        return next((o for o in self.overloads if o.accepts_types(list(arg_types), dict(kwarg_types))), None)

    def _wp_fingerprint_(self, seen: set) -> str:
        from mlwarp.kernels.captures import fingerprint, function_fingerprint

        # a default argument is compiled in: a function target or constant there changes the code
        return "func:" + ",".join(function_fingerprint(o.func, seen) + repr(sorted(
            (k, fingerprint(v, seen)) for k, v in o.defaults.items())) for o in self.overloads)

    def __repr__(self):
        return f"<mlwarp function {self.key} ({len(self.overloads)} overload(s))>"


def func(f=None, *, module=None, name=None, inline=None):
    """Decorator: `@wp.func`. A second definition of the same name in the same module adds an overload.
    `inline` (None or a bool, as Warp checks) is accepted for Warp's sake: the warp-inline pass inlines every
    function call."""
    if inline is not None and not isinstance(inline, bool):
        raise TypeError(f"inline must be a bool or None, got {type(inline).__name__}: {inline!r}")

    # the scope the decorator is used in: a name there that already denotes a @wp.func is what a definition
    # of the same name overloads or redefines (Warp's rule; a factory's locals never hold an earlier one)
    frame = inspect.currentframe().f_back
    scope = frame.f_locals if frame is not None else {}
    del frame

    def wrap(py_func):
        existing = scope.get(py_func.__name__)
        if not isinstance(existing, Function):
            fn = Function(py_func)
        elif existing.overloads[0].key() == Overload(py_func).key():
            fn = existing.replaced(py_func)
        else:
            existing.add(py_func)
            fn = functools.update_wrapper(existing, py_func)
        if name is not None:
            fn.key = name
        if inline is not None:
            fn.inline_hint = "forceinline" if inline else "noinline"
        fn.module = module_of(module if module is not None else fn.module)  # (a Module, as Warp's Function.module)
        fn.module.register_function(fn)
        return fn

    return wrap(f) if f is not None else wrap


def _annotations(py_func) -> dict:
    try:
        return typing.get_type_hints(py_func)
    except Exception:  # annotations that are not types (wp.array(...) instances), or names from a closure
        return resolved_annotations(py_func)


def _annotation_key(a):
    if wt.is_array(a):
        return ("array", wt.type_name(a.dtype), a.ndim)
    t = wt.canonical_type(a)
    return t if t is not None else a


def is_function_annotation(annotation) -> bool:
    """`g: wp.Function`: the parameter takes a @wp.func or a builtin."""
    return annotation is Function


def _is_function_value(value) -> bool:
    return isinstance(value, Function) or getattr(value, "_wp_builtin_", None) is not None


def _python_type(value):
    """A Python-scope argument's type for overload selection: a Warp scalar or composite's type, float / int /
    bool, an array (any object with an array interface) as itself."""
    if wt.is_array(value) or hasattr(value, "__array_interface__"):
        return value
    return type(value)


def _argument_type(value):
    """A Python-scope argument's Warp type, as a generic function's instance records it (an array by its dtype and
    ndim, never the array itself)."""
    if wt.is_array(value) and not isinstance(value, type) and getattr(value, "device", None) is not None:
        return wt.ArrayT(value.dtype, value.ndim)
    return type(value)


def _type_matches(t, annotation) -> bool:
    if is_function_annotation(annotation):
        return t is Function or _is_function_value(t)
    if is_generic(annotation):
        return True
    if wt.is_array(annotation):
        return wt.is_array(t) or hasattr(t, "__array_interface__")
    a = wt.canonical_type(annotation)
    return a is not None and wt.canonical_type(t) == a


def _python_value_matches(value, annotation) -> bool:
    if is_function_annotation(annotation):
        return _is_function_value(value)
    if wt.is_array(annotation):
        return wt.is_array(value) or hasattr(value, "__array_interface__")
    t = wt.canonical_type(annotation)
    if t is None:
        return isinstance(value, annotation) if isinstance(annotation, type) else False
    if isinstance(value, wt.scalar_base):
        return type(value) is t
    # Python numbers are Warp's default types, exactly (Warp: 1 is no int64, 1.0 no float64 or float16)
    if isinstance(value, bool):
        return t is wt.bool_
    if isinstance(value, int):
        return t is wt.int32
    if isinstance(value, float):
        return t is wt.float32
    return isinstance(value, t) if isinstance(t, type) else False
