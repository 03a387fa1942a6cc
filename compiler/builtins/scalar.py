"""Scalar builtins: Python operators and Warp's scalar math, with their lowerings to arith/math."""

from __future__ import annotations

import operator

import numpy as np

from mlwarp.core import types as wt

from ..lazy import arith, ir, math
from . import pyscope as ps
from .pyscope import python_scope
from .table import boolean, builtin, c_common_types
from .vecmath import int_division


def kind(t: ir.Type) -> str:
    """Warp's view of a lowered MLIR type: "float", "int", "uint" or "bool"."""
    if isinstance(t, ir.FloatType):
        return "float"
    it = ir.IntegerType(t)
    if it.width == 1:
        return "bool"
    return "uint" if it.is_unsigned else "int"


def _by_kind(float_op, int_op, uint_op=None):
    """A binary lowering choosing the arith op (named, so that MLIR loads lazily) by the operands' kind."""

    def lower(args, result_type):
        k = kind(args[0].type)
        op = float_op if k == "float" else (uint_op or int_op) if k in ("uint", "bool") else int_op
        return getattr(arith, op)(*args).result

    return lower


def _constant_like(value, t: ir.Type) -> ir.Value:
    if kind(t) == "float":
        return arith.ConstantOp(t, ir.FloatAttr.get(t, float(value))).result
    # The attribute is signless: unsigned result types become signless at the end of the lowering pass.
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(ir.IntegerType(t).width), int(value))
    return arith.ConstantOp(t, attr).result


# -- arithmetic operators -----------------------------------------------------
def _division(op, float_lower):
    """Floats: `float_lower`; integers: vecmath.int_division (defined for b == 0 and MIN / -1)."""

    def lower(args, result_type):
        a, b = args
        k = kind(a.type)
        if k == "float":
            return float_lower(a, b)
        return int_division(op, a, b, signed=k == "int")

    return lower


def _op(name, args, lower, doc, py, **kw):
    builtin(name, args, doc=doc, py=python_scope(name, py), **kw)(lower)


_op("add", ["Scalar", "Scalar"], _by_kind("AddFOp", "AddIOp"), "a + b", operator.add)
_op("sub", ["Scalar", "Scalar"], _by_kind("SubFOp", "SubIOp"), "a - b", operator.sub)
_op("mul", ["Scalar", "Scalar"], _by_kind("MulFOp", "MulIOp"), "a * b", operator.mul)

_INT_DIVISION_DOC = "; integer x / 0 is 0 (and x % 0 is x), MIN / -1 wraps to MIN"
_op("div", ["Scalar", "Scalar"], _division("div", lambda a, b: arith.DivFOp(a, b).result),
    "a / b; integer division truncates toward zero, as in C" + _INT_DIVISION_DOC, ps.c_div)
_op("mod", ["Scalar", "Scalar"], _division("rem", lambda a, b: arith.RemFOp(a, b).result),
    "a % b; the remainder has the sign of a, as C's fmod and %" + _INT_DIVISION_DOC, ps.c_mod)
builtin("floordiv", ["Scalar", "Scalar"], doc="a // b, rounding toward negative infinity" + _INT_DIVISION_DOC,
        py=python_scope("floordiv", ps.floordiv))(
    _division("floordiv", lambda a, b: math.FloorOp(arith.DivFOp(a, b).result).result))


@builtin("pos", ["Scalar"], doc="+a: a itself", py=python_scope("pos", lambda a: a))
def _pos(args, result_type):
    return args[0]


@builtin("neg", ["Scalar"], doc="-a, computed as 0 - a as in Warp (so -(+0.0) is +0.0)",
         py=python_scope("neg", lambda a: a.dtype.type(0) - a))
def _neg(args, result_type):
    (a,) = args
    if kind(a.type) == "float":
        return arith.SubFOp(_constant_like(0, a.type), a).result
    return arith.SubIOp(_constant_like(0, a.type), a).result


@builtin("pow", ["Float", "Float"], doc="x ** y", py=python_scope("pow", ps.in_double(np.power)))
def _pow(args, result_type):
    return math.PowFOp(*args).result


# -- comparisons --------------------------------------------------------------
_CMP = {  # name: (float predicate, signed predicate, unsigned predicate)
    "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"), "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"), "ge": ("oge", "sge", "uge"),
}


def compare(pred_name: str, a: ir.Value, b: ir.Value) -> ir.Value:
    fpred, spred, upred = _CMP[pred_name]
    k = kind(a.type)
    if k == "float":
        return arith.CmpFOp(getattr(arith.CmpFPredicate, fpred.upper()), a, b).result
    pred = upred if k in ("uint", "bool") else spred
    return arith.CmpIOp(getattr(arith.CmpIPredicate, pred), a, b).result


for _name in _CMP:
    builtin(_name, ["Any", "Any"], result=boolean, doc=f"comparison '{_name}'", coerce=c_common_types)(
        lambda args, result_type, _n=_name: compare(_n, *args))

# -- boolean and bitwise operators ---------------------------------------------
builtin("bool_and", ["Bool", "Bool"], doc="a and b (both sides are evaluated)")(
    lambda args, result_type: arith.AndIOp(*args).result)
builtin("bool_or", ["Bool", "Bool"], doc="a or b (both sides are evaluated)")(
    lambda args, result_type: arith.OrIOp(*args).result)
builtin("bool_not", ["Bool"], doc="not a")(
    lambda args, result_type: arith.XOrIOp(args[0], _constant_like(1, args[0].type)).result)
_op("bit_and", ["Int", "Int"], lambda args, result_type: arith.AndIOp(*args).result, "a & b", operator.and_)
_op("bit_or", ["Int", "Int"], lambda args, result_type: arith.OrIOp(*args).result, "a | b", operator.or_)
_op("bit_xor", ["Int", "Int"], lambda args, result_type: arith.XOrIOp(*args).result, "a ^ b", operator.xor)
_op("lshift", ["Int", "Int"], lambda args, result_type: arith.ShLIOp(*args).result, "a << b", np.left_shift)
_op("rshift", ["Int", "Int"], _by_kind(None, "ShRSIOp", "ShRUIOp"),
    "a >> b (arithmetic for signed, logical for unsigned)", np.right_shift)
_op("invert", ["Int"], lambda args, result_type: arith.XOrIOp(args[0], _constant_like(-1, args[0].type)).result,
    "~a", np.invert)


def _bit_count_py(x):
    """Set bits of x's two's-complement pattern in its own width (Python's int.bit_count counts |x|)."""
    return int(x.astype(x.dtype.newbyteorder("=")).view(f"u{x.dtype.itemsize}")).bit_count()


@builtin("bit_count", ["Int"], result=lambda arg_types: wt.int32,
         doc="the number of set bits of x (signed x: of its two's-complement pattern), as an int32",
         py=python_scope("bit_count", _bit_count_py))
def _bit_count(args, result_type):
    return lower_cast(math.CtPopOp(args[0]).result, result_type)


# -- math -------------------------------------------------------------------------
# Definitions follow Warp's native builtin.h, so results match Warp's CPU bit for bit where the
# operation is exact (sign(0) == 1, step(x) = x < 0, degrees in double then rounded, fmin-style min/max).
def _float_unary(name, op, doc, py):
    builtin(name, ["Float"], doc=doc, py=python_scope(name, py))(
        lambda args, result_type: getattr(math, op)(args[0]).result)


for _name, _op_name, _doc, _py in [
    ("sin", "SinOp", "sine (radians)", ps.in_double(np.sin)),
    ("cos", "CosOp", "cosine (radians)", ps.in_double(np.cos)),
    ("tan", "TanOp", "tangent (radians)", ps.in_double(np.tan)),
    ("atan", "AtanOp", "arc tangent", ps.in_double(np.arctan)),
    ("sinh", "SinhOp", "hyperbolic sine", ps.in_double(np.sinh)),
    ("cosh", "CoshOp", "hyperbolic cosine", ps.in_double(np.cosh)),
    ("tanh", "TanhOp", "hyperbolic tangent", ps.in_double(np.tanh)),
    ("sqrt", "SqrtOp", "square root", np.sqrt),
    ("cbrt", "CbrtOp", "cube root", ps.in_double(np.cbrt)),
    ("exp", "ExpOp", "e ** x", ps.in_double(np.exp)),
    ("log", "LogOp", "natural logarithm", ps.in_double(np.log)),
    ("log2", "Log2Op", "base-2 logarithm", ps.in_double(np.log2)),
    ("log10", "Log10Op", "base-10 logarithm", ps.in_double(np.log10)),
    ("floor", "FloorOp", "largest integer <= x", np.floor),
    ("ceil", "CeilOp", "smallest integer >= x", np.ceil),
    ("round", "RoundOp", "nearest integer, halves away from zero (C round)", ps.c_round),
    ("rint", "RoundEvenOp", "nearest integer, halves to even (C rint)", np.rint),
    ("trunc", "TruncOp", "x rounded toward zero", np.trunc),
    ("erf", "ErfOp", "the error function", np.vectorize(__import__("math").erf, otypes=[np.float64])),
    ("erfc", "ErfcOp", "the complementary error function", np.vectorize(__import__("math").erfc, otypes=[np.float64]))]:
    if _py is None:
        builtin(_name, ["Float"], doc=_doc)(lambda args, result_type, _o=_op_name: getattr(math, _o)(args[0]).result)
    else:
        _float_unary(_name, _op_name, _doc, _py)


# -- inverse error functions ------------------------------------------------------------------------------
# Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011) as
# the first guess, then two Newton steps on erf in float64, rounded once to the argument's type (float32 and
# float16 results equal Warp's CPU ones). erfinv(+-1) = +-inf, NaN outside [-1, 1]; erfcinv(a) is
# erfinv(1 - a), as Warp computes it.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
               0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _giles(w_log, f):
    """The approximation's factor p(w) for w = -log((1 - x)(1 + x)), emitted in type `f` (erfinv(x) ~ p x)."""
    c = lambda v: _constant_like(v, f)  # noqa: E731

    def horner(coeffs, w):
        p = c(coeffs[0])
        for k in coeffs[1:]:
            p = arith.AddFOp(c(k), arith.MulFOp(p, w).result).result
        return p

    central = horner(_GILES_CENTRAL, arith.SubFOp(w_log, c(2.5)).result)
    tail = horner(_GILES_TAIL, arith.SubFOp(math.SqrtOp(w_log).result, c(3.0)).result)
    return arith.SelectOp(compare("lt", w_log, c(5.0)), central, tail).result


def _inverse_erf(complement: bool):
    def lower(args, result_type):
        (a,) = args
        f64 = ir.F64Type.get()
        x = a if a.type == f64 else arith.ExtFOp(f64, a).result
        c = lambda v: _constant_like(v, f64)  # noqa: E731
        one = c(1.0)
        if complement:  # erfcinv(a) = erfinv(1 - a), as Warp's (so inf below a = ulp(1) / 2, as there)
            x = arith.SubFOp(one, x).result
        y = x
        prod = arith.MulFOp(arith.SubFOp(one, x).result, arith.AddFOp(one, x).result).result
        w = arith.NegFOp(math.LogOp(prod).result).result
        r = arith.MulFOp(_giles(w, f64), y).result
        for _ in range(2):
            slope = arith.MulFOp(c(_TWO_OVER_SQRT_PI), math.ExpOp(arith.NegFOp(arith.MulFOp(r, r).result).result)
                                 .result).result
            step = arith.DivFOp(arith.SubFOp(math.ErfOp(r).result, x).result, slope).result
            # a step only where it is finite (the tails, where erf's slope underflows, keep the first guess)
            finite = arith.AndIOp(compare("gt", slope, c(0.0)),
                                  compare("lt", math.AbsFOp(step).result, c(float("inf")))).result
            r = arith.SelectOp(finite, arith.SubFOp(r, step).result, r).result
        edge = compare("eq", prod, c(0.0))  # x = +-1: the infinity of x's sign
        r = arith.SelectOp(edge, math.CopySignOp(c(float("inf")), y).result, r).result
        if a.type == f64:
            return r
        f32 = ir.F32Type.get()
        r = arith.TruncFOp(f32, r).result  # half from float (no double-to-half conversion in the runtime)
        return r if a.type == f32 else arith.TruncFOp(a.type, r).result

    return lower


def _inverse_erf_py(complement: bool):
    import math as pymath

    def f(a):
        a = 1.0 - float(a) if complement else float(a)
        y, prod = a, (1.0 - a) * (1.0 + a)
        if not prod >= 0.0:
            return np.float64("nan")
        if prod == 0.0:
            return np.float64(pymath.copysign(pymath.inf, y))
        w = -pymath.log(prod)
        coeffs, v = (_GILES_CENTRAL, w - 2.5) if w < 5.0 else (_GILES_TAIL, pymath.sqrt(w) - 3.0)
        p = coeffs[0]
        for k in coeffs[1:]:
            p = k + p * v
        r = p * y
        for _ in range(2):
            slope = _TWO_OVER_SQRT_PI * pymath.exp(-r * r)
            if slope > 0.0:
                step = (pymath.erf(r) - a) / slope
                r = r - step if pymath.isfinite(step) else r
        return np.float64(r)

    return f


builtin("erfinv", ["Float"], doc="the inverse error function: erf(erfinv(x)) = x on [-1, 1]",
        py=python_scope("erfinv", _inverse_erf_py(False)))(_inverse_erf(False))
builtin("erfcinv", ["Float"], doc="the inverse complementary error function: erfc(erfcinv(x)) = x on [0, 2]",
        py=python_scope("erfcinv", _inverse_erf_py(True)))(_inverse_erf(True))


def _unit_interval(x):
    """min(max(x, -1), 1) with Warp's fmin/fmax (so NaN becomes -1, as in Warp)."""
    return _min_max("l")([_min_max("g")([x, _constant_like(-1, x.type)], x.type), _constant_like(1, x.type)], x.type)


for _name, _op_name, _np_op, _doc in [("asin", "AsinOp", np.arcsin, "arc sine"),
                                      ("acos", "AcosOp", np.arccos, "arc cosine")]:
    builtin(_name, ["Float"], doc=f"{_doc} of x clamped to [-1, 1] (Warp's definition)",
            py=python_scope(_name, ps.in_double(lambda x, _f=_np_op: _f(ps.fmin(ps.fmax(x, -1.0), 1.0)))))(
        lambda args, result_type, _o=_op_name: getattr(math, _o)(_unit_interval(args[0])).result)


@builtin("atan2", ["Float", "Float"], doc="atan2(y, x): the angle of (x, y) in radians",
         py=python_scope("atan2", ps.in_double(np.arctan2)))
def _atan2(args, result_type):
    # C's atan2 at y == x == 0 (+-0 or +-pi by the signs), spelled out: MLIR's constant folder makes
    # math.atan2(0, 0) NaN, while libm and Warp give these values
    y, x = args
    c = lambda v: _constant_like(v, x.type)  # noqa: E731
    both_zero = arith.AndIOp(compare("eq", y, c(0)), compare("eq", x, c(0))).result
    x_negative = compare("lt", math.CopySignOp(c(1), x).result, c(0))
    at_zero = math.CopySignOp(arith.SelectOp(x_negative, c(np.pi), c(0)).result, y).result
    return arith.SelectOp(both_zero, at_zero, math.Atan2Op(y, x).result).result


@builtin("copysign", ["Float", "Float"], doc="|x| with the sign of y", py=python_scope("copysign", np.copysign))
def _copysign(args, result_type):
    return math.CopySignOp(*args).result


@builtin("frac", ["Float"], doc="x - trunc(x)", py=python_scope("frac", lambda x: x - np.trunc(x)))
def _frac(args, result_type):
    (x,) = args
    return arith.SubFOp(x, math.TruncOp(x).result).result


def _times_double(constant):
    """x * <C double literal>, as Warp's C++ computes it: in double, then rounded back to x's type."""

    def lower(args, result_type):
        (x,) = args
        f64 = ir.F64Type.get()
        wide = x if x.type == f64 else arith.ExtFOp(f64, x).result
        product = arith.MulFOp(wide, _constant_like(constant, f64)).result
        return product if x.type == f64 else lower_cast(product, x.type)  # (a half through float, as Warp)

    return lower


_RAD_TO_DEG = 57.29577951308232087679
_DEG_TO_RAD = 0.01745329251994329577
builtin("degrees", ["Float"], doc="radians to degrees",
        py=python_scope("degrees", lambda x: np.float64(x) * _RAD_TO_DEG))(_times_double(_RAD_TO_DEG))
builtin("radians", ["Float"], doc="degrees to radians",
        py=python_scope("radians", lambda x: np.float64(x) * _DEG_TO_RAD))(_times_double(_DEG_TO_RAD))


@builtin("abs", ["Scalar"], doc="|x|", py=python_scope("abs", np.abs))
def _abs(args, result_type):
    (x,) = args
    k = kind(x.type)
    if k == "float":
        return math.AbsFOp(x).result
    if k == "uint":
        return x
    return math.AbsIOp(x).result


def _select(pred_name, a, b, if_true, if_false):
    return arith.SelectOp(compare(pred_name, a, b), if_true, if_false).result


def _min_max(pred_name):
    """Integers: `a < b ? a : b`. Floats, as Warp's C fmin/fmax: `a <= b ? a : (b == b ? b : a)`, so a
    NaN operand loses to a number."""

    def lower(args, result_type):
        a, b = args
        if kind(a.type) != "float":
            return _select(pred_name + "t", a, b, a, b)
        return _select(pred_name + "e", a, b, a, _select("eq", b, b, b, a))

    return lower


builtin("min", ["Scalar", "Scalar"], doc="the smaller of a and b", py=python_scope("min", ps.fmin))(_min_max("l"))
builtin("max", ["Scalar", "Scalar"], doc="the larger of a and b", py=python_scope("max", ps.fmax))(_min_max("g"))


@builtin("clamp", ["Scalar", "Scalar", "Scalar"], doc="min(max(a, x), b)",
         py=python_scope("clamp", lambda x, lo, hi: ps.fmin(ps.fmax(lo, x), hi)))
def _clamp(args, result_type):
    x, lo, hi = args
    return _min_max("l")([_min_max("g")([lo, x], result_type), hi], result_type)


def _sign_like(name, doc, if_negative, otherwise, pred="lt"):
    """`x <pred> 0 ? if_negative : otherwise`, in x's type (Warp: sign(0) == 1, step(x) = x < 0)."""

    def lower(args, result_type):
        (x,) = args
        zero = _constant_like(0, x.type)
        return _select(pred, x, zero, _constant_like(if_negative, x.type), _constant_like(otherwise, x.type))

    def py(x):
        hit = (x < 0) if pred == "lt" else (x == 0)
        return if_negative if hit else otherwise

    builtin(name, ["Scalar"], doc=doc, py=python_scope(name, py))(lower)


_sign_like("sign", "-1 if x < 0 else 1", -1, 1)
_sign_like("step", "1 if x < 0 else 0", 1, 0)
_sign_like("nonzero", "0 if x == 0 else 1", 0, 1, pred="eq")


def _float_class(name, doc, float_lower, int_value, py):
    """isnan/isinf/isfinite: on floats by comparison; on integers a constant, as Warp's overloads."""

    def lower(args, result_type):
        (x,) = args
        if kind(x.type) != "float":
            return _constant_like(int_value, ir.IntegerType.get_signless(1))
        return float_lower(x)

    builtin(name, ["Scalar"], result=boolean, doc=doc, py=python_scope(name, py))(lower)


def _inf_like(x):
    return _constant_like(float("inf"), x.type)


_float_class("isnan", "x is NaN", lambda x: compare_unordered(x, x), 0, np.isnan)
_float_class("isinf", "x is +inf or -inf", lambda x: compare("eq", math.AbsFOp(x).result, _inf_like(x)), 0, np.isinf)
_float_class("isfinite", "x is neither infinite nor NaN",
             lambda x: compare("lt", math.AbsFOp(x).result, _inf_like(x)), 1, np.isfinite)


def compare_unordered(a, b):
    return arith.CmpFOp(arith.CmpFPredicate.UNO, a, b).result


@builtin("lerp", ["Float", "Float", "Float"], doc="a * (1 - t) + b * t",
         py=python_scope("lerp", lambda a, b, t: a * (t.dtype.type(1) - t) + b * t))
def _lerp(args, result_type):
    a, b, t = args
    one = _constant_like(1, t.type)
    return arith.AddFOp(arith.MulFOp(a, arith.SubFOp(one, t).result).result, arith.MulFOp(b, t).result).result


def _smoothstep_py(e0, e1, x):
    T = x.dtype.type
    t = ps.fmin(ps.fmax(T(0), (x - e0) / (e1 - e0)), T(1))
    return t * t * (T(3) - T(2) * t)


@builtin("smoothstep", ["Float", "Float", "Float"], doc="Hermite interpolation of x between edges e0 and e1",
         py=python_scope("smoothstep", _smoothstep_py))
def _smoothstep(args, result_type):
    e0, e1, x = args
    c = lambda v: _constant_like(v, x.type)  # noqa: E731
    ratio = arith.DivFOp(arith.SubFOp(x, e0).result, arith.SubFOp(e1, e0).result).result
    t = _clamp([ratio, c(0), c(1)], result_type)
    return arith.MulFOp(arith.MulFOp(t, t).result, arith.SubFOp(c(3), arith.MulFOp(c(2), t).result).result).result


def lower_cast(x: ir.Value, to: ir.Type) -> ir.Value:
    """Numeric conversion as C does it: float->int truncates, anything->bool is `x != 0`."""
    src, dst = kind(x.type), kind(to)
    if x.type == to:
        return x
    if dst == "bool":
        return compare("ne", x, _constant_like(0, x.type))
    if src == "float" and dst == "float":
        f16, f64 = ir.F16Type.get(), ir.F64Type.get()
        if {x.type, to} == {f16, f64}:  # through float, as Warp's half(float) (and LLVM has no f64<->f16 here)
            return lower_cast(lower_cast(x, ir.F32Type.get()), to)
        wider = ir.FloatType(to).width > ir.FloatType(x.type).width
        return (arith.ExtFOp if wider else arith.TruncFOp)(to, x).result
    if src == "float":
        return (arith.FPToUIOp if dst == "uint" else arith.FPToSIOp)(to, x).result
    if dst == "float":
        return (arith.SIToFPOp if src == "int" else arith.UIToFPOp)(to, x).result
    sw, dw = ir.IntegerType(x.type).width, ir.IntegerType(to).width
    if dw < sw:
        return arith.TruncIOp(to, x).result
    if dw > sw:
        return (arith.ExtSIOp if src == "int" else arith.ExtUIOp)(to, x).result
    return arith.BitcastOp(to, x).result


# -- selection --------------------------------------------------------------------------------------
def _where_result(arg_types):
    cond, if_true, if_false = arg_types
    if not (cond is wt.bool_ or wt.is_int(cond)):
        raise TypeError(f"where(cond, a, b): cond must be a bool or an integer, got {wt.type_name(cond)}")
    if if_true is not if_false:
        raise TypeError(f"where() true value type ({wt.type_name(if_true)}) must be of the same type as the "
                        f"false type ({wt.type_name(if_false)})")
    return if_true


def _truth(x: ir.Value) -> ir.Value:
    """An i1 for a bool or an integer (nonzero is true), as C's `!!cond`."""
    return x if kind(x.type) == "bool" else compare("ne", x, _constant_like(0, x.type))


@builtin("where", ["Any", "Any", "Any"], result=_where_result, same_types=False,
         doc="a if cond else b (both are evaluated); cond is a bool or an integer (nonzero is true)",
         py=python_scope("where", lambda cond, a, b: a if cond else b))
def _where(args, result_type):
    cond, if_true, if_false = args
    return arith.SelectOp(_truth(cond), if_true, if_false).result
