"""Typed builders for warp ops, used at the current insertion point and location.

`create(name, *operand_groups)` builds any table op (ops.OPS) and infers the result types its
constraints fix (a load's result is its array's dtype, array_dim's is i32); the named builders below
are the compiler's vocabulary over it.
"""

from __future__ import annotations

import functools

from mlir import ir
from mlir.dialects import arith

from .dialect import array_dtype, array_ndim, array_type, is_array_type, tile_params
from .ops import BY_NAME, MAP_ARITY, Array, Is, OpDef, Var


def _bind(c, t: ir.Type, bound: dict) -> None:
    """Records what the Vars of constraint `c` stand for, given an operand of type `t` satisfying it."""
    if isinstance(c, Var):
        bound.setdefault(c.name, t)
        _bind(c.constraint, t, bound)
    elif isinstance(c, Array) and _vars(c.dtype):
        text = str(t)  # (printed once: array_dtype and is_array_type would each print it)
        if text.startswith("!warp.array<"):
            _bind(c.dtype, ir.Type.parse(text[len("!warp.array<"):text.rindex(",")]), bound)


def _fixed_type(text: str) -> ir.Type:
    width = text[1:]
    if text[0] == "i" and width.isdigit():
        return ir.IntegerType.get_signless(int(width))
    return ir.Type.parse(text)


def _vars(c) -> set:
    if isinstance(c, Var):
        return {c.name} | _vars(c.constraint)
    return _vars(c.dtype) if isinstance(c, Array) else set()


@functools.cache
def _plan(name: str):
    """For op `name`: the operand groups to read Vars off (only those the results need; an operand that
    is the Var itself first, as reading an array's dtype prints and parses its type), and how each
    result type is found."""
    op = BY_NAME[name]
    needed = set().union(*(_vars(r.constraint) for r in op.results if isinstance(r.constraint, Var)))
    binders = sorted((k for k, o in enumerate(op.operands) if _vars(o.constraint) & needed),
                     key=lambda k: not isinstance(op.operands[k].constraint, Var))
    results = tuple((None, None) if r.variadic else ("var", r.constraint.name) if isinstance(r.constraint, Var) else
                    ("is", r.constraint.type) if isinstance(r.constraint, Is) else (None, None) for r in op.results)
    return op, tuple(binders), frozenset(needed), results


def infer_results(op: OpDef, groups) -> list:
    """The result types `op`'s constraints fix from its operands (`groups`: one list of values per
    operand); None for a result the caller must give."""
    _, binders, needed, plan = _plan(op.name)
    bound: dict = {}
    for k in binders:
        if needed <= bound.keys():
            break
        for v in groups[k][:1]:  # IRDL makes a variadic group's types equal: its first value tells
            _bind(op.operands[k].constraint, v.type, bound)
    return [bound.get(what) if how == "var" else _fixed_type(what) if how == "is" else None for how, what in plan]


def create(name: str, *groups, results=None, attributes=None) -> ir.Operation:
    """warp.<name> at the insertion point. `groups` are its operands in table order (a sequence for a
    variadic one, a value or None for an optional one); `results` the result types, default: inferred from the
    constraints."""
    op = _plan(name)[0]
    if len(groups) != len(op.operands):
        raise TypeError(f"warp.{name} takes {len(op.operands)} operand groups "
                        f"({', '.join(o.name for o in op.operands)}), got {len(groups)}")
    lists = [list(g) if o.variadic else [] if o.optional and g is None else [g] for o, g in zip(op.operands, groups)]
    if results is None:
        results = infer_results(op, lists)
        if None in results:
            raise TypeError(f"warp.{name}: its result types are not fixed by its operands; pass results=")
    attributes = dict(attributes or {})
    if sum(1 for o in op.operands if o.variadic or o.optional) > 1:  # IRDL then needs each group's length
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(vs) for vs in lists])
    return ir.Operation.create(op.full_name, results=list(results), operands=[v for vs in lists for v in vs],
                               attributes=attributes)


def _i32():
    return ir.IntegerType.get_signless(32)


def _i64_attr(n: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)


def tid(ndim: int) -> list[ir.Value]:
    return list(create("tid", results=[_i32()] * ndim).results)


LINEAR_TID_ATTR = "warp.linear"  # on a warp.tid of one result: the linear thread index (not the leading index)
# on a geometry query op of a block-wide (tiled) query in a module built for CPU lanes: one query per block, so
# warp-expand-geometry leaves it to after warp-cpu-block-lanes (which keeps it at block level, then drops the mark)
BLOCK_LEVEL_ATTR = "warp.block_level"


def linear_tid() -> ir.Value:
    """The thread's linear index in the launch (what an error record reports), whatever the launch's shape."""
    op = create("tid", results=[_i32()])
    op.attributes[LINEAR_TID_ATTR] = ir.UnitAttr.get()
    return op.results[0]


def load(arr: ir.Value, indices) -> ir.Value:
    return create("load", arr, indices).result


def store(arr: ir.Value, value: ir.Value, indices) -> ir.Operation:
    return create("store", arr, value, indices)


def address(arr: ir.Value, indices) -> ir.Value:
    return create("address", arr, indices).result


def atomic(kind: str, arr: ir.Value, value: ir.Value, indices) -> ir.Value:
    return create("atomic", arr, value, indices, attributes={"kind": ir.StringAttr.get(kind)}).result


def atomic_cas(arr: ir.Value, compare: ir.Value, value: ir.Value, indices) -> ir.Value:
    return create("atomic_cas", arr, compare, value, indices).result


def array_dim(arr: ir.Value, dim: int) -> ir.Value:
    return create("array_dim", arr, attributes={"dim": _i64_attr(dim)}).result


def view(arr: ir.Value, indices) -> ir.Value:
    """The (N-k)-d sub-array of an N-d array at k < N leading indices."""
    ndim = array_ndim(arr.type) - len(indices)
    return create("view", arr, indices, results=[array_type(array_dtype(arr.type), ndim)]).result


def slice_(arr: ir.Value, dims, bounds) -> ir.Value:
    """A strided sub-array (`a[1:3]`, `a[i, ::-1]`): `dims` and `bounds` as the op table's warp.slice says."""
    ndim = sum(1 for d in dims if d >= 0) + array_ndim(arr.type) - len(dims)
    return create("slice", arr, list(bounds), results=[array_type(array_dtype(arr.type), ndim)],
                  attributes={"dims": ir.DenseI64ArrayAttr.get(list(dims))}).result


def array_data(arr: ir.Value) -> ir.Value:
    return create("array_data", arr, results=[ir.IntegerType.get_signless(64)]).result


def array_from_ptr(address: ir.Value, shape, dtype: ir.Type, grad: ir.Value | None = None) -> ir.Value:
    """A contiguous `dtype` array over the memory at the i64 `address`, of the i32 `shape`; `grad`: the i64
    address of its adjoint array (0 at run time: none), or None (no adjoint)."""
    return create("array_from_ptr", address, list(shape), grad, results=[array_type(dtype, len(shape))]).result


def local_array(dtype: ir.Type, shape) -> ir.Value:
    """A zero-filled array of constant `shape` on the thread's stack (wp.zeros in a kernel)."""
    return create("local_array", results=[array_type(dtype, len(shape))],
                  attributes={"shape": ir.DenseI64ArrayAttr.get(list(shape))}).result


def stack_array(dtype: ir.Type, length: ir.Value) -> ir.Value:
    """A 1-d array of `length` (i32) elements on the thread's stack until the end of the current block."""
    return create("stack_array", length, results=[array_type(dtype, 1)]).result


def cast(value: ir.Value, to: ir.Type) -> ir.Value:
    if value.type == to:
        return value
    return create("cast", value, results=[to]).result


def int_constant(t: ir.Type, n: int) -> ir.Value:
    """The integer `n` as a value of type `t` (signless, signed or unsigned): arith's constants are signless, so a
    signed or unsigned one is its bits, cast (convert-warp-builtins-to-arith makes that cast nothing)."""
    width = ir.IntegerType(t).width
    signless = ir.IntegerType.get_signless(width)
    bits = int(n) % (1 << width)
    value = arith.ConstantOp(signless, bits - (1 << width) if width > 1 and bits >= 1 << (width - 1) else bits).result
    return cast(value, t)


def builtin(name: str, args, result_type: ir.Type) -> ir.Value:
    """A builtin-table op (not in ops.OPS: its operand types are the builtin table's business)."""
    return ir.Operation.create(f"warp.{name}", results=[result_type], operands=list(args)).result


__all__ = ["create", "infer_results", "tid", "load", "store", "address", "atomic", "atomic_cas", "array_dim",
           "view", "slice_", "array_data", "array_from_ptr", "local_array", "stack_array", "cast", "int_constant", "builtin", "array_type", "is_array_type"]


def tile_map(inputs, result_types, ip=None) -> ir.Operation:
    """warp.tile_map over `inputs` (at most ops.MAP_ARITY) with an empty one-block body: its block's arguments
    the inputs' element types (the caller fills it, ending it with gpu.yield)."""
    if len(inputs) > MAP_ARITY or len(result_types) > MAP_ARITY:
        raise ValueError(f"warp.tile_map takes at most {MAP_ARITY} tiles in and out")

    def sizes(n):
        return ir.DenseI32ArrayAttr.get([1] * n + [0] * (MAP_ARITY - n))

    op = ir.Operation.create("warp.tile_map", results=list(result_types), operands=list(inputs), regions=1,
                             attributes={"operandSegmentSizes": sizes(len(inputs)),
                                         "resultSegmentSizes": sizes(len(result_types))}, ip=ip)
    op.regions[0].blocks.append(*[tile_params(v.type)[0] for v in inputs])
    return op


def tile_reduce(tile: ir.Value, kind: str, result: ir.Type, axis: int = -1) -> ir.Value:
    """warp.tile_reduce {kind, axis}: axis -1 reduces every element into a tile of shape (1,)."""
    return create("tile_reduce", tile, results=[result],
                  attributes={"kind": ir.StringAttr.get(kind), "axis": _i64_attr(axis)}).result


def view_steps(tile_t: ir.Type, view_t: ir.Type, steps=None) -> ir.Attribute:
    """warp.tile_view's {steps}: as given (one per dimension of the tile, 0 where it is dropped), else the plain
    view, its leading dimensions dropped and the rest step 1."""
    if steps is None:
        rank, kept = len(tile_params(tile_t)[1]), len(tile_params(view_t)[1])
        steps = [0] * (rank - kept) + [1] * kept
    return ir.DenseI64ArrayAttr.get([int(s) for s in steps])


def tile_view(tile: ir.Value, offsets, view_t: ir.Type, steps=None) -> ir.Value:
    """The view of `tile` at `offsets` (i32, one per dimension of the tile), of type `view_t`; `steps` as
    view_steps says."""
    return create("tile_view", tile, list(offsets), results=[view_t],
                  attributes={"steps": view_steps(tile.type, view_t, steps)}).result


def tile_insert_view(tile: ir.Value, part: ir.Value, offsets, steps=None) -> ir.Value:
    """`tile` with its view at `offsets` (`steps`) replaced by `part`."""
    return create("tile_insert_view", tile, part, list(offsets), results=[tile.type],
                  attributes={"steps": view_steps(tile.type, part.type, steps)}).result
