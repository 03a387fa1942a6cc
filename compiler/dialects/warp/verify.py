"""The warp dialect's verifier beyond IRDL: one walk that checks every table op against the checks its record
declares (rules.py), every warp type against Warp's limits, and (through a hook) every builtin op against the
builtin table.

IRDL (run by MLIR's own verifier) has already checked each operand and result on its own; this walk checks what
relates them. A violation is one line naming the op and the rule:

    'warp.load' op index count: 'indices' has 1 value(s), operand 'array' has rank 2
    'warp.atomic' op attribute value: {kind = "frobnicate"} must be one of "add", "sub", ...

    verify(module.operation).violations              # [Violation(op, message)], in walk order
    verify(module.operation, builtin_check=check)    # check(op, reader) -> message or None per builtin op
"""

from __future__ import annotations

from typing import Callable

from mlir import ir

from .opdefs import Record
from .ops import BY_NAME, MAX_NDIM
from .rules import (
    RULE_NAMES, ArrayOfShape, AxisOf, ComponentAt, Components, Convertible, Count, ElementIs, InRange,
    LeadingIndices, OneOf, PerDimension, SliceDims, StructField, TileElements, TileRank, TileShapes,
)
from .typeinfo import (
    ArrayInfo, DescriptorInfo, MatInfo, QuatInfo, StructInfo, TileInfo, TransformInfo, TypeReader, VecInfo,
    component_count,
)
from .views import group_slices, segments


class Violation(Record):
    """`op` breaks a rule; `message` says which and how: "'warp.load' op index count: ..."."""
    __slots__ = ("op", "message")


class Report(Record):
    """`violations` [Violation] in walk order; `warp_ops`: how many warp ops the walk met (none: the module is
    lowered, later stages need no check)."""
    __slots__ = ("violations", "warp_ops")


class _Op:
    """One table op under check: its values by table name, its attributes, the walk's type reader."""

    __slots__ = ("op", "opdef", "reader", "_operands", "_results")

    def __init__(self, op, opdef, reader):
        self.op, self.opdef, self.reader = op, opdef, reader
        self._operands = self._results = None

    def _groups(self, kind: str):
        values = list(getattr(self.op, kind))
        defs = self.opdef.operands if kind == "operands" else self.opdef.results
        return {name: values[where] for name, (where, _) in group_slices(defs, len(values),
                                                                          segments(self.op, kind)).items()}

    def values(self, name: str) -> list:
        """The values of operand or result group `name` (a list: one value for a plain group)."""
        if self._operands is None:
            self._operands, self._results = self._groups("operands"), self._groups("results")
        found = self._operands.get(name)
        return found if found is not None else self._results[name]

    def type(self, name: str):
        values = self.values(name)
        return values[0].type if values else None

    def where(self, name: str) -> str:
        return f"operand '{name}'" if any(o.name == name for o in self.opdef.operands) else f"result '{name}'"

    def attr(self, name: str):
        a = self.op.attributes[name]
        if isinstance(a, (ir.StringAttr, ir.IntegerAttr)):
            return a.value
        if isinstance(a, ir.DenseI64ArrayAttr):
            return list(a)
        return a


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# -- the rules: each returns what is wrong (the message after "<rule>: ") or None ------------------------------
def _per_dimension(c: PerDimension, o: _Op):
    rank = o.reader.rank(o.type(c.of))
    n = len(o.values(c.group))
    if rank is not None and n != rank:
        return f"'{c.group}' has {_plural(n, 'value')}, {o.where(c.of)} has rank {rank} (one per dimension)"
    return None


def _leading_indices(c: LeadingIndices, o: _Op):
    rank, n = o.reader.rank(o.type(c.of)), len(o.values(c.group))
    if rank is None:
        return None
    if not 0 < n < rank:
        return f"'{c.group}' has {_plural(n, 'value')}, a view of {o.where(c.of)} of rank {rank} takes 1..{rank - 1}"
    got = o.reader.rank(o.type(c.result))
    if got != rank - n:
        return (f"{o.where(c.result)} has rank {got}, {n} of {o.where(c.of)}'s {rank} dimensions indexed leave "
                f"{rank - n}")
    return None


def _slice_dims(c: SliceDims, o: _Op):
    rank = o.reader.rank(o.type(c.of))
    dims = o.attr(c.attr)
    if rank is None:
        return None
    if len(dims) > rank:
        return f"{{{c.attr}}} has {len(dims)} entries, {o.where(c.of)} has rank {rank}"
    bad = [d for d in dims if d != -1 and not 0 <= d <= 7]
    if bad:
        return f"{{{c.attr}}} entry {bad[0]} is neither -1 (an index) nor slice bits 0..7"
    bounds = sum(1 if d == -1 else bin(d).count("1") for d in dims)
    if len(o.values(c.bounds)) != bounds:
        return f"{{{c.attr}}} = {dims} reads {_plural(bounds, 'bound')}, '{c.bounds}' has {len(o.values(c.bounds))}"
    want = sum(1 for d in dims if d >= 0) + rank - len(dims)
    got = o.reader.rank(o.type(c.result))
    if got != want:
        return f"{o.where(c.result)} has rank {got}, {{{c.attr}}} = {dims} of a rank-{rank} array leaves {want}"
    return None


def _array_of_shape(c: ArrayOfShape, o: _Op):
    got = o.reader.rank(o.type(c.result))
    if c.group:
        want, source = len(o.values(c.group)), f"'{c.group}' has {_plural(len(o.values(c.group)), 'value')}"
    elif c.attr:
        shape = o.attr(c.attr)
        if any(d < 0 for d in shape):
            return f"{{{c.attr} = {shape}}} has a negative extent"
        want, source = len(shape), f"{{{c.attr}}} has {_plural(len(shape), 'extent')}"
    else:
        want, source = 1, "it is 1-d"
    if got is not None and got != want:
        return f"{o.where(c.result)} has rank {got}, {source}"
    return None


def _count(c: Count, o: _Op):
    n = len(o.values(c.group))
    if n not in c.allowed:
        return f"'{c.group}' has {_plural(n, 'value')}, allowed: {', '.join(map(str, c.allowed))}"
    return None


def _one_of(c: OneOf, o: _Op):
    value = o.attr(c.attr)
    if value not in c.values:
        return f"{{{c.attr} = \"{value}\"}} must be one of " + ", ".join(f'"{v}"' for v in c.values)
    return None


def _in_range(c: InRange, o: _Op):
    value = o.attr(c.attr)
    if not c.lo <= value <= c.hi:
        return f"{{{c.attr} = {value}}} must be {c.lo}..{c.hi}"
    return None


def _axis_of(c: AxisOf, o: _Op):
    value, rank = o.attr(c.attr), o.reader.rank(o.type(c.of))
    if rank is None or 0 <= value < rank or (c.whole and value == -1):
        return None
    whole = " or -1 (every element)" if c.whole else ""
    return f"{{{c.attr} = {value}}} must be a dimension of {o.where(c.of)} (0..{rank - 1}){whole}"


def _struct_field(c: StructField, o: _Op):
    s = o.reader.struct(o.type(c.aggregate))
    k = o.attr(c.attr)
    if s is None:
        return None
    if not 0 <= k < len(s.fields):
        return f"{{{c.attr} = {k}}} is not a field of struct \"{s.name}\" ({_plural(len(s.fields), 'field')})"
    got = o.type(c.value)
    if got != s.fields[k]:
        return f"{o.where(c.value)} must be {s.fields[k]} (field {k} of struct \"{s.name}\"), got {got}"
    return None


def _component_type(info, n: int):
    """The type of a composite's component at `n` indices, or a text saying why there is none."""
    if isinstance(info, MatInfo):
        if n == 2:
            return info.dtype
        if n == 1:
            return ir.Type.parse(f"!warp.vec<{info.cols}, {info.dtype}>")
        return f"a matrix takes 1 index (a row) or 2 (an element), got {n}"
    if isinstance(info, (VecInfo, QuatInfo, TransformInfo)):
        return info.dtype if n == 1 else f"a vector-like takes 1 index, got {n}"
    return "a struct's fields are read with warp.struct_get"


def _component_at(c: ComponentAt, o: _Op):
    info = o.reader.info(o.type(c.aggregate))
    want = _component_type(info, len(o.values(c.indices)))
    if isinstance(want, str):
        return want
    got = o.type(c.value)
    if got != want:
        return f"{o.where(c.value)} must be {want} (the component of {o.type(c.aggregate)}), got {got}"
    return None


def _components(c: Components, o: _Op):
    t = o.type(c.result)
    info, values = o.reader.info(t), o.values(c.group)
    if not values:
        return None
    if isinstance(info, StructInfo):
        return f"a struct is constructed from no operands (its zero value), got {len(values)}"
    n = component_count(info)
    if len(values) != n:
        return f"{t} takes {n} components (or none: zero), got {len(values)}"
    for k, v in enumerate(values):
        if v.type != info.dtype:
            return f"operand '{c.group}' #{k} must be {info.dtype} (the scalar of {t}), got {v.type}"
    return None


_SCALARS = (ir.IntegerType, ir.FloatType, ir.IndexType)


def _shape_of(info):
    if isinstance(info, TileInfo):
        return ("tile", info.shape)
    if isinstance(info, VecInfo):
        return ("vec", info.length)
    if isinstance(info, MatInfo):
        return ("mat", info.rows, info.cols)
    if isinstance(info, (QuatInfo, TransformInfo)):
        return (type(info).__name__,)
    return None


def _convertible(c: Convertible, o: _Op):
    src, dst = o.type(c.input), o.type(c.output)
    if isinstance(src, _SCALARS) and isinstance(dst, _SCALARS):
        return None
    a, b = _shape_of(o.reader.info(src)), _shape_of(o.reader.info(dst))
    if a is not None and a == b:
        return None
    return (f"{src} does not convert to {dst} (scalars convert to scalars, composites and tiles to the same kind "
            f"and shape)")


def _tile_rank(c: TileRank, o: _Op):
    t = o.reader.tile(o.type(c.tile))
    if t is not None and not c.lo <= t.rank <= c.hi:
        want = str(c.lo) if c.lo == c.hi else f"{c.lo}..{c.hi}"
        return f"{o.where(c.tile)} has rank {t.rank}, must be {want}"
    return None


def _broadcastable(src: tuple, dst: tuple) -> bool:
    return len(src) <= len(dst) and all(s in (1, d) for s, d in zip(reversed(src), reversed(dst)))


def _matmul(o, a, b, acc):
    if len(a) != 2 or len(b) != 2 or len(acc) != 2 or a[1] != b[0] or acc != (a[0], b[1]):
        return "a (M, K) times b (K, N) accumulates into (M, N)"
    return None


def _transpose(o, t, r):
    return None if len(t) == 2 and r == t[::-1] else "a 2-d tile transposes to the reversed shape"


def _reduce(o, t, r):
    axis = o.attr("axis")
    want = (1,) if axis < 0 else (t[:axis] + t[axis + 1:] or (1,))
    return None if r == want else f"{_show(t)} reduced along {{axis = {axis}}} is {_show(want)}"


def _reduce_adjoint(o, t, adjoint, grad):
    if grad != t:
        return "the gradient has the tile's shape"
    return _reduce(o, t, adjoint)


def _spread(o, t, r):
    axis = o.attr("axis")
    ok = 0 <= axis < len(r) and r[:axis] + r[axis + 1:] == t
    return None if ok else f"{_show(t)} spread along {{axis = {axis}}} cannot give {_show(r)}"


def _broadcast(o, t, r):
    return None if _broadcastable(t, r) else f"{_show(t)} does not broadcast to {_show(r)} (numpy's rules)"


def _sum_to(o, t, r):
    return None if _broadcastable(r, t) else f"{_show(t)} does not sum to {_show(r)} (it must broadcast to it)"


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _reshape(o, t, r):
    return None if _size(t) == _size(r) else f"{_show(t)} ({_size(t)} elements) cannot be reshaped to {_show(r)}"


def _view(o, t, part):
    if len(part) > len(t) or any(p > d for p, d in zip(reversed(part), reversed(t))):
        return f"a view {_show(part)} does not fit in {_show(t)}"
    return None


def _square(o, a, factor):
    return None if len(a) == 2 and a[0] == a[1] else f"{_show(a)} is not a square 2-d tile"


def _solve(o, m, y):
    if len(m) != 2 or m[0] != m[1]:
        return f"the matrix {_show(m)} is not a square 2-d tile"
    return None if len(y) in (1, 2) and y[0] == m[0] else f"y {_show(y)} must be ({m[0]},) or ({m[0]}, k)"


def _same(o, a, b):
    return None if a == b else f"{_show(a)} and {_show(b)} differ"


# (array_rank and indexed read an array's rank: their first name is the array)
def _array_rank(o, rank, t):
    return None if len(t) == rank else f"a tile of rank {len(t)} moves to or from an array of rank {rank}"


def _indexed(o, rank, indices, t):
    axis = o.attr("axis")
    if len(t) != rank:
        return f"a tile of rank {len(t)} moves to or from an array of rank {rank}"
    if 0 <= axis < rank and t[axis] != indices[0]:
        return f"the tile has {t[axis]} along {{axis = {axis}}}, the indices {indices[0]}"
    return None


def _show(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


SHAPE_RELATIONS: dict[str, Callable] = {
    "matmul": _matmul, "transpose": _transpose, "reduce": _reduce, "reduce_adjoint": _reduce_adjoint,
    "spread": _spread, "broadcast": _broadcast, "sum_to": _sum_to, "reshape": _reshape, "view": _view,
    "square": _square, "solve": _solve, "same": _same, "array_rank": _array_rank, "indexed": _indexed,
}


def _tile_shapes(c: TileShapes, o: _Op):
    shapes = []
    for name in c.names:
        t = o.type(name)
        info = o.reader.info(t)
        if isinstance(info, TileInfo):
            shapes.append(info.shape)
        elif isinstance(info, (ArrayInfo, DescriptorInfo)):
            shapes.append(info.rank)
        else:
            return None  # (IRDL has reported it)
    why = SHAPE_RELATIONS[c.relation](o, *shapes)
    if why is None:
        return None
    return f"{why}: " + ", ".join(f"'{n}' {_show(s) if isinstance(s, tuple) else f'rank {s}'}"
                                  for n, s in zip(c.names, shapes))


def _element_is(c: ElementIs, o: _Op):
    t = o.reader.tile(o.type(c.tile))
    if t is None:
        return None
    text = str(t.dtype)
    head, _, tail = c.dtype.partition("{}")
    inner = text[len(head):len(text) - len(tail)] if text.startswith(head) and text.endswith(tail) else None
    if inner in ("f16", "bf16", "f32", "f64"):
        return None
    return f"{o.where(c.tile)} has elements {text}, must be {c.dtype.replace('{}', 'a float')}"


def _tile_elements(c: TileElements, o: _Op):
    ins, outs = [v.type for v in o.op.operands], [v.type for v in o.op.results]
    tiles = [o.reader.tile(t) for t in ins + outs]
    if any(t is None for t in tiles):
        return None
    shapes = {t.shape for t in tiles}
    if len(shapes) > 1:
        return f"its tiles have different shapes {', '.join(_show(s) for s in sorted(shapes))}"
    body = o.op.regions[0].blocks
    args = [a.type for a in body[0].arguments] if len(body) else []
    want = [t.dtype for t in tiles[:len(ins)]]
    if args != want:
        return (f"its body takes ({', '.join(map(str, args))}), the input tiles' elements are "
                f"({', '.join(map(str, want))})")
    return None


CHECKS: dict[type, Callable] = {
    PerDimension: _per_dimension, LeadingIndices: _leading_indices, SliceDims: _slice_dims,
    ArrayOfShape: _array_of_shape, Count: _count, OneOf: _one_of, InRange: _in_range, AxisOf: _axis_of,
    StructField: _struct_field, ComponentAt: _component_at, Components: _components, Convertible: _convertible,
    TileRank: _tile_rank, TileShapes: _tile_shapes, TileElements: _tile_elements, ElementIs: _element_is,
}
assert set(CHECKS) == set(RULE_NAMES), "a rule kind without its check (or the reverse)"


# -- warp types, wherever they appear ---------------------------------------------------------------------------
def type_problem(info, t) -> str | None:
    """What makes a warp type break Warp's limits (rule "type"), or None."""
    if isinstance(info, ArrayInfo):
        if not 1 <= info.rank <= MAX_NDIM:
            return f"{t} has {info.rank} dimensions; Warp's arrays have 1..{MAX_NDIM}"
    elif isinstance(info, TileInfo):
        if not info.shape or any(d < 1 for d in info.shape):
            return f"{t} must have a shape of one or more positive extents"
    elif isinstance(info, VecInfo):  # (Warp's zero-length vectors, an empty slice's value, are allowed)
        if info.length < 0:
            return f"{t} must have a length of zero or more"
    elif isinstance(info, MatInfo):  # (an empty matrix slice is (0, 0))
        if info.rows < 0 or info.cols < 0 or (info.rows == 0) != (info.cols == 0):
            return f"{t} must have positive rows and columns, or be (0, 0)"
    return None


def _types_of(op, warp_op: bool) -> list:
    """(what, type) of the warp-typed values an op defines: a warp op's results, a function's arguments. Every
    other value of a warp type got it from one of those (a loop's iter_args from its init operands), and reading
    the types of every op's values would cost a lowered module's walk ~10x."""
    if warp_op:
        out = [(f"result #{k}", r.type) for k, r in enumerate(op.results)]
    elif op.name == "func.func" and len(op.regions[0].blocks):
        out = [(f"argument #{k}", a.type) for k, a in enumerate(op.regions[0].blocks[0].arguments)]
    else:
        return []
    return [(w, t) for w, t in out if type(t) is ir.Type]


# -- the walk -----------------------------------------------------------------------------------------------------
def verify(root: ir.Operation, builtin_check: Callable | None = None) -> Report:
    """Every violation under `root` (an op: the module), in walk order. `builtin_check(op, reader)`: the message
    for a builtin-table op (not in the op table) that breaks the builtin table, or None."""
    reader = TypeReader()
    found: list[Violation] = []
    warp_ops = [0]

    def visit(op):
        op = op.operation
        name = op.name
        warp_op = name.startswith("warp.")
        if warp_op or name == "func.func":
            for what, t in _types_of(op, warp_op):
                problem = type_problem(reader.info(t), t)
                if problem is not None:
                    found.append(Violation(op, f"'{name}' op type: {what}: {problem}"))
        if not warp_op:
            return ir.WalkResult.ADVANCE
        warp_ops[0] += 1
        opdef = BY_NAME.get(name[len("warp."):])
        if opdef is None:
            if builtin_check is not None:
                problem = builtin_check(op, reader)
                if problem is not None:
                    found.append(Violation(op, f"'{name}' op builtin signature: {problem}"))
            return ir.WalkResult.ADVANCE
        if opdef.checks:
            view = _Op(op, opdef, reader)
            for c in opdef.checks:
                problem = CHECKS[type(c)](c, view)
                if problem is not None:
                    found.append(Violation(op, f"'{name}' op {RULE_NAMES[type(c)]}: {problem}"))
                    break  # (the later checks of an op may assume the earlier ones held)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return Report(found, warp_ops[0])
