"""Composite types of the warp dialect and the ops that build and take them apart.

Types (IRDL, parametric):
  !warp.vec<N, T>              Warp's vector of N scalars T (also spatial_vector: N = 6)
  !warp.mat<R, C, T>           row-major R x C matrix
  !warp.quat<T>                quaternion, components (x, y, z, w)
  !warp.transform<T>           rigid transform: p (3) then q (4)
  !warp.struct<"Name", [T...]> a @wp.struct, fields in declaration order

The types are declared in IRDL in dialect.py, the ops that build and take them apart in the op table
(ops.py, constraints checked by the verifier):
  warp.construct   (elements...) -> composite      components in storage order; no operand = zero value
  warp.extract     (composite, i32...) -> value    v[i], m[i, j], m[i] (a row), q[i]
  warp.insert      (V, value, i32...) -> V         the value with one element (or row) replaced
  warp.struct_get  (struct) -> field               {field = k}
  warp.struct_set  (S, field value) -> S           {field = k}
  warp.struct_field_grad (struct) -> array         {field = k}: the gradient recorded beside an array field
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from mlir import ir

from .builders import builtin, create
from .dialect import dialect_type_text, is_array_type
from .explain import split_top_level as split_params  # `a, b<c, d>, [e, f]` at top-level commas


@dataclass(frozen=True)
class Composite:
    """What a composite MLIR type is: kind ("vec", "mat", "quat", "transform", "struct"), its
    shape (() for structs), its scalar type (vector-likes) or field types (structs)."""

    kind: str
    shape: tuple
    dtype: ir.Type | None = None
    fields: tuple = ()
    name: str = ""

    @property
    def length(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


_HEAD = re.compile(r"^!warp\.(vec|mat|quat|transform|struct)<")


def is_composite_type(t: ir.Type) -> bool:
    # Builtin and LLVM types come back as their own Python classes; only dialect (IRDL) types are plain
    # ir.Type, so most checks never print the type.
    return type(t) is ir.Type and _composite(t) is not None


def storage_layout(t: ir.Type):
    """(size, alignment) in bytes of a value of type `t` in memory (Warp's C layout, as ctypes lays a struct
    out): scalars (bool: 1 byte), vectors, matrices, quaternions, transforms (packed scalars), array
    descriptors (a struct field), structs (C rules); None for a type with no storage."""
    if isinstance(t, (ir.IntegerType, ir.FloatType)):
        size = max(1, t.width // 8)
        return size, size
    if is_array_type(t):  # a struct's array field: Warp's array_t (data, grad, int32 shape[4] and strides[4],
        return 56, 8      # ndim and flags as uint16; convert-warp-composites-to-vector's WARP_ARRAY_FIELD)
    if isinstance(t, ir.VectorType):  # a lowered vec/mat value
        size, align = storage_layout(t.element_type)
        return size * _product(t.shape), align
    c = composite(t)
    if c is None:
        return None
    if c.kind != "struct":
        size, align = storage_layout(c.dtype)
        return c.length * size, align
    offset, align = 0 if c.fields else 1, 1  # an empty struct: one byte (see storage_type)
    for f in c.fields:
        layout = storage_layout(f)
        if layout is None:
            return None
        fsize, falign = layout
        offset = (offset + falign - 1) // falign * falign + fsize
        align = max(align, falign)
    return (offset + align - 1) // align * align, align


def _product(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _int(p: str) -> int:
    return int(p.split(":")[0])


def composite(t: ir.Type) -> Composite | None:
    if type(t) is not ir.Type:
        return None
    return _composite(t)


# (a kernel's passes ask about the same few types thousands of times, and a struct's text is long; a cached type
# keeps its context alive until it is evicted, so a key never meets a later context's type at the same address)
@functools.lru_cache(maxsize=4096)
def _composite(t: ir.Type) -> Composite | None:
    s = dialect_type_text(t)
    m = _HEAD.match(s)
    if not m:
        return None
    kind = m.group(1)
    params = split_params(s[m.end():-1])
    if kind == "vec":
        return Composite("vec", (_int(params[0]),), ir.Type.parse(params[1]))
    if kind == "mat":
        return Composite("mat", (_int(params[0]), _int(params[1])), ir.Type.parse(params[2]))
    if kind == "quat":
        return Composite("quat", (4,), ir.Type.parse(params[0]))
    if kind == "transform":
        return Composite("transform", (7,), ir.Type.parse(params[0]))
    fields = params[1].strip()[1:-1]
    return Composite("struct", (), None, tuple(ir.Type.parse(f) for f in split_params(fields)),
                     params[0].strip('"'))


def struct_type(name: str, fields) -> ir.Type:
    return ir.Type.parse(f'!warp.struct<"{name}", [{", ".join(str(f) for f in fields)}]>')


# -- builders ------------------------------------------------------------------------
def _field_attr(k: int):
    return {"field": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)}


def construct(t: ir.Type, elements) -> ir.Value:
    return create("construct", elements, results=[t]).result


def extract(value: ir.Value, indices, result: ir.Type) -> ir.Value:
    return create("extract", value, indices, results=[result]).result


def insert(value: ir.Value, element: ir.Value, indices) -> ir.Value:
    return create("insert", value, element, indices).result


def struct_get(value: ir.Value, k: int, result: ir.Type) -> ir.Value:
    return create("struct_get", value, results=[result], attributes=_field_attr(k)).result


def struct_field_grad(value: ir.Value, k: int, result: ir.Type) -> ir.Value:
    return create("struct_field_grad", value, results=[result], attributes=_field_attr(k)).result


def struct_set(value: ir.Value, k: int, element: ir.Value) -> ir.Value:
    return create("struct_set", value, element, attributes=_field_attr(k)).result


# -- Warp's field-by-field arithmetic of structs (tile +, -, tile_sum, tile atomics) ---------------------------
def has_atomic_add(scalar: ir.Type) -> bool:
    """A scalar with an atomic add (CUDA's atomicAdd types, Warp's rule for accumulating): floats, 32/64-bit ints."""
    if isinstance(scalar, ir.FloatType):
        return True
    return isinstance(scalar, ir.IntegerType) and ir.IntegerType(scalar).width in (32, 64)


def accumulates(t: ir.Type) -> bool:
    """Whether a struct's field of type `t` takes part in Warp's field-wise add, subtract, sum and atomic add: its
    scalars have an atomic add (vectors and matrices of them too), a nested struct recursing; the others (bool,
    8/16-bit ints, arrays) ride along unchanged, so the operations agree with each other (Warp's codegen_struct)."""
    if is_array_type(t):
        return False
    c = composite(t)
    if c is not None:
        return c.kind == "struct" or has_atomic_add(c.dtype)
    return has_atomic_add(t)


def struct_fieldwise(kind: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """`a + b` or `a - b` (kind "add" / "sub") of two values of one struct type, field by field as Warp: the fields
    that accumulate (`accumulates`) combined, nested structs recursively; the others keep `a`'s value."""
    c = composite(a.type)
    for k, f in enumerate(c.fields):
        if not accumulates(f):
            continue
        fa, fb = struct_get(a, k, f), struct_get(b, k, f)
        fc = composite(f)
        field = struct_fieldwise(kind, fa, fb) if fc is not None and fc.kind == "struct" else builtin(kind, [fa, fb], f)
        a = struct_set(a, k, field)
    return a
