"""Value-level helpers for the lowerings of composite builtins.

Composite values are lowered to 1-D MLIR vectors (`vector<N x T>`; a matrix
is its rows, concatenated: `vector<R*C x T>`). `V` wraps a lowered scalar or
vector value with Warp's arithmetic (component-wise, scalars broadcast), so
the lowering of `quat_rotate` reads like its formula. Everything is emitted
at the current insertion point. MLIR is imported lazily (see lazy.py).
"""

from __future__ import annotations

from ..lazy import LazyModule, arith, ir, math

vector = LazyModule("mlir.dialects.vector")


def elem_type(t):
    return t.element_type if isinstance(t, ir.VectorType) else t


def kind_of(t) -> str:
    """"float", "int", "uint" or "bool" for a scalar type or a vector's element type."""
    e = elem_type(t)
    if isinstance(e, ir.FloatType):
        return "float"
    it = ir.IntegerType(e)
    if it.width == 1:
        return "bool"
    return "uint" if it.is_unsigned else "int"


def constant(value, t) -> ir.Value:
    """A scalar constant of (signless) type `t`, or a splat if `t` is a vector type."""
    e = elem_type(t)
    if kind_of(e) == "float":
        attr = ir.FloatAttr.get(e, float(value))
    else:
        attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(ir.IntegerType(e).width), int(value))
    c = arith.ConstantOp(attr.type, attr).result
    return vector.broadcast(t, c) if isinstance(t, ir.VectorType) else c


def _typed_constant(value, t) -> ir.Value:
    """A constant of exactly type `t` (scalar, possibly unsigned, or a vector: splat)."""
    e = elem_type(t)
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(ir.IntegerType(e).width), int(value))
    c = arith.ConstantOp(e, attr).result
    return vector.broadcast(t, c) if isinstance(t, ir.VectorType) else c


def int_division(op: str, a: ir.Value, b: ir.Value, signed: bool) -> ir.Value:
    """a / b ("div", truncating), a // b ("floordiv") or a % b ("rem") on integers (scalars or vectors),
    defined for every operand: LLVM's sdiv/udiv are undefined (x86 raises SIGFPE, killing the process)
    for b == 0 and for MIN / -1. For b == -1 the quotient is -a, wrapping (int8: -128 // -1 == -128, as
    Warp computes narrow division in int and truncates), the remainder 0. For b == 0 (Warp crashes) the
    quotient is 0 and the remainder a, so that a == (a / b) * b + a % b still holds."""
    t = a.type
    zero, one = _typed_constant(0, t), _typed_constant(1, t)
    b_is_zero = arith.CmpIOp(arith.CmpIPredicate.eq, b, zero).result
    unsafe = b_is_zero
    if signed:
        b_is_minus_one = arith.CmpIOp(arith.CmpIPredicate.eq, b, _typed_constant(-1, t)).result
        unsafe = arith.OrIOp(b_is_zero, b_is_minus_one).result
    safe_b = arith.SelectOp(unsafe, one, b).result
    if signed:
        divide = {"div": arith.DivSIOp, "floordiv": arith.FloorDivSIOp, "rem": arith.RemSIOp}[op]
    else:
        divide = {"div": arith.DivUIOp, "floordiv": arith.DivUIOp, "rem": arith.RemUIOp}[op]
    result = divide(a, safe_b).result
    if signed:
        by_minus_one = zero if op == "rem" else arith.SubIOp(zero, a).result
        result = arith.SelectOp(b_is_minus_one, by_minus_one, result).result
    return arith.SelectOp(b_is_zero, a if op == "rem" else zero, result).result


class V:
    """A lowered value (scalar or 1-D vector) with Warp's component-wise arithmetic.

    Lowered integer types are signless, so a V carries its Warp kind ("float", "int", "uint",
    "bool"): unsigned division, comparison and reductions pick the unsigned ops."""

    def __init__(self, value, kind=None):
        if isinstance(value, V):
            kind = kind or value.kind
            value = value.value
        self.value = value
        self.kind = kind or kind_of(value.type)

    @property
    def type(self):
        return self.value.type

    @property
    def is_vector(self) -> bool:
        return isinstance(self.type, ir.VectorType)

    @property
    def length(self) -> int:
        return self.type.shape[0]

    def _pair(self, other):
        other = other if isinstance(other, V) else V(constant(other, elem_type(self.type)), self.kind)
        a, b = self.value, other.value
        if isinstance(a.type, ir.VectorType) and not isinstance(b.type, ir.VectorType):
            b = vector.broadcast(a.type, b)
        elif isinstance(b.type, ir.VectorType) and not isinstance(a.type, ir.VectorType):
            a = vector.broadcast(b.type, a)
        return a, b

    def _arith(self, other, fop, sop, uop=None):
        a, b = self._pair(other)
        k = self.kind
        if k != "float" and sop in ("DivSIOp", "RemSIOp"):
            return V(int_division("div" if sop == "DivSIOp" else "rem", a, b, signed=k == "int"), k)
        op = fop if k == "float" else (uop or sop) if k in ("uint", "bool") else sop
        return V(getattr(arith, op)(a, b).result, k)

    def __add__(self, o):
        return self._arith(o, "AddFOp", "AddIOp")

    def __radd__(self, o):
        return V(o if isinstance(o, V) else constant(o, elem_type(self.type)), self.kind) + self

    def __sub__(self, o):
        return self._arith(o, "SubFOp", "SubIOp")

    def __rsub__(self, o):
        return V(constant(o, elem_type(self.type)), self.kind) - self

    def __mul__(self, o):
        return self._arith(o, "MulFOp", "MulIOp")

    def __rmul__(self, o):
        return self * o

    def __truediv__(self, o):
        return self._arith(o, "DivFOp", "DivSIOp", "DivUIOp")

    def __rtruediv__(self, o):
        return V(constant(o, elem_type(self.type)), self.kind) / self

    def rem(self, o):
        return self._arith(o, "RemFOp", "RemSIOp", "RemUIOp")

    def __neg__(self):
        if self.kind == "float":
            return V(arith.NegFOp(self.value).result, "float")
        return V(constant(0, self.type), self.kind) - self

    def __getitem__(self, k):
        return V(extract(self.value, k), self.kind)

    def cmp(self, pred: str, o) -> "V":
        """Component-wise comparison ("eq", "ne", "lt", "le", "gt", "ge") -> i1 or vector of i1."""
        a, b = self._pair(o)
        k = self.kind
        if k == "float":
            p = {"eq": "OEQ", "ne": "UNE", "lt": "OLT", "le": "OLE", "gt": "OGT", "ge": "OGE"}[pred]
            return V(arith.CmpFOp(getattr(arith.CmpFPredicate, p), a, b).result, "bool")
        p = pred if pred in ("eq", "ne") else ("u" if k in ("uint", "bool") else "s") + pred
        return V(arith.CmpIOp(getattr(arith.CmpIPredicate, p), a, b).result, "bool")


def select(cond, a, b) -> V:
    kind = a.kind if isinstance(a, V) else b.kind if isinstance(b, V) else None
    c, a, b = (x.value if isinstance(x, V) else x for x in (cond, a, b))
    return V(arith.SelectOp(c, a, b).result, kind)


# A component index out of range is undefined in Warp (its C code reads or writes past the value), and kernels
# can hold one that is never reached: `axis[index] = 1.0` of a @wp.func inlined, in an unrolled loop, into the
# branch that `if index < 3` makes dead. MLIR's vector.extract/insert cannot: a static position out of range is
# invalid IR, and upstream's folder turns a dynamic position that folds to such a constant into one. So positions
# are clamped to the last component (`v[i]` with i unsigned past it), statically or with one `minui`.
def _static_position(v: ir.Value, k: int) -> int:
    n = ir.VectorType(v.type).shape[0]
    return k if 0 <= k < n else n - 1


def _dynamic_position(v: ir.Value, k: ir.Value) -> ir.Value:
    last = arith.ConstantOp(ir.IndexType.get(), ir.VectorType(v.type).shape[0] - 1).result
    return arith.MinUIOp(arith.IndexCastOp(ir.IndexType.get(), k).result, last).result


def extract(v: ir.Value, k) -> ir.Value:
    """v[k] for a static int k or a dynamic index value (i32)."""
    if isinstance(k, int):
        return vector.extract(v, [], [_static_position(v, k)])
    return vector.extract(v, [_dynamic_position(v, k)], [ir.ShapedType.get_dynamic_size()])


def insert(v: ir.Value, element: ir.Value, k) -> ir.Value:
    if isinstance(k, int):
        return vector.insert(element, v, [], [_static_position(v, k)])
    return vector.insert(element, v, [_dynamic_position(v, k)], [ir.ShapedType.get_dynamic_size()])


def vec_type(n: int, elem) -> ir.Type:
    return ir.VectorType.get([n], elem)


def from_elements(elements, elem=None) -> V:
    kind = next((e.kind for e in elements if isinstance(e, V)), None)
    vals = [e.value if isinstance(e, V) else e for e in elements]
    return V(vector.from_elements(vec_type(len(vals), elem or vals[0].type), vals), kind)


def components(v) -> list:
    v = v if isinstance(v, V) else V(v)
    return [v[k] for k in range(v.length)]


def slice_(v, start: int, count: int) -> V:
    """Elements [start, start + count) of v."""
    v = V(v)
    return V(vector.shuffle(v.value, v.value, list(range(start, start + count))), v.kind)


def concat(a, b) -> V:
    a, b = V(a), V(b)
    n = a.length + b.length
    return V(vector.shuffle(a.value, b.value, list(range(n))), a.kind)


def reduce_add(v) -> V:
    """The sum of v's components, left to right (as Warp's unrolled C loops add them)."""
    comps = components(v)
    total = comps[0]
    for c in comps[1:]:
        total = total + c
    return total


def dot(a, b) -> V:
    return reduce_add(V(a) * V(b))


def sqrt(x) -> V:
    return V(math.SqrtOp(V(x).value).result, "float")


def unary(op: str, x) -> V:
    return V(getattr(math, op)(V(x).value).result, "float")
