"""Warp's tile builtins in kernels: `wp.tile_load`, `tile_store`, `tile_zeros/ones/full/empty/arange`,
`tile_sum/max/min/argmax/argmin`, `tile_matmul`, `tile_transpose`, `tile_broadcast`, `tile_map`, `t[i, j]`,
and the element-wise operators and builtins on tiles (`a + b`, `t * 2.0`, `wp.sin(t)`).

A tile is a value of `TileT(dtype, shape)` (types.py), `!warp.tile<dtype, array<i64: shape>>` in the warp
dialect; every builtin here is one op of the dialect's tile table (dialects/warp/ops.py), and an element-wise
builtin on tiles is the builtin's own op with tile operands (`warp.add(tile, tile) -> tile`), typed by the
builtin table on the tiles' element types. Shapes are compile-time constants (int literals, captured Python
ints or tuples), as in Warp. convert-warp-tiles-to-linalg lowers the ops.
"""

from __future__ import annotations

import ast
import math

from mlir import ir
from mlir.dialects import arith

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError
from mlwarp.core.types import ArrayT

from ..builtins import resolve
from ..builtins.table import converted_arg_types
from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from ..dialects.warp.ops import MAP_ARITY
from ..context import load_tile_dialects
from ..targets.common import CPU_LANES_ATTR, TILES_ATTR
from . import types as ft
from .resolve import MISSING, is_static_call, resolve_path
from .syntax import int_literal
from . import tuples
from .values import TupleVar, Var

REQUIRED = object()
_FOLDS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}

MAX_TILE_ELEMENTS = 1 << 20  # 4 MiB of float32 per tile, on the thread's stack
HOLDS = ("mlwarp's tiles hold scalars (int, float, bool types), vectors, matrices, quaternions and transforms of them, "
         "and structs")


def is_tile(v) -> bool:
    return isinstance(v, Var) and isinstance(v.type, ft.TileT)


# Warp's tile builtins whose result is a view of their argument: an in-place update of one writes the argument
VIEWS = frozenset({"tile_view", "tile_transpose", "tile_broadcast", "tile_reshape", "tile_squeeze"})


def updatable(em, target) -> bool:
    """Whether an in-place builtin can update the tile expression `target`: a variable (rebound to the result), or
    a call making a new tile (nothing else sees it: Warp updates it and drops it); not a view of another tile."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, ast.Call) and \
        getattr(resolve_path(em.src.func, target.func), "_wp_tile_", None) not in VIEWS


def write_back(em, target, value: Var) -> None:
    """An in-place builtin's updated tile: `target`'s variable rebound to it (a temporary's update is dropped)."""
    if isinstance(target, ast.Name):
        em.assign(target, value)


class StaticTile:
    """A tile local as wp.static() sees it: its shape and dtype (compile-time constants), `len(t)` its first
    dimension, as Warp's tile types."""

    def __init__(self, t: ft.TileT):
        self.shape, self.dtype, self.ndim = tuple(t.shape), t.dtype, len(t.shape)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"tile(shape={self.shape}, dtype={ft.name(self.dtype)})"


def static_locals(em) -> dict:
    """The tile locals for wp.static(): StaticTile stand-ins (`wp.static(len(t))`, `wp.static(t.shape[1])`)."""
    return {n: StaticTile(v.type) for n, v in em.env.items() if is_tile(v)}


def mark(em) -> None:
    """The module makes tiles: its build runs the tile stages, whose dialects are loaded now (no dialect loads
    once passes run)."""
    module = em.program.kernel_op.parent
    if TILES_ATTR not in module.attributes:
        module.attributes[TILES_ATTR] = ir.UnitAttr.get()
        load_tile_dialects(ir.Context.current)
        if em.program.lanes > 1:  # Warp's CPU lanes: warp-cpu-block-lanes runs the kernel over each block's lanes
            module.attributes[CPU_LANES_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), em.program.lanes)


def mark_cooperative(em) -> None:
    """The kernel's lanes of a block work together (a block barrier it calls: native.py's barrier snippets), as in
    a kernel with tiles."""
    mark(em)


def lanes(em) -> int:
    """The lanes per block this kernel is built for (1: one lane, Warp's CPU default)."""
    return em.program.lanes


def sync(em) -> None:
    """A barrier of the block's lanes (warp.tile_sync), where the kernel runs several."""
    if lanes(em) > 1:
        wb.create("tile_sync")


def lane_index(em) -> ir.Value:
    return wb.create("lane_index", results=[ft.to_mlir(wt.int32)]).result


# -- arguments ----------------------------------------------------------------------------------------------
def bind(em, node: ast.Call, name: str, params) -> dict:
    """The call's arguments by parameter name (defaults filled in): `params` the builtin's ((name, default), ...),
    REQUIRED for no default (the tile table's records hold them)."""
    if len(node.args) > len(params):
        raise em.error(node, f"wp.{name}() takes at most {len(params)} arguments, got {len(node.args)}",
                       CompileTypeError)
    bound = {p: a for (p, _), a in zip(params, node.args)}
    names = [p for p, _ in params]
    for kw in node.keywords:
        if kw.arg not in names:
            raise em.error(node, f"wp.{name}() got an unexpected keyword argument '{kw.arg}'", CompileTypeError)
        if kw.arg in bound:
            raise em.error(node, f"wp.{name}() got multiple values for argument '{kw.arg}'", CompileTypeError)
        bound[kw.arg] = kw.value
    for p, default in params:
        if p not in bound:
            if default is REQUIRED:
                raise em.error(node, f"wp.{name}() missing required argument '{p}'", CompileTypeError)
            bound[p] = default
    return bound


def constant_value(em, node):
    """The Python value a constant expression denotes (an int, a float, a tuple of them), else MISSING."""
    if not isinstance(node, ast.AST):
        return node  # a default
    literal = int_literal(node)
    if literal is not None:
        return literal
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = constant_value(em, node.operand)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else MISSING
    if isinstance(node, ast.Tuple):
        items = [constant_value(em, e) for e in node.elts]
        return MISSING if any(i is MISSING for i in items) else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLDS:
        left, right = constant_value(em, node.left), constant_value(em, node.right)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            try:
                return _FOLDS[type(node.op)](left, right)
            except ZeroDivisionError:
                return MISSING
        return MISSING
    if isinstance(node, ast.Call) and is_static_call(em.src.func, node):  # wp.static(TILE_M * TILE_N)
        v = em.expr(node)
        return v.literal if isinstance(v, Var) and v.literal is not None else MISSING
    if isinstance(node, (ast.Name, ast.Attribute)) and not (isinstance(node, ast.Name) and node.id in em.env):
        value = resolve_path(em.src.func, node)
        if isinstance(value, wt.scalar_base):
            value = value.value
        return value
    if isinstance(node, ast.Name) and isinstance(em.env.get(node.id), Var) and em.env[node.id].literal is not None:
        return em.env[node.id].literal
    if isinstance(node, ast.Name) and isinstance(em.env.get(node.id), TupleVar):  # shape = (wp.static(M), 1)
        found = tuples.constant_value(em.env[node.id])
        return MISSING if found is None else found
    return MISSING


def tile_shape(em, node, name: str) -> tuple:
    value = constant_value(em, node)
    shape = (value,) if type(value) is int else value
    if not isinstance(shape, tuple) or not shape or any(type(d) is not int for d in shape):
        raise em.error(node, f"wp.{name}(): the tile shape must be a constant int or tuple of ints",
                       CompileTypeError)
    if any(d <= 0 for d in shape):
        raise em.error(node, f"wp.{name}(): tile dimensions must be positive, got {shape}", CompileError)
    if len(shape) > 4:
        raise em.error(node, f"wp.{name}(): a tile has 1 to 4 dimensions, got {len(shape)}", CompileError)
    if math.prod(shape) > MAX_TILE_ELEMENTS:
        raise em.error(node, f"wp.{name}(): a tile of shape {shape} has more than {MAX_TILE_ELEMENTS} elements",
                       CompileError)
    return shape


def dtype_arg(em, node, name: str, default):
    if node is None:
        return default
    obj = MISSING
    if isinstance(node, ast.AST):
        obj = em.local_type(node)  # A.dtype, type(x)
        if obj is MISSING:
            obj = resolve_path(em.src.func, node)
    else:
        obj = node
    t = ft.from_annotation(obj) if obj is not MISSING and not wt.is_array(obj) else None
    if t is None or isinstance(t, ArrayT) or not is_tile_element(t):
        raise em.error(node, f"wp.{name}(): {HOLDS}, got dtype {getattr(obj, '__name__', obj)!r}", CompileTypeError)
    return t


def is_tile_element(t) -> bool:
    """What a tile can hold here: scalars, vectors, matrices, quaternions and transforms of them, and structs."""
    if wt.is_scalar(t) or wt.is_struct(t):
        return True
    return wt.composite_kind(t) in ("vec", "mat", "quat", "transform") and is_tile_element(t._wp_scalar_type_)


def tile_arg(em, node, name: str, param: str) -> Var:
    v = em.expr(node)
    if not is_tile(v):
        raise em.error(node, f"wp.{name}(): argument '{param}' must be a tile, got {ft.name(v.type)}",
                       CompileTypeError)
    return v


def int32_arg(em, node) -> ir.Value:
    v = em.expr(node)
    if not wt.is_int(v.type):
        raise em.error(node, f"tile offsets and indices must be integers, got {ft.name(v.type)}", CompileTypeError)
    return wb.cast(v.value, ft.to_mlir(wt.int32))


def offsets_arg(em, node, ndim: int, name: str) -> list:
    if node is None:
        return [em.const(0, wt.int32).value for _ in range(ndim)]
    if isinstance(node, ast.Tuple):
        items = [em.expr(i) for i in node.elts]
    else:  # an int, or a tuple value (`offset = (i * M, 0)` then offset=offset)
        v = em.expr(node, allow_tuple=True)
        items = list(v.parts) if isinstance(v, TupleVar) else [v]
    if len(items) != ndim:
        raise em.error(node, f"wp.{name}(): the offset has {len(items)} dimension(s), the array {ndim}",
                       CompileTypeError)
    for v in items:
        if not isinstance(v, Var) or not wt.is_int(v.type):
            raise em.error(node, f"tile offsets and indices must be integers, got "
                                 f"{ft.name(v.type) if isinstance(v, Var) else 'a tuple'}", CompileTypeError)
    return [wb.cast(v.value, ft.to_mlir(wt.int32)) for v in items]


def array_arg(em, node, name: str) -> Var:
    arr = em.expr(node)
    if not isinstance(arr.type, ArrayT):
        raise em.error(node, f"wp.{name}(): argument 'a' must be an array, got {ft.name(arr.type)}", CompileTypeError)
    if not is_tile_element(arr.type.dtype):
        raise em.error(node, f"wp.{name}(): {HOLDS}, got an array of {ft.name(arr.type.dtype)}", CompileTypeError)
    return arr


def scalar_arg(em, node, dtype, name: str) -> ir.Value:
    """`node` (an expression, or a Python number) as a value of `dtype`."""
    if not isinstance(node, ast.AST):
        if wt.is_composite(dtype):  # tile_zeros / tile_ones of vectors or matrices: every component
            scalar = dtype._wp_scalar_type_
            count = math.prod(dtype._shape_)
            return wc.construct(ft.to_mlir(dtype), [em.const(node, scalar).value] * count)
        return em.const(node, dtype).value
    v = em.expr(node)
    if wt.is_composite(dtype):
        if v.type is not dtype:
            raise em.error(node, f"wp.{name}(): expected a {ft.name(dtype)} value, got {ft.name(v.type)}",
                           CompileTypeError)
        return v.value
    if isinstance(v.type, (ArrayT, ft.TileT)) or wt.is_composite(v.type):
        raise em.error(node, f"wp.{name}(): expected a scalar value, got {ft.name(v.type)}", CompileTypeError)
    return v.value if v.type is dtype else em.convert(v, dtype, node).value


def call_bound(em, node, fn_node, values: list, allow_tuple: bool = False):
    """The function at `fn_node` called on `values` (Vars: tile elements, captured operands) at the insertion point,
    each bound to a hidden name of the environment for the call."""
    names = [f"__tile_operand_{k}" for k in range(len(values))]
    saved = em.env
    em.env = {**saved, **dict(zip(names, values))}
    call = ast.Call(func=fn_node, args=[ast.copy_location(ast.Name(id=n, ctx=ast.Load()), node) for n in names],
                    keywords=[])
    try:
        return em.expr(ast.copy_location(call, node), allow_tuple=allow_tuple)
    finally:
        em.env = saved


def type_name(t) -> str:
    return getattr(t, "__name__", str(t))


def is_stack_type(t, capacity=None, dtype=None) -> bool:
    """Whether `t` is the type of a stack made by wp.tile_stack (the tuple of its slots and its count: an int, or a
    tile of one int with Warp's CPU lanes), of that capacity and dtype when they are given."""
    if not (isinstance(t, ft.TupleT) and len(t.types) == 2):
        return False
    slots, count = t.types
    if not (isinstance(slots, ft.TileT) and len(slots.shape) == 1):
        return False
    if count not in (wt.int32, ft.TileT(wt.int32, (1,))):
        return False
    return (capacity is None or slots.shape == (capacity,)) and (dtype is None or slots.dtype == dtype)


def zero_value(dtype) -> ir.Value:
    if wt.is_composite(dtype):
        return wc.construct(ft.to_mlir(dtype), [])
    t = ft.to_mlir(dtype)
    return arith.ConstantOp(t, 0.0 if wt.is_float(dtype) else 0).result


def dense_strides(shape) -> tuple:
    return tuple(math.prod(shape[d + 1:]) for d in range(len(shape)))


def zeros(t: ft.TileT) -> Var:
    """A tile of type `t` holding zeros (what a @wp.func's tile result holds before its `return`)."""
    if wt.is_composite(t.dtype):
        zero = wc.construct(ft.to_mlir(t.dtype), [])
    elif getattr(t.dtype, "_kind_", None) == "uint":
        zero = wb.int_constant(ft.to_mlir(t.dtype), 0)
    else:
        zero = arith.ConstantOp(ft.to_mlir(t.dtype), 0.0 if wt.is_float(t.dtype) else 0).result
    return Var(wb.create("tile_full", zero, results=[ft.to_mlir(t)]).result, t)


def map_function(em, node, fn_node, operands: list, shape: tuple):
    """warp.tile_map whose body calls the @wp.func on the tiles' elements (warp-inline inlines it there), and on
    the other operands as they are (captured). The body is emitted first (in a result-less op), as its results'
    types make the op's."""
    tiles = [v for v in operands if is_tile(v)]
    if len(tiles) > MAP_ARITY:
        raise em.error(node, f"wp.tile_map() maps at most {MAP_ARITY} tiles", CompileTypeError)
    if any(t.type.shape != shape for t in tiles):
        raise em.error(node, f"wp.tile_map() of tiles of different shapes {sorted({t.type.shape for t in tiles})}",
                       CompileTypeError)
    element_types = [t.type.dtype for t in tiles]
    holder = wb.tile_map([t.value for t in tiles], [])
    block = holder.regions[0].blocks[0]
    elements = iter(zip(block.arguments, element_types))
    bound = [Var(*next(elements)) if is_tile(v) else v for v in operands]
    with ir.InsertionPoint(block):
        out = call_bound(em, node, fn_node, bound, allow_tuple=True)
    outs = out.parts if hasattr(out, "parts") else out if isinstance(out, list) else [out]
    for o in outs:
        if not isinstance(o, Var) or not is_tile_element(o.type):
            raise em.error(node, f"wp.tile_map(): the function returns {ft.name(getattr(o, 'type', o))}: {HOLDS}",
                           CompileTypeError)
    result_types = [ft.TileT(o.type, shape) for o in outs]
    op = wb.tile_map([t.value for t in tiles], [ft.to_mlir(t) for t in result_types], ip=ir.InsertionPoint(holder))
    body = op.regions[0].blocks[0]
    for old, new in zip(block.arguments, body.arguments):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(body):
        end = ir.Operation.create("gpu.yield", operands=[o.value for o in outs])
    for inner in list(block.operations):
        inner.operation.move_before(end)
    holder.erase()
    mapped = [Var(r, t) for r, t in zip(op.results, result_types)]
    return mapped[0] if len(mapped) == 1 else mapped


def elementwise(em, node, name: str, args: list, mapped: bool = False) -> Var:
    """Builtin `name` applied element by element: tiles of one shape, scalars broadcast. `mapped`: through
    wp.tile_map (which applies any builtin), not an operator or a builtin called on tiles."""
    shapes = {a.type.shape for a in args if is_tile(a)}
    if len(shapes) != 1:
        raise em.error(node, f"'{name}' of tiles of different shapes {sorted(shapes)}: broadcast one with "
                             f"wp.tile_broadcast first", CompileTypeError)
    shape = shapes.pop()
    elements = [a.type.dtype if is_tile(a) else a.type for a in args]
    if not mapped and any(is_tile(a) and wt.is_struct(a.type.dtype) for a in args):
        return struct_elementwise(em, node, name, args, elements, shape)
    for a in args:
        if not is_tile(a) and (isinstance(a.type, (ArrayT, ft.TupleT)) or wt.is_struct(a.type)):
            raise em.error(node, f"'{name}' takes tiles, scalars, vectors and matrices, got {ft.name(a.type)}",
                           CompileTypeError)
    if not mapped and name in ("mul", "div") and len(args) == 2 and all(wt.is_composite(e) for e in elements):
        # Warp's rules: a product or quotient of tiles needs scalar elements on one side
        if all(is_tile(a) for a in args):
            raise em.error(node, f"'{name}' of two tiles of {ft.name(elements[0])} and {ft.name(elements[1])}: the "
                                 f"element type must be scalar on one side", CompileTypeError)
        verb = "multiply" if name == "mul" else "divide"
        side = [f"tile<{ft.name(e)}>" if is_tile(a) else ft.name(e) for a, e in zip(args, elements)]
        raise em.error(node, f"Cannot {verb} {side[0]} by {side[1]}: at least one operand must be a scalar type",
                       CompileTypeError)
    targets = converted_arg_types(name, elements)
    values = []
    for a, element, target in zip(args, elements, targets):
        if is_tile(a):
            if element is not target:
                raise em.error(node, f"'{name}' of a tile of {ft.name(element)} needs {ft.name(target)} elements: "
                                     f"convert the tile first", CompileTypeError)
            values.append(a.value)
        else:
            values.append(a.value if element is target else em.cast(a, target, node).value)
    try:
        rt = resolve(name, targets)
    except TypeError as e:
        raise em.error(node, str(e), CompileTypeError) from None
    if not is_tile_element(rt):
        raise em.error(node, f"'{name}' of tiles gives {ft.name(rt)} elements: {HOLDS}",
                       CompileTypeError)
    t = ft.TileT(rt, shape)
    return Var(wb.builtin(name, values, ft.to_mlir(t)), t)


def _operand_name(a) -> str:
    return f"tile(shape={a.type.shape}, dtype={ft.name(a.type.dtype)})" if is_tile(a) else ft.name(a.type)


def struct_elementwise(em, node, name: str, args: list, elements: list, shape: tuple) -> Var:
    """An operator on tiles of structs: Warp's `a + b` and `a - b` of two tiles of one struct type, field by field
    (the fields whose scalars have an atomic add; the others keep `a`'s, warp.struct_fieldwise); the rest refused
    with Warp's messages."""
    if len(args) == 1:
        raise em.error(node, "Tile unary operators do not support Warp struct tile elements", CompileTypeError)
    if name in ("mul", "div", "mod") and len(args) == 2:
        if all(is_tile(a) for a in args):
            verb = {"mul": "multiply", "div": "divide", "mod": "take the modulo of"}[name]
            raise em.error(node, f"Cannot {verb} tile<{ft.name(elements[0])}> by tile<{ft.name(elements[1])}>: at "
                                 f"least one element type must be scalar", CompileTypeError)
        if any(wt.is_scalar(e) for e in elements):
            tile, const = (elements[0], elements[1]) if is_tile(args[0]) else (elements[1], elements[0])
            raise em.error(node, f"Underlying scalar types don't match: tile={ft.name(tile)}, const={ft.name(const)}",
                           CompileTypeError)
    if name not in ("add", "sub") or len(args) != 2 or not all(is_tile(a) for a in args) or \
            elements[0] != elements[1]:
        raise em.error(node, f"Couldn't find function overload for '{name}' that matched inputs with types: "
                             f"[{', '.join(_operand_name(a) for a in args)}]", CompileTypeError)
    t = ft.TileT(elements[0], shape)
    return Var(wb.builtin(name, [a.value for a in args], ft.to_mlir(t)), t)


def struct_element_update(em, node, name: str, current: Var, value: Var) -> Var:
    """`t[i] += s` / `t[i] -= s` on a tile of structs: Warp's field-by-field add or subtract of the element."""
    if name not in ("add", "sub") or value.type != current.type:
        raise em.error(node, f"Couldn't find function overload for '{name}' that matched inputs with types: "
                             f"[{ft.name(current.type)}, {ft.name(value.type)}]", CompileTypeError)
    return Var(wc.struct_fieldwise(name, current.value, value.value), current.type)


def broadcastable(src: tuple, dst: tuple) -> bool:
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(reversed(src), reversed(dst)))
