"""Random composite kernels: vec2/3/4, mat22/33/44, quat and a @wp.struct in float32 or float64, their
constructors and builtins, component and field reads and writes (`v[k] = e`, `v.y *= e`, `m[r, c] = e`,
`s.v = u`) inside branches and static/dynamic `for` and `while` loops, @wp.func helpers, arrays of vectors
and structs (`o[tid].y = e`), atomics into small arrays and 2-D launches: an IR (program.E / program.S
nodes), its kernel source, and a reference interpreter with Warp's semantics (warp/native/vec.h, mat.h,
quat.h) and error bounds.

Function identity and compile-time values: @wp.funcs made by a factory (closures over a captured `c`: a float,
int or vec3; several instances), overloads of one name and a same-annotation redefinition that replaces an earlier one, generic
(`typing.Any`) functions called with int32, scalars of both precisions, vectors, matrices and quaternions;
wp.static() over module constants, closure values, constant locals, unrolled loops' variables and the
variable of a Python loop the kernel is defined in, `if wp.static(flag):` (the other branch calls an
undefined function); `*v` and `*v[a:b]` in constructors, wp.min/wp.max and calls; locals first assigned in
a branch or loop and read after it (every local is declared zero at the top of its function, as Warp's).

Error bounds (see program.py for scalars): component-wise operations that round once per component (`+`,
`-`, scalar `*`, `/`, cw_mul, outer, component reads and writes) are exact IEEE operations, so an exact
input gives a bound of 0 and mlwarp must match bit for bit. Operations that sum products (dot, cross,
length, m * v, m * m, determinant, quat * quat, quat_rotate) may be evaluated in another order or with
fused multiply-adds: the reference computes them in float64 and bounds any correct implementation by
`F(|x| + err) - F(|x|)` (the propagated input error, F being the polynomial with every sign made positive)
plus `2 (ops + 2) eps F(|x| + err)` for the roundings.

A program's float type is its precision "p" ("f" float32, "d" float64); IR type codes are "i" int32, "b"
bool, "s" the float scalar, "v2".."v4", "m22".."m44", "q" and "S" (the program's struct: a: float,
v: vec3, n: int32).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .program import NP, E, Fragile, _decide, convert, float_op, fmin_fmax, int_op, ulp

VECS = {"v2": 2, "v3": 3, "v4": 4}
MATS = {"m22": 2, "m33": 3, "m44": 4}
COMPOSITES = [*VECS, *MATS, "q"]
LETTERS = "xyzw"
STRUCT_FIELDS = {"a": "s", "v": "v3", "n": "i"}
# Gradients are not checked where an intermediate exceeds this: finite differences of such ill-conditioned
# values (cos(1e14), determinants of huge matrices) measure rounding, not the derivative.
LARGE = 1e4


def length_of(t):
    return VECS.get(t) or MATS.get(t) or (4 if t == "q" else None)


def shape_of(t):
    if t in VECS:
        return (VECS[t],)
    if t in MATS:
        return (MATS[t], MATS[t])
    return (4,)


def wp_type(t, p, struct_name="S"):
    d = p == "d"
    if t == "i":
        return "wp.int32"
    if t == "b":
        return "wp.bool"
    if t == "s":
        return "wp.float64" if d else "wp.float32"
    if t == "S":
        return struct_name
    if t == "q":
        return "wp.quatd" if d else "wp.quat"
    return f"wp.{'vec' if t in VECS else 'mat'}{t[1:]}{'d' if d else ''}"


def numpy_shape(t):
    return () if t in ("i", "s") else shape_of(t)


# -- source ---------------------------------------------------------------------------------------------------
_BIN = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_CALLS = {"dot", "cross", "length", "length_sq", "normalize", "outer", "transpose", "determinant", "cw_mul",
          "cw_div", "quat_rotate", "quat_from_axis_angle", "sin", "cos", "min", "max", "abs", "clamp"}


class Printer:
    def __init__(self, p, struct_name, prefix=""):
        self.p, self.struct_name, self.prefix = p, struct_name, prefix

    def static_text(self, text):
        """A wp.static() expression: `$NAME` is a module-level name of this program (prefixed)."""
        return text.replace("$", f"{self.prefix}_" if self.prefix else "")

    def t(self, t):
        return wp_type(t, self.p, self.struct_name)

    def e(self, e: E) -> str:
        op, a = e.op, e.args
        if op == "var":
            return a[0]
        if op == "const":
            v = a[0]
            if e.type == "s" and self.p == "d":
                return f"wp.float64({v!r})"
            if e.type == "b":
                return repr(bool(v))
            return f"({v!r})" if v < 0 else repr(v)
        if op == "ctor":
            return f"{self.t(e.type)}({', '.join(self.e(x) for x in a)})"
        if op == "zero":
            return f"{self.t(e.type)}()"
        if op == "load":  # a[tid] / a[i, j]
            return f"{a[0]}[{a[1]}]"
        if op in _BIN:
            return f"({self.e(a[0])} {_BIN[op]} {self.e(a[1])})"
        if op in _CMP:
            return f"({self.e(a[0])} {_CMP[op]} {self.e(a[1])})"
        if op == "neg":
            return f"(-{self.e(a[0])})"
        if op in ("and", "or"):
            return f"({self.e(a[0])} {op} {self.e(a[1])})"
        if op == "not":
            return f"(not {self.e(a[0])})"
        if op == "index":  # a constant component index
            return f"{self.e(a[0])}[{a[1]}]"
        if op == "attr":
            return f"{self.e(a[0])}.{a[1]}"
        if op == "dyn_index":
            return f"{self.e(a[0])}[wp.clamp({self.e(a[1])}, 0, {a[2] - 1})]"
        if op == "elem":
            return f"{self.e(a[0])}[{a[1]}, {a[2]}]"
        if op in ("call", "gcall"):
            return f"{a[0]}({', '.join(self.e(x) for x in a[1:])})"
        if op == "static":  # a Python value computed at declaration
            text = f"wp.static({self.static_text(a[0])})"
            return f"wp.float64({text})" if e.type == "s" and self.p == "d" else text
        if op == "sindex":  # v[wp.static(k)]
            return f"{self.e(a[0])}[wp.static({self.static_text(a[1])})]"
        if op == "star":
            return f"*{self.e(a[0])}"
        if op == "slice":
            return f"{self.e(a[0])}[{a[1]}:{a[2]}]"
        if op == "convert":  # "s~": the scalar of the other precision
            other = (self.p == "f") == (e.type == "s~")
            return f"wp.{'float64' if other else 'float32'}({self.e(a[0])})"
        if op in ("min", "max") and any(x.op == "star" for x in a):
            return f"wp.{op}({', '.join(self.e(x) for x in a)})"
        if op in ("abs", "min", "max"):
            return f"{op}({', '.join(self.e(x) for x in a)})"
        assert op in _CALLS, op
        return f"wp.{op}({', '.join(self.e(x) for x in a)})"

    def target(self, tgt) -> str:
        """An assignment target: ("name", n) | ("index", n, k) | ("attr", n, letter) | ("dyn", n, ie, len) |
        ("elem", n, r, c) | ("row", n, r) | ("field", n, f) | ("field_index", n, f, k) | ("store", arr, idx) |
        ("store_index", arr, idx, k) | ("store_attr", arr, idx, letter) | ("store_field", arr, idx, f)."""
        kind, n = tgt[0], tgt[1]
        if kind in ("name", "cname"):
            return n
        if kind == "index":
            return f"{n}[{tgt[2]}]"
        if kind == "attr":
            return f"{n}.{tgt[2]}"
        if kind == "dyn":
            return f"{n}[wp.clamp({self.e(tgt[2])}, 0, {tgt[3] - 1})]"
        if kind == "elem":
            return f"{n}[{tgt[2]}, {tgt[3]}]"
        if kind == "row":
            return f"{n}[{tgt[2]}]"
        if kind == "field":
            return f"{n}.{tgt[2]}"
        if kind == "field_index":
            return f"{n}.{tgt[2]}[{tgt[3]}]"
        if kind == "store":
            return f"{n}[{tgt[2]}]"
        if kind == "store_index":
            return f"{n}[{tgt[2]}][{tgt[3]}]"
        if kind == "store_attr":
            return f"{n}[{tgt[2]}].{tgt[3]}"
        if kind == "store_field":
            return f"{n}[{tgt[2]}].{tgt[3]}"
        raise AssertionError(kind)

    def block(self, stmts, lines, depth, allow_empty=False):
        pad = "    " * depth
        if not stmts and not allow_empty:
            lines.append(pad + "pass")
        for s in stmts:
            if s.kind == "set":  # s.extra = (target, aug op or None)
                tgt, aug = s.extra
                value = self.e(s.expr)
                if tgt[0] == "name" and s.expr.op in ("const", "static") and (
                        s.expr.type == "i" or s.expr.type == "s" and self.p == "f"):
                    # Warp refuses to mutate a local initialised from a bare literal (or a wp.static()) inside a
                    # dynamic loop (mlwarp does not)
                    value = f"{'int' if s.expr.type == 'i' else 'float'}({value})"
                lines.append(f"{pad}{self.target(tgt)} {_BIN[aug] + '=' if aug else '='} {value}")
            elif s.kind == "atomic":  # s.extra = (function, array, index E)
                fn, arr, idx = s.extra
                if fn == "aug_add":  # `a[i] += v` on an array element is Warp's atomic_add
                    lines.append(f"{pad}{arr}[{self.e(idx)}] += {self.e(s.expr)}")
                else:
                    lines.append(f"{pad}wp.{fn}({arr}, {self.e(idx)}, {self.e(s.expr)})")
            elif s.kind == "static_if":  # only the branch wp.static() selects is compiled
                lines.append(f"{pad}if wp.static({self.static_text(s.extra[0])}):")
                self.block(s.body, lines, depth + 1)
                if s.orelse:
                    lines.append(f"{pad}else:")
                    self.block(s.orelse, lines, depth + 1)
            elif s.kind == "bogus":  # in a branch wp.static() discards: never compiled
                lines.append(f"{pad}{self.prefix}_never_defined(1.0, {self.prefix}_nowhere)")
            elif s.kind == "if":
                lines.append(f"{pad}if {self.e(s.expr)}:")
                self.block(s.body, lines, depth + 1)
                if s.orelse:
                    lines.append(f"{pad}else:")
                    self.block(s.orelse, lines, depth + 1)
            elif s.kind == "for":
                lines.append(f"{pad}for {s.name} in range({', '.join(self.e(x) for x in s.extra)}):")
                self.block(s.body, lines, depth + 1)
            elif s.kind == "while":
                counter, bound = s.name, s.extra[0]
                lines.append(f"{pad}{counter} = int(0)")
                lines.append(f"{pad}while {counter} < {bound} and {self.e(s.expr)}:")
                lines.append(f"{pad}    {counter} += 1")
                self.block(s.body, lines, depth + 1)
            else:
                lines.append(pad + s.kind)


@dataclass
class Func:
    name: str
    params: list  # [(name, type)]
    type: str
    body: list
    result: E
    # a closure: made by `def <factory>(c): @wp.func def f(...)...; return f`, capturing c = capture
    factory: str | None = None
    capture: float | int | tuple | None = None  # a float, an int or a vec3's components (capture_type)
    capture_type: str = "s"
    print_name: str | None = None  # overloads share one printed name
    shadowed: bool = False  # redefined later with the same annotations: never called
    generic: bool = False  # parameters typing.Any; result E over types "T" (the instance) and "A" (its scalar)


# Kernel parameters: inputs (read only) and outputs, by name: (IR type, array dimensions).
INPUTS = {"xi": "i", "xs": "s", "xv": "v3", "xm": "m33", "xq": "q", "xS": "S"}
ACCUMULATORS = {"acc_f": ("s", 4), "acc_i": ("i", 4), "acc_v": ("v3", 2)}


@dataclass
class Program:
    p: str  # "f" or "d"
    types: list  # the composite types used, among COMPOSITES (+ "S")
    dims: tuple  # (8,) or (a, b) with a * b == 8
    body: list
    outputs: dict  # output array name -> (type, E or None: written in the body)
    funcs: list = field(default_factory=list)
    atomic_i_op: str = "atomic_add"  # the one atomic the int accumulator takes (several would be ordered)
    consts: dict = field(default_factory=dict)  # module-level names wp.static() reads: {name: value}
    kernel_loop: tuple | None = None  # (count, chosen): the kernel is defined in `for kn in range(count)`
    # reads a scalar a skipped branch leaves uninitialised in warp-lang, or a name first assigned in a loop
    # that warp-lang's dynamic loops do not carry from one iteration to the next (mlwarp: as Python)
    warp_undefined: bool = False

    @property
    def threads(self):
        return int(np.prod(self.dims))

    def input_index(self, name):
        return "i, j" if (len(self.dims) == 2 and name == "xs") else "tid"

    def source(self, name, module_header="import mlwarp as wp"):
        return "\n".join([module_header, *self.definitions(name)]) + "\n"

    def definitions(self, name) -> list:
        """The struct, funcs and kernel, named after `name` so that several programs share one module."""
        sn = f"{name}_S"
        pr = Printer(self.p, sn, name)
        names = {f.name: f"{name}_{f.print_name or f.name}" for f in self.funcs}
        lines = ["", "", "import typing"] * any(f.generic for f in self.funcs)
        lines += [f"{name}_{c} = {v!r}" for c, v in self.consts.items()]
        lines += ["", "", "@wp.struct", f"class {sn}:"]
        lines += [f"    {f}: {pr.t(t)}" for f, t in STRUCT_FIELDS.items()]
        made = set()
        for f in self.funcs:
            pr_f = _Renaming(pr, name, names)
            if f.generic:
                params = ", ".join(f"{n}: typing.Any" for n, _ in f.params)
                lines += ["", "", "@wp.func", f"def {names[f.name]}({params}):", f"    return {pr_f.e(f.result)}"]
                continue
            params = ", ".join(f"{n}: {pr.t(t)}" for n, t in f.params)
            if f.factory is None:
                lines += ["", "", "@wp.func", f"def {names[f.name]}({params}) -> {pr.t(f.type)}:"]
                pr_f.block(f.body, lines, 1, allow_empty=True)
                lines.append(f"    return {pr_f.e(f.result)}")
                continue
            if f.factory not in made:
                made.add(f.factory)
                lines += ["", "", f"def {name}_{f.factory}(c):", "    @wp.func", f"    def f({params}) -> {pr.t(f.type)}:"]
                pr_f.block(f.body, lines, 2, allow_empty=True)
                lines += [f"        return {pr_f.e(f.result)}", "", "    return f", ""]
            if f.capture_type == "v3":
                value = f"{pr.t('v3')}({', '.join(repr(x) for x in f.capture)})"
            elif f.capture_type == "s" and self.p == "d":
                value = f"wp.float64({f.capture!r})"
            else:
                value = repr(f.capture)
            lines.append(f"{names[f.name]} = {name}_{f.factory}({value})")
        args = []
        for n, t in INPUTS.items():
            nd = 2 if self.input_index(n) == "i, j" else 1
            args.append(f"{n}: wp.array(dtype={pr.t(t)}{', ndim=2' if nd == 2 else ''})")
        for n, (t, _) in self.outputs.items():
            args.append(f"{n}: wp.array(dtype={pr.t(t)})")
        for n, (t, _) in ACCUMULATORS.items():
            args.append(f"{n}: wp.array(dtype={pr.t(t)})")
        kernel = ["@wp.kernel", f"def {name}({', '.join(args)}):"]
        if len(self.dims) == 2:
            kernel += ["    i, j = wp.tid()", f"    tid = i * {self.dims[1]} + j"]
        else:
            kernel += ["    tid = wp.tid()"]
        pr_k = _Renaming(pr, name, names)
        pr_k.block(self.body, kernel, 1)
        for n, (t, e) in self.outputs.items():
            if e is not None:
                kernel.append(f"    {n}[tid] = {pr_k.e(e)}")
        if self.kernel_loop is None:
            return lines + ["", ""] + kernel
        count, chosen = self.kernel_loop  # kernels made in a loop, each with its own wp.static(kn)
        return lines + ["", "", f"{name}_ks = []", f"for {name}_kn in range({count}):"] + [
            "    " + x for x in kernel] + [f"    {name}_ks.append({name})", f"{name} = {name}_ks[{chosen}]"]


class _Renaming(Printer):
    """Prefixes @wp.func names with the kernel's name (several programs share a module)."""

    def __init__(self, base, prefix, names=None):
        super().__init__(base.p, base.struct_name, prefix)
        self.names = names or {}

    def e(self, e):
        if e.op in ("call", "gcall"):
            name = self.names.get(e.args[0], f"{self.prefix}_{e.args[0]}")
            return f"{name}({', '.join(self.e(x) for x in e.args[1:])})"
        if e.op == "struct":
            return f"{self.struct_name}()"
        return super().e(e)


# -- reference ------------------------------------------------------------------------------------------------
class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _eps(p):
    return float(np.finfo(NP[p]).eps)


class Composite:
    """A vec/mat/quat value: components in the program's precision and a bound per component."""

    __slots__ = ("v", "e")

    def __init__(self, v, e):
        self.v, self.e = v, e

    def copy(self):
        return Composite(self.v.copy(), self.e.copy())


def _scalar_pairs(c: Composite):
    return [(c.v.flat[k], float(c.e.flat[k])) for k in range(c.v.size)]


def _from_pairs(pairs, shape, p):
    return Composite(np.array([v for v, _ in pairs], dtype=NP[p]).reshape(shape),
                     np.array([e for _, e in pairs], dtype=np.float64).reshape(shape))


class Interpreter:
    """Runs one thread of a program: `run(inputs)` -> {output name: value}, atomics in `self.atomics`,
    every discrete decision in `self.trace` (equal traces: the same piecewise-smooth path)."""

    def __init__(self, program: Program):
        self.prog = program
        self.p = program.p
        self.funcs = {f.name: f for f in program.funcs if not f.shadowed}
        self.capture = None  # the closure value of the factory function being run
        self.statics = dict(program.consts)
        if program.kernel_loop is not None:
            self.statics["kn"] = program.kernel_loop[1]

    def declare(self, stmts, env):
        """Every local a body assigns exists from its start, zero (Warp declares them at the top of the
        function: composites zeroed; the generator reads a scalar a path skipped only where Warp's is
        defined, or in programs marked warp_undefined)."""
        for s in stmts:
            if s.kind == "set" and s.extra[0][0] in ("name", "cname") and s.extra[0][1] not in env:
                env[s.extra[0][1]] = self.zero(s.name)
            self.declare(s.body, env)
            self.declare(s.orelse, env)

    def static(self, text, env):
        """A wp.static() expression, evaluated in Python as Warp does at declaration."""
        names = dict(self.statics)
        names.update({n: v[0] for n, v in env.items() if isinstance(v, tuple) and isinstance(v[0], int)})
        if self.capture is not None:  # a vector's components as Warp's Python view gives them (rounded)
            names["c"] = self.capture if not isinstance(self.capture, tuple) else tuple(
                float(NP[self.p](x)) for x in self.capture)
        return eval(text.replace("$", ""), {"__builtins__": {}}, names)  # noqa: S307 - generated text

    def expand(self, args, env):
        """Arguments with `*v` (star) expanded into components."""
        out = []
        for x in args:
            if x.op == "star":
                out += _scalar_pairs(self.ev(x.args[0], env))
            else:
                out.append(self.ev(x, env))
        return out

    # values -----------------------------------------------------------------------------------------------
    def decided(self, v):
        self.trace.append(v)
        return v

    def zero(self, t):
        if t == "S":
            return {"a": (NP[self.p](0), 0.0), "v": self.zero("v3"), "n": (0, 0.0)}
        if t == "i":
            return (0, 0.0)
        if t == "s":
            return (NP[self.p](0), 0.0)
        return Composite(np.zeros(shape_of(t), dtype=NP[self.p]), np.zeros(shape_of(t)))

    @staticmethod
    def copy(value):
        if isinstance(value, Composite):
            return value.copy()
        if isinstance(value, dict):
            return {k: Interpreter.copy(v) for k, v in value.items()}
        return value

    def elementwise(self, op, a, b):
        """An exact per-component operation (b: a Composite of the same shape or a scalar pair)."""
        pa = _scalar_pairs(a)
        pb = _scalar_pairs(b) if isinstance(b, Composite) else [b] * len(pa)
        return _from_pairs([float_op(op, self.p, [x, y]) for x, y in zip(pa, pb)], a.v.shape, self.p)

    def polynomial(self, fn, args, ops, shape=None):
        """A sum of products (see the module docstring): fn(values, sub) in float64 on numpy arrays."""
        vals = [np.asarray(a.v if isinstance(a, Composite) else a[0], dtype=np.float64) for a in args]
        errs = [np.asarray(a.e if isinstance(a, Composite) else a[1], dtype=np.float64) for a in args]
        if not all(np.all(np.isfinite(v)) for v in vals):
            raise Fragile("non-finite input to a sum of products")
        with np.errstate(all="ignore"):
            exact = np.asarray(fn(vals, np.subtract), dtype=np.float64)
            magnitude = np.asarray(fn([np.abs(v) for v in vals], np.add))
            widened = np.asarray(fn([np.abs(v) + e for v, e in zip(vals, errs)], np.add))
        value = exact.astype(NP[self.p])
        if not (np.all(np.isfinite(value)) and np.all(np.isfinite(widened))):
            raise Fragile("sum of products out of range")
        # a sum of exact zeros (widened == 0) is an exact 0
        err = (widened - magnitude) * (1 + 1e-12) + 2 * (ops + 2) * _eps(self.p) * widened \
            + np.where(widened > 0, np.spacing(np.abs(value)).astype(np.float64), 0.0)
        if shape == ():
            return NP[self.p](value), float(err)
        return Composite(value, err)

    # expressions ------------------------------------------------------------------------------------------
    def ev(self, e: E, env):
        value = self._ev(e, env)
        if e.type == "s" and not np.isfinite(value[0]) or isinstance(value, Composite) and not np.all(
                np.isfinite(value.v)):
            self.trace.append("non-finite")  # even unused: 0 * NaN in the reverse sweep (as in Warp)
        elif e.type in ("s",) and abs(float(value[0])) > LARGE or isinstance(value, Composite) and np.max(
                np.abs(value.v), initial=0) > LARGE:
            self.large = True
        return value

    def _ev(self, e: E, env):
        op, a, t = e.op, e.args, e.type
        p = self.p
        if op == "var":
            return env[a[0]]
        if op == "const":
            if t == "s":
                return NP[p](a[0]), 0.0
            return (bool(a[0]) if t == "b" else int(a[0])), 0.0
        if op == "zero":
            return self.zero(t)
        if op == "struct":
            return self.zero("S")
        if op == "load":
            return self.copy(self.inputs[a[0]])
        if op == "static":
            v = self.static(a[0], env)
            return (NP[p](v), 0.0) if t == "s" else (int(v), 0.0)
        if op == "convert":  # between this program's scalar and the other precision's ("s~")
            other = "d" if p == "f" else "f"
            src, dst = (p, other) if t == "s~" else (other, p)
            if a[0].op == "const":  # wp.float64(0.1) in a float32 kernel: the literal, not float32(0.1)
                return NP[dst](a[0].args[0]), 0.0
            v, err = self.ev(a[0], env)
            return convert(v, err, src, dst)
        if op == "gcall":  # a generic function's instance: its result E with T and A made concrete
            f = self.funcs[a[0]]
            inst = "s" if t == "s~" else t
            local = {n: self.copy(self.ev(x, env)) for (n, _), x in zip(f.params, a[1:])}
            saved = self.p
            if t == "s~":
                self.p = "d" if p == "f" else "f"
            try:
                return self.ev(_instantiate(f.result, inst), local)
            finally:
                self.p = saved
        if op == "slice":
            base = self.ev(a[0], env)
            return Composite(base.v[a[1]:a[2]].copy(), base.e[a[1]:a[2]].copy())
        if op == "ctor":
            parts = self.expand(a, env)
            return _from_pairs(parts * (length_of(t) if t in VECS and len(parts) == 1 else 1), shape_of(t), p)
        if op == "call":
            f = self.funcs[a[0]]
            values = self.expand(a[1:], env)
            local = {n: self.copy(v) for (n, _), v in zip(f.params, values)}
            saved = self.capture
            self.capture = f.capture
            if f.capture_type == "v3" and f.capture is not None:
                local["c"] = Composite(np.array(f.capture, dtype=NP[p]), np.zeros(3))
            elif f.capture is not None:
                local["c"] = (NP[p](f.capture) if f.capture_type == "s" else int(f.capture), 0.0)
            self.declare(f.body, local)
            try:
                self.block(f.body, local)
                return self.ev(f.result, local)
            finally:
                self.capture = saved
        if op in _CMP:
            (x, ex), (y, ey) = self.ev(a[0], env), self.ev(a[1], env)
            if a[0].type == "s" and a[0] != a[1]:
                _decide(x, ex, y, ey)
            return self.decided({"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y,
                                 "ne": x != y}[op]), 0.0
        if op in ("and", "or"):
            x, y = self.ev(a[0], env)[0], self.ev(a[1], env)[0]
            return (x and y) if op == "and" else (x or y), 0.0
        if op == "not":
            return not self.ev(a[0], env)[0], 0.0
        if op in ("index", "attr", "dyn_index", "elem", "sindex"):
            base = self.ev(a[0], env)
            if isinstance(base, dict):  # a struct field
                return self.copy(base[a[1]])
            if op == "attr":
                k = (LETTERS.index(a[1]),)
            elif op == "index":
                k = (a[1],)
            elif op == "dyn_index":
                k = (min(max(self.ev(a[1], env)[0], 0), a[2] - 1),)
            elif op == "sindex":
                k = (self.static(a[1], env),)
            else:
                k = (a[1], a[2])
            if a[0].type in MATS and len(k) == 1:  # a row
                return Composite(base.v[k[0]].copy(), base.e[k[0]].copy())
            return base.v[k], float(base.e[k])
        args = self.expand(a, env)
        if t == "i":
            return int_op(op, "i", args)
        if t in ("s",) and all(not isinstance(x, Composite) for x in args):
            return self.scalar_call(op, args, a)
        return self.composite_op(op, t, args, a)

    def scalar_call(self, op, args, a):
        p = self.p
        if op in ("min", "max"):
            v = fmin_fmax(op, args[0], args[1])
            self.decided(v is args[0])
            return v
        if op == "abs":
            self.decided(args[0][0] < 0)
        if op in ("add", "sub", "mul", "div", "neg", "abs", "sin", "cos"):
            return float_op(op, p, args)
        raise AssertionError(op)

    def composite_op(self, op, t, args, a):
        p = self.p
        ta = [x.type for x in a]
        if op in ("add", "sub"):
            return self.elementwise(op, args[0], args[1])
        if op == "neg":
            return _from_pairs([float_op("neg", p, [x]) for x in _scalar_pairs(args[0])], args[0].v.shape, p)
        if op == "mul":
            if ta[0] == "s":  # s * v: Warp computes v[k] * s
                return self.elementwise("mul", args[1], args[0])
            if ta[1] == "s":
                return self.elementwise("mul", args[0], args[1])
            if ta[0] == "q":  # Hamilton product (quat.h mul)
                return self.polynomial(_quat_mul, args, 4)
            if ta[1] in VECS:  # matrix * vector
                return self.polynomial(lambda v, sub: v[0] @ v[1], args, MATS[ta[0]] + 1)
            return self.polynomial(lambda v, sub: v[0] @ v[1], args, MATS[ta[0]] + 1)
        if op == "div":
            if args[1][0] == 0:  # ±inf by the sign of a zero, which sums of products do not model
                raise Fragile("division by zero")
            return self.elementwise("div", args[0], args[1])
        if op == "cw_mul":
            return self.elementwise("mul", args[0], args[1])
        if op == "cw_div":
            return self.elementwise("div", args[0], args[1])
        if op == "outer":
            u, w = _scalar_pairs(args[0]), _scalar_pairs(args[1])
            return _from_pairs([float_op("mul", p, [x, y]) for x in u for y in w], (len(u), len(w)), p)
        if op == "transpose":
            return Composite(args[0].v.T.copy(), args[0].e.T.copy())
        if op == "dot":
            return self.polynomial(lambda v, sub: np.sum(v[0] * v[1]), args, len(args[0].v), shape=())
        if op == "length_sq":
            return self.polynomial(lambda v, sub: np.sum(v[0] * v[0]), args, len(args[0].v), shape=())
        if op in ("length", "normalize"):
            d, ed = self.polynomial(lambda v, sub: np.sum(v[0] * v[0]), args, len(args[0].v), shape=())
            if ed and float(d) <= ed:
                raise Fragile("length near 0")
            length = NP[p](np.sqrt(np.float64(d)))
            el = (ed / (2 * math.sqrt(float(d) - ed)) if ed else 0.0) + ulp(length)
            if op == "length":
                return length, el
            if not self.decided(length > 0):  # vec.h: l > kEps (0) ? a / l : 0
                return self.zero(t)
            x, ex, l64 = args[0].v.astype(np.float64), args[0].e, float(length)
            if l64 <= el:
                raise Fragile("normalize of a vector within its error bound of 0")
            value = (x / l64).astype(NP[p])
            err = (np.abs(x) * el + l64 * ex) / (l64 * (l64 - el)) + 2 * np.spacing(np.abs(value)).astype(float)
            return Composite(value, err)
        if op == "cross":
            return self.polynomial(lambda v, sub: np.array([
                sub(v[0][1] * v[1][2], v[0][2] * v[1][1]), sub(v[0][2] * v[1][0], v[0][0] * v[1][2]),
                sub(v[0][0] * v[1][1], v[0][1] * v[1][0])]), args, 2)
        if op == "determinant":
            return self.polynomial(_determinant, args, 2 * len(args[0].v), shape=())
        if op == "quat_rotate":
            return self.polynomial(_quat_rotate, args, 8)
        if op == "quat_from_axis_angle":  # quat.h: half = angle * 0.5; (axis * sin(half), cos(half))
            half = float_op("mul", p, [args[1], (NP[p](0.5), 0.0)])
            s, c = float_op("sin", p, [half]), float_op("cos", p, [half])
            xyz = [float_op("mul", p, [x, s]) for x in _scalar_pairs(args[0])]
            return _from_pairs(xyz + [c], (4,), p)
        raise AssertionError(op)

    # statements -------------------------------------------------------------------------------------------
    def block(self, stmts, env):
        for s in stmts:
            self.stmt(s, env)

    def assign(self, old, aug, new, t):
        if aug is None:
            return self.copy(new)
        if isinstance(old, Composite):
            return self.composite_op(aug, t, [old, new], [E("var", t), E("var", "s" if not isinstance(
                new, Composite) else t)])
        if t == "i":
            return int_op(aug, "i", [old, new])
        return float_op(aug, self.p, [old, new])

    def stmt(self, s, env):
        if s.kind == "set":
            tgt, aug = s.extra
            value = self.ev(s.expr, env)
            kind, n = tgt[0], tgt[1]
            t = s.name  # the target's type
            if kind in ("name", "cname"):
                env[n] = self.assign(env.get(n), aug, value, t)
                return
            if kind.startswith("store"):
                holder, key = self.outputs, n
            else:
                holder, key = env, n
            base = holder[key]
            if kind in ("store", ):
                holder[key] = self.assign(base, aug, value, t)
                return
            if kind in ("field", "store_field"):
                f = tgt[2] if kind == "field" else tgt[3]
                holder[key] = dict(base, **{f: self.assign(base[f], aug, value, t)})
                return
            if kind == "field_index":
                inner = base[tgt[2]].copy()
                self._set_component(inner, (tgt[3],), aug, value, t)
                holder[key] = dict(base, **{tgt[2]: inner})
                return
            c = base.copy()
            if kind == "index":
                k = (tgt[2],)
            elif kind == "store_index":
                k = (tgt[3],)
            elif kind in ("attr", "store_attr"):
                k = (LETTERS.index(tgt[2] if kind == "attr" else tgt[3]),)
            elif kind == "dyn":
                k = (min(max(self.ev(tgt[2], env)[0], 0), tgt[3] - 1),)
            elif kind == "elem":
                k = (tgt[2], tgt[3])
            elif kind == "row":
                k = (tgt[2],)
            else:
                raise AssertionError(kind)
            self._set_component(c, k, aug, value, t)
            holder[key] = c
        elif s.kind == "atomic":
            fn, arr, idx = s.extra
            i = self.ev(idx, env)[0]
            self.atomics.append((arr, int(i), "atomic_add" if fn == "aug_add" else fn, self.copy(
                self.ev(s.expr, env))))
        elif s.kind == "if":
            self.block(s.body if self.decided(self.ev(s.expr, env)[0]) else s.orelse, env)
        elif s.kind == "static_if":
            self.block(s.body if self.static(s.extra[0], env) else s.orelse, env)
        elif s.kind in ("for", "while"):
            if s.kind == "for":
                iterations = iter(range(*[self.ev(x, env)[0] for x in s.extra]))
            else:
                env[s.name] = (0, 0.0)
            while True:
                if s.kind == "for":
                    k = next(iterations, None)
                    if k is None:
                        break
                    env[s.name] = (k, 0.0)
                else:
                    if not (env[s.name][0] < s.extra[0] and self.decided(self.ev(s.expr, env)[0])):
                        break
                    env[s.name] = (env[s.name][0] + 1, 0.0)
                try:
                    self.block(s.body, env)
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

    def _set_component(self, c: Composite, k, aug, value, t):
        if isinstance(value, Composite):  # a matrix row
            old = Composite(c.v[k[0]].copy(), c.e[k[0]].copy())
            new = self.assign(old, aug, value, t)
            c.v[k[0]], c.e[k[0]] = new.v, new.e
            return
        new = self.assign((c.v[k], float(c.e[k])), aug, value, "s")
        c.v[k], c.e[k] = new

    def run(self, inputs: dict):
        """inputs: {name: value of this thread} for INPUTS plus "tid" (and "i", "j")."""
        self.trace, self.atomics, self.large = [], [], False
        self.inputs = inputs
        self.outputs = {n: self.zero(t) for n, (t, _) in self.prog.outputs.items()}
        env = {k: v for k, v in inputs.items() if k in ("tid", "i", "j")}
        self.declare(self.prog.body, env)
        with np.errstate(all="ignore"):
            self.block(self.prog.body, env)
            for n, (t, e) in self.prog.outputs.items():
                if e is not None:
                    self.outputs[n] = self.copy(self.ev(e, env))
        return self.outputs


def _instantiate(e: E, t):
    """A generic function's E with its type variables made concrete: T the instance type, A its scalar."""
    if not isinstance(e, E):
        return e
    return E(e.op, {"T": t, "A": "i" if t == "i" else "s"}.get(e.type, e.type),
             tuple(_instantiate(x, t) for x in e.args))


def _quat_mul(v, sub):
    a, b = v
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([sub(aw * bx + bw * ax + ay * bz, by * az), sub(aw * by + bw * ay + az * bx, bz * ax),
                     sub(aw * bz + bw * az + ax * by, bx * ay), sub(sub(sub(aw * bw, ax * bx), ay * by), az * bz)])


def _quat_rotate(v, sub):
    """quat.h: x c + q.xyz d + cross(q.xyz, x) w 2 with c = 2 w w - 1, d = 2 dot(q.xyz, x)."""
    q, x = v
    qv, w = q[:3], q[3]
    c = sub(2 * w * w, 1.0)
    d = 2 * np.sum(qv * x)
    cr = np.array([sub(qv[1] * x[2], qv[2] * x[1]), sub(qv[2] * x[0], qv[0] * x[2]),
                   sub(qv[0] * x[1], qv[1] * x[0])])
    return x * c + qv * d + cr * w * 2


def _permutations(n):
    import itertools

    for perm in itertools.permutations(range(n)):
        inversions = sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n))
        yield perm, inversions % 2


def _determinant(v, sub):
    m = v[0]
    n = m.shape[0]
    plus = minus = 0.0
    for perm, odd in _permutations(n):
        term = np.prod([m[r, perm[r]] for r in range(n)])
        if odd:
            minus = minus + term
        else:
            plus = plus + term
    return sub(plus, minus)
