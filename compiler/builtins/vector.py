"""Builtins on vectors (and the component-wise ones shared by every vector-like type:
matrices, quaternions, transforms), as overloads in the builtin table.

Result rules follow Warp's builtin reference: operands of one type; a scalar
operand has the vector's scalar type. Lowerings get 1-D MLIR vectors (vecmath.py).
"""

from __future__ import annotations

from mlwarp.core import types as wt
from mlwarp.core.vector import matrix, vector

from . import vecmath as vm
from .table import overload
from .vecmath import V


def _names(types):
    return ", ".join(wt.type_name(t) for t in types)


def same(types, how="the same"):
    """All operands of one composite type; the result is that type (Warp's message otherwise)."""
    if len(set(types)) != 1:
        raise TypeError(f"Input types must be {how}, got {[wt.type_name(t) for t in types]}")
    return types[0]


def scalar_of(types):
    return wt.scalar_type_of(same(types))


def with_scalar(types):
    """(composite, scalar) or (scalar, composite): the scalar must be the composite's scalar type."""
    c = types[0] if wt.is_composite(types[0]) else types[1]
    s = types[1] if c is types[0] else types[0]
    if s is not wt.scalar_type_of(c):
        raise TypeError(f"{wt.type_name(c)} can only be combined with {wt.type_name(wt.scalar_type_of(c))}, "
                        f"got {wt.type_name(s)}")
    return c


def boolean(types):
    same(types)
    return wt.bool_


def float_vec(types):
    t = same(types)
    if not wt.is_float(wt.scalar_type_of(t)):
        raise TypeError(f"expects a float vector, got {wt.type_name(t)}")
    return t


def vec_type(n, scalar):
    return vector(n, scalar)


def mat_type(rows, cols, scalar):
    return matrix((rows, cols), scalar)


# -- arithmetic operators ---------------------------------------------------------------
for _op, _fn in (("add", lambda a, b: a + b), ("sub", lambda a, b: a - b)):
    overload(_op, ["VectorLike", "VectorLike"], same, doc=f"component-wise {_op}")(
        lambda args, types, rt, _fn=_fn: _fn(V(args[0]), V(args[1])).value)

for _name in ("mul", "div"):
    _f = (lambda a, b: a * b) if _name == "mul" else (lambda a, b: a / b)
    overload(_name, ["VectorLike", "Scalar"], with_scalar, doc=f"{_name} by a scalar, component-wise")(
        lambda args, types, rt, _f=_f: _f(V(args[0]), V(args[1])).value)
    overload(_name, ["Scalar", "VectorLike"], with_scalar, doc=f"scalar {_name} vector, component-wise")(
        lambda args, types, rt, _f=_f: _f(V(args[0]), V(args[1])).value)

overload("neg", ["VectorLike"], same, doc="-v")(lambda args, types, rt: (-V(args[0])).value)
overload("pos", ["VectorLike"], same, doc="+v")(lambda args, types, rt: args[0])


def _all_equal(args, types, rt):
    eq = V(args[0]).cmp("eq", V(args[1]))
    comps = vm.components(eq)
    out = comps[0]
    for c in comps[1:]:
        out = V(vm.arith.AndIOp(out.value, c.value).result)
    return out.value


overload("eq", ["VectorLike", "VectorLike"], boolean, doc="all components equal")(_all_equal)
overload("ne", ["VectorLike", "VectorLike"], boolean, doc="some component differs")(
    lambda args, types, rt: vm.arith.XOrIOp(_all_equal(args, types, rt), vm.constant(1, vm.ir.IntegerType.get_signless(1))).result)


# -- vector math -------------------------------------------------------------------------
def _vec_or_quat(types):
    t = same(types, "exactly the same")
    if wt.composite_kind(t) not in ("vec", "quat"):
        raise TypeError(f"expects vectors or quaternions, got {_names(types)}")
    return t


overload("dot", ["VectorLike", "VectorLike"], lambda ts: wt.scalar_type_of(_vec_or_quat(ts)),
         doc="sum of component products")(lambda args, types, rt: vm.dot(args[0], args[1]).value)


def _vec3(types):
    t = same(types)
    if wt.inner_shape(t) != (3,) or wt.composite_kind(t) != "vec":
        raise TypeError(f"cross expects two 3-vectors, got {_names(types)}")
    return t


@overload("cross", ["Vector", "Vector"], _vec3, doc="the cross product of two 3-vectors")
def _cross(args, types, rt):
    a, b = V(args[0]), V(args[1])
    return vm.from_elements([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]).value


overload("length_sq", ["VectorLike"], lambda ts: wt.scalar_type_of(_vec_or_quat(ts)), doc="dot(v, v)")(
    lambda args, types, rt: vm.dot(args[0], args[0]).value)
overload("length", ["VectorLike"], lambda ts: wt.scalar_type_of(float_vec(ts) and _vec_or_quat(ts)),
         doc="sqrt(dot(v, v))")(lambda args, types, rt: vm.sqrt(vm.dot(args[0], args[0])).value)


@overload("normalize", ["Vector"], float_vec,
          doc="v / length(v); the zero vector when length(v) is 0, as in Warp")
def _normalize(args, types, rt):
    v = V(args[0])
    n = vm.sqrt(vm.dot(v, v))
    zero = vm.constant(0, v.type)
    return vm.select(n.cmp("gt", 0.0), (v / n).value, zero).value


overload("cw_mul", ["VectorLike", "VectorLike"], same, doc="component-wise product")(
    lambda args, types, rt: (V(args[0]) * V(args[1])).value)
overload("cw_div", ["VectorLike", "VectorLike"], same, doc="component-wise quotient")(
    lambda args, types, rt: (V(args[0]) / V(args[1])).value)


def scalar_min_max(pred, a: V, b: V) -> V:
    """Warp's scalar min/max, component-wise: integers `a < b ? a : b`; floats C's fmin/fmax
    (`a <= b ? a : (b == b ? b : a)`), so a NaN loses to a number."""
    if a.kind != "float":
        return vm.select(a.cmp(pred + "t", b), a.value, b.value)
    b_or_a = vm.select(b.cmp("eq", b), b.value, a.value)
    return vm.select(a.cmp(pred + "e", b), a.value, b_or_a.value)


overload("min", ["Vector", "Vector"], same, doc="component-wise minimum")(
    lambda args, types, rt: scalar_min_max("l", V(args[0]), V(args[1])).value)
overload("max", ["Vector", "Vector"], same, doc="component-wise maximum")(
    lambda args, types, rt: scalar_min_max("g", V(args[0]), V(args[1])).value)


def _reduce(pred):
    def lower(args, types, rt):
        comps = vm.components(args[0])
        best = comps[0]
        for c in comps[1:]:
            best = scalar_min_max(pred, best, c)
        return best.value

    return lower


overload("min", ["Vector"], lambda ts: wt.scalar_type_of(ts[0]), doc="the smallest component")(_reduce("l"))
overload("max", ["Vector"], lambda ts: wt.scalar_type_of(ts[0]), doc="the largest component")(_reduce("g"))


def _arg_reduce(pred):
    """Index (uint32) of the first extreme component, NaN components skipped (all NaN: 0), as Warp's."""

    def lower(args, types, rt):
        comps = vm.components(args[0])
        best, idx = comps[0], V(vm.constant(0, rt), "uint")
        for k, c in enumerate(comps[1:], 1):
            better = c.cmp(pred, best)
            if c.kind == "float":  # a NaN best (the leading NaN slots) is replaced by any number
                better = V(vm.arith.OrIOp(better.value, best.cmp("ne", best).value).result, "bool")
                better = V(vm.arith.AndIOp(better.value, c.cmp("eq", c).value).result, "bool")
            best = vm.select(better, c.value, best.value)
            idx = vm.select(better, vm.constant(k, rt), idx.value)
        return idx.value

    return lower


overload("argmin", ["Vector"], lambda ts: wt.uint32, doc="index of the smallest component")(_arg_reduce("lt"))
overload("argmax", ["Vector"], lambda ts: wt.uint32, doc="index of the largest component")(_arg_reduce("gt"))


@overload("abs", ["VectorLike"], same, doc="component-wise |x|")
def _abs(args, types, rt):
    v = V(args[0])
    if v.kind == "uint":
        return v.value
    return vm.select(v.cmp("lt", 0), (-v).value, v.value).value


@overload("sign", ["Vector"], same, doc="component-wise sign: -1 where x < 0, else 1 (Warp's rule)")
def _sign(args, types, rt):
    v = V(args[0])
    return vm.select(v.cmp("lt", 0), vm.constant(-1, v.type), vm.constant(1, v.type)).value


@overload("outer", ["Vector", "Vector"],
          lambda ts: mat_type(wt.inner_shape(ts[0])[0], wt.inner_shape(ts[1])[0], scalar_of(
              [wt.scalar_type_of(ts[0]), wt.scalar_type_of(ts[1])])), doc="a b^T")
def _outer(args, types, rt):
    a, b = V(args[0]), V(args[1])
    rows = [b * a[i] for i in range(a.length)]
    out = rows[0]
    for r in rows[1:]:
        out = vm.concat(out, r)
    return out.value


# -- more component-wise builtins (Warp's vec.h) -----------------------------------------------------------
def _lerp_rule(types):
    t = same(types[:2])
    if types[2] is not wt.scalar_type_of(t) or not wt.is_float(types[2]):
        raise TypeError(f"lerp(a, b, t): t must be {wt.type_name(wt.scalar_type_of(t))}, got {_names(types)}")
    return t


overload("lerp", ["VectorLike", "VectorLike", "Float"], _lerp_rule, doc="a * (1 - t) + b * t")(
    lambda args, types, rt: (V(args[0]) * (1.0 - V(args[2])) + V(args[1]) * V(args[2])).value)
overload("mod", ["Vector", "Vector"], same, doc="component-wise remainder (C's fmod and %)")(
    lambda args, types, rt: V(args[0]).rem(V(args[1])).value)


def _any(bits: V) -> V:
    comps = vm.components(bits)
    out = comps[0]
    for c in comps[1:]:
        out = V(vm.arith.OrIOp(out.value, c.value).result, "bool")
    return out


def _bool_const(value):
    return vm.constant(int(value), vm.ir.IntegerType.get_signless(1))


def _is_inf(v: V) -> V:
    return V(vm.math.AbsFOp(v.value).result, "float").cmp("eq", float("inf"))


def _float_test(test, non_float):
    def lower(args, types, rt):
        v = V(args[0])
        if v.kind != "float":
            return _bool_const(non_float)
        return test(v).value

    return lower


overload("isnan", ["VectorLike"], boolean, doc="whether some component is NaN")(
    _float_test(lambda v: _any(v.cmp("ne", v)), False))
overload("isinf", ["VectorLike"], boolean, doc="whether some component is infinite")(
    _float_test(lambda v: _any(_is_inf(v)), False))
overload("isfinite", ["VectorLike"], boolean, doc="whether every component is finite")(
    _float_test(lambda v: V(vm.arith.XOrIOp(_any(V(vm.arith.OrIOp(v.cmp("ne", v).value, _is_inf(v).value).result,
                                                    "bool")).value, _bool_const(1)).result, "bool"), True))


def _int_vec(types):
    t = same(types)
    if not wt.is_int(wt.scalar_type_of(t)):
        raise TypeError(f"expects integer vectors, got {_names(types)}")
    return t


# vectors and matrices of ints alike: a matrix is its components' flat vector here (composites_to_vector.py)
for _kind in ("Vector", "Matrix"):
    for _name, _op, _uop in (("bit_and", "AndIOp", None), ("bit_or", "OrIOp", None), ("bit_xor", "XOrIOp", None),
                             ("lshift", "ShLIOp", None), ("rshift", "ShRSIOp", "ShRUIOp")):
        overload(_name, [_kind, _kind], _int_vec, doc=f"component-wise {_name}")(
            lambda args, types, rt, _op=_op, _uop=_uop: getattr(vm.arith, _uop if _uop and V(args[0]).kind == "uint"
                                                                else _op)(V(args[0]).value, V(args[1]).value).result)
    overload("invert", [_kind], _int_vec, doc="component-wise ~x")(
        lambda args, types, rt: vm.arith.XOrIOp(V(args[0]).value, vm.constant(-1, V(args[0]).type)).result)


def _spatial_pair(types):
    t = same(types)
    if wt.inner_shape(t) != (6,) or wt.composite_kind(t) != "vec":
        raise TypeError(f"expects two spatial vectors, got {_names(types)}")
    return t


def _cross3(a, b):
    return vm.from_elements([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


@overload("spatial_cross", ["Vector", "Vector"], _spatial_pair, doc="(wa x wb, va x wb + wa x vb)")
def _spatial_cross(args, types, rt):
    wa, va, wb, vb = (vm.slice_(x, k, 3) for x in args for k in (0, 3))
    return vm.concat(_cross3(wa, wb), _cross3(va, wb) + _cross3(wa, vb)).value


@overload("spatial_cross_dual", ["Vector", "Vector"], _spatial_pair, doc="(wa x wb + va x vb, wa x vb)")
def _spatial_cross_dual(args, types, rt):
    wa, va, wb, vb = (vm.slice_(x, k, 3) for x in args for k in (0, 3))
    return vm.concat(_cross3(wa, wb) + _cross3(va, vb), _cross3(wa, vb)).value


def _adjoint_rule(types):
    t = same(types)
    if wt.inner_shape(t) != (3, 3) or not wt.is_float(wt.scalar_type_of(t)):
        raise TypeError(f"expects two 3x3 float matrices, got {_names(types)}")
    return mat_type(6, 6, wt.scalar_type_of(t))


@overload("spatial_adjoint", ["Matrix", "Matrix"], _adjoint_rule, doc="the 6x6 block matrix [[r, 0], [s, r]]")
def _spatial_adjoint(args, types, rt):
    rs = vm.concat(args[0], args[1])  # r: elements 0..8, s: 9..17 (row-major); 18: a zero
    zeros = vm.constant(0.0, vm.vec_type(9, vm.elem_type(V(args[0]).value.type)))
    idx = []
    for i in range(3):
        idx += [3 * i, 3 * i + 1, 3 * i + 2, 18, 18, 18]
    for i in range(3):
        idx += [9 + 3 * i, 10 + 3 * i, 11 + 3 * i, 3 * i, 3 * i + 1, 3 * i + 2]
    return vm.vector.shuffle(rs.value, zeros, idx)


def _where_rule(types):
    if not (types[0] is wt.bool_ or wt.is_int(types[0])):  # Warp's overloads: bool and the integer types
        raise TypeError(f"where(cond, a, b): cond must be a bool or an integer, got {_names(types)}")
    return same(types[1:])


@overload("where", ["Any", "VectorLike", "VectorLike"], _where_rule, doc="a if cond else b (both are evaluated)")
def _where(args, types, rt):
    c = V(args[0])
    cond = c.value if c.kind == "bool" else c.cmp("ne", 0).value
    return vm.select(cond, args[1], args[2]).value
