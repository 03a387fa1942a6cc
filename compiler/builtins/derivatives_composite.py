"""Derivative rules of the composite overloads (vectors, matrices; see vector.py, matrix.py).

Written like the scalar rules (derivatives.py), with vjp/jvp where a partial
is a Jacobian:
  Bilinear   f(a, b) linear in each argument (products): jvp = f(ta, b) + f(a, tb),
             vjp given per argument as the transposed map.
  Linear     f linear in all its arguments (transpose, diag, skew, ...): jvp = f(tangents),
             vjp given.
  Componentwise  a vector version of a scalar builtin (abs, min, max, sign): the scalar rule
             applied per component through warp.extract / warp.insert.
Overloads whose result carries no derivative (eq, ne, argmin, argmax) are NOT_DIFFERENTIABLE.
Subgradients follow Warp and the forward lowering: normalize and length have zero gradient at
the zero vector; determinant/inverse use Warp's inverse (zero for a singular matrix).
"""

from __future__ import annotations

from dataclasses import replace

from mlwarp.core.vector import vector

from .derivatives import NOT_DIFFERENTIABLE, Expansion, Partials, Rule, V, call, const, select, warp_type
from .table import BUILTINS, OVERLOADS


def set_overload_grad(name: str, args, rule) -> None:
    """Sets the rule of the overload of `name` whose constraints are `args` (if it exists)."""
    entries = OVERLOADS.get(name, [])
    for k, b in enumerate(entries):
        if b.args == tuple(args):
            new = replace(b, grad=rule)
            entries[k] = new
            if BUILTINS.get(name) is b:
                BUILTINS[name] = new


# -- helpers over composite values ---------------------------------------------------------
def shape_of(v: V):
    from ..dialects.warp import composite as wc  # lazy: MLIR

    return wc.composite(v.value.type)


def indices(c):
    """Index tuples of every element of a vector-like, in storage order."""
    if c.kind == "mat":
        return [(i, j) for i in range(c.shape[0]) for j in range(c.shape[1])]
    return [(k,) for k in range(c.shape[0])]


def _i32(k):
    from mlir import ir  # lazy: MLIR
    from mlir.dialects import arith  # lazy: MLIR

    t = ir.IntegerType.get_signless(32)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, k)).result


def extract(v: V, idx) -> V:
    from ..dialects.warp import composite as wc  # lazy: MLIR

    c = shape_of(v)
    return V(wc.extract(v.value, [_i32(k) if isinstance(k, int) else k for k in idx], c.dtype))


def insert(v: V, e: V, idx) -> V:
    from ..dialects.warp import composite as wc  # lazy: MLIR

    return V(wc.insert(v.value, e.value, [_i32(k) if isinstance(k, int) else k for k in idx]))


def zeros_like(v: V) -> V:
    from ..dialects.warp import composite as wc  # lazy: MLIR

    return V(wc.construct(v.value.type, []))


def construct(t, elements) -> V:
    from ..dialects.warp import composite as wc  # lazy: MLIR

    return V(wc.construct(t, [e.value for e in elements]))


def inner(a: V, b: V) -> V:
    """sum of a[k] * b[k] over all elements."""
    kind = shape_of(a).kind
    if kind in ("vec", "quat"):
        return call("dot", a, b)
    if kind == "mat":
        return call("ddot", a, b)
    total = None
    for idx in indices(shape_of(a)):
        term = extract(a, idx) * extract(b, idx)
        total = term if total is None else total + term
    return total


def add_opt(a, b):
    return b if a is None else a if b is None else a + b


def zero_unless(positive: V, value: V) -> V:
    """value where the scalar `positive` > 0, else exactly zero (a select, scalar or composite): what a
    division by `positive` gives at 0 is discarded, and so is an infinite adjoint or tangent inside
    `value`, which a multiplication by a 0/1 mask would turn into NaN (Warp's adj_length/adj_normalize
    add nothing there)."""
    if shape_of(value) is None:
        return select(positive > 0.0, value, 0.0, value)
    return call("where", positive > 0.0, value, zeros_like(value))


# -- rule kinds -------------------------------------------------------------------------------
class Bilinear(Rule):
    def __init__(self, name, vjp_a, vjp_b):
        self.name, self.vjp_a, self.vjp_b = name, vjp_a, vjp_b

    def vjp(self, g, args, out):
        a, b = args
        return [self.vjp_a(g, a, b, out), self.vjp_b(g, a, b, out)]

    def jvp(self, tangents, args, out):
        (a, b), (ta, tb) = args, tangents
        return add_opt(call(self.name, ta, b) if ta is not None else None,
                       call(self.name, a, tb) if tb is not None else None)


class Linear(Rule):
    def __init__(self, name, vjp):
        self.name, self._vjp = name, vjp

    def vjp(self, g, args, out):
        return self._vjp(g, *args)

    def jvp(self, tangents, args, out):
        ts = [t if t is not None else (zeros_like(a) if shape_of(a) else const(0.0, a.value.type))
              for t, a in zip(tangents, args)]
        return call(self.name, *ts)


class Custom(Rule):
    def __init__(self, vjp, jvp):
        self._vjp, self._jvp = vjp, jvp

    def vjp(self, g, args, out):
        return self._vjp(g, *args, out)

    def jvp(self, tangents, args, out):
        return self._jvp(tangents, *args, out)


class Componentwise(Rule):
    """The scalar builtin's rule applied to each component (vector arguments; scalars broadcast)."""

    def __init__(self, scalar_name):
        self.scalar_name = scalar_name

    def _scalar_rule(self):
        return BUILTINS[self.scalar_name].grad

    @property
    def differentiable(self):
        return getattr(self._scalar_rule(), "differentiable", True)

    def vjp(self, g, args, out):
        adj = [None] * len(args)
        for idx in indices(shape_of(out)):
            parts = self._scalar_rule().vjp(extract(g, idx), [extract(a, idx) for a in args], extract(out, idx))
            for k, p in enumerate(parts):
                if p is not None:
                    adj[k] = insert(adj[k] if adj[k] is not None else zeros_like(args[k]), p, idx)
        return adj

    def jvp(self, tangents, args, out):
        result = None
        for idx in indices(shape_of(out)):
            t = self._scalar_rule().jvp([extract(t, idx) if t is not None else None for t in tangents],
                                        [extract(a, idx) for a in args], extract(out, idx))
            if t is not None:
                result = insert(result if result is not None else zeros_like(out), t, idx)
        return result


# -- vector rules ---------------------------------------------------------------------------------
def _partials(f):
    return Partials(f)


set_overload_grad("add", ["VectorLike", "VectorLike"], _partials(lambda a, b, out: (1, 1)))
set_overload_grad("sub", ["VectorLike", "VectorLike"], _partials(lambda a, b, out: (1, -1)))
set_overload_grad("neg", ["VectorLike"], _partials(lambda a, out: (-1,)))
set_overload_grad("pos", ["VectorLike"], _partials(lambda a, out: (1,)))
set_overload_grad("mul", ["VectorLike", "Scalar"], Bilinear("mul", lambda g, a, b, out: g * b,
                                                           lambda g, a, b, out: inner(g, a)))
set_overload_grad("mul", ["Scalar", "VectorLike"], Bilinear("mul", lambda g, a, b, out: inner(g, b),
                                                           lambda g, a, b, out: a * g))
set_overload_grad("div", ["VectorLike", "Scalar"], Custom(
    lambda g, a, b, out: [g / b, -(inner(a, g) / (b * b))],  # Warp's adj_div: -dot(a, adj) / s^2 (its rounding)
    lambda t, a, b, out: add_opt(t[0] / b if t[0] is not None else None,
                                 -(out * (t[1] / b)) if t[1] is not None else None)))


def _ones(like: V) -> V:
    c = shape_of(like)
    return construct(like.value.type, [const(1.0, c.dtype) for _ in indices(c)])


set_overload_grad("div", ["Scalar", "VectorLike"], Custom(  # out[k] = a / b[k]
    lambda g, a, b, out: [inner(call("cw_div", g, b), _ones(b)), -call("cw_mul", g, call("cw_div", out, b))],
    lambda t, a, b, out: add_opt(call("div", t[0], b) if t[0] is not None else None,
                                 -call("cw_mul", t[1], call("cw_div", out, b)) if t[1] is not None else None)))
set_overload_grad("dot", ["VectorLike", "VectorLike"], Bilinear("dot", lambda g, a, b, out: b * g,
                                                                lambda g, a, b, out: a * g))
set_overload_grad("cross", ["Vector", "Vector"], Bilinear("cross", lambda g, a, b, out: call("cross", b, g),
                                                          lambda g, a, b, out: call("cross", g, a)))
set_overload_grad("cw_mul", ["VectorLike", "VectorLike"], Bilinear(
    "cw_mul", lambda g, a, b, out: call("cw_mul", g, b), lambda g, a, b, out: call("cw_mul", g, a)))
set_overload_grad("cw_div", ["VectorLike", "VectorLike"], Custom(
    lambda g, a, b, out: [call("cw_div", g, b), -call("cw_mul", g, call("cw_div", out, b))],
    lambda t, a, b, out: add_opt(call("cw_div", t[0], b) if t[0] is not None else None,
                                 -call("cw_mul", t[1], call("cw_div", out, b)) if t[1] is not None else None)))
set_overload_grad("outer", ["Vector", "Vector"], Bilinear("outer", lambda g, a, b, out: call("mul", g, b),
                                                          lambda g, a, b, out: call("mul", a, g)))
set_overload_grad("length_sq", ["VectorLike"], Custom(lambda g, v, out: [v * (g * 2.0)],
                                                      lambda t, v, out: inner(v, t[0]) * 2.0))
set_overload_grad("length", ["VectorLike"], Custom(  # zero gradient at the zero vector
    lambda g, v, out: [zero_unless(out, (v / out) * g)],
    lambda t, v, out: zero_unless(out, inner(v, t[0]) / out)))


def _normalize_map(d: V, v: V, out: V) -> V:
    """(d - out * <out, d>) / |v|: the (symmetric) Jacobian of v / |v| applied to d; 0 at v = 0."""
    n = call("length", v)
    return zero_unless(n, (d - out * inner(out, d)) * (1.0 / n))


set_overload_grad("normalize", ["Vector"], Custom(lambda g, v, out: [_normalize_map(g, v, out)],
                                                  lambda t, v, out: _normalize_map(t[0], v, out)))
for _name in ("abs", "sign"):
    set_overload_grad(_name, ["VectorLike"] if _name == "abs" else ["Vector"], Componentwise(_name))
for _name in ("min", "max"):
    set_overload_grad(_name, ["Vector", "Vector"], Componentwise(_name))


def _reduce_index(name):
    """The index (i32) of the component min/max picks: argmin/argmax's."""

    def index(v):
        from ..dialects.warp import builders as wb  # lazy: MLIR

        return V(wb.cast(call("argmin" if name == "min" else "argmax", v).value, _i32(0).type))

    return index


for _name in ("min", "max"):  # the first extreme component gets the adjoint (as argmin/argmax pick it)
    set_overload_grad(_name, ["Vector"], Custom(
        lambda g, v, out, _n=_name: [insert(zeros_like(v), g, [_reduce_index(_n)(v).value])],
        lambda t, v, out, _n=_name: extract(t[0], [_reduce_index(_n)(v).value])))
for _name, _args in (("eq", ["VectorLike", "VectorLike"]), ("ne", ["VectorLike", "VectorLike"]),
                     ("argmin", ["Vector"]), ("argmax", ["Vector"])):
    set_overload_grad(_name, _args, NOT_DIFFERENTIABLE)

# -- matrix rules -----------------------------------------------------------------------------------
for _name in ("mul", "matmul"):
    set_overload_grad(_name, ["Matrix", "Vector"], Bilinear(  # M v
        _name, lambda g, m, v, out: call("outer", g, v), lambda g, m, v, out: call("mul", g, m)))
    set_overload_grad(_name, ["Vector", "Matrix"], Bilinear(  # v^T M
        _name, lambda g, v, m, out: call("mul", m, g), lambda g, v, m, out: call("outer", v, g)))
    set_overload_grad(_name, ["Matrix", "Matrix"], Bilinear(
        _name, lambda g, a, b, out: call("mul", g, call("transpose", b)),
        lambda g, a, b, out: call("mul", call("transpose", a), g)))
set_overload_grad("transpose", ["Matrix"], Linear("transpose", lambda g, m: [call("transpose", g)]))
set_overload_grad("get_diag", ["Matrix"], Linear("get_diag", lambda g, m: [call("diag", g)]))
set_overload_grad("diag", ["Vector"], Linear("diag", lambda g, v: [call("get_diag", g)]))


def _trace_vjp(g, m):
    from ..frontend.types import to_mlir  # lazy: MLIR

    c = shape_of(m)
    return [call("diag", construct(to_mlir(vector(c.shape[0], warp_type(c.dtype))), [g] * c.shape[0]))]


set_overload_grad("trace", ["Matrix"], Linear("trace", _trace_vjp))
set_overload_grad("ddot", ["Matrix", "Matrix"], Bilinear("ddot", lambda g, a, b, out: b * g,
                                                         lambda g, a, b, out: a * g))


def _skew_vjp(g, v):
    e = lambda i, j: extract(g, (i, j))  # noqa: E731
    return [construct(v.value.type, [e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1)])]


set_overload_grad("skew", ["Vector"], Linear("skew", _skew_vjp))
set_overload_grad("determinant", ["Matrix"], Custom(  # d det = det * tr(M^-1 dM)
    lambda g, m, out: [call("transpose", call("inverse", m)) * (g * out)],
    lambda t, m, out: inner(call("transpose", call("inverse", m)), t[0]) * out))
set_overload_grad("inverse", ["Matrix"], Custom(  # d M^-1 = -M^-1 dM M^-1
    lambda g, m, out: [-call("mul", call("mul", call("transpose", out), g), call("transpose", out))],
    lambda t, m, out: -call("mul", call("mul", out, t[0]), out)))


def _from_rows_vjp(transposed):
    def vjp(g, *vs):
        src = call("transpose", g) if transposed else g
        from ..dialects.warp import composite as wc  # lazy: MLIR

        return [V(wc.extract(src.value, [_i32(k)], v.value.type)) for k, v in enumerate(vs)]

    return vjp


for _n in (1, 2, 3, 4):  # one vector: a 1-column / 1-row matrix, as Warp's
    set_overload_grad("matrix_from_rows", ["Vector"] * _n, Linear("matrix_from_rows", _from_rows_vjp(False)))
    set_overload_grad("matrix_from_cols", ["Vector"] * _n, Linear("matrix_from_cols", _from_rows_vjp(True)))

# -- more component-wise overloads ------------------------------------------------------------------
def _lerp(a, b, t):
    return a * (1.0 - t) + b * t


set_overload_grad("lerp", ["VectorLike", "VectorLike", "Float"], Expansion(_lerp))
set_overload_grad("mod", ["Vector", "Vector"], Componentwise("mod"))


def _where_vjp(g, c, a, b, out):
    z = zeros_like(g)
    return [None, call("where", c, g, z), call("where", c, z, g)]


def _where_jvp(t, c, a, b, out):
    if t[1] is None and t[2] is None:
        return None
    return call("where", c, t[1] if t[1] is not None else zeros_like(a), t[2] if t[2] is not None else zeros_like(b))


set_overload_grad("where", ["Any", "VectorLike", "VectorLike"], Custom(_where_vjp, _where_jvp))
for _name, _args in (("isnan", ["VectorLike"]), ("isinf", ["VectorLike"]), ("isfinite", ["VectorLike"]),
                     ("bit_and", ["Vector", "Vector"]), ("bit_or", ["Vector", "Vector"]),
                     ("bit_xor", ["Vector", "Vector"]), ("lshift", ["Vector", "Vector"]),
                     ("rshift", ["Vector", "Vector"]), ("invert", ["Vector"]),
                     ("bit_and", ["Matrix", "Matrix"]), ("bit_or", ["Matrix", "Matrix"]),
                     ("bit_xor", ["Matrix", "Matrix"]), ("lshift", ["Matrix", "Matrix"]),
                     ("rshift", ["Matrix", "Matrix"]), ("invert", ["Matrix"])):
    set_overload_grad(_name, _args, NOT_DIFFERENTIABLE)
