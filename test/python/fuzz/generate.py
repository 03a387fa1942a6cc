"""Hypothesis strategy for random well-typed scalar programs (see program.py for the IR and semantics).

Every draw goes through hypothesis, so a failing program shrinks to a small one. Integer divisors are
`wp.clamp(e, 1, 9)` or `wp.clamp(e, -9, -2)`: never 0 nor -1, so a division can never trap the process.
Loops are bounded: `range` trip counts are clamped to 0..4 and every while loop carries an iteration bound.
"""

from __future__ import annotations

import hypothesis.strategies as st

from .program import E, Func, Program, S

INT_CONSTS = st.integers(-9, 9)
# multiples of 1/8: exact in float32 and float64, so a constant is the same value in both
FLOAT_CONSTS = st.integers(-64, 64).map(lambda k: k / 8)

INT_BINOPS = ["add", "sub", "mul", "div", "floordiv", "mod", "min", "max", "bit_and", "bit_or", "bit_xor",
              "lshift", "rshift"]
FLOAT_BINOPS = ["add", "sub", "mul", "div", "floordiv", "mod", "min", "max", "pow", "atan2", "copysign"]
FLOAT_UNARY = ["neg", "abs", "sqrt", "sin", "cos", "tan", "exp", "log", "floor", "ceil", "sign", "step", "trunc",
               "round", "rint", "atan", "tanh", "sinh", "cosh", "cbrt", "log2", "log10"]
CMPS = ["lt", "le", "gt", "ge", "eq", "ne"]
TYPES = ["i", "f", "d"]


class Generator:
    def __init__(self, draw, max_depth=3, max_stmts=4, types=("i", "f", "d")):
        self.draw = draw
        self.types = list(types)
        self.max_depth = max_depth
        self.max_stmts = max_stmts
        self.names = 0
        self.funcs = []  # callable from expressions generated from now on

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def chance(self, p_true_in_8):
        return self.draw(st.integers(0, 7)) < p_true_in_8

    def fresh(self, prefix):
        self.names += 1
        return f"{prefix}{self.names}"

    # -- expressions ---------------------------------------------------------------------------------------------
    def leaf(self, t, scope):
        names = [n for n, nt in scope.items() if nt == t]
        if names and self.chance(6):
            return E("var", t, (self.pick(names),))
        if t == "b":
            return E("const", "b", (self.draw(st.booleans()),))
        return E("const", t, (self.draw(INT_CONSTS if t == "i" else FLOAT_CONSTS),))

    def expr(self, t, scope, depth=0):
        if t == "b":
            return self.condition(scope, depth)
        if depth >= self.max_depth or self.chance(2):
            return self.leaf(t, scope)
        callable_ = [f for f in self.funcs if f.type == t]
        kind = self.pick(["bin", "bin", "un", "cast", "clamp", "ifexp"] + (["call"] if callable_ else []))
        if kind == "call":
            f = self.pick(callable_)
            return E("call", t, (f.name, *[self.expr(pt, scope, depth + 1) for _, pt in f.params]))
        sub = lambda tt=t: self.expr(tt, scope, depth + 1)  # noqa: E731
        if kind == "bin":
            op = self.pick(INT_BINOPS if t == "i" else FLOAT_BINOPS)
            if t == "i" and op in ("div", "floordiv", "mod"):
                lo_hi = self.pick([(1, 9), (-9, -2)])
                return E(op, t, (sub(), E("safe_divisor", "i", (sub(), lo_hi))))
            if op in ("lshift", "rshift"):
                return E(op, t, (sub(), E("const", "i", (self.draw(st.integers(0, 6)),))))
            return E(op, t, (sub(), sub()))
        if kind == "un":
            op = self.pick(["neg", "abs", "invert"] if t == "i" else FLOAT_UNARY)
            return E(op, t, (sub(),))
        if kind == "cast":
            src = self.pick([x for x in self.types if x != t])
            style = "py" if t in ("i", "f") and self.chance(4) else "wp"
            return E("cast", t, (sub(src), style))
        if kind == "clamp":
            return E("clamp", t, (sub(), sub(), sub()))
        return E("ifexp", t, (self.condition(scope, depth + 1), sub(), sub()))

    def condition(self, scope, depth=0):
        if depth < self.max_depth and self.chance(2):
            op = self.pick(["and", "or", "not"])
            if op == "not":
                return E("not", "b", (self.condition(scope, depth + 1),))
            return E(op, "b", (self.condition(scope, depth + 1), self.condition(scope, depth + 1)))
        ta = self.pick(self.types)
        tb = ta if self.chance(6) else self.pick(self.types)  # sometimes C's mixed comparison
        if "i" in (ta, tb) and ta != tb and "d" in (ta, tb):
            tb = ta
        return E(self.pick(CMPS), "b", (self.expr(ta, scope, depth + 1), self.expr(tb, scope, depth + 1)))

    # -- statements ----------------------------------------------------------------------------------------------
    def block(self, scope, depth, in_loop):
        """Statements; names first assigned here stay local to this block (the frontend unbinds them after)."""
        scope = dict(scope)
        out = []
        for _ in range(self.draw(st.integers(1, self.max_stmts))):
            out.append(self.statement(scope, depth, in_loop))
        return out

    def statement(self, scope, depth, in_loop):
        kinds = ["assign", "assign", "reassign", "aug"]
        if depth < 2:
            kinds += ["if", "for", "while"]
        if in_loop:
            kinds += ["jump"]
        kind = self.pick(kinds)
        mutable = [n for n in scope if not n.startswith(("k", "c"))]  # not loop variables or counters
        if kind in ("reassign", "aug") and mutable:
            name = self.pick(mutable)
            t = scope[name]
            if kind == "aug":
                op = self.pick(["add", "sub", "mul"] if t == "i" else ["add", "sub", "mul", "div"])
                return S("aug", name, self.expr(t, scope, 1), extra=(op,))
            return S("assign", name, self.expr(t, scope))
        if kind == "if":
            cond = self.condition(scope)
            return S("if", expr=cond, body=self.block(scope, depth + 1, in_loop),
                     orelse=self.block(scope, depth + 1, in_loop) if self.chance(4) else [])
        if kind == "for":
            k = self.fresh("k")
            if self.chance(5):
                bound = E("clamp", "i", (self.expr("i", scope, 1), E("const", "i", (0,)), E("const", "i", (4,))))
                extra = (bound,)
            else:
                start = self.draw(st.integers(-3, 3))
                step = self.pick([-2, -1, 1, 2, 3])
                stop = start + step * self.draw(st.integers(0, 3)) + self.draw(st.integers(-1, 1))
                extra = tuple(E("const", "i", (v,)) for v in (start, stop, step))
            inner = dict(scope, **{k: "i"})
            return S("for", k, body=self.block(inner, depth + 1, True), extra=extra)
        if kind == "while":
            c = self.fresh("c")
            inner = dict(scope, **{c: "i"})
            return S("while", c, self.condition(inner, 1), body=self.block(inner, depth + 1, True),
                     extra=(self.draw(st.integers(1, 4)),))
        if kind == "jump":
            cond = self.condition(scope, 1)
            return S("if", expr=cond, body=[S(self.pick(["break", "continue"]))])
        t = self.pick(self.types)
        name = self.fresh({"i": "n", "f": "x", "d": "y"}[t])
        s = S("assign", name, self.expr(t, scope))
        scope[name] = t
        return s


def function(g: Generator) -> Func:
    """A @wp.func over 1-3 parameters, which may call the functions made before it (never itself)."""
    name = g.fresh("h")
    params = [(f"p{k}", g.pick(g.types)) for k in range(g.draw(st.integers(1, 3)))]
    scope = dict(params)
    body = [g.statement(scope, 1, False) for _ in range(g.draw(st.integers(0, 2)))]
    t = g.pick(g.types)
    early = (g.condition(scope, 1), g.expr(t, scope, 1)) if g.chance(3) else None
    return Func(name, params, t, body, early, g.expr(t, scope))


@st.composite
def programs(draw, max_depth=3, max_stmts=4, types=("i", "f", "d")):
    """Programs over `types` (the kernel always takes and writes all three; a type left out is a constant
    0 output and its input is unused)."""
    g = Generator(draw, max_depth, max_stmts, types)
    for _ in range(draw(st.integers(0, 2))):
        g.funcs.append(function(g))
    top = {n: t for n, t in (("i0", "i"), ("f0", "f"), ("d0", "d")) if t in types}
    body = []
    for _ in range(draw(st.integers(1, max_stmts + 1))):
        body.append(g.statement(top, 0, False))
    outputs = {t: g.expr(t, top) if t in types else E("const", t, (0 if t == "i" else 0.0,)) for t in ("i", "f", "d")}
    return Program(body, outputs, g.funcs)
