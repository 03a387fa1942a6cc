"""The builtin table: the single source of truth for Warp's builtins.

Each entry gives a builtin's Python-visible name, its argument constraints,
its result-type rule (read by the frontend) and its lowering to upstream
dialects (read by the `convert-warp-builtins-to-arith` pass). Every entry is also an op
of the warp dialect: `warp.<name>`.

Operators are builtins too (`a + b` is `warp.add`), so that passes treat
them uniformly. This module and the lowerings import MLIR lazily: `import
mlwarp` reads the table's names without loading the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from mlwarp.core import types as wt

# Argument constraints, as in Warp's builtin reference.
CONSTRAINTS: dict[str, Callable] = {
    "Scalar": lambda t: wt.is_scalar(t) and t is not wt.bool_,
    "Float": wt.is_float,
    "Int": wt.is_int,
    "Bool": lambda t: t is wt.bool_,
    "Any": wt.is_scalar,
}


def same_as_first(arg_types):
    return arg_types[0]


def boolean(arg_types):
    return wt.bool_


@dataclass(frozen=True)
class Builtin:
    name: str
    args: tuple  # a constraint name per argument
    result: Callable  # arg types -> result type
    lower: Callable  # (operands: list[ir.Value], result_type: ir.Type) -> ir.Value, at the insertion point
    doc: str = ""
    same_types: bool = True  # all arguments must have one type (Warp: "Input types must be the same")
    py: Callable | None = None  # evaluation in Python scope, where Warp allows it
    coerce: Callable | None = None  # arg types -> the types the frontend converts the arguments to first
    grad: object = None  # derivative rule (see derivatives.py): a Rule, or NOT_DIFFERENTIABLE; None = missing

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


BUILTINS: dict[str, Builtin] = {}


def c_common_types(arg_types):
    """C's usual arithmetic conversions, which Warp's comparisons inherit from C++: `x < 2` with a float32
    `x` compares in float32, int32 against int64 in int64, int32 against uint32 in uint32."""
    if len(set(arg_types)) == 1:
        return list(arg_types)
    floats = [t for t in arg_types if wt.is_float(t)]
    if floats:
        common = max(floats, key=lambda t: t._bits_)
    else:
        ints = [t if t._bits_ >= 32 and t is not wt.bool_ else wt.int32 for t in arg_types]
        common = max(ints, key=lambda t: (t._bits_, t._kind_ == "uint"))
    return [common] * len(arg_types)


def builtin(name, args, result=same_as_first, doc="", same_types=True, py=None, coerce=None, grad=None):
    """Decorates a lowering function and enters the builtin into the table."""

    def register(lower):
        BUILTINS[name] = Builtin(name, tuple(args), result, lower, doc, same_types, py, coerce, grad)
        COMPOSITE_ONLY.discard(name)  # a scalar entry registered after composite overloads of the name
        return lower

    return register


def set_grad(name: str, rule) -> None:
    """Sets the derivative rule of an entry (derivatives.py does this for the scalar builtins)."""
    BUILTINS[name] = replace(BUILTINS[name], grad=rule)


def converted_arg_types(name: str, arg_types: list) -> list:
    """The types a call's arguments are converted to before `resolve` (the same types unless the builtin
    has a `coerce` rule)."""
    b = BUILTINS[name]
    if b.coerce is None or len(arg_types) != len(b.args) or not all(wt.is_scalar(t) for t in arg_types):
        return list(arg_types)
    return b.coerce(arg_types)


def resolve(name: str, arg_types: list) -> object:
    """Checks a call against the table and returns its result type; raises TypeError with Warp's wording."""
    if name in OVERLOADS and (name in COMPOSITE_ONLY or any(wt.is_composite(t) for t in arg_types)):
        return select_overload(name, arg_types).result(arg_types)
    b = BUILTINS[name]
    names = [wt.type_name(t) for t in arg_types]
    if len(arg_types) != len(b.args):
        raise TypeError(f"'{name}' takes {len(b.args)} argument(s), got {len(arg_types)}: {names}")
    if b.same_types and len(set(arg_types)) > 1:
        raise TypeError(f"Input types must be the same, got {names}")
    for t, c in zip(arg_types, b.args):
        if not CONSTRAINTS[c](t):
            raise TypeError(f"Couldn't find a function '{name}' compatible with the arguments '{', '.join(names)}'"
                            f" (expects {b.signature()})")
    return b.result(arg_types)


# -- overloads on composite types (vectors, matrices, quaternions, transforms) ------------
# A name may have overloads on composite types (`add(Vector, Vector)`, `mul(Matrix, Vector)`,
# `dot(Vector, Vector)`); a call whose argument types include a composite, or a name that only has
# composite overloads, is resolved against them, in registration order. Their `result` rule may
# raise TypeError to refuse types the constraints let through (a vec3 times a float64, say).
# Their `lower(args, arg_types, result_type)` gets lowered values (1-D MLIR vectors, see
# vecmath.py) and the Warp types; composites_to_vector.py calls it.
def _composite_kind(kind):
    return lambda t: wt.composite_kind(t) == kind


CONSTRAINTS.update({
    "Vector": _composite_kind("vec"),
    "Matrix": _composite_kind("mat"),
    "Quaternion": _composite_kind("quat"),
    "Transformation": _composite_kind("transform"),
    "VectorLike": lambda t: wt.composite_kind(t) in ("vec", "quat", "transform", "mat"),
})

OVERLOADS: dict[str, list] = {}
COMPOSITE_ONLY: set = set()  # names without a scalar entry of their own


def overload(name, args, result, doc=""):
    """Decorates a composite lowering `lower(args, arg_types, result_type)` and adds it as an overload."""

    def register(lower):
        b = Builtin(name, tuple(args), result, lower, doc, same_types=False)
        OVERLOADS.setdefault(name, []).append(b)
        if name not in BUILTINS:
            BUILTINS[name] = b
            COMPOSITE_ONLY.add(name)
        return lower

    return register


def select_overload(name: str, arg_types: list, in_kernel: bool = True) -> Builtin:
    """The first overload of `name` that accepts `arg_types`; TypeError (Warp's wording) if none does: in kernels,
    Warp's code generator says why composites of different types do not combine ("Input types must be the same,
    got [...]"); its Python scope only that no overload matched."""
    refusal = None  # why the first overload whose constraints the types meet refused them (its rule's words)
    for b in OVERLOADS.get(name, ()):
        if len(b.args) != len(arg_types) or not all(CONSTRAINTS[c](t) for c, t in zip(b.args, arg_types)):
            continue
        try:
            b.result(arg_types)
        except TypeError as e:
            refusal = refusal or str(e)
            continue
        return b
    if in_kernel and refusal is not None and refusal.startswith("Input types must be"):
        raise TypeError(refusal)
    names = ", ".join(wt.type_name(t) for t in arg_types)
    sigs = "; ".join(b.signature() for b in OVERLOADS.get(name, ()))
    raise TypeError(f"Couldn't find a function '{name}' compatible with the arguments '{names}' (overloads: {sigs})")


def fixed_arity(name: str) -> int:
    """The fewest arguments any signature of `name` takes: the dialect gives that many leading operands
    a type of their own (the rest form one variadic group, whose types IRDL requires to be equal)."""
    arities = [len(b.args) for b in OVERLOADS.get(name, ())]
    if name in BUILTINS and name not in COMPOSITE_ONLY:
        arities.append(len(BUILTINS[name].args))
    return min(arities) if arities else 0
