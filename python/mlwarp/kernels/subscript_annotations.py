"""Warp 1.19's subscript annotations: `wp.array[float]`, `wp.array2d[wp.vec3]`, `wp.array[float, Literal[2]]`,
`wp.indexedarray[float, Any]`. Each is a small value, not an array: equal (and hashing alike) when the array
kind, dtype and ndim agree, printed as the source spelling that evaluates back to it, and combinable with `|`
into a typing.Union for Python-scope signatures (kernels and functions refuse unions). The dtype is only
mapped to its Warp type (`float` -> float32); one Warp does not know passes through, to be refused when a
kernel is built, as Warp defers it."""

from __future__ import annotations

import sys
import types as py_types
import typing

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError
from mlwarp.core.vector_type import vector


def dtype_of_annotation(dtype):
    if dtype is typing.Any or isinstance(dtype, typing.TypeVar):
        return dtype
    return wt.canonical_type(dtype) or dtype


def ndim_parameter(ndim, max_dims: int = 4):
    """`n`, `typing.Literal[n]` or `Any`."""
    if typing.get_origin(ndim) is typing.Literal:
        args = typing.get_args(ndim)
        if len(args) != 1:
            raise TypeError(f"Expected a single Literal value for ndim, got {ndim!r}")
        ndim = args[0]
    if ndim is typing.Any:
        return ndim
    if not isinstance(ndim, int) or isinstance(ndim, bool):
        raise TypeError(f"ndim must be an integer, got {ndim!r}")
    if not 1 <= ndim <= max_dims:
        raise ValueError(f"ndim must be between 1 and {max_dims}, got {ndim}")
    return ndim


def dtype_repr(dtype) -> str:
    """`wp.float32`, `wp.vec3f`, a struct's name, `Any`: the dtype as a subscript spells it."""
    if dtype is typing.Any:
        return "Any"
    package = sys.modules.get("mlwarp")
    name = getattr(dtype, "__name__", None)
    if name and getattr(package, name, None) is dtype:
        return f"wp.{name}"
    short = wt.type_name(dtype) if wt.canonical_type(dtype) is not None else None
    if short and getattr(package, short, None) is dtype:
        return f"wp.{short}"
    return short or name or repr(dtype)


class ArrayMember:
    """One member of an array type a kernel reads (Warp's `array.vars`): its name (`label`) and its type."""

    __slots__ = ("label", "type")

    def __init__(self, label: str, type_):
        self.label = label
        self.type = type_

    def __repr__(self):
        return f"<ArrayMember {self.label}: {wt.type_name(self.type)}>"


class ArrayAnnotationBase:
    __slots__ = ("dtype", "ndim", "_vars")
    kind = ""  # the class a subscript names: "array", "indexedarray"
    is_annotation = True
    device = None

    def __init__(self, dtype, ndim=1):
        self.dtype = dtype_of_annotation(dtype)
        self.ndim = ndim
        self._vars = None

    @property
    def vars(self) -> dict:
        """The members a kernel reads of an array of this type, by name (Warp's `vars`: `shape`, and for a
        plain array the data pointer `ptr`), made once per annotation."""
        if self._vars is None:
            self._vars = {"shape": ArrayMember("shape", vector(4, wt.int32))}  # Warp's shape_t: 4 int32 dims
            if self.kind == "array":
                self._vars["ptr"] = ArrayMember("data", wt.uint64)  # the address of the first element
        return self._vars

    def __repr__(self):
        dtype = dtype_repr(self.dtype)
        if self.ndim is typing.Any:
            return f"wp.{self.kind}[{dtype}, Any]"
        if self.ndim == 1:
            return f"wp.{self.kind}[{dtype}]"
        if self.kind == "array":
            return f"wp.array{self.ndim}d[{dtype}]"
        return f"wp.{self.kind}[{dtype}, Literal[{self.ndim}]]"

    def __eq__(self, other):
        if isinstance(other, ArrayAnnotationBase):
            return self.kind == other.kind and self.dtype == other.dtype and self.ndim == other.ndim
        return NotImplemented

    def __hash__(self):
        return hash((self.kind, self.dtype, self.ndim))

    def __or__(self, other):
        return typing.Union[self, other]  # noqa: UP007  (an annotation instance is no type: `X | Y` can't)

    def __ror__(self, other):
        return typing.Union[other, self]  # noqa: UP007


class ArrayAnnotation(ArrayAnnotationBase):
    """`wp.array[dtype]`, `wp.array[dtype, ndim]`, `wp.arrayNd[dtype]`: a kernel parameter's array type."""

    __slots__ = ()
    kind = "array"
    _wp_array_ = True  # what mlwarp.core.types.is_array recognises

    def __init__(self, dtype, ndim=1):
        super().__init__(dtype, ndim)

    @property
    def _wp_generic_(self) -> bool:
        return self.ndim is typing.Any or self.dtype is typing.Any


def is_union(annotation) -> bool:
    """`a: wp.array[float] | float`, `int | float`, `typing.Optional[...]`: Python-scope only, as in Warp."""
    return typing.get_origin(annotation) is typing.Union or isinstance(annotation, py_types.UnionType)


UNION_REFUSED = "Union type annotations are only supported at Python scope"


def refuse_unions(py_func, hints: dict, what: str) -> None:
    """A kernel's or function's parameter or result annotated with a union: refused where it is declared (Warp
    types each value once; a union is for Python-scope signatures)."""
    for name, annotation in hints.items():
        if is_union(annotation):
            code = py_func.__code__
            where = "the result" if name == "return" else f"argument '{name}'"
            raise CompileError(f"{UNION_REFUSED}: {where} of {what} '{py_func.__name__}' is annotated "
                               f"{annotation!r}", code.co_filename, code.co_firstlineno, None, py_func.__name__)
