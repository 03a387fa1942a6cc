"""Slicing arrays inside kernels (`a[1:3]`, `a[::-1]`, `a[i, 2:]`), as Warp: a strided view of the same memory
(`warp.slice`, lowered with Python's slice rules at run time: omitted and negative bounds, clamping, negative
steps), of the slices' rank plus the trailing dimensions; an int among them picks (negative: from the end).
A literal zero step is a compile error (Warp's message); a zero step at run time prints Warp's message and traps
(the process aborts, as Warp's CPU path does; a CUDA launch fails). `.ndim` of an array is its rank."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError, CompileValueError

from ..dialects import llvm
from ..dialects.warp import builders as wb
from . import printing
from . import types as ft
from .syntax import int_literal
from .values import Var

ZERO_STEP = "Slice step cannot be zero"


def index_nodes(node: ast.Subscript) -> list:
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


def is_slicing(node: ast.Subscript) -> bool:
    return any(isinstance(i, ast.Slice) for i in index_nodes(node))


def _i32_of(em, node) -> object:
    v = em.expr(node)
    if not wt.is_int(v.type):
        raise em.error(node, f"array indices must be integers, got {ft.name(v.type)}", CompileTypeError)
    return wb.cast(v.value, ft.to_mlir(wt.int32))


def build(em, node: ast.Subscript, arr: Var) -> Var:
    """`arr[...]` with at least one slice: the strided view."""
    items = index_nodes(node)
    ndim = arr.type.ndim
    if len(items) > ndim:
        raise em.error(node, too_many_indices(len(items), ndim), CompileError)
    dims, bounds = [], []
    for item in items:
        if not isinstance(item, ast.Slice):
            bounds.append(_i32_of(em, item))
            dims.append(-1)
            continue
        code = 0
        for bit, part in ((1, item.lower), (2, item.upper), (4, item.step)):
            if part is None:
                continue
            if bit == 4 and int_literal(part) == 0:
                raise em.error(node, ZERO_STEP, CompileValueError)
            bounds.append(_i32_of(em, part))
            if bit == 4 and int_literal(part) is None:
                _trap_if_zero(em, bounds[-1])
            code |= bit
        dims.append(code)
    out_ndim = sum(1 for d in dims if d >= 0) + ndim - len(dims)
    return Var(wb.slice_(arr.value, dims, bounds), ft.ArrayT(arr.type.dtype, out_ndim))


def _trap_if_zero(em, step) -> None:
    """A run-time zero step: Warp's message, then a trap."""
    zero = arith.ConstantOp(step.type, ir.IntegerAttr.get(step.type, 0)).result
    guard = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, step, zero).result, [], has_else=False)
    with ir.InsertionPoint(guard.then_block):
        printing.call_printf(em, "Warp error: slice step cannot be zero\n", [])
        llvm.intr_trap()
        scf.YieldOp([])


def ndim_attribute(em, node: ast.Attribute):
    """`a.ndim` of an array variable: its rank, an int32 constant; None for anything else."""
    if node.attr != "ndim" or not isinstance(node.value, ast.Name):
        return None
    v = em.env.get(node.value.id)
    if not isinstance(v, Var) or not isinstance(v.type, ft.ArrayT):
        return None
    return em.const(v.type.ndim, wt.int32)


def too_many_indices(count: int, ndim: int) -> str:
    return (f"Incorrect number of indices specified for array indexing, got {count} indices for a {ndim} "
            f"dimensional array.")
