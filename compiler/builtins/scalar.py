"""Scalar builtins: Python operators and Warp's scalar math, with their lowerings to arith/math."""

from __future__ import annotations

from ..lazy import arith, ir, math
from .table import boolean, builtin, c_common_types


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
builtin("add", ["Scalar", "Scalar"], doc="a + b")(_by_kind("AddFOp", "AddIOp"))
builtin("sub", ["Scalar", "Scalar"], doc="a - b")(_by_kind("SubFOp", "SubIOp"))
builtin("mul", ["Scalar", "Scalar"], doc="a * b")(_by_kind("MulFOp", "MulIOp"))
builtin("div", ["Scalar", "Scalar"], doc="a / b; integer division truncates toward zero, as in C")(
    _by_kind("DivFOp", "DivSIOp", "DivUIOp"))
builtin("mod", ["Scalar", "Scalar"], doc="a % b; the remainder has the sign of a, as C's fmod and %")(
    _by_kind("RemFOp", "RemSIOp", "RemUIOp"))


@builtin("floordiv", ["Scalar", "Scalar"], doc="a // b, rounding toward negative infinity")
def _floordiv(args, result_type):
    a, b = args
    k = kind(a.type)
    if k == "float":
        return math.FloorOp(arith.DivFOp(a, b).result).result
    if k == "uint":
        return arith.DivUIOp(a, b).result
    return arith.FloorDivSIOp(a, b).result


@builtin("neg", ["Scalar"], doc="-a")
def _neg(args, result_type):
    (a,) = args
    if kind(a.type) == "float":
        return arith.NegFOp(a).result
    return arith.SubIOp(_constant_like(0, a.type), a).result


@builtin("pow", ["Float", "Float"], doc="x ** y")
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
builtin("bit_and", ["Int", "Int"], doc="a & b")(lambda args, result_type: arith.AndIOp(*args).result)
builtin("bit_or", ["Int", "Int"], doc="a | b")(lambda args, result_type: arith.OrIOp(*args).result)
builtin("bit_xor", ["Int", "Int"], doc="a ^ b")(lambda args, result_type: arith.XOrIOp(*args).result)
builtin("lshift", ["Int", "Int"], doc="a << b")(lambda args, result_type: arith.ShLIOp(*args).result)
builtin("rshift", ["Int", "Int"], doc="a >> b (arithmetic for signed, logical for unsigned)")(
    _by_kind(None, "ShRSIOp", "ShRUIOp"))
builtin("invert", ["Int"], doc="~a")(
    lambda args, result_type: arith.XOrIOp(args[0], _constant_like(-1, args[0].type)).result)


# -- math -------------------------------------------------------------------------
def _float_unary(name, op, doc):
    builtin(name, ["Float"], doc=doc)(lambda args, result_type: getattr(math, op)(args[0]).result)


_float_unary("sin", "SinOp", "sine (radians)")
_float_unary("cos", "CosOp", "cosine (radians)")
_float_unary("tan", "TanOp", "tangent (radians)")
_float_unary("sqrt", "SqrtOp", "square root")
_float_unary("exp", "ExpOp", "e ** x")
_float_unary("log", "LogOp", "natural logarithm")
_float_unary("floor", "FloorOp", "largest integer <= x")
_float_unary("ceil", "CeilOp", "smallest integer >= x")


@builtin("abs", ["Scalar"], doc="|x|")
def _abs(args, result_type):
    (x,) = args
    k = kind(x.type)
    if k == "float":
        return math.AbsFOp(x).result
    if k == "uint":
        return x
    return math.AbsIOp(x).result


def _select_by(pred_name):
    """min/max with Warp's C definition (`a < b ? a : b`), which also fixes the NaN behaviour."""

    def lower(args, result_type):
        a, b = args
        return arith.SelectOp(compare(pred_name, a, b), a, b).result

    return lower


builtin("min", ["Scalar", "Scalar"], doc="the smaller of a and b")(_select_by("lt"))
builtin("max", ["Scalar", "Scalar"], doc="the larger of a and b")(_select_by("gt"))


@builtin("clamp", ["Scalar", "Scalar", "Scalar"], doc="min(max(x, a), b)")
def _clamp(args, result_type):
    x, lo, hi = args
    return _select_by("lt")([_select_by("gt")([lo, x], result_type), hi], result_type)


def lower_cast(x: ir.Value, to: ir.Type) -> ir.Value:
    """Numeric conversion as C does it: float->int truncates, anything->bool is `x != 0`."""
    src, dst = kind(x.type), kind(to)
    if x.type == to:
        return x
    if dst == "bool":
        return compare("ne", x, _constant_like(0, x.type))
    if src == "float" and dst == "float":
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
