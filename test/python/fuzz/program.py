"""Random well-typed scalar kernels: a tiny program IR, its Python (kernel) source, and a reference
interpreter with Warp's semantics (C integer division/remainder, floor for `//`, fmod for float `%`,
`a < b ? a : b` for min/max, float32 arithmetic rounded per operation as numpy float32 does).

Types: "i" int32, "f" float32, "d" float64, "b" bool.

The reference tracks, for every float value, a bound on how far another correct implementation may be
from it: 0 for values built only from correctly rounded IEEE operations (mlwarp must match them bit for
bit), a few ulps per transcendental call (libm vs numpy), propagated through later operations. A branch,
cast or floor that such an error could flip makes the thread "fragile" (not compared); integer overflow
or a float->int conversion out of range is undefined behaviour, as in Warp's C++ ("ub").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1
NP = {"f": np.float32, "d": np.float64}
WP_NAME = {"i": "wp.int32", "f": "wp.float32", "d": "wp.float64"}
ULPS_PER_LIBM_CALL = 4


class Fragile(Exception):
    """The reference cannot decide this thread's result: a float error bound straddles a discontinuity."""


class UndefinedBehaviour(Exception):
    """The thread does something C leaves undefined (integer overflow, float->int out of range)."""


# -- IR -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class E:
    """An expression: `op` with `args` (sub-expressions or, for leaves, a name / constant) and a type."""

    op: str
    type: str
    args: tuple = ()


@dataclass
class S:
    """A statement: assign, aug, if, for, while, break, continue."""

    kind: str
    name: str = ""
    expr: E | None = None
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)
    extra: tuple = ()


@dataclass
class Func:
    """A @wp.func: parameters, a body, an optional early `if cond: return early`, then `return result`."""

    name: str
    params: list  # [(name, type)]
    type: str
    body: list
    early: tuple | None  # (condition E, value E)
    result: E

    def source(self) -> list:
        params = ", ".join(f"{n}: {WP_NAME[t]}" for n, t in self.params)
        lines = ["", "", "@wp.func", f"def {self.name}({params}) -> {WP_NAME[self.type]}:"]
        emit_block(self.body, lines, 1, allow_empty=True)
        if self.early is not None:
            lines += [f"    if {emit(self.early[0])}:", f"        return {emit(self.early[1])}"]
        lines.append(f"    return {emit(self.result)}")
        return lines

    def call(self, args):
        env = {n: v for (n, _), v in zip(self.params, args)}
        run_block(self.body, env)
        if self.early is not None and evaluate(self.early[0], env)[0]:
            return evaluate(self.early[1], env)
        return evaluate(self.result, env)


@dataclass
class Program:
    body: list
    outputs: dict  # "i"/"f"/"d" -> E
    funcs: list = field(default_factory=list)

    def source(self, name: str) -> str:
        lines = ["import mlwarp as wp"]
        for f in self.funcs:
            lines += f.source()
        lines += ["", "", "@wp.kernel",
                 f"def {name}(xi: wp.array(dtype=wp.int32), xf: wp.array(dtype=wp.float32), "
                 f"xd: wp.array(dtype=wp.float64), oi: wp.array(dtype=wp.int32), of: wp.array(dtype=wp.float32), "
                 f"od: wp.array(dtype=wp.float64)):",
                 "    tid = wp.tid()", "    i0 = xi[tid]", "    f0 = xf[tid]", "    d0 = xd[tid]"]
        emit_block(self.body, lines, 1)
        for t, arr in (("i", "oi"), ("f", "of"), ("d", "od")):
            lines.append(f"    {arr}[tid] = {emit(self.outputs[t])}")
        return "\n".join(lines) + "\n"

    def run(self, i0: int, f0, d0, trace: list | None = None) -> dict:
        """The thread's outputs {"i": (int, 0), "f": (float32, err), "d": (float64, err)}. `trace`, when
        given, receives every discrete decision (comparisons, min/max picks, floor/int results): two runs
        with equal traces took the same piecewise-smooth path."""
        global _trace, _funcs
        _trace = trace
        _funcs = {f.name: f for f in self.funcs}
        try:
            env = {"i0": (int(i0), 0.0), "f0": (np.float32(f0), 0.0), "d0": (np.float64(d0), 0.0)}
            run_block(self.body, env)
            return {t: evaluate(e, env) for t, e in self.outputs.items()}
        finally:
            _trace = None


# -- source ---------------------------------------------------------------------------------------------------
_BIN_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "bit_and": "&",
               "bit_or": "|", "bit_xor": "^", "lshift": "<<", "rshift": ">>", "pow": "**"}
_CMP_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def emit(e: E) -> str:
    op, a = e.op, e.args
    if op == "var":
        return a[0]
    if op == "const":
        v = a[0]
        if e.type == "d":
            return f"wp.float64({v!r})"
        if e.type == "b":
            return repr(bool(v))
        return f"({v!r})" if v < 0 else repr(v)
    if op in _BIN_SYMBOL:
        return f"({emit(a[0])} {_BIN_SYMBOL[op]} {emit(a[1])})"
    if op in _CMP_SYMBOL:
        return f"({emit(a[0])} {_CMP_SYMBOL[op]} {emit(a[1])})"
    if op == "neg":
        return f"(-{emit(a[0])})"
    if op == "invert":
        return f"(~{emit(a[0])})"
    if op in ("and", "or"):
        return f"({emit(a[0])} {op} {emit(a[1])})"
    if op == "not":
        return f"(not {emit(a[0])})"
    if op == "ifexp":
        return f"({emit(a[1])} if {emit(a[0])} else {emit(a[2])})"
    if op == "cast":
        style = a[1]  # "wp" (wp.int32(x)) or "py" (int(x) / float(x))
        if style == "py":
            return f"{'int' if e.type == 'i' else 'float'}({emit(a[0])})"
        return f"{WP_NAME[e.type]}({emit(a[0])})"
    if op == "call":
        return f"{a[0]}({', '.join(emit(x) for x in a[1:])})"
    if op == "safe_divisor":  # never 0 nor -1: integer division cannot trap
        lo, hi = a[1]
        return f"wp.clamp({emit(a[0])}, {lo}, {hi})"
    if op in ("abs", "min", "max"):
        return f"{op}({', '.join(emit(x) for x in a)})"  # Python's builtins map to Warp's
    return f"wp.{op}({', '.join(emit(x) for x in a)})"


def emit_block(stmts, lines, depth, allow_empty=False):
    pad = "    " * depth
    if not stmts and not allow_empty:
        lines.append(pad + "pass")
    for s in stmts:
        if s.kind == "assign":
            lines.append(f"{pad}{s.name} = {emit(s.expr)}")
        elif s.kind == "aug":
            lines.append(f"{pad}{s.name} {_BIN_SYMBOL[s.extra[0]]}= {emit(s.expr)}")
        elif s.kind == "if":
            lines.append(f"{pad}if {emit(s.expr)}:")
            emit_block(s.body, lines, depth + 1)
            if s.orelse:
                lines.append(f"{pad}else:")
                emit_block(s.orelse, lines, depth + 1)
        elif s.kind == "for":
            lines.append(f"{pad}for {s.name} in range({', '.join(emit(x) for x in s.extra)}):")
            emit_block(s.body, lines, depth + 1)
        elif s.kind == "while":  # s.name counts iterations; the bound keeps every loop finite
            counter, bound = s.name, s.extra[0]
            lines.append(f"{pad}{counter} = int(0)")
            lines.append(f"{pad}while {counter} < {bound} and {emit(s.expr)}:")
            lines.append(f"{pad}    {counter} += 1")
            emit_block(s.body, lines, depth + 1)
        else:  # break / continue
            lines.append(pad + s.kind)


# -- reference semantics ------------------------------------------------------------------------------------
_trace = None  # the decision list of the current run (see Program.run)
_funcs = {}  # the @wp.func of the current run, by name


def decided(value):
    if _trace is not None:
        _trace.append(value)
    return value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def check_int(v: int) -> tuple:
    if not INT_MIN <= v <= INT_MAX:
        raise UndefinedBehaviour(f"int32 overflow: {v}")
    return v, 0.0


def ulp(x) -> float:
    x = abs(x)
    return float(np.spacing(x)) if np.isfinite(x) else math.inf


def _float_result(t, value, err) -> tuple:
    """A float result with its error bound; a non-finite result is only trusted when exact."""
    value = NP[t](value)
    if err:
        if not np.isfinite(value) or not math.isfinite(err):
            raise Fragile("non-finite value from inexact inputs")
        err += ulp(value)  # another rounding of a slightly different exact result
    return value, err


def _libm(t, value, err):
    """A transcendental call: libm and numpy may differ by a few ulps. A NaN/inf from an exact input is an
    IEEE special case (log(-1), log(0)) that both give exactly."""
    value = NP[t](value)
    if not np.isfinite(value):
        if err:
            raise Fragile("non-finite transcendental result")
        return value, 0.0
    return value, err + ULPS_PER_LIBM_CALL * ulp(value)


def _decide(a, ea, b, eb):
    """The comparison a vs b is decided unless the error bounds overlap."""
    if (ea or eb) and abs(float(a) - float(b)) <= ea + eb:
        raise Fragile("comparison within the error bound")


def _near_integer(x, err):
    if err and abs(float(x) - round(float(x))) <= err:
        raise Fragile("floor/ceil/cast within the error bound of an integer")


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _common(ta, tb):
    if ta == tb:
        return ta
    if "d" in (ta, tb):
        return "d"
    return "f"  # int32 vs float32: float32, as C


def convert(v, err, src, dst):
    if src == dst:
        return v, err
    if dst == "i":
        if not np.isfinite(v) or not INT_MIN <= math.trunc(float(v)) <= INT_MAX:
            raise UndefinedBehaviour(f"float->int32 out of range: {v}")
        _near_integer(v, err)
        if err and abs(float(v)) < 1 + err:
            # trunc(-0.3) and trunc(0.3) agree, but a value within err of 0 could cross -1/1: handled above
            pass
        return decided(int(math.trunc(float(v)))), 0.0
    if dst == "b":
        _decide(v, err, 0, 0)
        return bool(v != 0), 0.0
    value = NP[dst](v)
    return value, (err + ulp(value) if err else 0.0)


def evaluate(e: E, env: dict) -> tuple:
    op, a, t = e.op, e.args, e.type
    if op == "var":
        return env[a[0]]
    if op == "const":
        return ((int(a[0]) if t == "i" else bool(a[0])) if t in "ib" else NP[t](a[0])), 0.0
    if op == "cast":
        v, err = evaluate(a[0], env)
        return convert(v, err, a[0].type, t)
    if op == "safe_divisor":
        v, _ = evaluate(a[0], env)
        lo, hi = a[1]
        return min(max(v, lo), hi), 0.0
    if op in _CMP_SYMBOL:
        (x, ex), (y, ey) = evaluate(a[0], env), evaluate(a[1], env)
        ct = _common(a[0].type, a[1].type)
        if ct != "i" and a[0] != a[1]:  # `e < e`: one value on both sides, whatever its error
            x, ex = convert(x, ex, a[0].type, ct)
            y, ey = convert(y, ey, a[1].type, ct)
            _decide(x, ex, y, ey)
        return decided({"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}[op]), 0.0
    if op in ("and", "or"):  # Warp evaluates both sides
        x, y = evaluate(a[0], env)[0], evaluate(a[1], env)[0]
        return (x and y) if op == "and" else (x or y), 0.0
    if op == "not":
        return not evaluate(a[0], env)[0], 0.0
    if op == "ifexp":
        c = evaluate(a[0], env)[0]
        return evaluate(a[1] if c else a[2], env)
    if op == "call":
        return _funcs[a[0]].call([evaluate(x, env) for x in a[1:]])
    args = [evaluate(x, env) for x in a]
    try:
        result = (int_op if t == "i" else float_op)(op, t, args)
    except (ZeroDivisionError, OverflowError):  # an error bound formula under/overflowed: tiny or huge values
        raise Fragile(f"error bound of {op} out of range") from None
    if t != "i" and _trace is not None and not np.isfinite(result[0]):
        _trace.append("non-finite")  # even if unused: 0 * NaN in the reverse sweep (as in Warp and PyTorch)
    return result


def int_op(op, t, args):
    vals = [v for v, _ in args]
    x = vals[0]
    y = vals[1] if len(vals) > 1 else None
    if op == "add":
        return check_int(x + y)
    if op == "sub":
        return check_int(x - y)
    if op == "mul":
        return check_int(x * y)
    if op == "div":
        return check_int(_c_div(x, y))
    if op == "mod":
        return check_int(x - y * _c_div(x, y))
    if op == "floordiv":
        return check_int(x // y)
    if op in ("min", "max"):
        return int_min_max(op, x, y), 0.0
    if op == "clamp":  # min(max(lo, x), hi)
        return int_min_max("min", int_min_max("max", vals[1], x), vals[2]), 0.0
    if op == "abs":
        return check_int(abs(x))
    if op == "neg":
        return check_int(-x)
    if op == "invert":
        return ~x, 0.0
    if op == "bit_and":
        return x & y, 0.0
    if op == "bit_or":
        return x | y, 0.0
    if op == "bit_xor":
        return x ^ y, 0.0
    if op == "lshift":
        return check_int(x << y)
    if op == "rshift":
        return x >> y, 0.0
    raise AssertionError(op)


def float_op(op, t, args):
    f = NP[t]
    (x, ex) = args[0]
    (y, ey) = args[1] if len(args) > 1 else (None, 0.0)
    with np.errstate(all="ignore"):
        if op == "add":
            return _float_result(t, f(x + y), ex + ey)
        if op == "sub":
            return _float_result(t, f(x - y), ex + ey)
        if op == "mul":
            return _float_result(t, f(x * y), abs(float(x)) * ey + abs(float(y)) * ex + ex * ey)
        if op == "div":
            if (ex or ey) and abs(float(y)) <= ey:
                raise Fragile("divisor within its error bound of 0")
            err = 0.0
            if ex or ey:
                denominator = abs(float(y)) * (abs(float(y)) - ey)
                if denominator == 0:  # underflow: a subnormal divisor with an error bound
                    raise Fragile("divisor too small for its error bound")
                err = (abs(float(x)) * ey + abs(float(y)) * ex) / denominator
            return _float_result(t, f(x / y), err)
        if op in ("mod", "floordiv"):
            q = f(x / y)
            if ex or ey:  # decided unless x / y is within its error bound of an integer
                if abs(float(y)) <= ey or not np.isfinite(q):
                    raise Fragile("mod/floordiv by a divisor near 0")
                eq = (abs(float(x)) * ey + abs(float(y)) * ex) / (abs(float(y)) * (abs(float(y)) - ey)) + ulp(q)
                _near_integer(q, eq)
            if op == "floordiv":
                return decided(f(np.floor(q))), 0.0
            n = decided(np.trunc(q))
            r = f(np.fmod(x, y))
            return (r, 0.0) if not (ex or ey) else _float_result(t, r, ex + abs(float(n)) * ey)
        if op in ("min", "max"):
            return fmin_fmax(op, (x, ex), (y, ey))
        if op == "clamp":  # min(max(lo, x), hi)
            return fmin_fmax("min", fmin_fmax("max", args[1], (x, ex)), args[2])
        if op == "abs":
            decided(x < 0)
            return f(abs(x)), ex
        if op in ("sign", "step"):
            _decide(x, ex, 0, 0)
            neg = decided(x < 0)
            return f((-1 if neg else 1) if op == "sign" else (1 if neg else 0)), 0.0
        if op in ("trunc", "round", "rint"):
            _near_integer(x, ex) if op == "trunc" else _near_half(x, ex)
            if op == "round":  # halves away from zero, without the rounding error of floor(|x| + 0.5)
                r = np.floor(abs(x))
                r = np.copysign(r + 1 if abs(x) - r >= 0.5 else r, x)
            else:
                r = np.trunc(x) if op == "trunc" else np.rint(x)
            return decided(f(r)), 0.0
        if op == "copysign":
            _decide(y, ey, 0, 0)
            return f(np.copysign(x, y)), ex
        if op == "neg":  # Warp's neg is 0 - x: -(+0.0) is +0.0
            return f(f(0) - x), ex
        if op in ("floor", "ceil"):
            _near_integer(x, ex)
            return decided(f(np.floor(x) if op == "floor" else np.ceil(x))), 0.0
        if op == "sqrt":
            if ex and float(x) <= ex:
                raise Fragile("sqrt near 0")
            r = f(np.sqrt(x))
            return _float_result(t, r, ex / (2 * math.sqrt(float(x) - ex)) if ex else 0.0)  # correctly rounded
        if op in ("sin", "cos"):
            return _libm(t, f(np.sin(x) if op == "sin" else np.cos(x)), ex)
        if op in ("atan", "tanh"):
            return _libm(t, f(np.arctan(x) if op == "atan" else np.tanh(x)), ex)
        if op in ("sinh", "cosh"):
            r = f(np.sinh(x) if op == "sinh" else np.cosh(x))
            return _libm(t, r, ex * (abs(float(r)) + 1) * 2)
        if op == "cbrt":
            if ex and abs(float(x)) <= ex:
                raise Fragile("cbrt near 0")
            r = f(np.cbrt(x))
            return _libm(t, r, ex / (3 * (abs(float(x)) - ex) ** (2 / 3)) if ex else 0.0)
        if op in ("log2", "log10"):
            if ex and float(x) <= ex:
                raise Fragile("log near or below 0")
            r = f(np.log2(x) if op == "log2" else np.log10(x))
            return _libm(t, r, ex / ((float(x) - ex) * 0.69) if ex else 0.0)
        if op == "atan2":  # atan2(y=x, x=y): the angle of (y, x)
            if (ex or ey) and abs(float(x)) <= ex and abs(float(y)) <= ey:
                raise Fragile("atan2 near the origin")
            if (ex or ey) and float(y) < 0 and abs(float(x)) <= ex:
                raise Fragile("atan2 near its branch cut")
            r = f(np.arctan2(x, y))
            r2 = float(x) ** 2 + float(y) ** 2
            return _libm(t, r, (abs(float(y)) * ex + abs(float(x)) * ey) / r2 * 2 if (ex or ey) else 0.0)
        if op == "tan":
            r = f(np.tan(x))
            return _libm(t, r, ex * (1 + float(r) ** 2) * 2)
        if op == "exp":
            r = f(np.exp(x))
            return _libm(t, r, ex * float(r) * 2)
        if op == "log":
            if ex and float(x) <= ex:
                raise Fragile("log near or below 0")
            return _libm(t, f(np.log(x)), ex / (float(x) - ex) if ex else 0.0)
        if op == "pow":
            r = f(np.power(x, y))
            if not (ex or ey):
                return _libm(t, r, 0.0)
            if float(x) <= ex:
                raise Fragile("pow with an inexact base near or below 0")
            err = abs(float(r)) * (abs(float(y)) * ex / (float(x) - ex) + abs(math.log(float(x))) * ey) * 2
            return _libm(t, r, err)
    raise AssertionError(op)


def _near_half(x, err):
    if err and abs(abs(float(x)) % 1 - 0.5) <= err:
        raise Fragile("round within the error bound of a half")


def fmin_fmax(op, a, b):
    """Warp's float min/max (C fmin/fmax): `a <= b ? a : (b == b ? b : a)` (>= for max): a NaN loses."""
    (x, ex), (y, ey) = a, b
    _decide(x, ex, y, ey)
    first = decided(x <= y if op == "min" else x >= y)
    if first:
        return a
    return b if not np.isnan(y) else a


def int_min_max(op, x, y):
    return x if (x < y if op == "min" else x > y) else y


def run_block(stmts, env):
    for s in stmts:
        run_stmt(s, env)


def run_stmt(s, env):
    if s.kind == "assign":
        env[s.name] = evaluate(s.expr, env)
    elif s.kind == "aug":
        t = s.expr.type
        env[s.name] = evaluate(E(s.extra[0], t, (E("var", t, (s.name,)), s.expr)), env)
    elif s.kind == "if":
        run_block(s.body if evaluate(s.expr, env)[0] else s.orelse, env)
    elif s.kind == "for":
        bounds = [evaluate(x, env)[0] for x in s.extra]
        for k in range(*bounds):
            env[s.name] = (k, 0.0)
            try:
                run_block(s.body, env)
            except _Continue:
                continue
            except _Break:
                break
    elif s.kind == "while":
        env[s.name] = (0, 0.0)
        while env[s.name][0] < s.extra[0] and evaluate(s.expr, env)[0]:
            env[s.name] = (env[s.name][0] + 1, 0.0)
            try:
                run_block(s.body, env)
            except _Continue:
                continue
            except _Break:
                break
    elif s.kind == "break":
        raise _Break()
    elif s.kind == "continue":
        raise _Continue()
    else:
        raise AssertionError(s.kind)
