"""Geometry queries in kernels (issue 17): wp.hash_grid_query, wp.hash_grid_query_next,
wp.hash_grid_point_id, wp.bvh_query_aabb / _ray / _sphere / _capsule, wp.bvh_query_next, and a block's
wp.tile_bvh_query_aabb / _ray, wp.tile_bvh_query_next, wp.tile_query_valid. Each call is one typed op of
the warp dialect (dialects/warp/geometry_ops.py); warp-expand-geometry lowers them.

`*_next(query, index)` has Warp's out-parameter form: `index` must be a variable (and `query` is one, or a
temporary, as a call's result); the call rebinds both (the advanced state, the next index or the old one when nothing is left) and gives the bool.
loops.py's `updated_in_place` names them (OUT_ARGS), so loops carry them, a while loop's test included."""

from __future__ import annotations

import ast
import warnings

from mlir import ir
from mlir.dialects import arith

from mlwarp.core import geometry as layout
from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from . import tiles
from .resolve import Denoted, resolve_path
from ..dialects.warp import builders as wb
from . import types as ft
from .values import Var

QUERIES = {"hash_grid_query", "bvh_query_aabb", "bvh_query_ray", "bvh_query_sphere", "bvh_query_capsule"}
NEXT = {"hash_grid_query_next", "bvh_query_next"}
# a block's BVH queries (python/mlwarp/geometry/bvh_tiled.py): the query they start, and Warp 1.18's deprecated names
TILED_QUERIES = {"tile_bvh_query_aabb": "bvh_query_aabb", "tile_bvh_query_ray": "bvh_query_ray"}
DEPRECATED_TILED = {"bvh_query_aabb_tiled": "tile_bvh_query_aabb", "bvh_query_ray_tiled": "tile_bvh_query_ray",
                    "bvh_query_next_tiled": "tile_bvh_query_next", "mesh_query_aabb_tiled": "tile_mesh_query_aabb",
                    "mesh_query_aabb_next_tiled": "tile_mesh_query_aabb_next"}
# a block's mesh query (python/mlwarp/geometry/mesh_tiled.py): the block's BVH query of the mesh's tree
MESH_TILED = {"tile_mesh_query_aabb": "tile_bvh_query_aabb", "tile_mesh_query_aabb_next": "tile_bvh_query_next"}
OUT_ARGS = {name: (0, 1) for name in NEXT}  # the arguments a *_next call rebinds
OUT_ARGS.update({name: (0,) for name in ("tile_bvh_query_next", "bvh_query_next_tiled", "tile_mesh_query_aabb_next",
                                         "mesh_query_aabb_next_tiled")})
INTRINSICS = QUERIES | NEXT | {"hash_grid_point_id"} | set(TILED_QUERIES) | set(DEPRECATED_TILED) | set(MESH_TILED) | {
    "tile_bvh_query_next", "tile_query_valid"}
# a BVH query's arguments after the id: (name, kind), then an optional root
BVH_ARGS = {"bvh_query_aabb": (("lower", "vec3"), ("upper", "vec3")), "bvh_query_ray": (("start", "vec3"), ("dir", "vec3")),
            "bvh_query_sphere": (("center", "vec3"), ("radius", "float")),
            "bvh_query_capsule": (("start", "vec3"), ("dir", "vec3"), ("radius", "float"))}
FLT_MAX = 3.4028234663852886e38


def _arity(em, node, name, counts, shown):
    if len(node.args) not in counts or node.keywords:
        raise em.error(node, f"{name}() takes the arguments ({shown}) by position, got {len(node.args)}",
                       CompileError)


def _id(em, node, name) -> Var:
    v = em.expr(node)
    if not wt.is_int(v.type):
        raise em.error(node, f"{name}(): the id must be a uint64 (a structure's .id), got {ft.name(v.type)}",
                       CompileTypeError)
    return Var(wb.cast(v.value, ft.to_mlir(wt.uint64)), wt.uint64)


def _vec3(em, node, name, what) -> Var:
    v = em.expr(node)
    if wt.composite_kind(v.type) != "vec" or wt.inner_shape(v.type) != (3,):
        raise em.error(node, f"{name}(): {what} must be a vec3, got {ft.name(v.type)}", CompileTypeError)
    if v.type._wp_scalar_type_ is not wt.float32:
        raise em.error(node, f"{name}(): mlwarp's geometry queries take float32 vectors (vec3f), {what} is a "
                             f"{ft.name(v.type)}", CompileTypeError)
    return v


def _float(em, node, name, what, precision=wt.float32) -> Var:
    v = em.expr(node)
    shown = ft.name(precision)
    if not wt.is_scalar(v.type) or v.type is wt.bool_:
        raise em.error(node, f"{name}(): {what} must be a {shown}, got {ft.name(v.type)}", CompileTypeError)
    if v.type is not precision:
        if wt.is_float(v.type) and v.literal is None:
            raise em.error(node, f"{name}(): {what} must be a {shown}, got {ft.name(v.type)}", CompileTypeError)
        return em.cast(v, precision, node)
    return v


def _grid_point(em, node, name) -> Var:
    """A hash-grid query's point: a vec3 of float16, float32 or float64 (the query's precision)."""
    v = em.expr(node)
    if wt.composite_kind(v.type) != "vec" or wt.inner_shape(v.type) != (3,) or \
            v.type._wp_scalar_type_ not in (wt.float16, wt.float32, wt.float64):
        raise em.error(node, f"{name}(): point must be a vec3 of float16, float32 or float64 (vec3h, vec3f, vec3d), "
                             f"got {ft.name(v.type)}", CompileTypeError)
    return v


def _int32(em, node, name, what) -> Var:
    v = em.expr(node)
    if not wt.is_int(v.type):
        raise em.error(node, f"{name}(): {what} must be an int32, got {ft.name(v.type)}", CompileTypeError)
    return v if v.type is wt.int32 else em.cast(v, wt.int32, node)


def call(em, node: ast.Call, name: str, obj) -> Var:
    """The op for intrinsic `name` (obj: the Python handle, whose `_wp_query_type_` is the state struct)."""
    if name in DEPRECATED_TILED:
        warnings.warn(f"wp.{name}() is deprecated in Warp 1.18 and is targeted for removal in Warp 1.22. "
                      f"Use wp.{DEPRECATED_TILED[name]}() instead.", DeprecationWarning, stacklevel=2)
        name = DEPRECATED_TILED[name]
    if name in TILED_QUERIES or name in MESH_TILED or name in ("tile_bvh_query_next", "tile_query_valid"):
        return _tiled(em, node, name, obj)
    if name == "hash_grid_query":
        _arity(em, node, name, (3, 4), "id, point, max_dist[, group]")
        point = _grid_point(em, node.args[1], name)
        precision = point.type._wp_scalar_type_
        grouped = len(node.args) == 4  # (every int32 is a group: no value stands for "all groups", as in Warp)
        args = [_id(em, node.args[0], name), point, _float(em, node.args[2], name, "max_dist", precision),
                _int32(em, node.args[3], name, "group") if grouped else em.const(0, wt.int32),
                em.const(int(grouped), wt.int32)]
        qtype = obj._wp_query_type_of_[precision]
        return Var(wb.create(name, *(a.value for a in args), results=[ft.to_mlir(qtype)]).result, qtype)
    elif name in BVH_ARGS:
        spec = BVH_ARGS[name]
        shown = ", ".join(["id", *(a for a, _ in spec)])
        _arity(em, node, name, (len(spec) + 1, len(spec) + 2), shown + "[, root]")
        args = [_id(em, node.args[0], name)]
        for (what, kind), a in zip(spec, node.args[1:]):
            args.append(_vec3(em, a, name, what) if kind == "vec3" else _float(em, a, name, what))
        root = node.args[len(spec) + 1] if len(node.args) > len(spec) + 1 else None
        args.append(_int32(em, root, name, "root") if root is not None else em.const(-1, wt.int32))
    elif name == "hash_grid_point_id":
        _arity(em, node, name, (2,), "id, index")
        point = wb.create(name, _id(em, node.args[0], name).value,
                          _int32(em, node.args[1], name, "index").value).result
        return Var(point, wt.int32)
    elif name in NEXT:
        return _next(em, node, name, obj)
    else:  # pragma: no cover (INTRINSICS lists the names above)
        raise em.error(node, f"unknown geometry query {name}", CompileError)
    qtype = obj._wp_query_type_
    op = wb.create(name, *(a.value for a in args), results=[ft.to_mlir(qtype)])
    return Var(op.result, qtype)


def _next(em, node, name, obj) -> Var:
    bvh = name == "bvh_query_next"
    _arity(em, node, name, (2, 3) if bvh else (2,), "query, index" + ("[, max_dist]" if bvh else ""))
    qtypes = getattr(obj, "_wp_query_types_", None) or (obj._wp_query_type_,)
    qn, inode = node.args[:2]
    if not isinstance(inode, ast.Name):
        raise em.error(node, f"{name}(query, index): index must be a variable (the call writes the next index "
                             f"into it)", CompileError)
    q = em.expr(qn)  # (a query that is not a variable is advanced as a temporary, as Warp's reference to it)
    if q.type not in qtypes:
        raise em.error(qn, f"{name}(): the query must be a {qtypes[0].__name__}, got {ft.name(q.type)}",
                       CompileTypeError)
    index = em.expr(inode)
    if index.type is not wt.int32:
        raise em.error(inode, f"{name}(): index must be an int32 variable, got {ft.name(index.type)}",
                       CompileTypeError)
    extra = []
    if bvh:
        extra = [_float(em, node.args[2], name, "max_dist") if len(node.args) == 3 else em.const(FLT_MAX, wt.float32)]
    op = wb.create(name, q.value, index.value, *(e.value for e in extra),
                   results=[ft.to_mlir(wt.bool_), q.value.type, index.value.type])
    found, advanced, nxt = op.results
    if isinstance(qn, ast.Name):
        em.env[qn.id] = Var(advanced, q.type)
    em.env[inode.id] = Var(nxt, wt.int32)
    return Var(found, wt.bool_)


def is_query_iteration(em, it) -> bool:
    """`for index in wp.hash_grid_query(...)` (or a BVH query, or a @wp.func query that names its next
    function in `_wp_next_`, as wp.mesh_query_aabb), or `for index in query` over a query variable (its type names
    its next function in `_wp_iter_next_`): Warp's iteration over a query's candidates."""
    if isinstance(it, ast.Name):
        v = em.env.get(it.id)
        return isinstance(v, Var) and getattr(v.type, "_wp_iter_next_", None) is not None
    if not isinstance(it, ast.Call):
        return False
    obj = resolve_path(em.src.func, it.func)
    return getattr(obj, "_wp_intrinsic_", None) in QUERIES or getattr(obj, "_wp_next_", None) is not None


def emit_for(em, node: ast.For) -> None:
    """The loop as `$query = <the query>; index = 0 (when not defined); while <query>_next($query, index): body`,
    the next function named through the query function's `_wp_next_` attribute (so it resolves however the
    query was spelled). Over a query variable, the loop advances that variable (as Warp's iteration of the
    variable itself), with the next function its type names in `_wp_iter_next_`."""
    index = ast.Name(id=node.target.id, ctx=ast.Load())
    stmts = []
    if isinstance(node.iter, ast.Name):
        query = node.iter
        next_function = Denoted(em.env[query.id].type._wp_iter_next_)
    else:
        hidden = f"$query{node.lineno}_{node.col_offset}"
        query = ast.Name(id=hidden, ctx=ast.Load())
        next_function = ast.Attribute(value=node.iter.func, attr="_wp_next_", ctx=ast.Load())
        stmts.append(ast.Assign(targets=[ast.Name(id=hidden, ctx=ast.Store())], value=node.iter))
    test = ast.Call(func=next_function, args=[query, index], keywords=[])
    if not isinstance(em.env.get(node.target.id), Var):
        stmts.append(ast.Assign(targets=[ast.Name(id=node.target.id, ctx=ast.Store())], value=ast.Constant(0)))
    stmts.append(ast.While(test=test, body=node.body, orelse=[]))
    for s in stmts:
        ast.copy_location(s, node)
        ast.fix_missing_locations(s)
        with em.loc(s):
            em.emit_stmt(s)
    if not isinstance(node.iter, ast.Name):
        em.env.pop(query.id, None)


# -- a block's BVH queries (Warp's CPU semantics: python/mlwarp/geometry/bvh_tiled.py) ---------------------------
LAST_VALID = len(layout.BVH_QUERY_FIELDS)  # the field after a BvhQuery's state (core/geometry.py)


def _last_valid(q: ir.Value) -> ir.Value:
    return wb.create("struct_get", q, attributes={"field": wb._i64_attr(LAST_VALID)},
                     results=[ft.to_mlir(wt.int32)]).result


def _set_last_valid(q: ir.Value, flag: ir.Value) -> ir.Value:
    return wb.create("struct_set", q, flag, attributes={"field": wb._i64_attr(LAST_VALID)}).result


def _tiled(em, node, name, obj) -> Var:
    """tile_bvh_query_aabb / _ray: the ordinary query (warp.bvh_query_aabb / _ray typed BvhQueryTiled, whose next()
    dispatches on its kind) with last_valid = 1; tile_mesh_query_aabb: tile_bvh_query_aabb of the mesh's tree, typed
    MeshQueryAABBTiled; tile_bvh_query_next(query): one bvh_query_next from index -1,
    last_valid = found, and the index as a tile of shape (1,) (one lane); tile_query_valid(query): last_valid."""
    mesh = name == "tile_mesh_query_aabb"  # (the query of the mesh's tree: python/mlwarp/geometry/mesh_tiled.py)
    query = TILED_QUERIES[MESH_TILED[name] if mesh else name] if mesh or name in TILED_QUERIES else None
    if query is not None:
        what = ("low", "high") if mesh else tuple(a for a, _ in BVH_ARGS[query])
        _arity(em, node, name, (len(what) + 1,), ", ".join(["id", *what]))
        tree = _id(em, node.args[0], name)
        if mesh:
            tree = Var(_mesh_tree(tree.value), wt.uint64)
        args = [tree, *(_vec3(em, a, name, w) for w, a in zip(what, node.args[1:])), em.const(-1, wt.int32)]
        qtype = obj._wp_query_type_
        q = _block_level(em, wb.create(query, *(a.value for a in args), results=[ft.to_mlir(qtype)]))
        return Var(_set_last_valid(q.result, em.const(1, wt.int32).value), qtype)
    _arity(em, node, name, (1,), "query")
    qtypes = obj._wp_query_types_
    if name == "tile_query_valid":
        q = em.expr(node.args[0])
        if q.type not in qtypes:
            raise em.error(node.args[0], f"{name}(): the query must be a {qtypes[0].__name__}, got {ft.name(q.type)}",
                           CompileTypeError)
        valid = arith.CmpIOp(arith.CmpIPredicate.ne, _last_valid(q.value), em.const(0, wt.int32).value).result
        return Var(valid, wt.bool_)
    qn = node.args[0]
    if not isinstance(qn, ast.Name):
        raise em.error(node, f"{name}(query): the query must be a local variable (the call advances it)",
                       CompileError)
    q = em.expr(qn)
    if q.type not in qtypes:
        raise em.error(qn, f"{name}(): the query must be a {qtypes[0].__name__}, got {ft.name(q.type)}",
                       CompileTypeError)
    op = _block_level(em, wb.create("bvh_query_next", q.value, em.const(-1, wt.int32).value,
                                    em.const(FLT_MAX, wt.float32).value,
                                    results=[ft.to_mlir(wt.bool_), q.value.type, ft.to_mlir(wt.int32)]))
    found, advanced, index = op.results
    em.env[qn.id] = Var(_set_last_valid(advanced, arith.ExtUIOp(ft.to_mlir(wt.int32), found).result), q.type)
    return _index_tile(em, index)


def _mesh_tree(mesh_id: ir.Value) -> ir.Value:
    """The id of a mesh's tree (its descriptor's MESH_BVH word: wp.mesh_get_bvh)."""
    i64 = ir.IntegerType.get_signless(64)
    words = wb.array_from_ptr(wb.cast(mesh_id, i64), [arith.ConstantOp(ir.IntegerType.get_signless(32),
                                                                      layout.MESH_WORDS).result], i64)
    word = wb.load(words, [arith.ConstantOp(ir.IntegerType.get_signless(32), layout.MESH_BVH).result])
    return wb.cast(word, ft.to_mlir(wt.uint64))


def _index_tile(em, index: ir.Value) -> Var:
    """A step's index as Warp's CPU tile of the lanes: the index at element 0, -1 at the others."""
    tiles.mark(em)  # (the module now has tiles: its build runs the tile stages)
    lanes = tiles.lanes(em)
    t = ft.TileT(wt.int32, (lanes,))
    if lanes == 1:
        return Var(wb.create("tile_full", index, results=[ft.to_mlir(t)]).result, t)
    # Warp's CPU lanes: the item at element 0, -1 at the others (each lane untiles its own element)
    none = wb.create("tile_full", em.const(-1, wt.int32).value, results=[ft.to_mlir(t)]).result
    return Var(wb.create("tile_insert", none, index, [em.const(0, wt.int32).value], results=[ft.to_mlir(t)]).result, t)


def _block_level(em, op):
    """A tiled query's op, marked as one query per block where the kernel runs several lanes (wb.BLOCK_LEVEL_ATTR)."""
    if tiles.lanes(em) > 1:
        op.attributes[wb.BLOCK_LEVEL_ATTR] = ir.UnitAttr.get()
    return op


# -- a query of one kind as the erased wp.BvhQuery (Warp converts to the parent type) -----------------------
def erased_query(t):
    """The erased query type a query of one kind converts to (`_wp_erased_query_`, python/mlwarp/geometry/bvh.py), or
    None for any other type."""
    return getattr(t, "_wp_erased_query_", None)


def merged_query_type(a, b):
    """The type two queries of different kinds (or one and the erased type) merge to: the erased BvhQuery, or
    None when they are not both BVH queries."""
    ea, eb = erased_query(a) or a, erased_query(b) or b
    return ea if ea is eb and (erased_query(a) or erased_query(b)) else None


def erase_query(v: Var, erased) -> Var:
    """`v`, a query of one kind, as the erased type: the same fields (the kind field says which test next() runs)
    in a struct of the erased type's name."""
    if v.type is erased:
        return v
    q = wb.create("construct", [], results=[ft.to_mlir(erased)]).result
    field_types = {"ui64": wt.uint64, "i32": wt.int32, "f32": wt.int32}
    for k, (_, kind) in enumerate(layout.BVH_QUERY_FIELDS):
        part = wb.create("struct_get", v.value, attributes={"field": wb._i64_attr(k)},
                         results=[ft.to_mlir(field_types[kind])]).result
        q = wb.create("struct_set", q, part, attributes={"field": wb._i64_attr(k)}).result
    return Var(q, erased)
