"""The overloads of a table builtin as Warp's Python lists them (`wp.sin.overloads`, `wp.max.input_types`).

The builtin table keeps one entry per builtin, its arguments as constraints ("Float", "Vector", ...), and
the composite overloads of the name. Warp's `Function.overloads` spells each as parameter names and types:
the constraints become Warp's generic types, and for a scalar builtin Python can call (an entry with a
Python-scope evaluation), a concrete overload per scalar type comes first, its result type computed by the
entry's own rule, as Warp's exported overloads do.
"""

from __future__ import annotations

import typing

from mlwarp.core import types as wt
from mlwarp.core.function_signature import BuiltinSignature
from mlwarp.core.matrix_type import matrix
from mlwarp.core.quaternion_type import quaternion
from mlwarp.core.transform_type import transformation
from mlwarp.core.vector_type import vector
from mlwarp.compiler.builtins.params import signatures
from mlwarp.compiler.builtins.table import BUILTINS, COMPOSITE_ONLY, CONSTRAINTS, OVERLOADS

# A constraint of the table as the generic type Warp's reference writes for it.
GENERIC_TYPES = {
    "Scalar": wt.Scalar,
    "Float": wt.Float,
    "Int": wt.Int,
    "Bool": wt.bool_,
    "Any": typing.Any,
    "Vector": vector(typing.Any, wt.Scalar),
    "Matrix": matrix((typing.Any, typing.Any), wt.Scalar),
    "Quaternion": quaternion(wt.Float),
    "Transformation": transformation(wt.Float),
    "VectorLike": typing.Any,
}

# The scalar types a generic stands for, in Warp's order (floating-point first).
_CONCRETE = {
    "Float": wt.float_types,
    "Int": wt.int_types,
    "Scalar": (*wt.float_types, *wt.int_types),
}


def _parameter_names(name: str, nargs: int) -> tuple:
    for names in signatures(name, nargs):
        plain = tuple(n[0] if isinstance(n, tuple) else n for n in names)
        if len(plain) == nargs:
            return plain
    return tuple("abcdefgh"[:nargs])


def _concrete_overloads(entry, names: tuple) -> list:
    """One overload per scalar type for a same-typed scalar entry Python can call; none for the others."""
    if entry.py is None or not entry.same_types or not entry.args:
        return []
    kinds = set(entry.args)
    if len(kinds) != 1 or next(iter(kinds)) not in _CONCRETE:
        return []
    out = []
    for t in _CONCRETE[entry.args[0]]:
        if not CONSTRAINTS[entry.args[0]](t):
            continue
        try:
            result = entry.result([t] * len(entry.args))
        except TypeError:
            continue
        out.append(BuiltinSignature(entry.name, dict.fromkeys(names, t), result, entry.doc))
    return out


def _generic(entry, export: bool) -> BuiltinSignature:
    names = _parameter_names(entry.name, len(entry.args))
    return BuiltinSignature(entry.name, {n: GENERIC_TYPES[c] for n, c in zip(names, entry.args)}, None, entry.doc,
                            export)


def table_overloads(name: str) -> list:
    """Warp's overload list of table builtin `name`: the scalar entry's concrete and generic overloads, then the
    composite overloads, in the order the table resolves them."""
    out = []
    entry = BUILTINS.get(name)
    if entry is not None and name not in COMPOSITE_ONLY:
        out += _concrete_overloads(entry, _parameter_names(name, len(entry.args)))
        out.append(_generic(entry, export=entry.py is not None))
    out += [_generic(b, export=True) for b in OVERLOADS.get(name, ())]
    return out
