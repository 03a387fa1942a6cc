"""Tile subscripts and views: `t[i, j]` (an element; `t[i, c]` a vector's component, a matrix's row or entry),
`t[i]` (a row), `t[a:b, ::-1]` (numpy's basic slicing), `t[indices, :]` (a gather by a 1-d int tile),
`wp.tile_view(t, offset, shape=None)` and `wp.tile_extract`, read and written, as Warp's "Tiles" page documents.

A view aliases its tile in Warp: writing through it writes the tile, and it sees the tile's later writes. Here a
tile is an SSA value, so a local bound to a view of a tile local (`v = t[2:4, :]`, `row = wp.tile_view(t, (i,))`)
is a TileViewRef: no value of its own, but its root tile local's name and where the view lies in it. Reading it
takes the view of the root's current value (warp.tile_view); an in-place update of it (`v[j] = x`,
`wp.tile_assign(v, src)`, `wp.tile_matmul(a, b, v)`) writes the root (warp.tile_insert_view), so a loop or a branch
carries the root. A view of a view is one view of the root (their offsets and steps composed). Rebinding the root
by a plain assignment detaches its views (each keeps the value it had), as Warp's view keeps the storage it was
taken of. A gather is a copy (Warp's tile_slice_indexed)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from mlwarp.core import types as wt
from mlwarp.core import vector as wv
from mlwarp.core.errors import CompileError, CompileTypeError, CompileValueError

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import tiles
from . import types as ft
from .resolve import MISSING, resolve_path
from .syntax import walk
from .values import Unbound, Var


@dataclass
class TileViewRef:
    """A local bound to a view of the tile local `root`: the view's element (.., j_k, ..) is the root's at
    offsets[d] + steps[d] * j_k over the root's kept dimensions (steps[d] != 0), at offsets[d] over the dropped
    ones. `offsets`: i32 values, one per dimension of the root."""

    root: str
    offsets: list
    steps: tuple
    type: ft.TileT


@dataclass
class ViewVar(Var):
    """A view's value that still knows where it lies in a tile local (bound to a name, it becomes a
    TileViewRef)."""

    root: str = None
    offsets: list = None
    steps: tuple = None
    strides: tuple = None  # each dimension's step in the row-major elements of the tile it is a view of


dense_strides = tiles.dense_strides


def _i32(em, n: int) -> ir.Value:
    return em.const(n, wt.int32).value


def _i32_of(em, v: Var) -> ir.Value:
    return wb.cast(v.value, ft.to_mlir(wt.int32))


# -- the tile a name denotes ------------------------------------------------------------------------------
def read_ref(em, node, ref: TileViewRef) -> ViewVar:
    """The view's value now: the view of its root's current value."""
    root = em.env.get(ref.root)
    if not tiles.is_tile(root):
        reason = root.reason if isinstance(root, Unbound) else f"'{ref.root}' is no longer a tile"
        raise em.error(node, f"the view's tile: {reason}", CompileError)
    value = wb.tile_view(root.value, ref.offsets, ft.to_mlir(ref.type), ref.steps)
    strides = tuple(r * s for r, s in zip(dense_strides(root.type.shape), ref.steps) if s != 0)
    return ViewVar(value, ref.type, root=ref.root, offsets=ref.offsets, steps=ref.steps, strides=strides)


def tile_local(em, name: str):
    """(root name, offsets, steps) of the tile local `name` (a tile or a view of one), or None."""
    v = em.env.get(name)
    if isinstance(v, TileViewRef):
        return v.root, v.offsets, v.steps
    if tiles.is_tile(v):
        return name, [_i32(em, 0) for _ in v.type.shape], (1,) * len(v.type.shape)
    return None


def is_tile_name(em, name: str) -> bool:
    return isinstance(em.env.get(name), TileViewRef) or tiles.is_tile(em.env.get(name))


def write_root(em, name: str, updated: Var) -> bool:
    """`name` (a view local) updated in place to `updated`: its root gets the new elements. False for other
    names."""
    ref = em.env.get(name)
    if not isinstance(ref, TileViewRef):
        return False
    root = em.env[ref.root]
    em.env[ref.root] = Var(wb.tile_insert_view(root.value, updated.value, ref.offsets, ref.steps), root.type)
    return True


def bind(em, node, name: str, value) -> bool:
    """`name = value` (a plain assignment): a view of a tile local binds a TileViewRef; rebinding a tile local
    detaches the views of it (their current values). False when the caller binds it."""
    for other, v in list(em.env.items()):
        if isinstance(v, TileViewRef) and v.root == name and other != name:
            em.env[other] = Var(read_ref(em, node, v).value, v.type)
    if isinstance(value, ViewVar) and value.root is not None and value.root in em.env:
        em.env[name] = TileViewRef(value.root, value.offsets, value.steps, value.type)
        return True
    if isinstance(em.env.get(name), TileViewRef):
        em.env.pop(name)  # a plain value now
    return False


def updated_roots(em, names, stmts) -> list:
    """The tile locals that in-place updates of `names` in `stmts` change: a view local's root, also of a view
    `stmts` bind (`row = b[i]` in a loop's body, then `wp.tile_assign(row, src)`: the loop carries b)."""
    sources = {}
    for s in stmts:
        for n in walk(s):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                source = _viewed_name(em, n.value)
                if source is not None:
                    sources[n.targets[0].id] = source
    found = []
    for n in names:
        seen = set()
        while n in sources and n not in seen:  # (a view of a view the body binds)
            seen.add(n)
            found.append(n)
            n = sources[n]
        found.append(em.env[n].root if isinstance(em.env.get(n), TileViewRef) else n)
    return found


def _viewed_name(em, node):
    """The local a view expression is taken of (`t[2:4]`, `t[i][::2]`, `wp.tile_view(t, ...)`), else None."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and getattr(resolve_path(em.src.func, node.func), "_wp_tile_", None) == "tile_view":
        node = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "t"), None)
        return _viewed_name(em, node)
    return node.id if isinstance(node, ast.Name) else None


# -- subscripts ---------------------------------------------------------------------------------------------
def _items(slice_node) -> list:
    return list(slice_node.elts) if isinstance(slice_node, ast.Tuple) else [slice_node]


def _slice_bound(em, node, what):
    if node is None:
        return None
    value = tiles.constant_value(em, node)
    if type(value) is not int:
        raise em.error(node, f"a tile slice's {what} must be a compile-time constant int", CompileValueError)
    return value


def _normalized_slice(em, node, start, stop, step, length: int):
    """(start, step, count) of slice(start, stop, step) over `length` elements, as Python's."""
    if step == 0:
        raise em.error(node, "a tile slice's step cannot be zero", CompileValueError)
    first, _, stride = slice(start, stop, step).indices(length)
    return first, stride, len(range(*slice(start, stop, step).indices(length)))


def _int_index(em, node, v: Var, length: int, dim: int, wrap: bool = True):
    """An integer tile index as i32: a constant one wrapped (negative from the end) and checked, a run-time
    one wrapped once (i < 0 ? i + length : i), as Warp's resolve_tile_int_index."""
    if not wt.is_int(v.type):
        raise em.error(node, f"Tile indices must be integers or slices, got {ft.name(v.type)}.", CompileTypeError)
    constant = tiles.constant_value(em, node) if isinstance(node, ast.AST) else MISSING
    if type(constant) is int:
        wrapped = constant + length if constant < 0 and wrap else constant
        if not 0 <= wrapped < length:
            raise em.error(node, f"Tile index {constant} is out of bounds for axis {dim} with size {length}.",
                           CompileValueError)
        return _i32(em, wrapped)
    i = _i32_of(em, v)
    if not wrap:
        return i
    negative = arith.CmpIOp(arith.CmpIPredicate.slt, i, _i32(em, 0)).result
    return arith.SelectOp(negative, arith.AddIOp(i, _i32(em, length)).result, i).result


class _Plan:
    """What a subscript of a tile of `shape` denotes: kind "element" (indices, components), "view" (offsets,
    steps, shape) or "gather" (axis, the index tile)."""

    def __init__(self, kind, **parts):
        self.kind = kind
        self.__dict__.update(parts)


def plan(em, node, tile_t: ft.TileT, slice_node, items=None) -> _Plan:
    shape = tile_t.shape
    items = _items(slice_node) if items is None else items
    values = [None if isinstance(i, ast.Slice) else em.expr(i) for i in items]
    index_tiles = [k for k, v in enumerate(values) if tiles.is_tile(v)]
    if index_tiles:
        return _gather_plan(em, node, tile_t, items, values, index_tiles)
    if len(items) > len(shape) and not any(isinstance(i, ast.Slice) for i in items):
        return _element_plan(em, node, tile_t, items, values)
    if len(items) > len(shape):
        raise em.error(node, f"tile indexing specified too many indices {len(items)} > {len(shape)}",
                       CompileValueError)
    if not any(isinstance(i, ast.Slice) for i in items) and len(items) == len(shape):
        return _element_plan(em, node, tile_t, items, values)
    offsets, steps, view = [], [], []
    for d, length in enumerate(shape):
        item = items[d] if d < len(items) else ast.Slice(None, None, None)
        if isinstance(item, ast.Slice):
            first, step, count = _normalized_slice(
                em, item, _slice_bound(em, item.lower, "start"), _slice_bound(em, item.upper, "stop"),
                _slice_bound(em, item.step, "step") or 1, length)
            offsets.append(_i32(em, first))
            steps.append(step)
            view.append(count)
        else:
            offsets.append(_int_index(em, item, values[d], length, d))
            steps.append(0)
    return _view_plan(em, node, tile_t, offsets, steps, view)


def _view_plan(em, node, tile_t, offsets, steps, view) -> _Plan:
    if not view:
        raise em.error(node, "tile_view() slice resulted in a scalar; use tile_extract() for element access",
                       CompileValueError)
    if any(n == 0 for n in view):
        raise em.error(node, f"tile_view() slice produced an empty tile with shape {tuple(view)}; zero-length tile "
                             f"dimensions are not supported.", CompileValueError)
    return _Plan("view", offsets=offsets, steps=tuple(steps), type=ft.TileT(tile_t.dtype, tuple(view)))


def _element_plan(em, node, tile_t, items, values) -> _Plan:
    shape, dtype = tile_t.shape, tile_t.dtype
    extra = len(items) - len(shape)
    kind = wt.composite_kind(dtype)
    allowed = {"vec": 1, "quat": 1, "mat": 2}.get(kind, 0)
    if extra > allowed:
        raise em.error(node, f"tile_extract: incorrect number of indices ({len(items)}) for tile shape {shape}",
                       CompileValueError)
    indices = [_int_index(em, i, v, n, d) for d, (i, v, n) in enumerate(zip(items, values, shape))]
    components = [_int_index(em, i, v, n, len(shape) + k, wrap=False)
                  for k, (i, v, n) in enumerate(zip(items[len(shape):], values[len(shape):],
                                                    dtype._shape_ if extra else ()))]
    return _Plan("element", indices=indices, components=components)


def _gather_plan(em, node, tile_t, items, values, index_tiles) -> _Plan:
    if len(index_tiles) > 1:
        raise em.error(node, "Tile indexing supports exactly one 1D integer index tile.", CompileValueError)
    axis = index_tiles[0]
    index = values[axis]
    if len(index.type.shape) != 1:
        raise em.error(node, f"Tile indexing requires a 1D integer index tile, got {len(index.type.shape)} "
                             f"dimensions.", CompileValueError)
    if not wt.is_int(index.type.dtype):
        raise em.error(node, f"Tile indexing requires an integer index tile, got dtype "
                             f"{ft.name(index.type.dtype)}.", CompileValueError)
    if len(items) > len(tile_t.shape):
        raise em.error(node, f"tile indexing specified too many indices {len(items)} > {len(tile_t.shape)}",
                       CompileValueError)
    for d, item in enumerate(items):
        if d == axis:
            continue
        if not isinstance(item, ast.Slice):
            raise em.error(node, "Tile indexing entries must be a 1D integer index tile or full slices ':'.",
                           CompileValueError)
        first, step, count = _normalized_slice(
            em, item, _slice_bound(em, item.lower, "start"), _slice_bound(em, item.upper, "stop"),
            _slice_bound(em, item.step, "step") or 1, tile_t.shape[d])
        if (first, step, count) != (0, 1, tile_t.shape[d]):
            raise em.error(node, "Tile indexing with an integer index tile requires ':' on all other axes, e.g. "
                                 "`t[indices, :]`.", CompileValueError)
    shape = list(tile_t.shape)
    shape[axis] = index.type.shape[0]
    return _Plan("gather", axis=axis, index=index, type=ft.TileT(tile_t.dtype, tuple(shape)))


def _composed(em, base_offsets, base_steps, offsets, steps):
    """The view `offsets`/`steps` (over the kept dimensions of a view `base_offsets`/`base_steps` of a root) as
    one view of the root."""
    out_offsets, out_steps = [], []
    inner = iter(zip(offsets, steps))
    for o, s in zip(base_offsets, base_steps):
        if s == 0:
            out_offsets.append(o)
            out_steps.append(0)
            continue
        io, istep = next(inner)
        scaled = io if s == 1 else arith.MulIOp(io, _i32(em, s)).result
        out_offsets.append(arith.AddIOp(o, scaled).result)
        out_steps.append(s * istep)
    return out_offsets, tuple(out_steps)


def _element(em, tile: Var, p: _Plan) -> Var:
    dtype = tile.type.dtype
    element = Var(wb.create("tile_extract", tile.value, p.indices, results=[ft.to_mlir(dtype)]).result, dtype)
    if not p.components:
        return element
    scalar = dtype._wp_scalar_type_
    if len(p.components) == 1 and wt.composite_kind(dtype) == "mat":  # a matrix's row
        row = wv.vector(dtype._shape_[1], scalar)
        return Var(wc.extract(element.value, p.components, ft.to_mlir(row)), row)
    return Var(wc.extract(element.value, p.components, ft.to_mlir(scalar)), scalar)


def _apply(em, node, tile: Var, p: _Plan, where=None) -> Var:
    """The value plan `p` denotes of `tile`; `where` (root, offsets, steps): the tile local it lies in."""
    if p.kind == "element":
        return _element(em, tile, p)
    if p.kind == "gather":
        return Var(wb.create("tile_gather", tile.value, p.index.value, results=[ft.to_mlir(p.type)],
                             attributes={"axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), p.axis)}).result,
                   p.type)
    value = wb.tile_view(tile.value, p.offsets, ft.to_mlir(p.type), p.steps)
    base = getattr(tile, "strides", None) or dense_strides(tile.type.shape)
    strides = tuple(b * s for b, s in zip(base, p.steps) if s != 0)
    if where is None:
        return ViewVar(value, p.type, strides=strides)
    offsets, steps = _composed(em, where[1], where[2], p.offsets, p.steps)
    return ViewVar(value, p.type, root=where[0], offsets=offsets, steps=steps, strides=strides)


def subscript(em, node):
    """`t[...]` of a tile (a local, a view local, or any tile expression: `t[::-1][::2]`); None when the base is
    no tile."""
    base = node.value
    where = tile_local(em, base.id) if isinstance(base, ast.Name) else None
    if where is not None:
        tile = em.expr(base)
    elif isinstance(base, ast.Name) or not _tile_rooted(em, base):
        return None
    else:
        tile = em.expr(base)
        if not tiles.is_tile(tile):
            return None
        if isinstance(tile, ViewVar) and tile.root is not None:
            where = (tile.root, tile.offsets, tile.steps)
    return _apply(em, node, tile, plan(em, node, tile.type, node.slice), where)


def _tile_rooted(em, node) -> bool:
    """Whether the expression may give a tile: a subscript chain of a tile local, or a tile builtin's call."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return is_tile_name(em, node.id)
    return isinstance(node, ast.Call) and getattr(resolve_path(em.src.func, node.func), "_wp_tile_", None) is not None


def assign(em, target, value: Var) -> bool:
    """`t[...] = x` of a tile local (or a view local): an element (or a vector's component, a matrix's row or
    entry) or a view (`t[a:b, :] = src`, `t[0] = row`: src a tile of the view's shape), written in place (the
    root's variable rebound). `t[i][c] = x`: element i's component. False when `target` is no such subscript."""
    component = None
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript) and \
            isinstance(target.value.value, ast.Name) and is_tile_name(em, target.value.value.id):
        component, target = target.slice, target.value
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and is_tile_name(em, target.value.id)):
        return False
    name = target.value.id
    root, offsets, steps = tile_local(em, name)
    tile = em.expr(target.value)
    items = _items(target.slice) + (_items(component) if component is not None else [])
    p = plan(em, target, tile.type, None, items)
    if p.kind == "gather":
        raise em.error(target, "Advanced-index assignment on tiles (e.g. `t[indices, :] = src`) is not supported. "
                               "Use slice assignment (`t[a:b, :] = src`) or construct the tile explicitly.",
                       CompileError)
    if p.kind == "view":
        if not tiles.is_tile(value):
            raise em.error(target, f"Tile view assignment requires a tile of matching shape on the right-hand side "
                                   f"(e.g. `t[a:b, :] = src` or `t[0] = row`), but got a value of type "
                                   f"{ft.name(value.type)}.", CompileError)
        if value.type.shape != p.type.shape:
            raise em.error(target, f"Tile view assignment shape mismatch: destination view has shape "
                                   f"{p.type.shape} but source has shape {value.type.shape}.", CompileValueError)
        if value.type.dtype is not tile.type.dtype:
            if wt.is_composite(value.type.dtype) or wt.is_composite(tile.type.dtype):
                raise em.error(target, f"a tile of {ft.name(value.type.dtype)} assigned into a tile of "
                                       f"{ft.name(tile.type.dtype)}", CompileTypeError)
            converted = ft.TileT(tile.type.dtype, value.type.shape)
            value = Var(wb.create("cast", value.value, results=[ft.to_mlir(converted)]).result, converted)
        part_offsets, part_steps = _composed(em, offsets, steps, p.offsets, p.steps)
        rooted = em.env[root]
        em.env[root] = Var(wb.tile_insert_view(rooted.value, value.value, part_offsets, part_steps), rooted.type)
        return True
    dtype = tile.type.dtype
    if p.components:
        element = _element(em, tile, _Plan("element", indices=p.indices, components=[]))
        part_t = wv.vector(dtype._shape_[1], dtype._wp_scalar_type_) \
            if len(p.components) == 1 and wt.composite_kind(dtype) == "mat" else dtype._wp_scalar_type_
        if value.type is not part_t:
            value = em.convert(value, part_t, target)
        value = Var(wc.insert(element.value, value.value, p.components), dtype)
    elif value.type is not dtype:
        value = em.convert(value, dtype, target)
    # the element's indices in the root: each kept dimension's offset + step * index
    at, kept = [], iter(p.indices)
    for o, s in zip(offsets, steps):
        if s == 0:
            at.append(o)
        else:
            i = next(kept)
            at.append(arith.AddIOp(o, i if s == 1 else arith.MulIOp(i, _i32(em, s)).result).result)
    rooted = em.env[root]
    em.env[root] = Var(wb.create("tile_insert", rooted.value, value.value, at, results=[rooted.value.type]).result,
                       rooted.type)
    tiles.sync(em)  # Warp's element write ends in WP_TILE_SYNC: every lane's write lands before what follows
    return True


def is_view_target(em, target) -> bool:
    """`t[a:b, :]`, `t[i]` of a 2-d tile, `t[indices, :]`: a subscript of a tile local that is no element (an
    augmented assignment refuses it, as Warp)."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and is_tile_name(em, target.value.id)):
        return False
    items = _items(target.slice)
    rank = len(em.expr(target.value).type.shape)
    return any(isinstance(i, ast.Slice) for i in items) or len(items) < rank or \
        any(tiles.is_tile(em.expr(i)) for i in items)


# -- builtins ---------------------------------------------------------------------------------------------
def extract(em, node, name=None, args=None) -> Var:
    """wp.tile_extract(a, i, ...): an element (the extra indices a vector's component, a matrix's row or entry)."""
    if node.keywords or not node.args:
        raise em.error(node, "wp.tile_extract() takes a tile and its indices", CompileTypeError)
    tile = tiles.tile_arg(em, node.args[0], "tile_extract", "a")
    items = list(node.args[1:])
    if len(items) < len(tile.type.shape) or any(isinstance(i, ast.Starred) for i in items):
        raise em.error(node, f"tile_extract: incorrect number of indices ({len(items)}) for tile shape "
                             f"{tile.type.shape}", CompileValueError)
    values = [em.expr(i) for i in items]
    return _element(em, tile, _element_plan(em, node, tile.type, items, values))


def _slice_call(em, node):
    """The (start, stop, step) of a `slice(a, b, c)` entry of tile_view's offset, or None for other entries."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice"
            and resolve_path(em.src.func, node.func) is slice):
        return None
    if node.keywords or not 1 <= len(node.args) <= 3:
        raise em.error(node, "slice() in a tile_view offset takes 1 to 3 positional bounds", CompileTypeError)
    bounds = []
    for a in node.args:
        value = None if isinstance(a, ast.Constant) and a.value is None else tiles.constant_value(em, a)
        if value is not None and type(value) is not int:
            raise em.error(a, "tile_view() slice bounds must be compile-time constant ints", CompileValueError)
        bounds.append(value)
    return (None, bounds[0], None) if len(bounds) == 1 else tuple(bounds + [None] * (3 - len(bounds)))


def slice_indexed(em, node, name, args) -> Var:
    """wp.tile_slice_indexed(t, indices), Warp's builtin behind `t[indices, :]`, called by name: `indices` a tuple
    of one 1-d integer index tile and full slices (`slice(None)`), trailing axes omitted; a gathered copy."""
    t = tiles.tile_arg(em, args["t"], "tile_slice_indexed", "t")
    given = args["indices"].elts if isinstance(args["indices"], ast.Tuple) else [args["indices"]]
    items = []
    for item in given:
        bounds = _slice_call(em, item)
        if bounds is None:
            items.append(item)
            continue
        lower, upper, step = [None, bounds[0], None] if len(bounds) == 1 else (list(bounds) + [None])[:3]
        items.append(ast.copy_location(ast.Slice(*[None if b is None else ast.copy_location(ast.Constant(b), item)
                                                    for b in (lower, upper, step)]), item))
    values = [None if isinstance(i, ast.Slice) else em.expr(i) for i in items]
    index_tiles = [k for k, v in enumerate(values) if tiles.is_tile(v)]
    if not index_tiles:
        raise em.error(node, "Tile indexing requires an integer index tile.", CompileValueError)
    return _apply(em, node, t, _gather_plan(em, node, t.type, items, values, index_tiles))


def view(em, node, name, args) -> Var:
    """wp.tile_view(t, offset, shape=None), Warp's two forms: with `shape`, the subtile of that shape at `offset`
    (ints, one per dimension, missing ones 0); without, `offset`'s entries map to the leading dimensions, an int
    dropping its dimension, a `slice(start, stop, step)` keeping its range (the shape inferred), the trailing
    dimensions kept whole. Integer offsets are not wrapped; constant ones must lie inside the tile."""
    t = tiles.tile_arg(em, args["t"], "tile_view", "t")
    shape = t.type.shape
    items = args["offset"].elts if isinstance(args["offset"], ast.Tuple) else [args["offset"]]
    if len(items) > len(shape):
        raise em.error(node, f"tile_view() specified too many indices {len(items)} > {len(shape)}",
                       CompileValueError)
    slices = [_slice_call(em, i) for i in items]
    offsets, steps, view_shape = [], [], []
    if any(s is not None for s in slices) and args["shape"] is not None:
        raise em.error(node, "tile_view() does not support specifying 'shape' together with a slice-containing "
                             "'offset'; the view shape is inferred from the slice bounds.", CompileValueError)
    for d, (item, s) in enumerate(zip(items, slices)):
        if s is not None:
            first, step, count = _normalized_slice(em, item, s[0], s[1], 1 if s[2] is None else s[2], shape[d])
            offsets.append(_i32(em, first))
            steps.append(step)
            view_shape.append(count)
            continue
        v = em.expr(item)
        if not wt.is_int(v.type):
            raise em.error(item, f"tile_view() offset entries must be integers or slices, got {ft.name(v.type)}",
                           CompileTypeError)
        constant = tiles.constant_value(em, item)
        if type(constant) is int and not 0 <= constant < shape[d]:
            raise em.error(item, f"tile_view() integer offset {constant} is out of bounds for axis {d} with size "
                                 f"{shape[d]}; negative offsets are only wrapped for subscript indexing (e.g. "
                                 f"t[-1, :]), not explicit tile_view() calls.", CompileValueError)
        offsets.append(_i32_of(em, v))
        steps.append(0)
    offsets += [_i32(em, 0) for _ in range(len(shape) - len(items))]
    if args["shape"] is not None:
        view_shape = list(tiles.tile_shape(em, args["shape"], "tile_view"))
        if len(view_shape) != len(shape):
            raise em.error(node, f"tile_view() if shape is specified it must have same number of dimensions as "
                                 f"source tile, expected {len(shape)}, got {len(view_shape)}", CompileValueError)
        steps = [1] * len(shape)
        for d, item in enumerate(items):
            constant = tiles.constant_value(em, item)
            if type(constant) is int and constant + view_shape[d] > shape[d]:
                raise em.error(node, f"tile_view(): the view of shape {tuple(view_shape)} at offset {constant} of "
                                     f"dimension {d} lies outside the tile's extent {shape[d]}", CompileValueError)
    else:
        steps += [1] * (len(shape) - len(items))
        view_shape += list(shape[len(items):])
    if not view_shape and all(s is None for s in slices):
        raise em.error(node, f"wp.tile_view(): an offset of {len(items)} indices leaves nothing of a tile of shape "
                             f"{shape}: use t[i, ...] for one element", CompileValueError)
    p = _view_plan(em, node, t.type, offsets, steps, view_shape)
    node_t = args["t"]
    where = None
    if isinstance(node_t, ast.Name):
        where = tile_local(em, node_t.id)
    elif isinstance(t, ViewVar) and t.root is not None:
        where = (t.root, t.offsets, t.steps)
    return _apply(em, node, t, p, where)


