"""The frontend for Fabric arrays (`wp.fabricarray`, `wp.indexedfabricarray`, python/mlwarp/arrays/fabric.py).

A Fabric array is a value of an internal struct type (its class carries `_wp_fabric_ = (dtype, ndim, indexed)`):
`buckets` (an int64 array, one row per bucket: index_start, index_end, data address, lengths address), `size`
(uint64) and, for an indexed one, `indices` (int32). Element `i` (after `indices[i]` for an indexed array) is
found by a binary search for the first bucket whose index_end exceeds it, as Warp's fabricarray_find_bucket;
then

    a[i]          ->  array_from_ptr(data, [count])[i - index_start]
    a[i] (ndim 2) ->  array_from_ptr(rows[i - index_start], [lengths[i - index_start]])   (a 1-d array)
    a[i, j]       ->  that row's [j]

so loads, stores, atomics and `a[i] += v` go through expressions.py's array_access like any array's. Arrays over raw
memory have no adjoint (autodiff_ir.without_adjoint): as in Warp, Fabric arrays have no gradients. `a.size` is
the struct's field; Warp's fabric arrays have no other attribute in kernels (no `shape`, no `len()`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError
from mlwarp.core.types import ArrayT

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import types as ft
from .values import Var

# the columns of a bucket row (python/mlwarp/arrays/fabric.py)
INDEX_START, INDEX_END, DATA, LENGTHS = range(4)


def is_fabric(t) -> bool:
    return wt.is_struct(t) and getattr(t, "_wp_fabric_", None) is not None


def rank(em, node, t) -> int:
    """The ndim of a Fabric array type being indexed; a struct field declared with any ndim has none."""
    found = t._wp_fabric_[1]
    if not isinstance(found, int):
        raise em.error(node, f"a {ft.name(t)} (a struct field declared with ndim=Any) cannot be indexed in a "
                             f"kernel: declare the field's ndim", CompileError)
    return found


def _field(arr: Var, name: str) -> Var:
    fields = arr.type._wp_fields_
    k = next(k for k, (n, _) in enumerate(fields) if n == name)
    t = fields[k][1]
    t = ArrayT(t.dtype, t.ndim) if wt.is_array(t) else t
    return Var(wc.struct_get(arr.value, k, ft.to_mlir(t)), t)


def _i32(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(32), n).result


def _bucket(buckets: ir.Value, i: ir.Value) -> ir.Value:
    """The row (i32) of the bucket holding element `i` (i64): the first whose index_end exceeds it, by binary
    search; past the last element, the last bucket (whose data array then refuses the index in debug builds)."""
    i32 = ir.IntegerType.get_signless(32)
    count = wb.array_dim(buckets, 0)
    loop = scf.WhileOp([i32, i32], [_i32(0), count])
    before = loop.before.blocks.append(i32, i32)
    after = loop.after.blocks.append(i32, i32)
    with ir.InsertionPoint(before):
        lo, hi = before.arguments
        scf.ConditionOp(arith.CmpIOp(arith.CmpIPredicate.slt, lo, hi).result, [lo, hi])
    with ir.InsertionPoint(after):
        lo, hi = after.arguments
        mid = arith.ShRSIOp(arith.AddIOp(lo, hi).result, _i32(1)).result
        before_i = arith.CmpIOp(arith.CmpIPredicate.sle, wb.load(buckets, [mid, _i32(INDEX_END)]), i).result
        above = arith.AddIOp(mid, _i32(1)).result
        scf.YieldOp([arith.SelectOp(before_i, above, lo).result, arith.SelectOp(before_i, hi, mid).result])
    last = arith.SubIOp(count, _i32(1)).result
    return arith.MinSIOp(loop.results[0], last).result


def _over(address: ir.Value, length: ir.Value, dtype) -> ir.Value:
    """A 1-d `dtype` array of `length` (i32) elements over raw memory at `address` (i64)."""
    return wb.array_from_ptr(address, [length], ft.to_mlir(dtype))


def _element(arr: Var, index: ir.Value):
    """(the array over element `index`'s bucket, its i32 index there)."""
    i64 = ir.IntegerType.get_signless(64)
    buckets = _field(arr, "buckets").value
    i = arith.ExtSIOp(i64, index).result
    b = _bucket(buckets, i)
    start = wb.load(buckets, [b, _i32(INDEX_START)])
    count = arith.TruncIOp(ir.IntegerType.get_signless(32),
                           arith.SubIOp(wb.load(buckets, [b, _i32(INDEX_END)]), start).result).result
    local = arith.TruncIOp(ir.IntegerType.get_signless(32), arith.SubIOp(i, start).result).result
    return buckets, b, count, local


def access(em, node, arr: Var, indices, allow_view: bool):
    """expressions.py's array_access for a Fabric array: the array over the element's memory and its index, all
    dimensions given; with `allow_view` and one index of an array of arrays, the inner array (`Var`) and None."""
    dtype, rank, indexed = arr.type._wp_fabric_
    index = indices[0]
    if indexed:  # the Fabric array's element indices[i]
        index = wb.load(_field(arr, "indices").value, [index])
    buckets, b, count, local = _element(arr, index)
    data = wb.load(buckets, [b, _i32(DATA)])
    if rank == 1:
        return Var(_over(data, count, dtype), ArrayT(dtype, 1)), [local]
    # an array of arrays: per element the inner array's address, per bucket the address of the inner lengths
    lengths = wb.load(buckets, [b, _i32(LENGTHS)])
    row_address = wb.load(_over(data, count, wt.int64), [local])
    row_length = arith.TruncIOp(ir.IntegerType.get_signless(32),
                                wb.load(_over(lengths, count, wt.int64), [local])).result
    row = Var(_over(row_address, row_length, dtype), ArrayT(dtype, 1))
    if len(indices) == 2:
        return row, [indices[1]]
    if not allow_view:
        raise em.error(node, f"a {rank}-d array needs {rank} indices, got {len(indices)}", CompileError)
    return row, None


def attribute(em, node, arr: Var) -> Var:
    """`a.size` (uint64, as Warp's); Warp's fabric arrays have no other attribute in kernels."""
    if node.attr == "size":
        return _field(arr, "size")
    raise em.error(node, f"`{node.attr}` is not an attribute of '{getattr(node.value, 'id', 'the array')}' "
                         f"({ft.name(arr.type)})", CompileError)
