"""Warp 1.19's pass-by-reference annotation `wp.ref[T]` and the `wp.address_of` intrinsic.

`wp.ref[T]` is a `Reference`: an annotation object (not a type) for a `@wp.func` parameter that receives an
addressable argument (a local, another reference parameter, an array element, a struct field, a component of
a vector, matrix, quaternion or transform) whose storage the callee's writes change. The frontend
(compiler/frontend/refs.py) implements it as copy-in/copy-out, which inlining makes exact.
"""

from __future__ import annotations

from .intrinsics import KernelOnly
from .types import is_array, type_repr


class Reference:
    """`wp.ref[T]`: a reference to a value of type `T` (`dtype` and `value_type` are `T`)."""

    __module__ = "mlwarp.types"

    def __init__(self, dtype):
        self.value_type = dtype

    @property
    def dtype(self):
        return self.value_type

    def __repr__(self):
        return f"wp.ref[{getattr(self.value_type, '__name__', None) or type_repr(self.value_type)}]"

    def __eq__(self, other):
        return isinstance(other, Reference) and self.value_type is other.value_type

    def __hash__(self):
        return hash((Reference, id(self.value_type)))


class ref:
    """`wp.ref[T]`: annotate a `@wp.func` parameter to pass its argument by reference. The argument must be
    addressable (a local variable, a `wp.ref[T]` parameter, an array element, a struct field, a vector, matrix,
    quaternion or transform component); literals, temporaries and call results are rejected. Not allowed in
    `@wp.kernel` signatures."""

    __module__ = "mlwarp"

    def __new__(cls, *args, **kwargs):
        raise TypeError("wp.ref is an annotation: write wp.ref[T]")

    def __class_getitem__(cls, dtype):
        return Reference(dtype)


def is_reference(t) -> bool:
    return isinstance(t, Reference)


def copies_back(annotation) -> bool:
    """Whether an argument passed to a parameter annotated `annotation` is written back (a `wp.ref` of a value;
    a `wp.ref` of an array is the array)."""
    return isinstance(annotation, Reference) and not is_array(annotation.value_type)


def strip_reference(t):
    """`T` for `wp.ref[T]`, else `t` itself."""
    return t.value_type if isinstance(t, Reference) else t


address_of = KernelOnly("address_of", "`wp.address_of(expr)`: the uint64 address of an addressable expression, "
                        "inside kernels and functions.",
                        "wp.address_of() can only be called inside a @wp.kernel or @wp.func body")

def takes_temporaries(function):
    """Marks a @wp.func that stands for one of Warp's builtins: a wp.ref[T] argument may be a temporary (a call's
    result, as `wp.mesh_query_aabb_next(wp.mesh_query_aabb(...), index)`), whose final value is dropped, as a
    Warp builtin's C++ reference parameter binds to a temporary (compiler/frontend/refs.py)."""
    function._wp_takes_temporaries_ = True
    return function


__all__ = ["Reference", "ref", "takes_temporaries", "is_reference", "copies_back", "strip_reference", "address_of"]
