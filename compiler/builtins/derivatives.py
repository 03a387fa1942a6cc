"""Derivative rules of the builtin table, read by the autodiff passes (reverse and forward mode).

A rule is the *local* derivative of one builtin, written once and used both
ways:
  - `Partials(f)`: `f(x..., out)` gives d out / d x_k for each argument (an
    expression, a number, or None for zero). Reverse mode multiplies them by
    the result's adjoint (vjp), forward mode sums them times the arguments'
    tangents (jvp). Enough for every scalar builtin.
  - `Rule` subclasses may define `vjp` and `jvp` directly (vector builtins,
    where a partial is a Jacobian).
  - `Expansion(f)`: the builtin written as a formula over other builtins
    (quaternions, transforms); the passes differentiate the formula.
`NOT_DIFFERENTIABLE` marks entries whose result carries no derivative
(comparisons, boolean and bit operators). An entry whose `grad` is None has
no rule yet: the autodiff pass refuses kernels that use it.

Subgradients at kinks follow Warp's native adj_* functions: abs'(0) = 1,
min/max route the adjoint to the operand the forward picked (b on ties, the
non-NaN one), clamp routes through its max-then-min expansion, where() to the
chosen operand. A partial that is zero on one side of a condition is `Masked`:
the adjoint is selected there, never multiplied by 0 (0 * inf would be NaN). Where Warp drops a term
(adj_mod ignores b) we keep the exact derivative: d fmod(a, b)/db = -trunc(a/b).

MLIR is imported lazily: `import mlwarp` reads the table without it.
"""

from __future__ import annotations

from mlwarp.core import types as wt
from mlwarp.core import vector as wv

from .table import BUILTINS, set_grad


class NotDifferentiable:
    def __repr__(self):
        return "NOT_DIFFERENTIABLE"


NOT_DIFFERENTIABLE = NotDifferentiable()


class V:
    """An SSA value in a rule, with operators that emit warp builtin ops at the insertion point."""

    def __init__(self, value):
        self.value = value

    def _other(self, x):
        return x if isinstance(x, V) else const(x, self.value.type)

    def __add__(self, o):
        return call("add", self, self._other(o))

    def __radd__(self, o):
        return call("add", self._other(o), self)

    def __sub__(self, o):
        return call("sub", self, self._other(o))

    def __rsub__(self, o):
        return call("sub", self._other(o), self)

    def __mul__(self, o):
        return call("mul", self, self._other(o))

    def __rmul__(self, o):
        return call("mul", self._other(o), self)

    def __truediv__(self, o):
        return call("div", self, self._other(o))

    def __rtruediv__(self, o):
        return call("div", self._other(o), self)

    def __neg__(self):
        return call("neg", self)

    def __lt__(self, o):
        return call("lt", self, self._other(o))

    def __gt__(self, o):
        return call("gt", self, self._other(o))


def warp_type(t):
    """The Warp type of an MLIR type of the warp dialect (scalars and vector-likes)."""
    from ..dialects.warp import composite as wc  # lazy: MLIR
    from ..frontend.types import from_mlir  # lazy: MLIR

    c = wc.composite(t)
    if c is None:
        return from_mlir(t)
    s = from_mlir(c.dtype)
    make = {"vec": lambda: wv.vector(c.shape[0], s), "mat": lambda: wv.matrix(c.shape, s),
            "quat": lambda: wv.quaternion(s), "transform": lambda: wv.transformation(s)}
    return make[c.kind]()


def call(name: str, *args: V) -> V:
    """Emits `warp.<name>(args)` with the result type the table gives."""
    from mlir import ir  # lazy: MLIR

    from ..frontend.types import to_mlir  # lazy: MLIR
    from .table import resolve

    values = [a.value for a in args]
    rt = to_mlir(resolve(name, [warp_type(v.type) for v in values]))
    op = ir.Operation.create(f"warp.{name}", results=[rt], operands=values)
    return V(op.result)


def const(x, t) -> V:
    from .scalar import _constant_like

    return V(_constant_like(x, t))


def select(cond: V, a, b, like: V) -> V:
    """cond ? a : b, where a or b may be numbers of `like`'s type."""
    from mlir.dialects import arith  # lazy: MLIR

    a = a if isinstance(a, V) else const(a, like.value.type)
    b = b if isinstance(b, V) else const(b, like.value.type)
    return V(arith.SelectOp(cond.value, a.value, b.value).result)


class Masked:
    """A partial that is `value` where `cond` holds and exactly zero elsewhere. Its product with an
    adjoint or tangent is selected, not multiplied by a 0/1 mask: Warp's adj_* functions add nothing
    on the unselected side, whereas 0 * inf (a saturated clamp feeding asin, say) would be NaN."""

    def __init__(self, cond: V, value=1):
        self.cond, self.value = cond, value


def scale(p, g: V) -> V | None:
    """p * g with p a partial (V, number, Masked or None); None stands for zero."""
    if isinstance(p, Masked):
        product = scale(p.value, g)
        return None if product is None else select(p.cond, product, 0.0, product)
    if p is None or (not isinstance(p, V) and p == 0):
        return None
    if not isinstance(p, V):
        return g if p == 1 else -g if p == -1 else g * p
    return p * g


class Rule:
    # False: Warp's is_differentiable=False, a piecewise-constant builtin (floor, sign, ...) whose partials are zero
    # where they exist. Kernels' adjoints and tangents use its (zero) rule; wp.grad(f) refuses it as Warp does
    # (frontend/grad_call.py).
    differentiable = True

    def vjp(self, adj_out: V, args: list, out: V) -> list:
        """Adjoints of the arguments (V or None for zero) given the result's adjoint."""
        raise NotImplementedError

    def jvp(self, tangents: list, args: list, out: V) -> V | None:
        """The result's tangent given the arguments' tangents (None for zero)."""
        raise NotImplementedError


class Expansion(Rule):
    """A builtin whose derivative is that of its formula in other builtins: `expand(args) -> V` emits the
    formula (the same function as the builtin's lowering) at the insertion point; the autodiff passes
    differentiate that expansion op by op, with the rules of the builtins it uses."""

    def __init__(self, expand):
        self.expand = expand

    def __repr__(self):
        return f"Expansion({self.expand.__name__})"


class Partials(Rule):
    def __init__(self, partials):
        self.partials = partials

    def __repr__(self):
        return f"Partials({self.partials.__name__})"

    def vjp(self, adj_out, args, out):
        return [scale(p, adj_out) for p in self.partials(*args, out)]

    def jvp(self, tangents, args, out):
        total = None
        for p, t in zip(self.partials(*args, out), tangents):
            term = scale(p, t) if t is not None else None
            if term is not None:
                total = term if total is None else total + term
        return total


def partials(*names):
    """Decorator: sets `Partials(f)` as the rule of each named builtin."""

    def register(f):
        for n in names:
            set_grad(n, Partials(f))
        return f

    return register


def piecewise_constant(*names):
    """Sets zero partials as the rule of each named builtin, marked not differentiable (Rule.differentiable)."""
    for n in names:
        rule = Partials(lambda *xs: tuple(None for _ in xs[:-1]))
        rule.differentiable = False
        set_grad(n, rule)


# -- rules --------------------------------------------------------------------------
partials("add")(lambda a, b, out: (1, 1))
partials("sub")(lambda a, b, out: (1, -1))
partials("mul")(lambda a, b, out: (b, a))
partials("div")(lambda a, b, out: (1 / b, -out / b))  # Warp's adj_div
partials("mod")(lambda a, b, out: (1, -(a - out) / b))  # fmod: a - trunc(a/b)*b
piecewise_constant("floordiv", "floor", "ceil")
partials("neg")(lambda a, out: (-1,))
partials("pos")(lambda a, out: (1,))
partials("pow")(lambda a, b, out: (b * call("pow", a, b - 1.0), call("log", a) * out))  # Warp's adj_pow
partials("sin")(lambda x, out: (call("cos", x),))
partials("cos")(lambda x, out: (-call("sin", x),))
partials("tan")(lambda x, out: (1 / (call("cos", x) * call("cos", x)),))
partials("sqrt")(lambda x, out: (0.5 / out,))
partials("exp")(lambda x, out: (out,))
partials("log")(lambda x, out: (1 / x,))
partials("abs")(lambda x, out: (select(x < 0.0, -1.0, 1.0, x),))  # Warp: abs'(0) = 1


# Float min/max lower to C's fmin/fmax (`a <= b ? a : (b == b ? b : a)`). As Warp's adj_min/adj_max, the
# adjoint goes to the non-NaN operand when one is NaN, else to a when a < b (a > b for max), else to b.
def _routed_to_a(a: V, b: V, a_wins: V) -> V:
    if not wt.is_float(warp_type(a.value.type)):
        return a_wins
    return call("bool_and", call("bool_not", call("isnan", a)), call("bool_or", call("isnan", b), a_wins))


def _min_max_partials(a_wins):
    def rule(a, b, out):
        to_a = _routed_to_a(a, b, a_wins(a, b))
        return Masked(to_a), Masked(call("bool_not", to_a))

    return rule


partials("min")(_min_max_partials(lambda a, b: a < b))
partials("max")(_min_max_partials(lambda a, b: a > b))


@partials("clamp")
def _clamp(x, lo, hi, out):
    # clamp(x, lo, hi) = min(max(lo, x), hi), differentiated as Warp's adj_clamp: through adj_min, then adj_max
    m = call("max", lo, x)
    m_picked = _routed_to_a(m, hi, m < hi)
    lo_picked = _routed_to_a(lo, x, lo > x)
    return (Masked(call("bool_and", m_picked, call("bool_not", lo_picked))),
            Masked(call("bool_and", m_picked, lo_picked)), Masked(call("bool_not", m_picked)))


@partials("where")
def _where(cond, a, b, out):
    # Warp's adj_where: the adjoint goes to the operand the condition chose, none to the condition
    from mlir import ir

    from ..dialects.warp import builders as wb  # lazy: MLIR

    chosen = V(wb.cast(cond.value, ir.IntegerType.get_signless(1)))  # an integer condition: cond != 0
    return None, Masked(chosen), Masked(call("bool_not", chosen))


for _name in ("eq", "ne", "lt", "le", "gt", "ge", "bool_and", "bool_or", "bool_not", "bit_and", "bit_or",
              "bit_xor", "lshift", "rshift", "invert", "bit_count"):
    if _name in BUILTINS:
        set_grad(_name, NOT_DIFFERENTIABLE)


# -- the rest of Warp's scalar math (scalar.py), with Warp's adj_* rules --------------------------------
def _one(x):
    return const(1.0, x.value.type)


def _rsqrt_one_minus_sq(x, sign):
    # Warp's adj_asin/adj_acos: d = sqrt(1 - x*x), nothing added unless d > 0, so the derivative is 0 at
    # x = +-1, beyond (where the forward clamps) and at NaN
    d = call("sqrt", 1.0 - x * x)
    return Masked(d > 0.0, sign / d)


partials("asin")(lambda x, out: (_rsqrt_one_minus_sq(x, 1.0),))
partials("acos")(lambda x, out: (_rsqrt_one_minus_sq(x, -1.0),))
partials("atan")(lambda x, out: (1 / (1.0 + x * x),))
partials("atan2")(lambda y, x, out: (x / (x * x + y * y), -y / (x * x + y * y)))
partials("sinh")(lambda x, out: (call("cosh", x),))
partials("cosh")(lambda x, out: (call("sinh", x),))
partials("tanh")(lambda x, out: (1.0 - out * out,))
partials("log2")(lambda x, out: (1 / (x * 0.6931471805599453),))
partials("log10")(lambda x, out: (1 / (x * 2.302585092994046),))
partials("cbrt")(lambda x, out: (1 / (3.0 * out * out),))
partials("erf")(lambda x, out: (1.1283791670955126 * call("exp", -(x * x)),))
partials("erfc")(lambda x, out: (-1.1283791670955126 * call("exp", -(x * x)),))
partials("erfinv")(lambda x, out: (0.886226925452758 * call("exp", out * out),))  # sqrt(pi) / 2
partials("erfcinv")(lambda x, out: (-0.886226925452758 * call("exp", out * out),))
partials("frac")(lambda x, out: (1,))
partials("degrees")(lambda x, out: (57.29577951308232,))
partials("radians")(lambda x, out: (0.017453292519943295,))
piecewise_constant("round", "rint", "trunc", "sign", "step", "nonzero")
partials("copysign")(lambda x, y, out: (call("copysign", _one(x), x) * call("copysign", _one(x), y), None))
partials("lerp")(lambda a, b, t, out: (1.0 - t, t, b - a))


@partials("smoothstep")
def _smoothstep(e0, e1, x, out):
    # Warp's adj_smoothstep: zero outside the ramp, else the derivative of t*t*(3-2t), t = (x-e0)/(e1-e0)
    ab, ax, bx = e0 - e1, e0 - x, e1 - x
    inside = call("bool_and", bx / ab < 0.0, ax / ab > 0.0)
    ab3 = ab * ab * ab
    ab4 = ab3 * ab
    pick = lambda v: Masked(inside, v)  # noqa: E731
    return (pick(6.0 * ax * bx * bx / ab4), pick(6.0 * ax * ax * (x - e1) / ab4), pick(6.0 * ax * bx / ab3))


for _name in ("isnan", "isinf", "isfinite"):
    set_grad(_name, NOT_DIFFERENTIABLE)


def rule_of(name: str, arg_types=None):
    """The rule of the entry a call resolves to (the composite overload when an argument is a vector-like;
    `arg_types` are MLIR types): a Rule, NOT_DIFFERENTIABLE, or None when the table has no rule for it."""
    from .table import COMPOSITE_ONLY, OVERLOADS, select_overload

    if arg_types is not None and name in OVERLOADS:
        types = [warp_type(t) for t in arg_types]
        if name in COMPOSITE_ONLY or any(wt.is_composite(t) for t in types):
            return select_overload(name, types).grad
    b = BUILTINS.get(name)
    return None if b is None else b.grad
