"""Warp's tile builtins that are compositions of the tile table's ops: `wp.tile_dot`, `wp.tile_axpy`,
`wp.tile_diag_add`. Each is built from element-wise builtins on tiles, tile_reduce and tile_broadcast, so
warp-autodiff differentiates it through those ops and every backend lowers it as it lowers them. Their records
(parameters, in-place arguments) are in the tile table, builtins/tile_table.py. Argument checks and their messages
are Warp's (warp/_src/builtins.py, the builtins' value functions).
"""

from __future__ import annotations


from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileTypeError, CompileValueError

from ..dialects.warp import builders as wb
from . import tiles
from . import types as ft
from .values import Var


def _operand(em, node, arg_node, message: str) -> Var:
    v = em.expr(arg_node)
    if not tiles.is_tile(v):
        raise em.error(node, message.format(getattr(v, "type", v) and ft.name(v.type)), CompileTypeError)
    return v


def _no_struct(em, node, dtype, name: str) -> None:
    if wt.is_struct(dtype):
        raise em.error(node, f"{name}() does not support Warp struct tile elements", CompileTypeError)


def dot(em, node, name, args) -> Var:
    """The sum over the tiles of each pair of elements contracted: a * b for scalars, wp.dot for vectors and
    quaternions, wp.ddot (Frobenius) for matrices; a tile of shape (1,) of the scalar type."""
    a = _operand(em, node, args["a"], "tile_dot() first argument must be a tile, got {}")
    b = _operand(em, node, args["b"], "tile_dot() second argument must be a tile, got {}")
    if a.type.shape != b.type.shape:
        raise em.error(node, f"tile_dot() arguments must have the same shape, got {a.type.shape} and "
                             f"{b.type.shape}", CompileTypeError)
    if a.type.dtype is not b.type.dtype:
        raise em.error(node, f"tile_dot() arguments must have the same dtype, got {ft.name(a.type.dtype)} and "
                             f"{ft.name(b.type.dtype)}", CompileTypeError)
    dtype = a.type.dtype
    _no_struct(em, node, dtype, "tile_dot")
    kind = wt.composite_kind(dtype) if wt.is_composite(dtype) else None
    contract = {None: "mul", "vec": "dot", "quat": "dot", "mat": "ddot"}.get(kind)
    if contract is None:
        raise em.error(node, f"tile_dot(): the elements must be scalars, vectors or matrices, got {ft.name(dtype)}",
                       CompileTypeError)
    products = tiles.elementwise(em, node, contract, [a, b], mapped=True)
    scalar = products.type.dtype
    result = ft.TileT(scalar, (1,))
    return Var(wb.tile_reduce(products.value, "add", ft.to_mlir(result)), result)


def axpy(em, node, name, args) -> None:
    """dest += alpha * src, `dest`'s variable rebound (Warp updates it in place)."""
    src = _operand(em, node, args["src"], "tile_axpy() 'src' argument must be a tile, got {}")
    dest = _operand(em, node, args["dest"], "tile_axpy() 'dest' argument must be a tile, got {}")
    if dest.type.shape != src.type.shape:
        raise em.error(node, f"tile_axpy() 'dest' and 'src' must have the same shape, got {dest.type.shape} and "
                             f"{src.type.shape}", CompileTypeError)
    if dest.type.dtype is not src.type.dtype:
        raise em.error(node, f"tile_axpy() 'dest' and 'src' must have the same dtype, got "
                             f"{ft.name(dest.type.dtype)} and {ft.name(src.type.dtype)}", CompileTypeError)
    _no_struct(em, node, dest.type.dtype, "tile_axpy")
    alpha = em.expr(args["alpha"])
    if tiles.is_tile(alpha):
        raise em.error(node, f"tile_axpy() 'alpha' must be a scalar, got tile {alpha.type}", CompileTypeError)
    if not wt.is_scalar(alpha.type):
        raise em.error(node, f"tile_axpy() 'alpha' must be a scalar type, got {ft.name(alpha.type)}",
                       CompileTypeError)
    scalar = getattr(dest.type.dtype, "_wp_scalar_type_", dest.type.dtype)
    if alpha.type is not scalar:
        if alpha.literal is None:  # a literal takes the tile's type, as Warp's untyped constants
            raise em.error(node, f"tile_axpy() 'alpha' must match the tile's scalar type, got {ft.name(alpha.type)} "
                                 f"for tile scalar type {ft.name(scalar)}", CompileTypeError)
        alpha = em.const(alpha.literal, scalar)
    target = args["dest"]
    if not tiles.updatable(em, target):
        raise em.error(node, "wp.tile_axpy(): 'dest' is updated in place: it must be a tile variable",
                       CompileTypeError)
    scaled = tiles.elementwise(em, node, "mul", [src, alpha])
    tiles.write_back(em, target, tiles.elementwise(em, node, "add", [dest, scaled]))
    return None


def diag_add(em, node, name, args) -> Var:
    """a with d[i] added to a[i, i]: d broadcast over the rows, kept where the row index equals the column's
    (a where() on an index mask, so an off-diagonal element is a's own even where d holds infinities)."""
    a = _operand(em, node, args["a"], "tile_diag_add() 'a' argument must be a tile, got {}")
    d = _operand(em, node, args["d"], "tile_diag_add() 'd' argument must be a tile, got {}")
    if a.type.dtype is not d.type.dtype:
        raise em.error(node, f"tile_diag_add() arguments must have the same dtype, got {ft.name(a.type.dtype)} and "
                             f"{ft.name(d.type.dtype)}", CompileTypeError)
    if len(a.type.shape) != 2:
        raise em.error(node, "tile_diag_add() argument 'a' must be a 2D tile", CompileTypeError)
    if len(d.type.shape) != 1:
        raise em.error(node, "tile_diag_add() argument 'd' must be a 1D tile", CompileTypeError)
    n = a.type.shape[0]
    if a.type.shape[1] != n:
        raise em.error(node, "tile_diag_add() 'a' argument must be square", CompileValueError)
    if d.type.shape[0] != n:
        raise em.error(node, f"tile_diag_add() 'd' argument must have the same number of elements as the number of "
                             f"rows in 'a', got {d.type.shape[0]} elements in 'd' and {n} rows in 'a'",
                       CompileValueError)
    _no_struct(em, node, a.type.dtype, "tile_diag_add")

    def shaped(value: Var, shape: tuple) -> Var:
        t = ft.TileT(value.type.dtype, shape)
        return Var(wb.create("tile_reshape", value.value, results=[ft.to_mlir(t)]).result, t)

    def broadcast(value: Var) -> Var:
        t = ft.TileT(value.type.dtype, (n, n))
        return Var(wb.create("tile_broadcast", value.value, results=[ft.to_mlir(t)]).result, t)

    index_t = ft.TileT(wt.int32, (n,))
    index = Var(wb.create("tile_arange", em.const(0, wt.int32).value, em.const(1, wt.int32).value,
                          results=[ft.to_mlir(index_t)]).result, index_t)
    rows, cols = broadcast(shaped(index, (n, 1))), broadcast(shaped(index, (1, n)))
    spread = broadcast(shaped(d, (1, n)))
    # one element-wise map (a tile of bools would be a tensor of i1 in memory): where(row == col, a + d, a)
    op = wb.tile_map([a.value, spread.value, rows.value, cols.value], [ft.to_mlir(a.type)])
    body = op.regions[0].blocks[0]
    element = ft.to_mlir(a.type.dtype)
    with ir.InsertionPoint(body):
        x, y, i, j = body.arguments
        on_diagonal = wb.builtin("eq", [i, j], ir.IntegerType.get_signless(1))
        summed = wb.builtin("add", [x, y], element)
        ir.Operation.create("gpu.yield", operands=[wb.builtin("where", [on_diagonal, summed, x], element)])
    return Var(op.result, a.type)
