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
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core import vector as wv
from mlwarp.core.errors import CompileError, CompileIndexError, CompileTypeError, CompileValueError
from mlwarp.core.types import ArrayT

from ..builtins import resolve
from ..builtins.table import converted_arg_types
from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from ..dialects.warp.ops import MAP_ARITY
from ..context import load_tile_dialects
from ..targets.common import CPU_LANES_ATTR, TILES_ATTR
from . import composite
from . import types as ft
from .resolve import MISSING, is_static_call, resolve_path
from .syntax import int_literal
from . import tuples
from .values import TupleVar, Var

REQUIRED = object()
_FOLDS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}

# each builtin's parameters in Warp's order, with their defaults
SIGNATURES = {
    "tile_load": (("a", REQUIRED), ("shape", REQUIRED), ("offset", None), ("storage", "register"),
                  ("bounds_check", True), ("aligned", False)),
    "tile_store": (("a", REQUIRED), ("t", REQUIRED), ("offset", None), ("bounds_check", True), ("aligned", False)),
    "tile_zeros": (("shape", REQUIRED), ("dtype", None), ("storage", "register")),
    "tile_ones": (("shape", REQUIRED), ("dtype", None), ("storage", "register")),
    "tile_empty": (("shape", REQUIRED), ("dtype", None), ("storage", "register")),
    "tile_full": (("shape", REQUIRED), ("value", REQUIRED), ("dtype", None), ("storage", "register")),
    "tile_sum": (("a", REQUIRED), ("axis", None)),
    "tile_max": (("a", REQUIRED), ("axis", None)),
    "tile_min": (("a", REQUIRED), ("axis", None)),
    "tile_argmax": (("a", REQUIRED),),
    "tile_argmin": (("a", REQUIRED),),
    "tile_reduce": (("op", REQUIRED), ("a", REQUIRED), ("axis", None)),
    "tile_matmul": (("a", REQUIRED), ("b", REQUIRED), ("out", None), ("alpha", 1.0), ("beta", 1.0),
                    ("precision", "default")),
    "tile_transpose": (("a", REQUIRED),),
    "tile_broadcast": (("a", REQUIRED), ("shape", REQUIRED)),
    "tile_atomic_add": (("a", REQUIRED), ("t", REQUIRED), ("offset", None), ("bounds_check", True)),
    "tile_load_indexed": (("a", REQUIRED), ("indices", REQUIRED), ("shape", REQUIRED), ("offset", None), ("axis", 0),
                          ("storage", "register")),
    "tile_store_indexed": (("a", REQUIRED), ("indices", REQUIRED), ("t", REQUIRED), ("offset", None), ("axis", 0)),
    "tile_atomic_add_indexed": (("a", REQUIRED), ("indices", REQUIRED), ("t", REQUIRED), ("offset", None),
                                ("axis", 0)),
    "tile_reshape": (("t", REQUIRED), ("shape", REQUIRED)),
    "tile_stack": (("capacity", REQUIRED), ("dtype", REQUIRED)),
    "tile_stack_push": (("s", REQUIRED), ("value", REQUIRED), ("has_value", REQUIRED)),
    "tile_stack_pop": (("s", REQUIRED),),
    "tile_stack_clear": (("s", REQUIRED),),
    "tile_stack_count": (("s", REQUIRED),),
    "tile_scan_inclusive": (("a", REQUIRED),),
    "tile_scan_exclusive": (("a", REQUIRED),),
    "tile_scan_max_inclusive": (("a", REQUIRED),),
    "tile_scan_min_inclusive": (("a", REQUIRED),),
    "tile_fft": (("inout", REQUIRED),),
    "tile_ifft": (("inout", REQUIRED),),
    "tile_cholesky": (("A", REQUIRED), ("fill_mode", "lower")),
    "tile_cholesky_inplace": (("A", REQUIRED), ("fill_mode", "lower")),
    "tile_cholesky_solve": (("L", REQUIRED), ("y", REQUIRED), ("fill_mode", "lower")),
    "tile_cholesky_solve_inplace": (("L", REQUIRED), ("y", REQUIRED), ("fill_mode", "lower")),
    "tile_lower_solve": (("L", REQUIRED), ("y", REQUIRED)),
    "tile_lower_solve_inplace": (("L", REQUIRED), ("y", REQUIRED)),
    "tile_upper_solve": (("U", REQUIRED), ("z", REQUIRED)),
    "tile_upper_solve_inplace": (("U", REQUIRED), ("z", REQUIRED)),
    "tile_squeeze": (("t", REQUIRED), ("axis", None)),
    "tile_astype": (("t", REQUIRED), ("dtype", REQUIRED)),
    "tile_view": (("t", REQUIRED), ("offset", REQUIRED), ("shape", None)),
    "tile_sort": (("keys", REQUIRED), ("values", REQUIRED)),
    "tile_randi": (("shape", REQUIRED), ("rng", REQUIRED), ("min", None), ("max", None), ("storage", "register")),
    "tile_randf": (("shape", REQUIRED), ("rng", REQUIRED), ("min", None), ("max", None), ("storage", "register")),
    "tile_from_thread": (("shape", REQUIRED), ("value", REQUIRED), ("thread_idx", REQUIRED), ("storage", "register")),
}
# tile_scatter_add(a, i, [j, k, l,] value, has_value, atomic=True) / tile_scatter_masked(a, i, ..., value, has_value):
# one index per dimension of `a`, so they are bound by _scatter itself
REDUCTIONS = {"tile_sum": "add", "tile_max": "max", "tile_min": "min", "tile_argmax": "argmax", "tile_argmin": "argmin"}
FILLS = {"tile_zeros": 0, "tile_ones": 1, "tile_empty": 0}
# the builtins whose output argument a call updates in place: (builtin, its position)
IN_PLACE = {"tile_assign": 0, "tile_sort": (0, 1), "tile_scatter_add": 0, "tile_scatter_masked": 0, "tile_stack_push": 0, "tile_stack_pop": 0, "tile_stack_clear": 0, "tile_matmul": 2, "tile_fft": 0, "tile_ifft": 0, "tile_cholesky_inplace": 0, "tile_cholesky_solve_inplace": 1,
            "tile_lower_solve_inplace": 1, "tile_upper_solve_inplace": 1}
MAX_TILE_ELEMENTS = 1 << 20  # 4 MiB of float32 per tile, on the thread's stack
HOLDS = "mlwarp's tiles hold scalars (int, float, bool types) and vectors, matrices, quaternions and transforms of them"


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


def updated_names(node: ast.Call, name: str) -> list:
    """The locals a call of tile builtin `name` assigns without naming them as a target (a loop carries them):
    `wp.tile_matmul(a, b, out)` updates `out`."""
    positions = IN_PLACE.get(name)
    if positions is None:
        return []
    found = []
    for k in (positions if isinstance(positions, tuple) else (positions,)):
        keyword = SIGNATURES[name][k][0] if name in SIGNATURES else "out"
        target = node.args[k] if len(node.args) > k else \
            next((kw.value for kw in node.keywords if kw.arg == keyword), None)
        found += [target.id] if isinstance(target, ast.Name) else []
    return found


def _mark(em) -> None:
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
    _mark(em)


def lanes(em) -> int:
    """The lanes per block this kernel is built for (1: one lane, Warp's CPU default)."""
    return em.program.lanes


def sync(em) -> None:
    """A barrier of the block's lanes (warp.tile_sync), where the kernel runs several."""
    if lanes(em) > 1:
        wb.create("tile_sync")


def lane_index(em) -> ir.Value:
    return wb.create("lane_index", results=[ft.to_mlir(wt.int32)]).result


# Builtins whose mlwarp lowering assumes one lane per block (wp.tile(x) is a tile of shape (1,), wp.block_dim()
# is 1, a scatter or stack op is done once per block): a module using one keeps CUDA's one thread per block
# (lowering/tiles_to_linalg.py ONE_LANE_ATTR; warp-gpu-cooperative-tiles reads it)
ONE_LANE_BUILTINS = frozenset({"tile", "untile", "block_dim", "tile_from_thread", "tile_scatter_add", "tile_scatter_masked",
                               "tile_stack", "tile_stack_push", "tile_stack_pop", "tile_stack_clear",
                               "tile_stack_count"})
ONE_LANE_ATTR = "warp.one_lane_tiles"  # (the same name as lowering/tiles_to_linalg.py's)


def prepare(em, name: str) -> None:
    """What every tile builtin's call does first: the module makes tiles; a builtin assuming one lane per block
    says so."""
    _mark(em)
    if name in ONE_LANE_BUILTINS and lanes(em) == 1:
        module = em.program.kernel_op.parent
        if ONE_LANE_ATTR not in module.attributes:
            module.attributes[ONE_LANE_ATTR] = ir.StringAttr.get(name)


def call(em, node: ast.Call, name: str):
    prepare(em, name)
    if name == "tile_map":
        return _tile_map(em, node)
    if name == "tile_arange":
        return _arange(em, node)
    if name in ("tile", "untile"):
        return _tile_untile(em, node, name)
    if name == "block_dim":  # the lanes of a block: one on mlwarp's CPU unless built for Warp's CPU lanes
        if node.args or node.keywords:
            raise em.error(node, "wp.block_dim() takes no arguments", CompileTypeError)
        return em.const(lanes(em), wt.int32)
    if name in ("tile_scatter_add", "tile_scatter_masked"):
        return _scatter(em, node, name)
    if name == "tile_assign":
        return _assign_tile(em, node)
    args = bind(em, node, name)
    if name == "tile_load":
        return _load(em, node, args)
    if name == "tile_store":
        return _store(em, node, args)
    if name == "tile_atomic_add":
        return _store(em, node, args, "tile_atomic_add")
    if name.endswith("_indexed"):
        return _indexed(em, node, name, args)
    if name in FILLS or name == "tile_full":
        return _full(em, node, name, args)
    if name in REDUCTIONS or name == "tile_reduce":
        return _reduce(em, node, name, args)
    if name == "tile_matmul":
        return _matmul(em, node, _matmul_overload(em, node, args))
    if name.startswith("tile_scan_"):
        a = _tile(em, args["a"], name, "a")
        if not wt.is_scalar(a.type.dtype):
            raise em.error(node, f"wp.{name}(): a tile of scalars, got {a.type}", CompileTypeError)
        kind = {"tile_scan_inclusive": "add", "tile_scan_exclusive": "add_exclusive",
                "tile_scan_max_inclusive": "max", "tile_scan_min_inclusive": "min"}[name]
        return Var(wb.create("tile_scan", a.value, results=[ft.to_mlir(a.type)],
                             attributes={"kind": ir.StringAttr.get(kind)}).result, a.type)
    if name.startswith("tile_stack"):
        return _stack(em, node, name, args)
    if name in ("tile_fft", "tile_ifft"):
        t = _tile(em, args["inout"], name, "inout")
        if t.type.dtype not in (wv.vector(2, wt.float32), wv.vector(2, wt.float64)) or len(t.type.shape) < 2:
            raise em.error(node, f"wp.{name}(): 'inout' must be a tile of vec2f or vec2d (complex numbers) with at "
                                 f"least two dimensions, got {t.type}", CompileTypeError)
        if not updatable(em, args["inout"]):
            raise em.error(node, f"wp.{name}(): the tile it transforms in place must be a variable", CompileTypeError)
        out = wb.create("tile_dft", t.value, results=[ft.to_mlir(t.type)],
                        attributes={"inverse": ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                  int(name == "tile_ifft"))}).result
        write_back(em, args["inout"], Var(out, t.type))
        return None
    if "cholesky" in name or name.endswith(("_solve", "_solve_inplace")):
        return _linear_algebra(em, node, name, args)
    if name in ("tile_reshape", "tile_squeeze"):
        return _reshape(em, node, name, args)
    if name == "tile_astype":
        t = _tile(em, args["t"], name, "t")
        dtype = _dtype(em, args["dtype"], name, None)
        if wt.is_composite(dtype) or wt.is_composite(t.type.dtype):
            raise em.error(node, "wp.tile_astype() converts tiles of scalars", CompileTypeError)
        result = ft.TileT(dtype, t.type.shape)
        return Var(wb.create("cast", t.value, results=[ft.to_mlir(result)]).result, result)
    if name == "tile_transpose":
        a = _tile(em, args["a"], name, "a")
        if len(a.type.shape) != 2:
            raise em.error(node, f"wp.tile_transpose() takes a 2-d tile, got {a.type}", CompileTypeError)
        t = ft.TileT(a.type.dtype, tuple(reversed(a.type.shape)))
        return Var(wb.create("tile_transpose", a.value, results=[ft.to_mlir(t)]).result, t)
    if name == "tile_sort":
        return _sort(em, node, args)
    if name in ("tile_randi", "tile_randf"):
        return _random(em, node, name, args)
    if name == "tile_from_thread":
        return _from_thread(em, node, args)
    if name == "tile_broadcast":
        a = _tile(em, args["a"], name, "a")
        wanted = _constant(em, args["shape"])
        if isinstance(wanted, tuple) and not 1 <= len(wanted) <= 4:
            raise em.error(node, f"tile_broadcast() output must have between one and four dimensions, got "
                                 f"{len(wanted)}", CompileValueError)
        shape = _shape(em, args["shape"], name)
        if not _broadcastable(a.type.shape, shape):
            raise em.error(node, f"wp.tile_broadcast(): a tile of shape {a.type.shape} does not broadcast to "
                                 f"{shape}", CompileTypeError)
        t = ft.TileT(a.type.dtype, shape)
        return Var(wb.create("tile_broadcast", a.value, results=[ft.to_mlir(t)]).result, t)
    raise em.error(node, f"wp.{name}() is not supported in mlwarp's kernels yet", CompileError)


# -- arguments ----------------------------------------------------------------------------------------------
def bind(em, node: ast.Call, name: str, params=None) -> dict:
    """The call's arguments by parameter name (defaults filled in), by `params` (default SIGNATURES[name])."""
    params = SIGNATURES[name] if params is None else params
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


def _constant(em, node):
    """The Python value a constant expression denotes (an int, a float, a tuple of them), else MISSING."""
    if not isinstance(node, ast.AST):
        return node  # a default
    literal = int_literal(node)
    if literal is not None:
        return literal
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _constant(em, node.operand)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else MISSING
    if isinstance(node, ast.Tuple):
        items = [_constant(em, e) for e in node.elts]
        return MISSING if any(i is MISSING for i in items) else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLDS:
        left, right = _constant(em, node.left), _constant(em, node.right)
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


def _shape(em, node, name: str) -> tuple:
    value = _constant(em, node)
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


def _dtype(em, node, name: str, default):
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
    if t is None or isinstance(t, ArrayT) or not _scalar_element(t):
        raise em.error(node, f"wp.{name}(): {HOLDS}, got dtype {getattr(obj, '__name__', obj)!r}", CompileTypeError)
    return t


def _scalar_element(t) -> bool:
    """What a tile can hold here: scalars, and vectors, matrices, quaternions and transforms of them."""
    if wt.is_scalar(t):
        return True
    return wt.composite_kind(t) in ("vec", "mat", "quat", "transform") and _scalar_element(t._wp_scalar_type_)


def _tile(em, node, name: str, param: str) -> Var:
    v = em.expr(node)
    if not is_tile(v):
        raise em.error(node, f"wp.{name}(): argument '{param}' must be a tile, got {ft.name(v.type)}",
                       CompileTypeError)
    return v


def _int32(em, node) -> ir.Value:
    v = em.expr(node)
    if not wt.is_int(v.type):
        raise em.error(node, f"tile offsets and indices must be integers, got {ft.name(v.type)}", CompileTypeError)
    return wb.cast(v.value, ft.to_mlir(wt.int32))


def _offsets(em, node, ndim: int, name: str) -> list:
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


def _array(em, node, name: str) -> Var:
    arr = em.expr(node)
    if not isinstance(arr.type, ArrayT):
        raise em.error(node, f"wp.{name}(): argument 'a' must be an array, got {ft.name(arr.type)}", CompileTypeError)
    if not _scalar_element(arr.type.dtype):
        raise em.error(node, f"wp.{name}(): {HOLDS}, got an array of {ft.name(arr.type.dtype)}", CompileTypeError)
    return arr


# -- the builtins -------------------------------------------------------------------------------------------
def _load(em, node, args) -> Var:
    arr = _array(em, args["a"], "tile_load")
    shape = _shape(em, args["shape"], "tile_load")
    if len(shape) != arr.type.ndim:
        raise em.error(node, f"tile_load() array argument must have same number of dimensions as the tile shape, "
                             f"trying to perform an {len(shape)} dimensional load from an array with "
                             f"{arr.type.ndim} dimensions.", CompileTypeError)
    offsets = _offsets(em, args["offset"], arr.type.ndim, "tile_load")
    t = ft.TileT(arr.type.dtype, shape)
    return Var(wb.create("tile_load", arr.value, offsets, results=[ft.to_mlir(t)]).result, t)


def _store(em, node, args, name="tile_store") -> None:
    arr = _array(em, args["a"], name)
    t = _tile(em, args["t"], name, "t")
    if t.type.dtype is not arr.type.dtype:
        raise em.error(node, f"{name}() 'a' and 't' arguments must have the same dtype, got "
                             f"{ft.name(arr.type.dtype)} and {ft.name(t.type.dtype)}", CompileTypeError)
    if len(t.type.shape) != arr.type.ndim:
        raise em.error(node, f"{name}() array argument must have same number of dimensions as the tile shape, "
                             f"trying to perform an {len(t.type.shape)} dimensional store to an array with "
                             f"{arr.type.ndim} dimensions.", CompileTypeError)
    if name == "tile_atomic_add":
        _check_atomic_dtype(em, node, t.type.dtype, name)
    offsets = _offsets(em, args["offset"], arr.type.ndim, name)
    wb.create(name, arr.value, t.value, offsets)
    return None


ATOMIC_SCALARS = (wt.int32, wt.uint32, wt.int64, wt.uint64, wt.float16, wt.bfloat16, wt.float32, wt.float64)


def _check_atomic_dtype(em, node, dtype, name) -> None:
    """Warp's rule for tile atomics: the scalars with a CUDA atomicAdd (not bool or 8/16-bit ints)."""
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    if scalar not in ATOMIC_SCALARS:
        raise em.error(node, f"{name}() only supports tiles with [u]int32, [u]int64, float16, bfloat16, float32, or "
                             f"float64 as the underlying scalar type, but got {ft.name(dtype)}", CompileError)


def _indexed(em, node, name, args):
    """tile_load_indexed / tile_store_indexed / tile_atomic_add_indexed: a gather or scatter along one axis."""
    arr = _array(em, args["a"], name)
    indices = _tile(em, args["indices"], name, "indices")
    if indices.type.dtype is not wt.int32 or len(indices.type.shape) != 1:
        raise em.error(node, f"wp.{name}(): 'indices' must be a 1-d tile of int32, got {indices.type}",
                       CompileTypeError)
    axis = _constant(em, args["axis"])
    if type(axis) is not int or not 0 <= axis < arr.type.ndim:
        raise em.error(node, f"wp.{name}(): axis must be a constant in [0, {arr.type.ndim}), got {axis!r}",
                       CompileTypeError)
    i64 = ir.IntegerType.get_signless(64)
    offsets = _offsets(em, args["offset"], arr.type.ndim, name)
    if name == "tile_load_indexed":
        shape = _shape(em, args["shape"], name)
        if len(shape) != arr.type.ndim or shape[axis] != indices.type.shape[0]:
            raise em.error(node, f"wp.{name}(): the shape {shape} must have the array's {arr.type.ndim} dimensions "
                                 f"and {indices.type.shape[0]} (the indices) along axis {axis}", CompileTypeError)
        t = ft.TileT(arr.type.dtype, shape)
        op = wb.create("tile_load_indexed", arr.value, indices.value, offsets, results=[ft.to_mlir(t)],
                       attributes={"axis": ir.IntegerAttr.get(i64, axis)})
        return Var(op.result, t)
    t = _tile(em, args["t"], name, "t")
    if t.type.dtype is not arr.type.dtype or len(t.type.shape) != arr.type.ndim or \
            t.type.shape[axis] != indices.type.shape[0]:
        raise em.error(node, f"wp.{name}(): the tile {t.type} must have the array's dtype and dimensions and "
                             f"{indices.type.shape[0]} (the indices) along axis {axis}", CompileTypeError)
    if name == "tile_atomic_add_indexed":
        _check_atomic_dtype(em, node, t.type.dtype, name)
    wb.create("tile_store_indexed", arr.value, indices.value, t.value, offsets,
              attributes={"axis": ir.IntegerAttr.get(i64, axis),
                          "atomic": ir.IntegerAttr.get(i64, int(name == "tile_atomic_add_indexed"))})
    return None


def _scalar(em, node, dtype, name: str) -> ir.Value:
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


def _full(em, node, name, args) -> Var:
    shape = _shape(em, args["shape"], name)
    dtype = _dtype(em, args["dtype"], name, wt.float32)
    value = FILLS[name] if name in FILLS else args["value"]
    if name == "tile_full" and args["dtype"] is None and isinstance(value, ast.AST):
        v = em.expr(value)
        if v.literal is None and _scalar_element(v.type):
            dtype = v.type  # Warp: the value's type when no dtype is given
    t = ft.TileT(dtype, shape)
    fill = _scalar(em, value, dtype, name)
    return Var(wb.create("tile_full", fill, results=[ft.to_mlir(t)]).result, t)


def _arange(em, node) -> Var:
    """wp.tile_arange(stop | start, stop[, step], dtype=float): Warp's rules, its messages. The bounds are
    constants, represented in the output type before the length is counted (a float32 range is counted
    from the values float32 holds), ceil((stop - start) / step) elements (exact for integers)."""
    import numpy as np

    dtype_node = next((kw.value for kw in node.keywords if kw.arg == "dtype"), None)
    extra = [kw.arg for kw in node.keywords if kw.arg not in ("dtype", "storage")]
    if extra:
        raise em.error(node, f"wp.tile_arange() got an unexpected keyword argument '{extra[0]}'", CompileTypeError)
    if not node.args:
        raise em.error(node, "tile_arange() requires at least one positional argument specifying the range",
                       CompileTypeError)
    if len(node.args) > 3:
        raise em.error(node, f"tile_arange() accepts at most 3 positional arguments, got {len(node.args)}",
                       CompileTypeError)
    names = ("stop",) if len(node.args) == 1 else ("start", "stop", "step")[:len(node.args)]
    given = {}
    for name, a in zip(names, node.args):
        value = _constant(em, a)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise em.error(node, f"tile_arange() arguments must be compile time constants, but {name} is not",
                           CompileError)
        given[name] = value
    start, stop, step = given.get("start", 0), given["stop"], given.get("step", 1)
    dtype = _dtype_any(em, dtype_node, wt.float32)
    if not wt.is_scalar(dtype) or dtype is wt.bool_:
        raise em.error(node, f"tile_arange() requires a numeric scalar dtype, but got {ft.name(dtype)}",
                       CompileTypeError)

    def represented(name, value):
        out_of_range = f"tile_arange() {name}={value} is out of range for the output type {ft.name(dtype)}"
        if wt.is_int(dtype):
            if isinstance(value, float):
                if not value.is_integer():
                    raise em.error(node, f"tile_arange() {name}={value} has a fractional part, which the integer "
                                         f"output type {ft.name(dtype)} cannot represent", CompileValueError)
                value = int(value)
            bits = dtype._bits_
            low, high = (0, 2 ** bits - 1) if dtype._kind_ == "uint" else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)
            if not low <= value <= high:
                raise em.error(node, out_of_range, CompileValueError)
            return value
        np_type = {wt.float16: np.float16, wt.float32: np.float32, wt.float64: np.float64}.get(dtype, np.float32)
        if isinstance(value, int):
            try:
                wide = np.int64(value) if value < 0 else np.uint64(value)
            except OverflowError:
                raise em.error(node, f"tile_arange() {name}={value} is too wide to use as an integer bound; write "
                                     f"it as a floating-point literal to build a {ft.name(dtype)} range",
                               CompileValueError) from None
            out = float(np_type(np.float64(wide) if np_type is np.float64 else np.float32(wide)))
        else:
            out = float(np_type(value))
        if math.isfinite(float(value)) and not math.isfinite(out):
            raise em.error(node, out_of_range, CompileValueError)
        return out

    start, stop, step = (represented(n, v) for n, v in (("start", start), ("stop", stop), ("step", step)))
    if step == 0:
        raise em.error(node, "tile_arange() step cannot be zero", CompileValueError)
    if (step > 0 and start >= stop) or (step < 0 and start <= stop):
        raise em.error(node, f"tile_arange() requires a non-empty range, but start={start}, stop={stop}, "
                             f"step={step} produces no elements; zero-length tile dimensions are not supported.",
                       CompileValueError)
    if wt.is_int(dtype):
        n = -((stop - start) // -step)
    else:
        np_type = {wt.float16: np.float16, wt.float64: np.float64}.get(dtype, np.float32)
        quotient = float(np_type((stop - start) / step))
        if not math.isfinite(quotient):
            raise em.error(node, f"tile_arange() start={start}, stop={stop}, step={step} spans more elements than "
                                 f"can be counted; the step is too small for the range.", CompileValueError)
        n = math.ceil(quotient)
    n = max(1, n)
    if n > MAX_TILE_ELEMENTS:
        raise em.error(node, f"wp.tile_arange(): a tile of {n} elements is more than {MAX_TILE_ELEMENTS}",
                       CompileError)
    t = ft.TileT(dtype, (n,))
    op = wb.create("tile_arange", _scalar(em, start, dtype, "tile_arange"), _scalar(em, step, dtype, "tile_arange"),
                   results=[ft.to_mlir(t)])
    return Var(op.result, t)


def _dtype_any(em, node, default):
    """A dtype argument (any Warp type), or `default`."""
    if node is None:
        return default
    obj = em.local_type(node)
    if obj is MISSING:
        obj = resolve_path(em.src.func, node)
    t = ft.from_annotation(obj) if obj is not MISSING and not wt.is_array(obj) else None
    if t is None or isinstance(t, ArrayT):
        raise em.error(node, f"wp.tile_arange(): not a dtype: {getattr(obj, '__name__', obj)!r}", CompileTypeError)
    return t


# the builtins tile_reduce folds with, and each one's identity (max and min start from an element)
REDUCE_OPS = {"add": 0, "mul": 1, "max": None, "min": None}


def _reduce(em, node, name, args) -> Var:
    a = _tile(em, args["a"], name, "a")
    if name == "tile_reduce":
        op = resolve_path(em.src.func, args["op"])
        kind = getattr(op, "_wp_builtin_", None)
        if kind not in REDUCE_OPS and em.program.is_function(op):
            return _reduce_with_function(em, node, args["op"], a, args.get("axis"))
        if kind not in REDUCE_OPS:
            raise em.error(node, f"wp.tile_reduce(): the operator must be a @wp.func or one of wp.add, wp.mul, "
                                 f"wp.max, wp.min, got {getattr(op, '__name__', op)!r}", CompileError)
    else:
        kind = REDUCTIONS[name]
    # Warp's max and min of two vectors are component-wise; no product of two vectors, nor max of matrices
    if wt.is_composite(a.type.dtype) and (kind == "mul" or kind in ("max", "min", "argmax", "argmin") and
                                          wt.composite_kind(a.type.dtype) != "vec"):
        raise em.error(node, f"wp.{name}(): '{kind}' of a tile of {ft.name(a.type.dtype)}", CompileTypeError)
    dtype = wt.int32 if kind in ("argmax", "argmin") else a.type.dtype
    axis = args.get("axis")
    if axis is None:
        t = ft.TileT(dtype, (1,))
        return Var(wb.tile_reduce(a.value, kind, ft.to_mlir(t)), t)
    axis = _constant(em, axis)
    rank = len(a.type.shape)
    if type(axis) is not int or not -rank <= axis < rank:
        raise em.error(node, f"wp.{name}(): axis must be a constant in [{-rank}, {rank}), got {axis!r}",
                       CompileTypeError)
    axis %= rank
    shape = a.type.shape[:axis] + a.type.shape[axis + 1:] or (1,)
    t = ft.TileT(dtype, shape)
    return Var(wb.tile_reduce(a.value, kind, ft.to_mlir(t), axis if rank > 1 else -1), t)


def _reduce_with_function(em, node, fn_node, a: Var, axis_node) -> Var:
    """wp.tile_reduce(f, t, axis=None) with a @wp.func `f(a, b)` of two elements, in Warp's order (f need not be
    associative, nor have an identity). The whole tile (a tile of shape (1,)): with one lane the fold
    f(...f(f(t0, t1), t2)..., tn) in row-major order; with Warp's CPU lanes each lane's fold of its elements
    (l, l + block_dim, ...), then the lanes' partials folded in lane order. Along an axis of a 2-d tile: the first
    row (column) folded with each next one by a tile_map of f, in a loop."""
    dtype, shape = a.type.dtype, a.type.shape
    i32 = ft.to_mlir(wt.int32)
    rank = len(shape)
    axis = None if axis_node is None else _constant(em, axis_node)
    if axis is not None and (type(axis) is not int or not -rank <= axis < rank):
        raise em.error(node, f"wp.tile_reduce(): axis must be a constant in [{-rank}, {rank}), got {axis!r}",
                       CompileTypeError)
    index = ir.IndexType.get()

    def constant(n):
        return arith.ConstantOp(index, n).result

    if axis is None or rank == 1:
        n = math.prod(shape)
        flat = a.value if rank == 1 else wb.create("tile_reshape", a.value, results=[ft.to_mlir(ft.TileT(dtype, (n,)))]
                                                   ).result

        def element(i):  # (an index)
            return wb.create("tile_extract", flat, [arith.IndexCastOp(i32, i).result], results=[ft.to_mlir(dtype)]).result

        def fold(start, step):
            """f folded over the elements start, start + step, ... (start an index)."""
            loop = scf.ForOp(arith.AddIOp(start, constant(step)).result, constant(n), constant(step), [element(start)])
            with ir.InsertionPoint(loop.body):
                x = Var(element(loop.induction_variable), dtype)
                out = _call_on(em, node, fn_node, [Var(loop.inner_iter_args[0], dtype), x], dtype)
                scf.YieldOp([out.value])
            return loop.results[0]

        width = lanes(em)
        if width == 1 or n <= 1:
            total = fold(constant(0), 1)
        else:  # Warp's lanes: lane l folds elements l, l + width, ...; then the lanes' partials, in lane order
            loop = scf.ForOp(constant(1), constant(min(width, n)), constant(1), [fold(constant(0), width)])
            with ir.InsertionPoint(loop.body):
                partial = Var(fold(loop.induction_variable, width), dtype)
                out = _call_on(em, node, fn_node, [Var(loop.inner_iter_args[0], dtype), partial], dtype)
                scf.YieldOp([out.value])
            total = loop.results[0]
        t = ft.TileT(dtype, (1,))
        return Var(wb.create("tile_full", total, results=[ft.to_mlir(t)]).result, t)
    if rank != 2:
        raise em.error(node, f"wp.tile_reduce() with a @wp.func along an axis takes a 1-d or 2-d tile here, got "
                             f"{a.type}", CompileTypeError)
    tiles = a.value
    rows, cols = shape
    if axis % 2 == 1:  # fold the columns: the transposed tile's rows
        tiles = wb.create("tile_transpose", tiles, results=[ft.to_mlir(ft.TileT(dtype, (cols, rows)))]).result
        rows, cols = cols, rows
    row_t = ft.TileT(dtype, (cols,))
    zero = arith.ConstantOp(i32, 0).result

    def row(i):
        return wb.tile_view(tiles, [i, zero], ft.to_mlir(row_t))

    loop = scf.ForOp(constant(1), constant(rows), constant(1), [row(zero)])
    with ir.InsertionPoint(loop.body):
        i = arith.IndexCastOp(i32, loop.induction_variable).result
        folded = map_function(em, node, fn_node, [Var(loop.inner_iter_args[0], row_t), Var(row(i), row_t)], (cols,))
        if folded.type != row_t:
            raise em.error(node, f"wp.tile_reduce(): the @wp.func returns {ft.name(folded.type.dtype)}, the tile holds "
                                 f"{ft.name(dtype)}", CompileTypeError)
        scf.YieldOp([folded.value])
    return Var(loop.results[0], row_t)


def _call_bound(em, node, fn_node, values: list, allow_tuple: bool = False):
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


def _call_on(em, node, fn_node, values: list, dtype) -> Var:
    """The @wp.func at `fn_node` called on `values` (Vars) at the insertion point; its result must be a `dtype`."""
    out = _call_bound(em, node, fn_node, values)
    if not isinstance(out, Var) or out.type != dtype:
        raise em.error(node, f"wp.tile_reduce(): the @wp.func returns {ft.name(getattr(out, 'type', out))}, the tile "
                             f"holds {ft.name(dtype)}", CompileTypeError)
    return out


def _matmul_overload(em, node, args) -> dict:
    """Warp's two forms: tile_matmul(a, b, out, alpha=1.0, beta=1.0, precision="default") and tile_matmul(a, b,
    alpha=1.0, precision="default"), told apart by the third positional argument (a tile or not). The precision is
    checked; "tf32" computes as "default" here (as Warp on the CPU: float32 tiles)."""
    if len(node.args) > 2 and not _names_a_tile(em, node.args[2]):
        if len(node.args) > 4:
            raise em.error(node, f"wp.tile_matmul(a, b, alpha, precision) takes at most 4 arguments, got "
                                 f"{len(node.args)}", CompileTypeError)
        if any(kw.arg in ("out", "beta") for kw in node.keywords):
            raise em.error(node, "wp.tile_matmul(): a third positional argument that is not a tile is 'alpha'; "
                                 "pass 'out' as the third to accumulate", CompileTypeError)
        given = {kw.arg: kw.value for kw in node.keywords}
        for param, value in zip(("alpha", "precision"), node.args[2:]):
            if param in given:
                raise em.error(node, f"wp.tile_matmul() got multiple values for argument '{param}'", CompileTypeError)
            given[param] = value
        args = {**args, "out": None, "beta": 1.0, "alpha": given.get("alpha", 1.0),
                "precision": given.get("precision", "default")}
    precision = _constant(em, args["precision"])
    if precision not in ("default", "tf32"):
        got = "a non-literal argument" if precision is MISSING else repr(precision)
        raise em.error(node, f"tile_matmul() precision must be the string literal 'default' or 'tf32', got {got}",
                       CompileValueError)
    return {**args, "precision": precision}


def _names_a_tile(em, node) -> bool:
    """Whether the expression is a tile; a variable or a constant is told without emitting anything."""
    if isinstance(node, ast.Name) and node.id in em.env:
        return is_tile(em.env[node.id])
    if _constant(em, node) is not MISSING:
        return False
    return is_tile(em.expr(node))


def _matmul(em, node, args) -> Var | None:
    a = _tile(em, args["a"], "tile_matmul", "a")
    b = _tile(em, args["b"], "tile_matmul", "b")
    if len(a.type.shape) != 2 or len(b.type.shape) != 2 or a.type.shape[1] != b.type.shape[0]:
        raise em.error(node, f"wp.tile_matmul(): shapes {a.type.shape} and {b.type.shape} do not multiply "
                             f"(2-d tiles, a's columns = b's rows)", CompileTypeError)
    complex_types = (wv.vector(2, wt.float16), wv.vector(2, wt.float32), wv.vector(2, wt.float64))
    if a.type.dtype in complex_types or b.type.dtype in complex_types or (
            args["out"] is not None and _element_type_of(em, args["out"]) in complex_types):
        raise em.error(node, "tile_matmul() does not support complex tiles (vec2h, vec2f, vec2d). Complex matrix "
                             "multiplication is not implemented; use real float tiles (float16, bfloat16, float32, "
                             "or float64).", CompileTypeError)
    tf32_refusal = em.error(node, "tile_matmul() precision='tf32' requires float32 tiles for a, b, and out",
                            CompileTypeError)
    if args["precision"] == "tf32" and (a.type.dtype, b.type.dtype) != (wt.float32, wt.float32):
        raise tf32_refusal
    if wt.bfloat16 in (a.type.dtype, b.type.dtype):  # the adjoint would accumulate adj_a / adj_b in bfloat16
        em.program.backward_refusals.append(em.error(
            node, "tile_matmul() does not support bfloat16 'a' or 'b' tiles when the backward pass is enabled. "
                  "Allowed accumulator dtypes are float16, float32, and float64 (the backward pass uses 'a' and 'b' "
                  "as accumulators for adjA and adjB). If gradients are not needed, set `enable_backward=False` on "
                  "the kernel's module.", CompileTypeError))
    shape = (a.type.shape[0], b.type.shape[1])
    out_dtype = a.type.dtype if args["out"] is None else None
    alpha, beta = _constant(em, args["alpha"]), _constant(em, args["beta"])
    out_node = args["out"]
    if out_dtype is wt.bfloat16 or (out_node is not None and _element_type_of(em, out_node) is wt.bfloat16):
        raise em.error(node, "tile_matmul() does not support a bfloat16 'out' tile. Allowed 'out' dtypes are "
                             "float16, float32, and float64.", CompileTypeError)
    if out_node is None:
        t = ft.TileT(a.type.dtype, shape)
        zero = wb.create("tile_full", em.const(0, t.dtype).value, results=[ft.to_mlir(t)]).result
        product = Var(wb.create("tile_matmul", a.value, b.value, zero, results=[ft.to_mlir(t)]).result, t)
        return product if alpha == 1 else _scaled(em, node, product, args["alpha"])
    out = _tile(em, out_node, "tile_matmul", "out")
    if args["precision"] == "tf32" and out.type.dtype is not wt.float32:
        raise tf32_refusal
    if out.type.shape != shape:
        raise em.error(node, f"wp.tile_matmul(): 'out' has shape {out.type.shape}, a @ b {shape}", CompileTypeError)
    if not updatable(em, out_node):
        raise em.error(node, "wp.tile_matmul(a, b, out): 'out' must be a tile variable (it is updated in place)",
                       CompileTypeError)
    t = out.type
    if alpha == 1 and beta == 1:  # out += a @ b
        result = Var(wb.create("tile_matmul", a.value, b.value, out.value, results=[ft.to_mlir(t)]).result, t)
    else:  # alpha * (a @ b) + beta * out; beta = 0 ignores out (NaN included), as Warp
        zero = wb.create("tile_full", em.const(0, t.dtype).value, results=[ft.to_mlir(t)]).result
        product = Var(wb.create("tile_matmul", a.value, b.value, zero, results=[ft.to_mlir(t)]).result, t)
        scaled = product if alpha == 1 else _scaled(em, node, product, args["alpha"])
        if beta == 0:
            result = scaled
        elif beta is MISSING:  # a value known at run time: 0 still ignores out
            b = Var(_scalar(em, args["beta"], t.dtype, "tile_matmul"), t.dtype)
            zero_beta = arith.CmpFOp(arith.CmpFPredicate.OEQ, b.value, em.const(0, t.dtype).value).result \
                if wt.is_float(t.dtype) else arith.CmpIOp(arith.CmpIPredicate.eq, b.value, em.const(0, t.dtype).value).result
            branch = scf.IfOp(zero_beta, [ft.to_mlir(t)], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([scaled.value])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([elementwise(em, node, "add", [scaled, _scaled(em, node, out, args["beta"])]).value])
            result = Var(branch.results[0], t)
        else:
            kept = out if beta == 1 else _scaled(em, node, out, args["beta"])
            result = elementwise(em, node, "add", [scaled, kept])
    write_back(em, out_node, result)
    return None


def _element_type_of(em, node):
    v = em.env.get(node.id) if isinstance(node, ast.Name) else None
    return v.type.dtype if is_tile(v) else None


def _scaled(em, node, tile: Var, factor) -> Var:
    return elementwise(em, node, "mul", [tile, Var(_scalar(em, factor, tile.type.dtype, "tile_matmul"), tile.type.dtype)])


def _name(t) -> str:
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


def _stack(em, node, name, args):
    """wp.tile_stack and its operations with one lane per block: a stack is the pair (a tile of `capacity` slots,
    the count), a tuple the frontend carries through branches and loops part by part; push, pop and clear rebind
    the stack's variable (Warp's stacks are block-shared state)."""
    if name == "tile_stack":
        capacity = _constant(em, args["capacity"])
        if capacity is MISSING:
            raise em.error(node, "wp.tile_stack() requires capacity to be a compile-time constant", CompileValueError)
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:  # (Warp's words)
            raise em.error(node, f"wp.tile_stack() requires capacity to be a positive integer, got {capacity!r}",
                           CompileValueError)
        dtype = _dtype(em, args["dtype"], name, None)
        if lanes(em) > 1:  # the count is block-shared too: a tile of one element the lanes update in turn
            return TupleVar([zeros(ft.TileT(dtype, (capacity,))), zeros(ft.TileT(wt.int32, (1,)))])
        return TupleVar([zeros(ft.TileT(dtype, (capacity,))), em.const(0, wt.int32)])
    stack = em.expr(args["s"], allow_tuple=True)
    count_type = ft.TileT(wt.int32, (1,)) if lanes(em) > 1 else wt.int32
    if not (isinstance(stack, TupleVar) and len(stack.parts) == 2 and is_tile(stack.parts[0])
            and stack.parts[1].type == count_type):
        raise em.error(node, f"wp.{name}(): 's' must be a stack made by wp.tile_stack", CompileTypeError)
    data, count = stack.parts
    capacity = data.type.shape[0]
    i32 = ft.to_mlir(wt.int32)

    def const(n):
        return arith.ConstantOp(i32, n).result

    if lanes(em) > 1:
        return _lane_stack(em, node, name, args, data, count, const)
    if name == "tile_stack_count":
        return count
    if name == "tile_stack_clear":
        new = TupleVar([data, em.const(0, wt.int32)])
    elif name == "tile_stack_push":
        value = _push_value(em, node, args, data)
        has = em.to_bool(em.expr(args["has_value"])).value
        room = arith.CmpIOp(arith.CmpIPredicate.slt, count.value, const(capacity)).result
        push = arith.AndIOp(has, room).result
        branch = scf.IfOp(push, [data.value.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_insert", data.value, value.value, [count.value],
                                   results=[data.value.type]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([data.value])
        slot = arith.SelectOp(push, count.value, const(-1)).result
        grown = arith.AddIOp(count.value, arith.ExtUIOp(i32, push).result).result
        new = TupleVar([Var(branch.results[0], data.type), Var(grown, wt.int32)])
        result = Var(slot, wt.int32)
    else:  # pop: the last pushed value and its slot, or (zero, -1) when empty
        some = arith.CmpIOp(arith.CmpIPredicate.sgt, count.value, const(0)).result
        top = arith.MaxSIOp(arith.SubIOp(count.value, const(1)).result, const(0)).result
        element_t = ft.to_mlir(data.type.dtype)
        branch = scf.IfOp(some, [element_t], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_extract", data.value, [top], results=[element_t]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([_zero_value(data.type.dtype)])
        slot = arith.SelectOp(some, top, const(-1)).result
        shrunk = arith.SubIOp(count.value, arith.ExtUIOp(i32, some).result).result
        new = TupleVar([data, Var(shrunk, wt.int32)])
        result = TupleVar([Var(branch.results[0], data.type.dtype), Var(slot, wt.int32)])
    if not isinstance(args["s"], ast.Name):
        raise em.error(node, f"wp.{name}(): the stack must be a variable", CompileTypeError)
    em.assign(args["s"], new)
    return None if name == "tile_stack_clear" else result


def _push_value(em, node, args, data):
    """tile_stack_push's value, of the stack's dtype (Warp's rule: no conversion, a float pushed on an int stack
    is refused)."""
    value = em.expr(args["value"])
    if value.type is not data.type.dtype:
        raise em.error(node, f"wp.tile_stack_push(): the value's type {_name(value.type)} does not match the "
                             f"stack's dtype {_name(data.type.dtype)}", CompileTypeError)
    return value


def _lane_stack(em, node, name, args, data, count_tile, const):
    """The stack operations with several lanes per block, as Warp's CPU fibers run them: a barrier, then each lane
    in turn pushes (or pops) one value, its slot its own, then a barrier, so every lane sees the same count after.
    The count is a tile of one element; a push past the capacity (or a pop of an empty stack) gets slot -1."""
    i32 = ft.to_mlir(wt.int32)
    zero = const(0)
    if name == "tile_stack_count":
        return Var(wb.create("tile_extract", count_tile.value, [zero], results=[i32]).result, wt.int32)
    sync(em)
    count = wb.create("tile_extract", count_tile.value, [zero], results=[i32]).result
    capacity = data.type.shape[0]
    result = None
    if name == "tile_stack_clear":
        data_out, count_out = data.value, const(0)
    elif name == "tile_stack_push":
        value = _push_value(em, node, args, data)
        has = em.to_bool(em.expr(args["has_value"])).value
        room = arith.CmpIOp(arith.CmpIPredicate.slt, count, const(capacity)).result
        push = arith.AndIOp(has, room).result
        branch = scf.IfOp(push, [data.value.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_insert", data.value, value.value, [count],
                                   results=[data.value.type]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([data.value])
        data_out = branch.results[0]
        count_out = arith.AddIOp(count, arith.ExtUIOp(i32, push).result).result
        result = Var(arith.SelectOp(push, count, const(-1)).result, wt.int32)
    else:  # pop: the last pushed value and its slot, or (zero, -1) when empty
        some = arith.CmpIOp(arith.CmpIPredicate.sgt, count, const(0)).result
        top = arith.MaxSIOp(arith.SubIOp(count, const(1)).result, const(0)).result
        element_t = ft.to_mlir(data.type.dtype)
        branch = scf.IfOp(some, [element_t], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_extract", data.value, [top], results=[element_t]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([_zero_value(data.type.dtype)])
        data_out = data.value
        count_out = arith.SubIOp(count, arith.ExtUIOp(i32, some).result).result
        result = TupleVar([Var(branch.results[0], data.type.dtype),
                           Var(arith.SelectOp(some, top, const(-1)).result, wt.int32)])
    counted = wb.create("tile_insert", count_tile.value, count_out, [zero], results=[count_tile.value.type]).result
    sync(em)
    if not isinstance(args["s"], ast.Name):
        raise em.error(node, f"wp.{name}(): the stack must be a variable", CompileTypeError)
    em.assign(args["s"], TupleVar([Var(data_out, data.type), Var(counted, count_tile.type)]))
    return result


def _scatter(em, node, name):
    """wp.tile_scatter_add(a, i, ..., value, has_value, atomic=True) / wp.tile_scatter_masked(a, i, ..., value,
    has_value) with one lane per block: when has_value, element (i, ...) of `a` becomes a[i, ...] + value (or
    value); the tile's variable is rebound (Warp updates the shared tile in place). The update is a branch on
    has_value around tile_extract / tile_insert, so an index that is invalid while has_value is false is never
    touched, and warp-autodiff differentiates it through those ops (the value's adjoint is the tile's at (i, ...);
    a masked write clears it there)."""
    keywords = {kw.arg: kw.value for kw in node.keywords}
    allowed = {"a", "i", "j", "k", "l", "value", "has_value"} | ({"atomic"} if name == "tile_scatter_add" else set())
    for kw in keywords:
        if kw not in allowed:
            raise em.error(node, f"wp.{name}() got an unexpected keyword argument '{kw}'", CompileTypeError)
    positional = list(node.args)
    target = positional.pop(0) if positional else keywords.pop("a", None)
    if target is None:
        raise em.error(node, f"wp.{name}() missing required argument 'a'", CompileTypeError)
    tile = _tile(em, target, name, "a")
    rank = len(tile.type.shape)
    extra = ["atomic"] if name == "tile_scatter_add" else []
    # the indices: the positional arguments before value and has_value (and atomic, when all are positional)
    trailing = sum(n not in keywords for n in ("value", "has_value"))
    count = len(positional) - trailing - (1 if extra and "atomic" not in keywords and
                                          len(positional) == rank + trailing + 1 else 0)
    count += sum(n in keywords for n in "ijkl")
    if count != rank:
        prefix = "tile_scatter_add:" if name == "tile_scatter_add" else "tile_scatter_masked()"
        raise em.error(node, f"{prefix} incorrect number of indices ({count}) for tile shape {tile.type.shape}",
                       CompileTypeError)
    names = ["i", "j", "k", "l"][:rank] + ["value", "has_value"] + extra
    bound = dict(zip(names, positional))
    for kw, v in keywords.items():
        if kw not in names or kw in bound:
            raise em.error(node, f"wp.{name}() got an unexpected keyword argument '{kw}'" if kw not in names else
                           f"wp.{name}() got multiple values for argument '{kw}'", CompileTypeError)
        bound[kw] = v
    for n in ("value", "has_value"):
        if n not in bound:
            raise em.error(node, f"wp.{name}() missing required argument '{n}'", CompileTypeError)
    if "atomic" in bound and not isinstance(_constant(em, bound["atomic"]), bool):
        raise em.error(node, "tile_scatter_add() 'atomic' must be a compile-time constant (True or False), not a "
                             "runtime variable", CompileTypeError)
    value = em.expr(bound["value"])
    if value.type is not tile.type.dtype:
        raise em.error(node, f"{name}() 'value' type must match tile dtype, got {ft.name(value.type)} and tile dtype "
                             f"{ft.name(tile.type.dtype)}", CompileTypeError)
    has = em.to_bool(em.expr(bound["has_value"])).value
    indices = [_int32(em, bound[n]) for n in names[:rank]]
    element_t = ft.to_mlir(tile.type.dtype)
    sync(em)  # with several lanes: each lane's update in turn, between barriers (Warp's fibers)
    branch = scf.IfOp(has, [tile.value.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        new = value.value
        if name == "tile_scatter_add":
            old = wb.create("tile_extract", tile.value, indices, results=[element_t]).result
            new = wb.builtin("add", [old, value.value], element_t)
        scf.YieldOp([wb.create("tile_insert", tile.value, new, indices, results=[tile.value.type]).result])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([tile.value])
    sync(em)
    if not updatable(em, target):
        raise em.error(node, f"wp.{name}(): the tile it updates must be a variable", CompileTypeError)
    write_back(em, target, Var(branch.results[0], tile.type))
    return None


def _assign_tile(em, node) -> None:
    """wp.tile_assign(dst, src, offset=None): `src` written into `dst` at `offset` (default the origin;
    warp.tile_insert_view), its elements converted to dst's type; wp.tile_assign(dst, i, ..., value): one element
    (tile_insert). `dst`'s variable is rebound (Warp writes it in place)."""
    keywords = {kw.arg: kw.value for kw in node.keywords}
    for kw in keywords:
        if kw not in ("dst", "src", "offset"):
            raise em.error(node, f"wp.tile_assign() got an unexpected keyword argument '{kw}'", CompileTypeError)
    positional = list(node.args)
    target = positional.pop(0) if positional else keywords.get("dst")
    if target is None:
        raise em.error(node, "wp.tile_assign() missing required argument 'dst'", CompileTypeError)
    dst = _tile(em, target, "tile_assign", "dst")
    if not updatable(em, target):
        raise em.error(node, "wp.tile_assign(): 'dst' is written in place: it must be a variable", CompileTypeError)
    shape = dst.type.shape
    src_node = keywords.get("src", positional[0] if positional else None)
    src = em.expr(src_node) if src_node is not None else None
    if src is not None and is_tile(src) and len(positional) <= 2:
        offset_node = keywords.get("offset", positional[1] if len(positional) > 1 else None)
        if len(src.type.shape) != len(shape):
            raise em.error(node, f"tile_assign() destination and source tiles must have the same rank, got "
                                 f"{len(shape)} and {len(src.type.shape)}", CompileValueError)
        if offset_node is None and any(a > b for a, b in zip(src.type.shape, shape)):
            raise em.error(node, f"tile_assign() source tile of shape {src.type.shape} does not fit within "
                                 f"destination tile of shape {shape}", CompileValueError)
        if src.type.dtype is not dst.type.dtype:
            if wt.is_composite(src.type.dtype) or wt.is_composite(dst.type.dtype):
                raise em.error(node, f"tile_assign() of a tile of {ft.name(src.type.dtype)} into a tile of "
                                     f"{ft.name(dst.type.dtype)}", CompileTypeError)
            converted = ft.TileT(dst.type.dtype, src.type.shape)
            src = Var(wb.create("cast", src.value, results=[ft.to_mlir(converted)]).result, converted)
        offsets = _offsets(em, offset_node, len(shape), "tile_assign")
        for d, item in enumerate(offset_node.elts if isinstance(offset_node, ast.Tuple) else
                                 ([offset_node] if offset_node is not None else [])):
            value = _constant(em, item)
            if type(value) is int and not 0 <= value <= shape[d] - src.type.shape[d]:
                raise em.error(node, f"tile_assign(): a source of shape {src.type.shape} at offset {value} of "
                                     f"dimension {d} lies outside the destination's extent {shape[d]}",
                               CompileValueError)
        updated = wb.tile_insert_view(dst.value, src.value, offsets)
    else:  # tile_assign(dst, i, ..., value)
        if "src" in keywords or "offset" in keywords or len(positional) != len(shape) + 1:
            raise em.error(node, f"wp.tile_assign() takes a source tile (and an offset), or one index per dimension "
                                 f"of the tile {shape} and a value", CompileTypeError)
        value = em.expr(positional[-1])
        if value.type is not dst.type.dtype:
            value = em.convert(value, dst.type.dtype, node)
        indices = [_int32(em, i) for i in positional[:-1]]
        updated = wb.create("tile_insert", dst.value, value.value, indices, results=[dst.value.type]).result
    write_back(em, target, Var(updated, dst.type))
    return None


SORT_KEYS = (wt.float32, wt.int32, wt.uint32, wt.int64, wt.uint64)


def _sort(em, node, args) -> None:
    """wp.tile_sort(keys, values): both tiles sorted in place by the keys (warp.tile_sort); the two variables
    are rebound."""
    keys, values = em.expr(args["keys"]), em.expr(args["values"])
    if not is_tile(keys):
        raise em.error(node, f"First tile_sort() argument must be a tile, got {ft.name(keys.type)}", CompileTypeError)
    if not is_tile(values):
        raise em.error(node, f"Second tile_sort() argument must be a tile, got {ft.name(values.type)}",
                       CompileTypeError)
    if keys.type.dtype not in SORT_KEYS:
        raise em.error(node, f"First tile_sort() argument must be a tile of type float32, int32, uint32, int64, or "
                             f"uint64, got {ft.name(keys.type.dtype)}", CompileTypeError)
    a, b = keys.type.shape, values.type.shape
    if len(a) != len(b):
        raise em.error(node, f"tile_sort() shapes must have the same number of dimensions, got {len(a)} and "
                             f"{len(b)}", CompileValueError)
    for d in range(len(a)):
        if a[d] != b[d]:
            raise em.error(node, f"tile_sort() shapes do not match on dimension {d}, got {a} and {b}",
                           CompileValueError)
    for p in ("keys", "values"):
        if not updatable(em, args[p]):
            raise em.error(node, f"wp.tile_sort(): '{p}' is sorted in place: it must be a variable", CompileTypeError)
    op = wb.create("tile_sort", keys.value, values.value, results=[keys.value.type, values.value.type])
    write_back(em, args["keys"], Var(op.results[0], keys.type))
    write_back(em, args["values"], Var(op.results[1], values.type))
    return None


def _random(em, node, name, args) -> Var:
    """wp.tile_randi / wp.tile_randf(shape, rng, min=None, max=None): warp.tile_random from the uint32 state
    (which the call does not advance, as Warp's, which takes it by value)."""
    shape = _shape(em, args["shape"], name)
    rng = em.expr(args["rng"])
    if rng.type is not wt.uint32:
        raise em.error(node, f"wp.{name}(): 'rng' must be a uint32 generator state (wp.rand_init), got "
                             f"{ft.name(rng.type)}", CompileTypeError)
    dtype = wt.int32 if name == "tile_randi" else wt.float32
    if len(node.args) == 3 and args["max"] is None:  # Warp's overload (shape, rng, storage)
        if any(kw.arg == "storage" for kw in node.keywords):
            raise em.error(node, f"wp.{name}() got multiple values for argument 'storage'", CompileTypeError)
        args = {**args, "min": None, "storage": args["min"]}
    if _constant(em, args["storage"]) not in ("register", "shared"):
        raise em.error(node, f"wp.{name}(): storage must be 'register' or 'shared', got "
                             f"{_constant(em, args['storage'])!r}", CompileValueError)
    given = [args["min"] is not None, args["max"] is not None]
    if any(given) and not all(given):
        raise em.error(node, f"wp.{name}(): pass both 'min' and 'max' or neither", CompileTypeError)
    bounds = [em.cast(em.expr(args[k]), dtype, node).value for k in ("min", "max")] if all(given) else []
    result = ft.TileT(dtype, shape)
    return Var(wb.create("tile_random", rng.value, bounds, results=[ft.to_mlir(result)],
                         attributes={"kind": ir.StringAttr.get(name[5:])}).result, result)


def _zero_value(dtype) -> ir.Value:
    if wt.is_composite(dtype):
        return wc.construct(ft.to_mlir(dtype), [])
    t = ft.to_mlir(dtype)
    return arith.ConstantOp(t, 0.0 if wt.is_float(dtype) else 0).result


def _linear_algebra(em, node, name, args):
    """tile_cholesky, the triangular solves and tile_cholesky_solve (warp.tile_cholesky, warp.tile_solve); an
    _inplace form rebinds its argument to the result."""
    def square(param):
        m = _tile(em, args[param], name, param)
        if len(m.type.shape) != 2 or m.type.shape[0] != m.type.shape[1] or m.type.dtype not in (wt.float32,
                                                                                                    wt.float64):
            raise em.error(node, f"wp.{name}(): '{param}' must be a square 2-d tile of float32 or float64, got "
                                 f"{m.type}", CompileTypeError)
        return m

    def fill():
        mode = _constant(em, args.get("fill_mode", "lower"))
        if mode not in ("lower", "upper"):
            raise em.error(node, f"wp.{name}(): fill_mode must be the constant \"lower\" or \"upper\", got {mode!r}",
                           CompileTypeError)
        return mode

    def solve(m, y, form):
        return Var(wb.create("tile_solve", m.value, y.value, results=[ft.to_mlir(y.type)],
                             attributes={"form": ir.StringAttr.get(form)}).result, y.type)

    base = name[:-len("_inplace")] if name.endswith("_inplace") else name
    if base == "tile_cholesky":
        a = square("A")
        result = Var(wb.create("tile_cholesky", a.value, results=[ft.to_mlir(a.type)],
                               attributes={"fill": ir.StringAttr.get(fill())}).result, a.type)
        target = args["A"]
    else:
        param, rhs = ("U", "z") if base == "tile_upper_solve" else ("L", "y")
        m = square(param)
        y = _tile(em, args[rhs], name, rhs)
        if y.type.dtype is not m.type.dtype or len(y.type.shape) not in (1, 2) or y.type.shape[0] != m.type.shape[0]:
            raise em.error(node, f"wp.{name}(): '{rhs}' must be a tile of shape ({m.type.shape[0]},) or "
                                 f"({m.type.shape[0]}, k) of {ft.name(m.type.dtype)}, got {y.type}", CompileTypeError)
        if base == "tile_lower_solve":
            result = solve(m, y, "lower")
        elif base == "tile_upper_solve":
            result = solve(m, y, "upper")
        elif fill() == "lower":  # A = L L^T: L z = y, then L^T x = z
            result = solve(m, solve(m, y, "lower"), "lower_t")
        else:  # A = U^T U: U^T z = y, then U x = z
            result = solve(m, solve(m, y, "upper_t"), "upper")
        target = args[rhs]
    if name == base:
        return result
    if not updatable(em, target):
        raise em.error(node, f"wp.{name}(): the tile it overwrites must be a variable", CompileTypeError)
    write_back(em, target, result)
    return None


def _dense_strides(shape) -> tuple:
    return tuple(math.prod(shape[d + 1:]) for d in range(len(shape)))


def _reshape(em, node, name, args) -> Var:
    t = _tile(em, args["t"], name, "t")
    shape = t.type.shape
    strides = getattr(t, "strides", None)  # a view's (tile_views.py): Warp reshapes a view in place, dense ones only
    if strides is not None and any(n != 1 and s != d for n, s, d in zip(shape, strides, _dense_strides(shape))):
        raise em.error(node, f"tile_reshape() requires a contiguous tile; a tile view with shape {shape} and strides "
                             f"{strides} cannot be reshaped in place. Copy the view into a new tile first, e.g. with "
                             f"wp.tile_assign().", CompileValueError)
    if name == "tile_squeeze":
        axis = _constant(em, args["axis"]) if args["axis"] is not None else None
        axes = tuple(range(len(shape))) if axis is None else (axis,) if type(axis) is int else axis
        if not isinstance(axes, tuple) or any(type(a) is not int for a in axes):
            raise em.error(node, "wp.tile_squeeze(): axis must be a constant int or tuple of ints", CompileTypeError)
        for a in axes:
            if not -len(shape) <= a < len(shape):
                raise em.error(node, f"tile_squeeze() axis {a} is out of bounds for tile with {len(shape)} dimensions",
                               CompileValueError)
        axes = {a % len(shape) for a in axes}
        if axis is not None and any(shape[a] != 1 for a in axes):
            raise em.error(node, f"wp.tile_squeeze(): axis {axis} of a tile of shape {shape} is not of length 1",
                           CompileTypeError)
        new = tuple(n for k, n in enumerate(shape) if not (k in axes and n == 1)) or (1,)
    else:
        value = _constant(em, args["shape"])
        value = (value,) if type(value) is int else value
        if not isinstance(value, tuple) or any(type(d) is not int for d in value):
            raise em.error(node, "wp.tile_reshape(): the shape must be a constant int or tuple of ints",
                           CompileTypeError)
        total = math.prod(shape)
        if value.count(-1) == 1:
            known = math.prod(d for d in value if d != -1)
            value = tuple(total // known if d == -1 else d for d in value)
        if math.prod(value) != total or any(d <= 0 for d in value):
            raise em.error(node, f"wp.tile_reshape(): cannot reshape a tile of shape {shape} into {value}",
                           CompileTypeError)
        new = value
    result = ft.TileT(t.type.dtype, new)
    return Var(wb.create("tile_reshape", t.value, results=[ft.to_mlir(result)]).result, result)


def zeros(t: ft.TileT) -> Var:
    """A tile of type `t` holding zeros (what a @wp.func's tile result holds before its `return`)."""
    if wt.is_composite(t.dtype):
        zero = wc.construct(ft.to_mlir(t.dtype), [])
    elif getattr(t.dtype, "_kind_", None) == "uint":
        zero = wb.int_constant(ft.to_mlir(t.dtype), 0)
    else:
        zero = arith.ConstantOp(ft.to_mlir(t.dtype), 0.0 if wt.is_float(t.dtype) else 0).result
    return Var(wb.create("tile_full", zero, results=[ft.to_mlir(t)]).result, t)


def _tile_untile(em, node, name) -> Var:
    """wp.tile(x, preserve_type=False) / wp.untile(t) with one lane per block: a scalar (or, with preserve_type, a
    composite) as a tile of shape (1,); a vector's (quaternion's, transform's) components as (n, 1), a matrix's as
    (r, c, 1)."""
    width = lanes(em)  # with several lanes, element k along the last dimension is lane k's
    if name == "untile":
        if node.keywords or len(node.args) != 1:
            raise em.error(node, "wp.untile() takes one argument", CompileTypeError)
        t = _tile(em, node.args[0], name, "a")
        i32 = [em.const(k, wt.int32).value for k in range(max(t.type.shape) + 1)]
        if width > 1:
            i32[0] = lane_index(em)
        if t.type.shape == (width,):
            return Var(wb.create("tile_extract", t.value, [i32[0]], results=[ft.to_mlir(t.type.dtype)]).result,
                       t.type.dtype)
        if t.type.shape[-1] != width or len(t.type.shape) not in (2, 3) or not wt.is_scalar(t.type.dtype):
            raise em.error(node, f"wp.untile() takes a tile made by wp.tile (one value per lane), got {t.type}",
                           CompileTypeError)
        dims = t.type.shape[:-1]
        target = wv.vector(dims[0], t.type.dtype) if len(dims) == 1 else wv.matrix(dims, t.type.dtype)
        positions = [(k,) for k in range(dims[0])] if len(dims) == 1 else \
            [(r, c) for r in range(dims[0]) for c in range(dims[1])]
        parts = [wb.create("tile_extract", t.value, [i32[k] for k in p] + [i32[0]],
                           results=[ft.to_mlir(t.type.dtype)]).result for p in positions]
        return Var(wc.construct(ft.to_mlir(target), parts), target)
    extra = [kw.arg for kw in node.keywords if kw.arg != "preserve_type"]
    if extra or len(node.args) not in (1, 2):
        raise em.error(node, "wp.tile() takes a value and preserve_type=", CompileTypeError)
    preserve = _constant(em, next((kw.value for kw in node.keywords if kw.arg == "preserve_type"),
                                  node.args[1] if len(node.args) > 1 else False))
    v = em.expr(node.args[0])
    if not _scalar_element(v.type):
        raise em.error(node, f"wp.tile(): {HOLDS}, got {ft.name(v.type)}", CompileTypeError)
    if (wt.is_scalar(v.type) or preserve) and width == 1:
        t = ft.TileT(v.type, (1,))
        return Var(wb.create("tile_full", v.value, results=[ft.to_mlir(t)]).result, t)
    whole = wt.is_scalar(v.type) or preserve
    scalar = v.type if whole else v.type._wp_scalar_type_
    dims = () if whole else tuple(v.type._shape_)
    t = ft.TileT(scalar, dims + (width,))
    # with several lanes each lane writes its own element (the block's tile made first), then a barrier
    out = zeros(t).value
    positions = [()] if whole else [(k,) for k in range(dims[0])] if len(dims) == 1 else \
        [(r, c) for r in range(dims[0]) for c in range(dims[1])]
    i32 = [em.const(k, wt.int32).value for k in range(max(dims, default=0) + 1)]
    at = lane_index(em) if width > 1 else i32[0]
    for p in positions:
        part = v.value if whole else wc.extract(v.value, [i32[k] for k in p], ft.to_mlir(scalar))
        out = wb.create("tile_insert", out, part, [i32[k] for k in p] + [at], results=[ft.to_mlir(t)]).result
    sync(em)
    return Var(out, t)


def _from_thread(em, node, args) -> Var:
    """wp.tile_from_thread(shape, value, thread_idx, storage): a tile filled with lane `thread_idx`'s value. With
    several lanes, each lane writes its value into a block-shared tile of one element per lane, a barrier, then
    every lane reads element `thread_idx` (Warp's broadcast through shared memory); with one lane, the value."""
    shape = _shape(em, args["shape"], "tile_from_thread")
    if _constant(em, args["storage"]) not in ("register", "shared"):
        raise em.error(node, f"wp.tile_from_thread(): storage must be 'register' or 'shared', got "
                             f"{_constant(em, args['storage'])!r}", CompileValueError)
    v = em.expr(args["value"])
    if not _scalar_element(v.type):
        raise em.error(node, f"wp.tile_from_thread(): {HOLDS}, got {ft.name(v.type)}", CompileTypeError)
    if v.literal is not None:
        v = em.const(v.literal, v.type)
    lane = em.expr(args["thread_idx"])
    if not wt.is_int(lane.type):
        raise em.error(node, f"wp.tile_from_thread(): thread_idx must be an int, got {ft.name(lane.type)}",
                       CompileTypeError)
    value = v.value
    width = lanes(em)
    if width > 1:
        lane = lane if lane.type is wt.int32 else em.cast(lane, wt.int32, node)
        lanes_t = ft.TileT(v.type, (width,))
        shared = wb.create("tile_insert", zeros(lanes_t).value, value, [lane_index(em)],
                           results=[ft.to_mlir(lanes_t)]).result
        sync(em)
        value = wb.create("tile_extract", shared, [lane.value], results=[ft.to_mlir(v.type)]).result
    t = ft.TileT(v.type, shape)
    return Var(wb.create("tile_full", value, results=[ft.to_mlir(t)]).result, t)


def _tile_map(em, node) -> Var:
    if node.keywords or len(node.args) < 2:
        raise em.error(node, "wp.tile_map() takes an operation and one or more tiles", CompileTypeError)
    op = resolve_path(em.src.func, node.args[0])
    name = getattr(op, "_wp_builtin_", None)
    values = [em.expr(a) for a in node.args[1:]]  # tiles, and constants the same for every element
    if not any(is_tile(v) for v in values):
        raise em.error(node, "wp.tile_map() maps over at least one tile", CompileTypeError)
    if name is not None:
        return elementwise(em, node, name, values, mapped=True)
    if not em.program.is_function(op):
        raise em.error(node, "wp.tile_map() maps a Warp builtin or a @wp.func over tiles", CompileTypeError)
    return map_function(em, node, node.args[0], values, next(v.type.shape for v in values if is_tile(v)))


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
        out = _call_bound(em, node, fn_node, bound, allow_tuple=True)
    outs = out.parts if hasattr(out, "parts") else out if isinstance(out, list) else [out]
    for o in outs:
        if not isinstance(o, Var) or not _scalar_element(o.type):
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
    for a in args:
        if not is_tile(a) and (isinstance(a.type, (ArrayT, ft.TupleT)) or wt.is_struct(a.type)):
            raise em.error(node, f"'{name}' takes tiles, scalars, vectors and matrices, got {ft.name(a.type)}",
                           CompileTypeError)
    shape = shapes.pop()
    elements = [a.type.dtype if is_tile(a) else a.type for a in args]
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
    if not _scalar_element(rt):
        raise em.error(node, f"'{name}' of tiles gives {ft.name(rt)} elements: {HOLDS}",
                       CompileTypeError)
    t = ft.TileT(rt, shape)
    return Var(wb.builtin(name, values, ft.to_mlir(t)), t)


def _broadcastable(src: tuple, dst: tuple) -> bool:
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(reversed(src), reversed(dst)))
