"""Random composite programs (see composite.py for the IR and semantics), drawn either through hypothesis
(CI: seeded, shrinkable) or from a `random.Random` (campaigns, which put many programs in one module).

Loops are bounded (trip counts 0..4, every while loop has an iteration bound); dynamic component indices are
`wp.clamp(e, 0, n - 1)` and atomic indices `wp.clamp(e, 0, size - 1)`, so nothing is out of bounds.
"""

from __future__ import annotations

import os
import random

from .composite import (ACCUMULATORS, COMPOSITES, LETTERS, MATS, STRUCT_FIELDS, VECS, Func, Program,
                        length_of)
from .program import E, S

# mostly multiples of 1/8 (exact in float32 and float64); a few that round differently in each precision
# (a float32 program reads `0.1` as float32(0.1), a float64 one `wp.float64(-0.3)` as float64(-0.3))
FLOAT_CONSTS = [k / 8 for k in range(-16, 17)] + [0.1, -0.3, 1.7, -2.9, 1e-3]
IMMUTABLE = ("k", "c", "p", "tid", "i", "j")  # loop variables, while counters, @wp.func parameters, indices
PREFIX = {"i": "n", "s": "x", "S": "r"}
# mlwarp refuses to differentiate a struct array read (or member store) at an index other than
# `i = wp.tid()`, such as `i * 4 + j` in a 2-D launch, which warp-lang differentiates: gradient programs of
# 2-D launches leave struct arrays alone unless MLWARP_FUZZ_STRUCT_GRAD_2D=1.
STRUCT_ARRAY_GRADIENTS_IN_2D = os.environ.get("MLWARP_FUZZ_STRUCT_GRAD_2D") == "1"


class Draws:
    """The choices a generator makes: through hypothesis' `draw` or a random.Random."""

    def __init__(self, draw=None, rng: random.Random | None = None):
        self.draw, self.rng = draw, rng

    def integer(self, lo, hi):
        if self.rng is not None:
            return self.rng.randint(lo, hi)
        import hypothesis.strategies as st

        return self.draw(st.integers(lo, hi))

    def pick(self, options):
        options = list(options)
        return options[self.integer(0, len(options) - 1)]

    def chance(self, in_8):
        return self.integer(0, 7) < in_8


def _const(t, v):
    return E("const", t, (v,))


class Generator:
    def __init__(self, d: Draws, p, types, grad=False, max_depth=3, max_stmts=4, warp_defined=True):
        self.d, self.p, self.types, self.grad = d, p, types, grad
        self.max_depth, self.max_stmts = max_depth, max_stmts
        self.names = 0
        self.funcs = []
        self.in_func = False
        self.body_outputs = set()  # output arrays the body writes
        self.index = "tid"
        self.dims2 = False  # a 2-D launch: xs is a 2-D array read at [i, j]
        self.atomic_i_op = "atomic_add"
        self.warp_defined = warp_defined  # no reads of a scalar a skipped branch leaves uninitialised in Warp
        self.warp_undefined = False  # set where such a read (or a name warp-lang's loops do not carry) is made
        self.consts = {}  # module-level names wp.static() reads
        self.kernel_loop = False  # the kernel is defined in a Python loop: wp.static($kn) reads its variable
        self.static_loops = set()  # variables of unrolled (constant-range, no break/continue) loops
        self.loop_depth = 0
        self.in_factory = None  # in a closure's body: the type of `c`, the captured value

    def callable(self, t):
        return [f for f in self.funcs if f.type == t and not f.shadowed and not f.generic]

    def generics(self):
        return [f for f in self.funcs if f.generic]

    # -- wp.static ---------------------------------------------------------------------------------------
    def int_atoms(self, scope):
        """Python names a wp.static() expression may read here: module constants, constant locals (`cn = 3`),
        unrolled loops' variables and the variable of the loop the kernel is defined in."""
        atoms = [f"${c}" for c, v in self.consts.items() if c.startswith("C")]
        atoms += [n for n in scope if n.startswith("cn") or n in self.static_loops]
        if self.in_factory == "i":
            atoms.append("c")
        if self.kernel_loop and not self.in_func:
            atoms.append("$kn")
        return atoms

    def static_int_text(self, scope):
        atoms = self.int_atoms(scope)
        if not atoms:
            return None
        a = self.d.pick(atoms)
        form = self.d.integer(0, 3)
        if form == 0:
            return a
        if form == 1:
            return f"{a} * {self.d.integer(-2, 3)} + {self.d.integer(-2, 2)}"
        # Warp evaluates a wp.static() that reads a local (a constant local, an unrolled loop's variable) when
        # it builds the module, not at declaration: the kernel loop's variable has its last value by then
        # (mlwarp too). So $kn goes only with module-level names.
        local = lambda x: not x.startswith("$")  # noqa: E731
        b = self.d.pick([x for x in atoms if not (local(x) and a == "$kn" or x == "$kn" and local(a))] or [a])
        return f"{a} {self.d.pick(['+', '-', '*'])} {b}"

    def static_float_text(self, scope):
        atoms = [f"${c}" for c in self.consts if c.startswith("F")]
        if self.in_factory == "s":
            atoms.append("c")
        if self.in_factory == "v3":
            atoms += [f"c[{k}]" for k in range(3)]
        options = ["int"] * bool(self.int_atoms(scope)) + ["float"] * bool(atoms)
        if not options:
            return None
        if self.d.pick(options) == "int":
            return f"({self.static_int_text(scope)}) * 0.25"
        a = self.d.pick(atoms)
        if a.startswith("c") and self.p == "d":
            return a  # a wp.float64: Warp finds no mul(float64, float) for `c * 2.0`
        return a if self.d.chance(4) else f"{a} * {self.d.pick([0.5, 2.0, -1.5])}"

    # -- star-unpacking ------------------------------------------------------------------------------------
    def star_source(self, m, scope, depth):
        """An E whose m components `*e` unpacks: a vector of length m, or a slice of a longer one."""
        options = [t for t in self.types if t in VECS and VECS[t] == m] + [
            t for t in self.types if (t in VECS and VECS[t] > m) or t == "q"]
        if not options:
            return None
        t = self.d.pick(options)
        base = self.component_base(scope, t, depth) or self.composite_expr(t, scope, depth + 1, True)
        n = length_of(t)
        if n == m and self.d.chance(5):
            return E("star", f"v{m}", (base,))
        lo = self.d.integer(0, n - m)
        return E("star", f"v{m}", (E("slice", f"v{m}", (base, lo, lo + m)),))

    def star_args(self, types, scope, depth):
        """Arguments for parameters of `types`: runs of scalars passed as `*v` or `*v[a:b]` at times."""
        out, k = [], 0
        while k < len(types):
            run = 0
            while k + run < len(types) and types[k + run] == "s" and run < 4:
                run += 1
            if run >= 2 and self.d.chance(3):
                m = self.d.integer(2, run)
                src = self.star_source(m, scope, depth)
                if src is not None:
                    out.append(src)
                    k += m
                    continue
            out.append(self.expr(types[k], scope, depth + 1))
            k += 1
        return tuple(out)

    def fresh(self, t):
        self.names += 1
        return f"{PREFIX.get(t, 'u')}{self.names}"

    def names_of(self, scope, t, mutable=False):
        return [n for n, nt in scope.items() if nt == t and not (mutable and n.startswith(IMMUTABLE))]

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, t, scope, depth=0):
        if t == "b":
            return self.condition(scope, depth)
        leaf = depth >= self.max_depth or self.d.chance(2)
        if t == "i":
            return self.int_expr(scope, depth, leaf)
        if t == "s":
            return self.scalar_expr(scope, depth, leaf)
        if t == "S":
            names = self.names_of(scope, "S")
            loads = not self.in_func and not (self.grad and self.dims2 and not STRUCT_ARRAY_GRADIENTS_IN_2D)
            options = ["struct"] + ["load"] * loads + (["var"] * 3 if names else [])
            kind = self.d.pick(options)
            if kind == "var":
                return E("var", "S", (self.d.pick(names),))
            if kind == "load":
                return E("load", "S", ("xS", self.index))
            return E("struct", "S")
        return self.composite_expr(t, scope, depth, leaf)

    def int_expr(self, scope, depth, leaf):
        names = self.names_of(scope, "i")
        if leaf:
            kind = self.d.pick(["const"] + ["var"] * 3 * bool(names) + ["field"] * bool(self.names_of(scope, "S"))
                               + ["load"] * (not self.in_func) + ["static"] * 2 * bool(self.int_atoms(scope)))
            if kind == "static":
                return E("static", "i", (self.static_int_text(scope),))
            if kind == "var":
                return E("var", "i", (self.d.pick(names),))
            if kind == "field":
                return E("attr", "i", (E("var", "S", (self.d.pick(self.names_of(scope, "S")),)), "n"))
            if kind == "load":
                return E("load", "i", ("xi", self.index))
            return _const("i", self.d.integer(-3, 3))
        op = self.d.pick(["add", "sub", "mul", "min", "max"] + ["generic"] * bool(self.generics()))
        if op == "generic":
            return self.generic_call("i", scope, depth)
        return E(op, "i", (self.expr("i", scope, depth + 1), self.expr("i", scope, depth + 1)))

    def component_base(self, scope, t, depth):
        """A composite of type t whose components are read: a local, an input element or any expression
        (`(v + v).x`, `(-m)[0, 1]`)."""
        names = self.names_of(scope, t)
        loads = {"v3": "xv", "m33": "xm", "q": "xq"}
        options = ["var"] * 4 * bool(names) + ["load"] * (t in loads and not self.in_func) \
            + ["expr"] * (depth + 1 < self.max_depth)
        if t == "v3" and self.names_of(scope, "S"):
            options.append("field")
        if not options:
            return None
        kind = self.d.pick(options)
        if kind == "var":
            return E("var", t, (self.d.pick(names),))
        if kind == "load":
            return E("load", t, (loads[t], self.index))
        if kind == "field":
            return E("attr", "v3", (E("var", "S", (self.d.pick(self.names_of(scope, "S")),)), "v"))
        return self.composite_expr(t, scope, depth + 1, False)

    def component_read(self, scope, depth):
        t = self.d.pick([x for x in self.types if x != "S"])
        base = self.component_base(scope, t, depth)
        if base is None:
            return None
        n = length_of(t)
        if t in MATS:
            return E("elem", "s", (base, self.d.integer(0, n - 1), self.d.integer(0, n - 1)))
        kind = self.d.pick(["index", "attr", "dyn"] + ["static"] * 2 * bool(self.int_atoms(scope)))
        if kind == "static":
            return E("sindex", "s", (base, f"({self.static_int_text(scope)}) % {n}"))
        if kind == "index":
            return E("index", "s", (base, self.d.integer(0, n - 1)))
        if kind == "attr":
            return E("attr", "s", (base, LETTERS[self.d.integer(0, n - 1)]))
        return E("dyn_index", "s", (base, self.expr("i", scope, 2), n))

    def scalar_expr(self, scope, depth, leaf):
        names = self.names_of(scope, "s")
        if leaf:
            kinds = ["const", "component", "component"] + ["var"] * 4 * bool(names) + ["load"] * 2 * (not self.in_func)
            if self.names_of(scope, "S"):
                kinds.append("field")
            static = self.static_float_text(scope)
            if static is not None:
                kinds.append("static")
            kind = self.d.pick(kinds)
            if kind == "static":
                return E("static", "s", (static,))
            if kind == "var":
                return E("var", "s", (self.d.pick(names),))
            if kind == "load":
                return E("load", "s", ("xs", "i, j" if self.index == "tid" and self.dims2 else self.index))
            if kind == "field":
                return E("attr", "s", (E("var", "S", (self.d.pick(self.names_of(scope, "S")),)), "a"))
            if kind == "component":
                e = self.component_read(scope, depth)
                if e is not None:
                    return e
            return _const("s", self.d.pick(FLOAT_CONSTS))
        sub = lambda tt="s": self.expr(tt, scope, depth + 1)  # noqa: E731
        vec_types = [t for t in self.types if t in VECS]
        mat_types = [t for t in self.types if t in MATS]
        kinds = ["bin", "bin", "un", "reduce", "reduce"] + ["det"] * bool(mat_types) \
            + ["call"] * bool(self.callable("s")) + ["star_minmax"] + ["generic"] * bool(self.generics())
        kind = self.d.pick(kinds)
        if kind == "star_minmax":  # wp.max(*v2), wp.min(*v[1:3])
            src = self.star_source(2, scope, depth)
            if src is not None:
                return E(self.d.pick(["min", "max"]), "s", (src,))
            kind = "bin"
        if kind == "generic":  # float32 and float64 instances of one generic function
            return self.generic_call("s~" if not self.grad and self.d.chance(3) else "s", scope, depth)
        if kind == "bin":
            return E(self.d.pick(["add", "sub", "mul", "min", "max"]), "s", (sub(), sub()))
        if kind == "un":
            return E(self.d.pick(["neg", "abs", "sin", "cos"]), "s", (sub(),))
        if kind == "det":
            return E("determinant", "s", (sub(self.d.pick(mat_types)),))
        if kind == "call":
            return self.call("s", scope, depth)
        t = self.d.pick(vec_types + ["q"] * ("q" in self.types))
        op = self.d.pick(["dot", "length", "length_sq"]) if t != "q" else "dot"
        args = (sub(t), sub(t)) if op == "dot" else (sub(t),)
        return E(op, "s", args)

    def call(self, t, scope, depth):
        f = self.d.pick(self.callable(t))
        return E("call", t, (f.name, *self.star_args([pt for _, pt in f.params], scope, depth)))

    def generic_call(self, t, scope, depth):
        """g(x, y, a) with x, y of type t and a scalar; "s~" calls the float64 (float32) instance from a
        float32 (float64) program, converting the arguments and the result."""
        f = self.d.pick(self.generics())
        if t != "s~":
            return E("gcall", t, (f.name, self.expr(t, scope, depth + 1), self.expr(t, scope, depth + 1),
                                  self.expr("i" if t == "i" else "s", scope, depth + 1)))
        args = tuple(E("convert", "s~", (self.expr("s", scope, depth + 1),)) for _ in range(3))
        return E("convert", "s", (E("gcall", "s~", (f.name, *args)),))

    def composite_expr(self, t, scope, depth, leaf):
        names = self.names_of(scope, t)
        n = length_of(t)
        sub = lambda tt=t: self.expr(tt, scope, depth + 1)  # noqa: E731
        if leaf:
            # mostly values that vary by thread: locals and inputs (zero and splat make degenerate operands)
            kinds = ["ctor"] * 2 + ["var"] * 8 * bool(names)
            if t in ("v3", "m33", "q") and not self.in_func:
                kinds += ["load"] * 3
            if t == "v3" and self.names_of(scope, "S"):
                kinds.append("field")
            kind = self.d.pick(kinds)
            if kind == "ctor" and self.d.chance(1):
                kind = "zero" if t not in VECS or self.d.chance(4) else "splat"
            if kind == "var":
                return E("var", t, (self.d.pick(names),))
            if kind == "load":
                return E("load", t, ({"v3": "xv", "m33": "xm", "q": "xq"}[t], self.index))
            if kind == "field":
                return E("attr", "v3", (E("var", "S", (self.d.pick(self.names_of(scope, "S")),)), "v"))
            if kind == "zero":
                return E("zero", t)
            if kind == "splat":
                return E("ctor", t, (self.expr("s", scope, self.max_depth),))
            count = n * n if t in MATS else n
            if t not in MATS and self.d.chance(1 if self.grad else 3):  # wp.vec4(*v3, s), wp.quat(*v[0:2], *u)
                return E("ctor", t, self.star_args(["s"] * n, scope, self.max_depth - 1))
            return E("ctor", t, tuple(self.expr("s", scope, self.max_depth) for _ in range(count)))
        kinds = ["add", "sub", "neg", "smul", "smul"]
        if self.callable(t):
            kinds.append("call")
        if self.generics() and t != "S":
            kinds.append("generic")
        if t in VECS:
            kinds += ["div", "cw_mul", "normalize"]
            if f"m{n}{n}" in self.types:
                kinds += ["matvec", "row"]
            if t == "v3":
                kinds += ["cross"] + ["quat_rotate"] * ("q" in self.types)
        elif t in MATS:
            kinds += ["matmul", "transpose"] + ["outer"] * (f"v{n}" in self.types)
        else:
            kinds += ["qmul", "qmul"] + ["axis_angle"] * ("v3" in self.types)
        kind = self.d.pick(kinds)
        if kind in ("add", "sub"):
            return E(kind, t, (sub(), sub()))
        if kind == "neg":
            return E("neg", t, (sub(),))
        if kind == "smul":
            return E("mul", t, (sub("s"), sub()) if self.d.chance(4) else (sub(), sub("s")))
        if kind == "call":
            return self.call(t, scope, depth)
        if kind == "generic":
            return self.generic_call(t, scope, depth)
        if kind == "div":
            return E("div", t, (sub(), sub("s")))
        if kind in ("cw_mul", "cross"):
            return E(kind, t, (sub(), sub()))
        if kind == "normalize":
            return E("normalize", t, (sub(),))
        if kind == "matvec":
            return E("mul", t, (sub(f"m{n}{n}"), sub()))
        if kind == "row":
            base = self.component_base(scope, f"m{n}{n}", depth)
            if base is None:
                return E("mul", t, (sub(f"m{n}{n}"), sub()))
            return E("index", t, (base, self.d.integer(0, n - 1)))
        if kind == "quat_rotate":
            return E("quat_rotate", t, (sub("q"), sub()))
        if kind == "matmul":
            return E("mul", t, (sub(), sub()))
        if kind == "transpose":
            return E("transpose", t, (sub(),))
        if kind == "outer":
            return E("outer", t, (sub(f"v{n}"), sub(f"v{n}")))
        if kind == "qmul":
            return E("mul", t, (sub(), sub()))
        return E("quat_from_axis_angle", t, (sub("v3"), sub("s")))

    def condition(self, scope, depth=0):
        if depth < self.max_depth and self.d.chance(1):
            op = self.d.pick(["and", "or", "not"])
            if op == "not":
                return E("not", "b", (self.condition(scope, depth + 1),))
            return E(op, "b", (self.condition(scope, depth + 1), self.condition(scope, depth + 1)))
        t = "i" if self.d.chance(5) else "s"
        return E(self.d.pick(["lt", "le", "gt", "ge", "eq", "ne"] if t == "i" else ["lt", "gt"]), "b",
                 (self.expr(t, scope, depth + 1), self.expr(t, scope, depth + 1)))

    # -- statements ------------------------------------------------------------------------------------------
    def block(self, scope, depth, in_loop):
        return self.scoped_block(scope, depth, in_loop)[0]

    def scoped_block(self, scope, depth, in_loop, first=None):
        """(statements, the names in scope at the end): names first assigned here stay local to this block
        unless the caller hoists them."""
        scope = dict(scope)
        stmts = [first] if first is not None else []
        stmts += [self.statement(scope, depth, in_loop) for _ in range(self.d.integer(1, self.max_stmts))]
        return stmts, scope

    def hoist(self, scope, inner, types):
        """Names first assigned in a branch or loop body, read after it (Warp declares every local at the
        top of the function: composites zeroed where the body did not run)."""
        for n, t in inner.items():
            if n not in scope and t in types and not n.startswith(IMMUTABLE):
                scope[n] = t

    def branch(self, scope, depth, in_loop):
        """An if: names its branches first assign are read after it (vectors, matrices, quaternions:
        zero on a skipping path; a scalar, int or struct assigned in both branches; a scalar assigned
        in one branch only where the program may read Warp's uninitialised values: the reference gives 0).
        Not in loops: Warp's dynamic loops do not carry a name first assigned in them."""
        cond = self.condition(scope)
        body, inner = self.scoped_block(scope, depth + 1, in_loop)
        orelse, inner_else = self.scoped_block(scope, depth + 1, in_loop) if self.d.chance(4) else ([], {})
        # in a loop only where warp-lang is not compared: its dynamic loops do not carry a name first assigned
        # in them (`for ..: if k == 0: s = 1.0` then `s += 10.0`: s restarts from the branch's value in each
        # iteration), where mlwarp and the reference carry it as Python does
        if (self.loop_depth == 0 or not self.warp_defined) and self.d.chance(4):
            self.warp_undefined |= self.loop_depth > 0
            zeroed = [t for t in COMPOSITES]
            self.hoist(scope, inner, zeroed)
            self.hoist(scope, inner_else, zeroed)
            if orelse and self.d.chance(4):  # assigned on both paths
                t = self.d.pick(["i", "s", "s"] + ["S"] * ("S" in self.types))
                n = self.fresh(t)
                body.append(S("set", t, self.expr(t, inner, 1), extra=(("name", n), None)))
                orelse.append(S("set", t, self.expr(t, inner_else, 1), extra=(("name", n), None)))
                scope[n] = t
            elif not self.warp_defined and self.d.chance(2):  # one path: undefined in Warp, 0 here
                t = self.d.pick(["i", "s"])
                n = self.fresh(t)
                body.append(S("set", t, self.expr(t, inner, 1), extra=(("name", n), None)))
                scope[n] = t
                self.warp_undefined = True
        return S("if", expr=cond, body=body, orelse=orelse)

    def static_if(self, scope, depth, in_loop):
        """`if wp.static(flag):` over a module constant: only the selected branch compiles (the other calls
        an undefined function), and the names it assigns are read after it."""
        flag = f"B{len(self.consts)}"
        self.consts[flag] = bool(self.d.chance(4))
        text = f"${flag}" if self.d.chance(5) else f"not ${flag}"
        taken_first = self.consts[flag] == (not text.startswith("not"))
        taken, inner = self.scoped_block(scope, depth + 1, in_loop)
        skipped = self.block(scope, depth + 1, in_loop)
        skipped.insert(self.d.integer(0, len(skipped)), S("bogus"))
        self.hoist(scope, inner, ["i", "s", "S", *COMPOSITES])
        if taken_first:
            return S("static_if", body=taken, orelse=skipped if self.d.chance(4) else [], extra=(text,))
        return S("static_if", body=skipped, orelse=taken, extra=(text,))

    def loop(self, scope, depth, in_loop):
        k = f"k{self.names}"
        self.names += 1
        first, static = None, False
        outer = self.loop_depth == 0 or not self.warp_defined and self.d.chance(4)  # (see branch)
        inner_scope = dict(scope, **{k: "i"})
        if self.d.chance(4):  # a dynamic trip count
            extra = (E("clamp", "i", (self.expr("i", scope, 1), _const("i", 0), _const("i", 4))),)
        else:  # constant bounds (unrollable)
            trips = self.d.integer(0, 4)
            extra = (_const("i", trips),)
            # Warp unrolls it unless a break or continue (outside nested loops) stops it: wp.static(k) reads
            # the variable of an unrolled loop
            static = self.d.chance(4)
            if trips and outer and self.d.chance(3):  # first assigned in every iteration, read after
                t = self.d.pick(["i", "s"] + self.types)
                first = S("set", t, self.expr(t, inner_scope, 1), extra=(("name", self.fresh(t)), None))
        if static:
            self.static_loops.add(k)
        self.loop_depth += 1
        body, inner = self.scoped_block(inner_scope, depth + 1, in_loop=not static, first=first)
        self.loop_depth -= 1
        self.static_loops.discard(k)
        jumps = _jumps(body)
        if self.warp_defined and jumps and extra[0].op == "const" and _has_static(body):
            # warp-lang 1.19 unrolls every constant-range loop with a wp.static() in it, break or not, and
            # then fails on the break (IndexError: list index out of range): a computed bound keeps it dynamic
            extra = (E("clamp", "i", (extra[0], _const("i", 0), _const("i", 4))),)
        if self.warp_defined and jumps:
            # warp-lang's dynamic loops: after the loop a name first assigned in it is its last version in
            # the body as written, not the value when a break or continue left (mlwarp: as Python)
            outer, first = False, None
        # (Warp unrolls `range(0)` to nothing: its body's names stay undefined after it, in mlwarp too)
        if outer and not (extra[0].op == "const" and extra[0].args[0] == 0):
            self.warp_undefined |= self.loop_depth > 0
            self.hoist(scope, inner, COMPOSITES)
            if first is not None:
                scope[first.extra[0][1]] = first.name
        return S("for", k, body=body, extra=extra)

    def statement(self, scope, depth, in_loop):
        composites = [n for n, t in scope.items() if t in COMPOSITES and not n.startswith(IMMUTABLE)]
        structs = self.names_of(scope, "S", mutable=True)
        mutable = [n for n in scope if not n.startswith(IMMUTABLE)]
        # nested blocks mostly update outer locals (a name first assigned there is dead after the block)
        kinds = ["assign"] * (2 if depth == 0 else 1) + ["reassign", "aug", "aug"] * bool(mutable) \
            + ["component"] * 4 * bool(composites) + ["field"] * 2 * bool(structs)
        if depth < 2:
            kinds += ["if", "for", "for", "while"] + ["static_if"] * (self.d.chance(1))
        if depth == 0 and not self.in_func:
            kinds.append("const_local")
        if in_loop:
            kinds.append("jump")
        if not self.in_func:
            kinds += ["atomic"] + ["store"] * len(self.body_outputs)
        kind = self.d.pick(kinds)
        if kind == "reassign":
            n = self.d.pick(mutable)
            return S("set", scope[n], self.expr(scope[n], scope), extra=(("name", n), None))
        if kind == "aug":
            n = self.d.pick(mutable)
            t = scope[n]
            if t == "S":
                return self.field_write(scope, n)
            if t == "i":
                return S("set", t, self.expr("i", scope, 1), extra=(("name", n), self.d.pick(["add", "sub"])))
            if t == "s":
                return S("set", t, self.expr("s", scope, 1), extra=(("name", n), self.d.pick(["add", "sub", "mul"])))
            op = self.d.pick(["add", "sub", "mul"])
            return S("set", t, self.expr("s" if op == "mul" else t, scope, 1), extra=(("name", n), op))
        if kind == "component":
            return self.component_write(scope, self.d.pick(composites))
        if kind == "field":
            return self.field_write(scope, self.d.pick(structs))
        if kind == "if":
            return self.branch(scope, depth, in_loop)
        if kind == "static_if":
            return self.static_if(scope, depth, in_loop)
        if kind == "const_local":  # `cn = 3`: a constant wp.static() reads
            n = f"cn{self.names}"
            self.names += 1
            scope[n] = "i"
            return S("set", "i", _const("i", self.d.integer(-2, 5)), extra=(("cname", n), None))
        if kind == "for":
            return self.loop(scope, depth, in_loop)
        if kind == "while":
            c = f"c{self.names}"
            self.names += 1
            inner = dict(scope, **{c: "i"})
            self.loop_depth += 1
            body = self.block(inner, depth + 1, True)
            self.loop_depth -= 1
            return S("while", c, self.condition(inner, 1), body=body, extra=(self.d.integer(1, 4),))
        if kind == "jump":
            return S("if", expr=self.condition(scope, 1), body=[S(self.d.pick(["break", "continue"]))])
        if kind == "atomic":
            return self.atomic(scope)
        if kind == "store":
            return self.store(scope)
        t = self.d.pick(["i", "s", "s"] + self.types + self.types)
        n = self.fresh(t)
        s = S("set", t, self.expr(t, scope), extra=(("name", n), None))
        scope[n] = t
        return s

    def output(self, t, scope):
        """Every top-level local of type t contributes (their sum; the last struct), with an expression."""
        names = self.names_of(scope, t, mutable=True)
        if t == "S":
            return E("var", "S", (names[-1],)) if names else self.expr("S", scope)
        terms = [E("var", t, (n,)) for n in names] + [self.expr(t, scope, 1)]
        total = terms[0]
        for x in terms[1:]:
            total = E("add", t, (total, x))
        return total

    def component_write(self, scope, n):
        t = scope[n]
        size = length_of(t)
        aug = self.d.pick(["add", "sub", "mul"]) if self.d.chance(3) else None
        if t in MATS:
            if self.d.chance(2):
                vt = f"v{size}"
                return S("set", vt, self.expr(vt, scope, 1), extra=(("row", n, self.d.integer(0, size - 1)),
                                                                     aug if aug != "mul" else None))
            target = ("elem", n, self.d.integer(0, size - 1), self.d.integer(0, size - 1))
        else:
            kind = self.d.pick(["index", "attr", "dyn"])
            if kind == "index":
                target = ("index", n, self.d.integer(0, size - 1))
            elif kind == "attr":
                target = ("attr", n, LETTERS[self.d.integer(0, size - 1)])
            else:
                target = ("dyn", n, self.expr("i", scope, 2), size)
        return S("set", "s", self.expr("s", scope, 1), extra=(target, aug))

    def field_write(self, scope, n):
        f = self.d.pick(list(STRUCT_FIELDS))
        t = STRUCT_FIELDS[f]
        if f == "v" and self.d.chance(3):  # s.v[k] = e
            aug = self.d.pick(["add", "mul"]) if self.d.chance(3) else None
            return S("set", "s", self.expr("s", scope, 1), extra=(("field_index", n, "v", self.d.integer(0, 2)), aug))
        aug = self.d.pick(["add", "sub"]) if self.d.chance(3) else None
        return S("set", t, self.expr(t, scope, 1), extra=(("field", n, f), aug))

    def atomic(self, scope):
        arr = self.d.pick(list(ACCUMULATORS))
        t, size = ACCUMULATORS[arr]
        idx = E("clamp", "i", (self.expr("i", scope, 2), _const("i", 0), _const("i", size - 1)))
        if arr == "acc_i":
            fn = self.atomic_i_op
        else:
            fn = self.d.pick(["atomic_add", "aug_add"])
        return S("atomic", t, self.expr(t, scope, 1), extra=(fn, arr, idx))

    def store(self, scope):
        arr = self.d.pick(sorted(self.body_outputs))
        if arr == "o_v3":
            kind = self.d.pick(["store", "store_index", "store_attr"])
            if kind == "store":
                return S("set", "v3", self.expr("v3", scope, 1), extra=(("store", arr, "tid"), None))
            k = self.d.integer(0, 2)
            target = ("store_index", arr, "tid", k) if kind == "store_index" else ("store_attr", arr, "tid", LETTERS[k])
            return S("set", "s", self.expr("s", scope, 1), extra=(target, None))
        if self.d.chance(3):
            return S("set", "S", self.expr("S", scope, 1), extra=(("store", arr, "tid"), None))
        f = self.d.pick(list(STRUCT_FIELDS))
        return S("set", STRUCT_FIELDS[f], self.expr(STRUCT_FIELDS[f], scope, 1),
                 extra=(("store_field", arr, "tid", f), None))


def _jumps(stmts):
    """Whether a break or continue of this loop body (not of a nested loop) is among stmts."""
    return any(s.kind in ("break", "continue") or s.kind in ("if", "static_if") and (_jumps(s.body) or _jumps(
        s.orelse)) for s in stmts)


def _has_static(node):
    """Whether a wp.static() is in statements or expressions (nested loops too)."""
    if isinstance(node, list):
        return any(_has_static(s) for s in node)
    if isinstance(node, S):
        return node.kind == "static_if" or any(_has_static(x) for x in (node.expr, node.body, node.orelse,
                                                                        list(node.extra)))
    if isinstance(node, E):
        return node.op in ("static", "sindex") or any(_has_static(x) for x in node.args)
    if isinstance(node, tuple):
        return any(_has_static(x) for x in node)
    return False


def function(g: Generator, params=None, extra_scope=None, **kw) -> Func:
    name = f"h{g.names}"
    g.names += 1
    if params is None:
        params = [(f"p{k}", g.d.pick(["s", "i"] + g.types)) for k in range(g.d.integer(1, 3))]
    scope = dict(params, **(extra_scope or {}))
    g.in_func = True
    body = []
    for _ in range(g.d.integer(0, 3)):
        body.append(g.statement(scope, 1, False))
    t = g.d.pick(["s"] + [x for x in g.types if x != "S"])
    result = g.expr(t, scope)
    g.in_func = False
    return Func(name, params, t, body, result, **kw)


def factory(g: Generator):
    """`def mk(c): @wp.func def f(...): ... c ... wp.static(c) ...; return f` and two or three instances with
    other captured values, each its own function."""
    mk = f"mk{g.names}"
    ct = g.d.pick(["s", "s", "i", "v3"])
    g.in_factory = ct
    proto = function(g, extra_scope={"c": ct})
    g.in_factory = None
    n = 2 if g.grad else g.d.integer(2, 3)
    if ct == "s":
        values = [g.d.pick(FLOAT_CONSTS) for _ in range(n)]
    elif ct == "i":
        values = [g.d.integer(-3, 4) for _ in range(n)]
    else:
        values = [tuple(g.d.pick(FLOAT_CONSTS) for _ in range(3)) for _ in range(n)]
    out = []
    for v in values:
        f = Func(f"h{g.names}", proto.params, proto.type, proto.body, proto.result, factory=mk, capture=v,
                 capture_type=ct)
        g.names += 1
        out.append(f)
    return out


def overloads(g: Generator):
    """Two signatures of one name, and a first definition that a later one with the same annotations
    replaces (never called)."""
    shared = f"ov{g.names}"
    g.names += 1
    first = function(g)
    choices = [t for t in ["s", "i"] + [x for x in g.types] if t != first.params[0][1]]
    second = function(g, params=[("p0", g.d.pick(choices))] + first.params[1:])
    decoy = function(g, params=first.params, shadowed=True)
    for f in (first, second, decoy):
        f.print_name = shared
    return [decoy, second, first]


def generic(g: Generator) -> Func:
    """`def g(x: typing.Any, y: typing.Any, a: typing.Any)`: x, y of one type T (int32, a scalar, vector,
    matrix or quaternion; float32 or float64), a its scalar."""
    def term(depth):
        if depth >= 2 or g.d.chance(2):
            return E("var", "T", (g.d.pick(["x", "y"]),))
        kind = g.d.pick(["add", "sub", "neg", "mul", "mul"])
        if kind == "neg":
            return E("neg", "T", (term(depth + 1),))
        if kind == "mul":
            a = E("var", "A", ("a",)) if g.d.chance(5) else E(g.d.pick(["add", "mul"]), "A", (
                E("var", "A", ("a",)), E("var", "A", ("a",))))
            return E("mul", "T", (a, term(depth + 1)) if g.d.chance(4) else (term(depth + 1), a))
        return E(kind, "T", (term(depth + 1), term(depth + 1)))

    name = f"g{g.names}"
    g.names += 1
    return Func(name, [("x", "T"), ("y", "T"), ("a", "A")], "T", [], term(0), generic=True)


def program(d: Draws, grad=False, warp_defined=True) -> Program:
    p = "d" if grad else d.pick(["f", "d"])
    types = ["v3"] + [t for t in COMPOSITES if t != "v3" and d.chance(4)] + ["S"] * d.chance(5)
    dims = d.pick([(8,), (8,), (4, 2), (2, 4)])
    g = Generator(d, p, types, grad, warp_defined=warp_defined)
    g.dims2 = len(dims) == 2
    for k in range(d.integer(0, 2)):  # module constants wp.static() reads
        g.consts[f"C{k}"] = d.integer(-3, 4)
        if d.chance(4):
            g.consts[f"F{k}"] = d.pick(FLOAT_CONSTS)
    g.kernel_loop = d.chance(1)
    g.atomic_i_op = d.pick(["atomic_add", "atomic_min", "atomic_max"])
    outputs = {"oi": "i", "os": "s", **{f"o_{t}": t for t in types}}
    # stores (also overwritten ones, in loops: a store's adjoint is cleared where it is overwritten); a
    # member store into a struct array reads it (see STRUCT_ARRAY_GRADIENTS_IN_2D)
    stored = ("o_v3",) if grad and g.dims2 and not STRUCT_ARRAY_GRADIENTS_IN_2D else ("o_v3", "o_S")
    g.body_outputs = {n for n in stored if n in outputs and d.chance(4)}
    # closures and overloads take the place of plain functions (compile time: CI runs a few programs);
    # gradient programs get closures, not overloads or generics
    count = d.integer(0, 2)
    made, over, gen = d.chance(3), not grad and d.chance(2), not grad and d.chance(3)
    for _ in range(max(0, count - made - over)):
        g.funcs.append(function(g))
    if made:
        g.funcs += factory(g)
    if over:
        g.funcs += overloads(g)
    if gen:
        g.funcs.append(generic(g))
    top = {"tid": "i"}
    if g.dims2:
        top.update(i="i", j="i")
    # state the rest of the body updates (in loops and branches) and the outputs read
    body = []
    for t in ["i", "s", *types]:
        name = g.fresh(t)
        body.append(S("set", t, g.expr(t, top, 1), extra=(("name", name), None)))
        top[name] = t
    body += [g.statement(top, 0, False) for _ in range(d.integer(2, g.max_stmts + 2))]
    out = {n: (t, None if n in g.body_outputs else g.output(t, top)) for n, t in outputs.items()}
    kernel_loop = None
    if g.kernel_loop:
        count = d.integer(2, 3)
        kernel_loop = (count, d.integer(0, count - 1))
    return Program(p, types, dims, body, out, g.funcs, g.atomic_i_op, dict(g.consts), kernel_loop,
                   g.warp_undefined)


def hypothesis_programs(grad=False):
    import hypothesis.strategies as st

    @st.composite
    def draw_program(draw):  # compared with the reference only: may read Warp's uninitialised scalars
        return program(Draws(draw=draw), grad, warp_defined=False)

    return draw_program()
