"""`@wp.struct`: user-defined records with C layout.

A struct type knows its fields (name, Warp type) in declaration order, its
ctypes layout (what a kernel argument carries) and the numpy structured dtype
with the same bytes (what `wp.array(dtype=Struct).numpy()` shows). Fields may
be scalars, vectors/matrices/quaternions/transforms, nested structs and arrays
(an array field holds the array's launch descriptor: data, shape, strides).
Instances are built in Python by attribute assignment and passed by value.
"""

from __future__ import annotations

import ctypes
import inspect

import numpy as np

from . import types as wt


def _field_type(cls_name, name, annotation):
    indexed = getattr(annotation, "_wp_indexed_struct_", None)  # wp.indexedarray[...]: its struct (mlwarp/indexed.py)
    if indexed is not None:
        return indexed
    if wt.is_array(annotation) and getattr(annotation, "is_annotation", False):
        return annotation
    t = wt.canonical_type(annotation)
    if t is None:
        raise TypeError(f"struct {cls_name}: field '{name}' has type {annotation!r}, which is not a Warp type "
                        f"(a scalar, vector, matrix, quaternion, transform, struct or wp.array)")
    return t


def _ctype(t):
    if wt.is_array(t):
        from .runtime.abi import descriptor

        return descriptor(t.ndim)
    return t._ctype_


def _numpy_field(t, ctype):
    if wt.is_array(t):
        return np.dtype([("data", np.uint64), ("shape", np.int64, (t.ndim,)), ("strides", np.int64, (t.ndim,))])
    if wt.is_struct(t):
        return t.numpy_dtype()
    if wt.is_composite(t):
        return np.dtype((wt.numpy_dtype(t), wt.inner_shape(t)))
    return np.dtype(t._np_)


class StructInstance:
    """Base of struct instances: fields as attributes, unknown names refused (a typo is an error)."""

    _wp_fields_: list = []

    def __init__(self, **values):
        for name, t in self._wp_fields_:
            object.__setattr__(self, name, _default(t))
        for k, v in values.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        types = dict(self._wp_fields_)
        if name not in types:
            raise AttributeError(f"struct {type(self).__name__} has no field '{name}' (fields: "
                                 f"{', '.join(types)})")
        object.__setattr__(self, name, _convert(type(self).__name__, name, types[name], value))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n, _ in self._wp_fields_)})"

    def _wp_ctype_value_(self):
        """The C value of this instance (arrays as descriptors; the instance keeps them alive)."""
        c = self._ctype_()
        for name, t in self._wp_fields_:
            v = getattr(self, name)
            if wt.is_array(t):
                if v is None:
                    continue
                view = v._np  # the storage view: a CUDA array's holds its device address (numpy() is a host copy)
                d = getattr(c, name)
                d.data = view.ctypes.data
                for k in range(t.ndim):
                    d.shape[k] = view.shape[k]
                    d.strides[k] = view.strides[k]
            elif wt.is_struct(t):
                setattr(c, name, v._wp_ctype_value_())
            elif wt.is_composite(t):
                setattr(c, name, v)
            elif t is wt.float16:
                setattr(c, name, int(np.float16(v).view(np.uint16)))
            elif t is wt.bfloat16:
                setattr(c, name, int(wt.float_to_bf16_bits(float(v))))
            else:
                setattr(c, name, v)
        return c

    def numpy_value(self) -> np.void:
        """This instance as one element of the struct's numpy dtype (the same bytes as the C value)."""
        c = self._wp_ctype_value_()
        return np.frombuffer(bytes(c), dtype=self.numpy_dtype())[0]


def _default(t):
    if wt.is_array(t):
        return None
    if wt.is_composite(t):
        return t()
    return 0.0 if wt.is_float(t) else False if t is wt.bool_ else 0


def _convert(struct_name, name, t, value):
    if wt.is_array(t):
        from .array import array

        if value is not None and not (isinstance(value, array) and value.ndim == t.ndim and value.dtype is t.dtype):
            raise TypeError(f"struct {struct_name} field '{name}' expects {wt.type_name(t)}, got {value!r}")
        return value
    if wt.is_struct(t):
        if type(value) is not t and getattr(value, "_wp_indexed_struct_", None) is not t:  # wp.indexedarray
            raise TypeError(f"struct {struct_name} field '{name}' expects struct {t.__name__}, got "
                            f"{type(value).__name__}")
        return value
    if wt.is_composite(t):
        from .vector import as_argument

        return as_argument(t, value)
    if isinstance(value, wt.scalar_base):
        value = value.value
    return t(value).value


def struct(c, *, module=None):
    """`@wp.struct`: turns an annotated class into a Warp struct type. `module` (Warp's: the module whose hash the
    struct enters) is accepted and changes nothing: mlwarp's kernels hash the struct types they use themselves."""
    cls = c
    module_vars = vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {}
    hints = {k: eval(v, module_vars) if isinstance(v, str) else v  # `from __future__ import annotations`
             for k, v in cls.__dict__.get("__annotations__", {}).items()}
    fields = [(name, _field_type(cls.__name__, name, t)) for name, t in hints.items()]
    if not fields:
        raise TypeError(f"struct {cls.__name__} has no annotated fields")
    ctype = type(f"{cls.__name__}_t", (ctypes.Structure,), {"_fields_": [(n, _ctype(t)) for n, t in fields]})
    np_dtype = np.dtype({"names": [n for n, _ in fields],
                         "formats": [_numpy_field(t, getattr(ctype, n)) for n, t in fields],
                         "offsets": [getattr(ctype, n).offset for n, _ in fields],
                         "itemsize": ctypes.sizeof(ctype)})
    key = f"{cls.__module__}.{cls.__qualname__}{{" + ", ".join(
        f"{n}: {wt.type_key(t) if not wt.is_array(t) else f'array({wt.type_key(t.dtype)}, {t.ndim})'}"
        for n, t in fields) + "}"
    new = type(cls.__name__, (StructInstance,), {
        "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
        "_wp_composite_": "struct", "_wp_fields_": fields, "_ctype_": ctype, "_np_": np_dtype,
        "_shape_": (), "numpy_dtype": classmethod(lambda c: np_dtype),
        "_wp_key_": classmethod(lambda c: key), "_wp_fingerprint_": classmethod(lambda c, seen=None: key)})
    return new
