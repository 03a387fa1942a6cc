"""The tile builtins of linear algebra and sorting: wp.tile_matmul, tile_cholesky(_inplace), tile_cholesky_solve,
tile_lower_solve / tile_upper_solve (and _inplace), tile_fft / tile_ifft, tile_sort. Their records are in the tile
table, compiler/tiles/table.py."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core import vector as wv
from mlwarp.core.errors import CompileTypeError, CompileValueError

from ..dialects.warp import builders as wb
from . import types as ft
from .resolve import MISSING
from .tiles import (constant_value, elementwise, is_tile, scalar_arg, tile_arg, updatable, write_back)
from .values import Var


def matmul_overload(em, node, args) -> dict:
    """Warp's two forms: tile_matmul(a, b, out, alpha=1.0, beta=1.0, precision="default") and tile_matmul(a, b,
    alpha=1.0, precision="default"), told apart by the third positional argument (a tile or not). The precision is
    checked; "tf32" computes as "default" here (as Warp on the CPU: float32 tiles)."""
    if len(node.args) > 2 and not names_a_tile(em, node.args[2]):
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
    precision = constant_value(em, args["precision"])
    if precision not in ("default", "tf32"):
        got = "a non-literal argument" if precision is MISSING else repr(precision)
        raise em.error(node, f"tile_matmul() precision must be the string literal 'default' or 'tf32', got {got}",
                       CompileValueError)
    return {**args, "precision": precision}

def names_a_tile(em, node) -> bool:
    """Whether the expression is a tile; a variable or a constant is told without emitting anything."""
    if isinstance(node, ast.Name) and node.id in em.env:
        return is_tile(em.env[node.id])
    if constant_value(em, node) is not MISSING:
        return False
    return is_tile(em.expr(node))

def matmul_into(em, node, args) -> Var | None:
    a = tile_arg(em, args["a"], "tile_matmul", "a")
    b = tile_arg(em, args["b"], "tile_matmul", "b")
    if len(a.type.shape) != 2 or len(b.type.shape) != 2 or a.type.shape[1] != b.type.shape[0]:
        raise em.error(node, f"wp.tile_matmul(): shapes {a.type.shape} and {b.type.shape} do not multiply "
                             f"(2-d tiles, a's columns = b's rows)", CompileTypeError)
    complex_types = (wv.vector(2, wt.float16), wv.vector(2, wt.float32), wv.vector(2, wt.float64))
    if a.type.dtype in complex_types or b.type.dtype in complex_types or (
            args["out"] is not None and element_type_of(em, args["out"]) in complex_types):
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
    alpha, beta = constant_value(em, args["alpha"]), constant_value(em, args["beta"])
    out_node = args["out"]
    if out_dtype is wt.bfloat16 or (out_node is not None and element_type_of(em, out_node) is wt.bfloat16):
        raise em.error(node, "tile_matmul() does not support a bfloat16 'out' tile. Allowed 'out' dtypes are "
                             "float16, float32, and float64.", CompileTypeError)
    if out_node is None:
        t = ft.TileT(a.type.dtype, shape)
        zero = wb.create("tile_full", em.const(0, t.dtype).value, results=[ft.to_mlir(t)]).result
        product = Var(wb.create("tile_matmul", a.value, b.value, zero, results=[ft.to_mlir(t)]).result, t)
        return product if alpha == 1 else scaled_tile(em, node, product, args["alpha"])
    out = tile_arg(em, out_node, "tile_matmul", "out")
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
        scaled = product if alpha == 1 else scaled_tile(em, node, product, args["alpha"])
        if beta == 0:
            result = scaled
        elif beta is MISSING:  # a value known at run time: 0 still ignores out
            b = Var(scalar_arg(em, args["beta"], t.dtype, "tile_matmul"), t.dtype)
            zero_beta = arith.CmpFOp(arith.CmpFPredicate.OEQ, b.value, em.const(0, t.dtype).value).result \
                if wt.is_float(t.dtype) else arith.CmpIOp(arith.CmpIPredicate.eq, b.value, em.const(0, t.dtype).value).result
            branch = scf.IfOp(zero_beta, [ft.to_mlir(t)], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([scaled.value])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([elementwise(em, node, "add", [scaled, scaled_tile(em, node, out, args["beta"])]).value])
            result = Var(branch.results[0], t)
        else:
            kept = out if beta == 1 else scaled_tile(em, node, out, args["beta"])
            result = elementwise(em, node, "add", [scaled, kept])
    write_back(em, out_node, result)
    return None

def element_type_of(em, node):
    v = em.env.get(node.id) if isinstance(node, ast.Name) else None
    return v.type.dtype if is_tile(v) else None

def scaled_tile(em, node, tile: Var, factor) -> Var:
    return elementwise(em, node, "mul", [tile, Var(scalar_arg(em, factor, tile.type.dtype, "tile_matmul"), tile.type.dtype)])

SORT_KEYS = (wt.float32, wt.int32, wt.uint32, wt.int64, wt.uint64)

def sort(em, node, name, args) -> None:
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

def linear_algebra(em, node, name, args):
    """tile_cholesky, the triangular solves and tile_cholesky_solve (warp.tile_cholesky, warp.tile_solve); an
    _inplace form rebinds its argument to the result."""
    def square(param):
        m = tile_arg(em, args[param], name, param)
        if len(m.type.shape) != 2 or m.type.shape[0] != m.type.shape[1] or m.type.dtype not in (wt.float32,
                                                                                                    wt.float64):
            raise em.error(node, f"wp.{name}(): '{param}' must be a square 2-d tile of float32 or float64, got "
                                 f"{m.type}", CompileTypeError)
        return m

    def fill():
        mode = constant_value(em, args.get("fill_mode", "lower"))
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
        y = tile_arg(em, args[rhs], name, rhs)
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


def matmul(em, node, name, args) -> Var | None:
    return matmul_into(em, node, matmul_overload(em, node, args))


def fft(em, node, name, args) -> None:
    """tile_fft / tile_ifft: the tile transformed in place."""
    t = tile_arg(em, args["inout"], name, "inout")
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
