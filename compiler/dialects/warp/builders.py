"""Typed builders for warp ops, used at the current insertion point and location."""

from __future__ import annotations

from mlir import ir

from .dialect import array_dtype, array_ndim, array_type, is_array_type


def _i32():
    return ir.IntegerType.get_signless(32)


def _create(name, operands, results, attributes=None):
    return ir.Operation.create(f"warp.{name}", results=results, operands=list(operands), attributes=attributes or {})


def tid(ndim: int) -> list[ir.Value]:
    return list(_create("tid", [], [_i32()] * ndim).results)


def load(arr: ir.Value, indices) -> ir.Value:
    return _create("load", [arr, *indices], [array_dtype(arr.type)]).result


def store(arr: ir.Value, value: ir.Value, indices) -> ir.Operation:
    return _create("store", [arr, value, *indices], [])


def address(arr: ir.Value, indices) -> ir.Value:
    return _create("address", [arr, *indices], [ir.Type.parse("!llvm.ptr")]).result


def atomic(kind: str, arr: ir.Value, value: ir.Value, indices) -> ir.Value:
    return _create("atomic", [arr, value, *indices], [array_dtype(arr.type)],
                   {"kind": ir.StringAttr.get(kind)}).result


def atomic_cas(arr: ir.Value, compare: ir.Value, value: ir.Value, indices) -> ir.Value:
    return _create("atomic_cas", [arr, compare, value, *indices], [array_dtype(arr.type)]).result


def array_dim(arr: ir.Value, dim: int) -> ir.Value:
    return _create("array_dim", [arr], [_i32()], {"dim": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim)}).result


def view(arr: ir.Value, indices) -> ir.Value:
    """The (N-k)-d sub-array of an N-d array at k < N leading indices."""
    ndim = array_ndim(arr.type) - len(indices)
    return _create("view", [arr, *indices], [array_type(array_dtype(arr.type), ndim)]).result


def cast(value: ir.Value, to: ir.Type) -> ir.Value:
    if value.type == to:
        return value
    return _create("cast", [value], [to]).result


def builtin(name: str, args, result_type: ir.Type) -> ir.Value:
    return _create(name, args, [result_type]).result


__all__ = ["tid", "load", "store", "address", "atomic", "atomic_cas", "array_dim", "view", "cast", "builtin", "array_type", "is_array_type"]
