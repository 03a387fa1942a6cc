"""`@wp.struct`: user-defined records with C layout.

A struct type knows its fields (name, Warp type) in declaration order, its
ctypes layout (what a kernel argument carries) and the numpy structured dtype
with the same bytes (what `wp.array(dtype=Struct).numpy()` shows). Fields may
be scalars, vectors/matrices/quaternions/transforms, nested structs and arrays
(an array field holds Warp's C array_t: the data and gradient addresses, int32 shape and byte strides, ndim).
Instances are built in Python by attribute assignment and passed by value.
"""

from __future__ import annotations

import ctypes
import inspect
import re
import typing
import warnings

import numpy as np

from mlwarp.core import types as wt
from mlwarp.runtime.abi import WarpArrayField
from mlwarp.runtime.device import get_device


def _field_type(cls_name, name, annotation):
    # wp.indexedarray[...], wp.fabricarray[...]: their kernel struct (python/mlwarp/arrays/indexed.py, python/mlwarp/arrays/fabric.py); a
    # Fabric field of any ndim has one struct for either (_wp_field_struct_)
    indexed = getattr(annotation, "_wp_field_struct_", None) or getattr(annotation, "_wp_indexed_struct_", None)
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
        return WarpArrayField
    return t._ctype_


def _numpy_field(t, ctype):
    if wt.is_array(t):  # Warp's array_t (WarpArrayField's layout)
        return np.dtype({"names": ["data", "grad", "shape", "strides", "ndim", "flags"],
                         "formats": [np.uint64, np.uint64, (np.int32, (4,)), (np.int32, (4,)), np.uint16, np.uint16],
                         "offsets": [0, 8, 16, 32, 48, 50], "itemsize": 56})
    if wt.is_struct(t):
        return t._np_
    if wt.is_composite(t):
        return np.dtype((wt.numpy_dtype(t), wt.inner_shape(t)))
    return np.dtype(t._np_)


class StructField:
    """One field of a struct type as Warp's `Struct.vars` shows it: its name (`label`) and its Warp type."""

    __slots__ = ("label", "type")

    def __init__(self, label: str, type_):
        self.label = label
        self.type = type_

    def __repr__(self):
        return f"<StructField {self.label}: {wt.type_name(self.type)}>"


class StructInstance:
    """Base of struct instances: fields as attributes, unknown names refused (a typo is an error).

    As Warp's, a field reads back what was assigned: a Warp scalar as its field's Warp type, a Python number as
    itself (the C value is made at launch), a composite or nested struct by value (a copy), an array as itself."""

    _wp_fields_: list = []

    def __init_subclass__(cls, **kwargs):
        # Warp's structs are not classes one can derive from (its `class Child(Parent)` fails at once): a
        # subclass of a struct type would inherit fields the compiler never sees in its annotations
        if any(issubclass(b, StructInstance) and b is not StructInstance for b in cls.__bases__):
            raise RuntimeError("Warp structs must be defined as base classes")
        super().__init_subclass__(**kwargs)

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
        t = types[name]
        if wt.is_struct(t) and not hasattr(t, "_wp_indexed_") and not hasattr(t, "_wp_fabric_"):
            _check_struct(t, value)
            getattr(self, name).assign(value)
            return
        object.__setattr__(self, name, _convert(name, t, value))
        if wt.is_array(t) or hasattr(t, "_wp_indexed_"):
            # Warp keeps the gradient alive as long as the field may point at it (its descriptor holds the
            # grad pointer); a field that no longer can lets it go
            data = value.data if hasattr(t, "_wp_indexed_") and value is not None else value
            grad = data.grad if data is not None and data.requires_grad else None
            object.__setattr__(self, f"_{name}_grad", grad)

    def assign(self, value):
        """Copies the fields of `value` (an instance of this struct type) into this instance."""
        _check_struct(type(self), value)
        for name, _ in self._wp_fields_:
            setattr(self, name, getattr(value, name))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n, _ in self._wp_fields_)})"

    def to(self, device):
        """A copy of this instance with its array fields on `device` (arrays already there are shared)."""
        out = type(self)()
        for name, t in self._wp_fields_:
            value = getattr(self, name)
            if value is not None and hasattr(t, "_wp_fabric_"):  # Warp's: Fabric memory stays where it is
                if value.device is not None and value.device != get_device(device):
                    raise ValueError(f"Cannot move struct field '{name}' containing a Warp "
                                     f"{_fabric_description(t)} from device {value.device} to {device}")
            elif value is not None and (wt.is_array(t) or wt.is_struct(t)):
                value = value.to(device)
            setattr(out, name, value)
        return out

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
                d.ndim = t.ndim
                grad = getattr(self, f"_{name}_grad", None)  # (Warp's array_t records its gradient's address)
                if grad is not None and grad._np.strides == view.strides and grad._np.shape == view.shape:
                    d.grad = grad._np.ctypes.data  # (read with the data's strides: a grad laid out otherwise is none)
            elif wt.is_struct(t):
                if hasattr(t, "_wp_fabric_"):  # a Fabric array field (none: zeros, as Warp's empty descriptor)
                    if v is not None:  # (in the field's struct: one of any ndim takes either)
                        setattr(c, name, v._wp_ctype_value_(t))
                else:
                    setattr(c, name, v._wp_ctype_value_())
            elif wt.is_composite(t):
                setattr(c, name, v)
            else:
                setattr(c, name, _scalar_bits(t, v))
        return c

    def __ctype__(self):
        """Warp's name for the C value (what `Launch.set_param_at_index_from_ctype` takes)."""
        return self._wp_ctype_value_()

    def numpy_value(self) -> np.void:
        """This instance as one element of the struct's numpy dtype (the same bytes as the C value)."""
        c = self._wp_ctype_value_()
        return np.frombuffer(bytes(c), dtype=self._np_)[0]


def _scalar_bits(t, v):
    """What the C field of scalar type `t` stores for the Python value `v` (half floats: their bits)."""
    if isinstance(v, wt.scalar_base):
        v = v.value
    if t is wt.float16:
        return int(np.float16(v).view(np.uint16))
    if t is wt.bfloat16:
        return int(wt.float_to_bf16_bits(float(v)))
    return v


def _default(t):
    if wt.is_array(t) or hasattr(t, "_wp_fabric_"):
        return None
    if wt.is_struct(t):
        return t()
    if wt.is_composite(t):
        return t(*([0] * t._length_))  # zero as Warp's struct memory (wp.transform() alone is the identity)
    return t()


def _check_struct(t, value):
    if not wt.is_struct(type(value)):
        raise RuntimeError(f"Trying to assign a non-structure value to a struct attribute with type: {t.__name__}")
    if type(value) is not t:
        raise RuntimeError(f"Trying to assign a structure of type {type(value).__name__} to an attribute of "
                           f"{t.__name__}")


def _check_array(name, value, is_family, description, dtype, ndim):
    if not is_family(value):
        raise TypeError(f"Struct field '{name}' expects {description}, got {type(value).__name__}")
    if value.dtype is not dtype:
        raise TypeError(f"Struct field '{name}' expects dtype {wt.type_repr(dtype)}, got {wt.type_repr(value.dtype)}")
    if ndim is not typing.Any and value.ndim != ndim:
        raise TypeError(f"Struct field '{name}' expects an array with {ndim} dimension(s), got {value.ndim} "
                        f"dimension(s)")


def _convert(name, t, value):
    if wt.is_array(t):
        if value is not None:
            from mlwarp.arrays.array import array

            _check_array(name, value, lambda v: isinstance(v, array), "a Warp array", t.dtype, t.ndim)
        return value
    indexed = getattr(t, "_wp_indexed_", None)
    if indexed is not None:  # a wp.indexedarray field: the array itself (its kernel struct is made at launch)
        if value is None:
            return t()
        # (indexed.py builds on this module: its class is known by its marker)
        _check_array(name, value, lambda v: getattr(type(v), "_wp_indexed_", None) is True, "a Warp indexed array",
                     *indexed)
        return value
    fabric = getattr(t, "_wp_fabric_", None)
    if fabric is not None:  # a wp.fabricarray / wp.indexedfabricarray field: the array itself, or None
        if value is not None:  # (fabric.py builds on this module: its classes are known by their marker)
            dtype, ndim, indexed = fabric
            _check_array(name, value, lambda v: getattr(type(v), "_wp_fabric_", None) is True and
                         v.indexed == indexed, f"a Warp {_fabric_description(t)}", dtype, ndim)
        return value
    if wt.is_composite(t):
        if value is None:
            return _default(t)
        if isinstance(value, (bool, np.bool_, np.integer, np.floating, wt.bool_)):
            warnings.warn(f"Implicit conversion from a value of type `{type(value).__name__}` to the composite type "
                          f"`{wt.type_repr(t)}` for struct field '{name}' is deprecated. Construct the value "
                          f"explicitly, e.g.: `{wt.type_repr(t)}(...)`.", DeprecationWarning, stacklevel=3)
            if isinstance(value, wt.scalar_base):
                value = value.value
            value = float(value) if isinstance(value, np.floating) else int(value)
            return t(*([value] * t._length_))  # every component, transforms too (as Warp broadcasts them)
        if not hasattr(value, "__len__"):
            raise TypeError(f"Struct field '{name}' expects {wt.type_repr(t)} but got a single value of type "
                            f"{type(value).__name__}. Construct the value explicitly, e.g.: {wt.type_repr(t)}(...).")
        from mlwarp.core.vector import as_argument

        value = as_argument(t, value)
        return t(value) if value is not None else value  # a copy: the field is a value, as in Warp
    if value is None:
        return t()
    if isinstance(value, wt.scalar_base):
        value = t(value.value)  # a Warp scalar keeps the field's Warp type
        _scalar_ctype(t, value.value)
        return value
    _scalar_ctype(t, value)  # as Warp, the C conversion refuses what the field cannot hold (1.5 in an int)
    return value


def _fabric_description(t) -> str:
    return "indexed Fabric array" if t._wp_fabric_[2] else "Fabric array"


def _scalar_ctype(t, value):
    if t is wt.float16 or t is wt.bfloat16:
        return float(value)
    return t._ctype_(value)


def struct(c=None, *, module=None):
    """`@wp.struct`: turns an annotated class into a Warp struct type. The type's `cls` is the class as written
    (instances are instances of it too). `module` is accepted for Warp's signature: a struct's code is
    made with each kernel that uses it, so it belongs to no module."""
    if c is None:
        return lambda cls: struct(cls, module=module)
    cls = c
    module_vars = vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {}
    hints = {k: eval(v, module_vars) if isinstance(v, str) else v  # `from __future__ import annotations`
             for k, v in cls.__dict__.get("__annotations__", {}).items()}
    fields = [(name, _field_type(cls.__name__, name, t)) for name, t in hints.items()]
    # an empty struct still takes a byte, as Warp's (C has no empty structs; kernels pass it by value)
    c_fields = [(n, _ctype(t)) for n, t in fields] or [("_dummy_", ctypes.c_byte)]
    ctype = type(f"{cls.__name__}_t", (ctypes.Structure,), {"_fields_": c_fields})
    # numpy_dtype() is Warp's: the dict that np.dtype() takes (names, formats, offsets, itemsize); _np_ the dtype
    spec = {"names": [n for n, _ in fields], "formats": [_numpy_field(t, getattr(ctype, n)) for n, t in fields],
            "offsets": [getattr(ctype, n).offset for n, _ in fields], "itemsize": ctypes.sizeof(ctype)}
    np_dtype = np.dtype(spec)
    key = f"{cls.__module__}.{cls.__qualname__}{{" + ", ".join(
        f"{n}: {wt.type_key(t) if not wt.is_array(t) else f'array({wt.type_key(t.dtype)}, {t.ndim})'}"
        for n, t in fields) + "}"
    new = type(cls.__name__, (cls, StructInstance), {
        "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__, "cls": cls,
        "_wp_composite_": "struct", "_wp_fields_": fields, "_ctype_": ctype, "_np_": np_dtype,
        "vars": {n: StructField(n, t) for n, t in fields},  # Warp's Struct.vars: the fields by name, in order
        "_shape_": (), "numpy_dtype": classmethod(lambda c: {k: list(v) if isinstance(v, list) else v
                                                        for k, v in spec.items()}),
        "key": re.sub("[^0-9a-zA-Z_]+", "", cls.__qualname__.replace(".", "__")),  # Warp's Struct.key
        "_wp_key_": classmethod(lambda c: key), "_wp_fingerprint_": classmethod(lambda c, seen=None: key)})
    return new
