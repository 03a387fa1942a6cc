"""The members Warp's `Function` has, on mlwarp's `@wp.func` (func.py): what a user function's are in Warp.

Warp's Function is both its builtins' registration record and a user function; for a `@wp.func` Warp leaves the
builtin fields at their defaults (no value_func, no native snippets, namespace ""), which is what these give.
The fields that describe the function (func, input_types, generic, user_overloads, custom_grad_func, ...) come
from mlwarp's overloads; `mangle()` and `native_func` name it as Warp's C++ would, for code that prints them."""

from __future__ import annotations

import hashlib

from mlwarp.core import generics
from mlwarp.core.refs import strip_reference
from mlwarp.core import types as wt
from mlwarp.kernels.subscript_annotations import ArrayAnnotation


def _type_name(t) -> str:
    if wt.is_array(t):
        return "array"
    return getattr(t, "__name__", None) or str(t)


def _signature_type_name(t) -> str:
    """A parameter type as a signature key spells it: arrays with their dtype and ndim, so that the instances of
    a generic function for arrays of two dtypes are two entries."""
    t = strip_reference(t)
    if wt.is_array(t) or isinstance(t, wt.ArrayT):
        return wt.type_repr(t) if not isinstance(t, wt.ArrayT) else str(t)
    return _type_name(t)


def _as_annotation(t):
    """A compiled argument type as a parameter annotation: the frontend's array type as `wp.array[dtype, ndim]`."""
    return ArrayAnnotation(t.dtype, t.ndim) if isinstance(t, wt.ArrayT) else t


class FunctionSurface:
    """Mixed into func.Function."""

    # builtin-registration fields: their defaults for a user function, as Warp's
    namespace = ""
    value_func = None
    export_func = None
    dispatch_func = None
    lto_dispatch_func = None
    adjoint_uses_template_args = False
    export = False
    group = ""
    hidden = False
    variadic = False
    skip_replay = False
    is_differentiable = True
    native_snippet = None
    adj_native_snippet = None
    replay_snippet = None
    require_original_output_arg = False
    generic_parent = None
    mangled_name = None
    template_scalar_param = None
    template_scalar_default = None
    inline_hint = None  # "forceinline" / "noinline" when @wp.func(inline=True/False)

    @staticmethod
    def initializer_list_func(args, return_type) -> bool:
        return False

    @property
    def func(self):
        """The Python function of the first definition."""
        return self.overloads[0].func

    @property
    def signature(self):
        """The first definition's inspect.Signature (Warp's, with its defaults)."""
        return self.overloads[0].signature

    @property
    def doc(self) -> str:
        return self.__doc__ or ""

    @property
    def input_types(self) -> dict:
        instance_types = self.__dict__.get("_instance_types")  # an instance of a generic definition
        if instance_types is not None:
            return dict(instance_types)
        o = self.overloads[0]
        return {p.name: a for p, a in zip(o.params, o.annotations)}

    @property
    def value_type(self):
        """The declared result type of the first definition (None when not annotated)."""
        r = self.overloads[0].return_annotation
        return None if r is None or r is type(None) or getattr(r, "__name__", "") == "_empty" else r

    @property
    def generic(self) -> bool:
        return any(generics.is_generic(strip_reference(a)) for a in self.input_types.values())

    @property
    def native_func(self) -> str:
        """A unique C-style identifier, as Warp gives each user function (its key and a digest of where it is)."""
        f = self.func
        where = f"{f.__module__}.{f.__qualname__}:{f.__code__.co_firstlineno}"
        return f"{self.key}_{hashlib.sha256(where.encode()).hexdigest()[:8]}"

    @property
    def custom_grad_func(self):
        return getattr(self, "custom_grad", None)

    @property
    def custom_replay_func(self):
        return getattr(self, "custom_replay", None)

    def _signature(self, overload) -> str:
        return self._signature_of(overload.annotations)

    def _signature_of(self, types) -> str:
        return f"{self.key}({', '.join(_signature_type_name(a) for a in types)})"

    def _one(self, overload):
        """This function with only `overload`: what Warp's user_overloads / user_templates hold."""
        cache = self.__dict__.setdefault("_single_overloads", {})
        found = cache.get(id(overload))
        if found is None or found.overloads[0] is not overload:
            found = object.__new__(type(self))
            found.__dict__.update({k: v for k, v in self.__dict__.items()
                                  if k not in ("_single_overloads", "_generic_instances")})
            found.overloads = [overload]
            found.__doc__ = overload.func.__doc__
            cache[id(overload)] = found
        return found

    def record_instance(self, overload, arg_types) -> None:
        """Notes that the generic definition `overload` was instantiated for arguments of `arg_types` (Warp types,
        or the compiler's array type), by a kernel that calls it or a call in Python scope: Warp lists each such
        instance once, by its concrete signature, in `user_overloads`, with `generic_parent` the template. Only
        types are kept (an instance never holds the arguments of the call that made it)."""
        if not any(generics.is_generic(strip_reference(a)) for a in overload.annotations):
            return
        types = [_as_annotation(t) for t in arg_types]
        sig = self._signature_of(types)
        instances = self.__dict__.setdefault("_generic_instances", {})
        found = instances.get(sig)
        if found is None or found.overloads[0] is not overload:
            template = self._one(overload)
            found = object.__new__(type(self))
            found.__dict__.update(template.__dict__)
            found.__dict__["_instance_types"] = {p.name: t for p, t in zip(overload.params, types)}
            found.generic_parent = template
            instances[sig] = found

    @property
    def user_overloads(self) -> dict:
        """Concrete overloads by signature, and the instances of generic ones made so far (Warp's)."""
        concrete = {self._signature(o): self._one(o) for o in self.overloads
                    if not any(generics.is_generic(strip_reference(a)) for a in o.annotations)}
        instances = {sig: f for sig, f in self.__dict__.get("_generic_instances", {}).items()
                     if any(f.overloads[0] is o for o in self.overloads)}
        return {**concrete, **instances}

    @property
    def user_templates(self) -> dict:
        """Generic overloads by signature (Warp's)."""
        return {self._signature(o): self._one(o) for o in self.overloads
                if any(generics.is_generic(strip_reference(a)) for a in o.annotations)}

    def is_builtin(self) -> bool:
        return False

    def is_simple(self) -> bool:
        """Warp's: no variadic arguments and no array arguments."""
        return not self.variadic and not any(wt.is_array(a) for a in self.input_types.values())

    def mangle(self, *template_args) -> str:
        """Warp's name for the function exported to C: `wp_builtin_<key>_<types>`."""
        types = [_type_name(t) for t in self.input_types.values()] + [_type_name(t) for t in template_args]
        return "_".join([f"wp_builtin_{self.key}", *types])

    def add_overload(self, f) -> None:
        """Adds the definitions of the @wp.func `f` as overloads of this function (Warp's add_overload)."""
        for o in f.overloads:
            self.add(o.func)

    def get_builtin(self, *args, **kwargs):
        raise RuntimeError(f"'{self.key}' is a user function, not a builtin: call it (in Python scope it runs "
                           f"as Python)")

    call_builtin = get_builtin

    def build(self, builder=None, default_builder_options=None):
        """Warp builds a function's C++ into a module builder; mlwarp compiles functions with the kernels that
        call them (there is nothing to build on its own)."""
        return None
