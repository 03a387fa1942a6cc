"""The frontend for indexed arrays (`wp.indexedarray`, python/mlwarp/arrays/indexed.py).

An indexed array is a value of an internal struct type (its class carries `_wp_indexed_ = (dtype, ndim)`):
`data` (the viewed array), `i0..` (per dimension, an int32 index array) and `u0..` (per dimension, 1 when the
dimension has no index array, whose index descriptor then reads a zero with stride 0). Indexing rewrites to
the plain array access

    a[i, j]  ->  data[i0[i] + i * u0, i1[j] + j * u1]

(loads, stores, atomics, `a[i] += v` go through expressions.py's array_access), `a[i]` of an N-d indexed array is
the (N-1)-d indexed array over `view(data, i0[i] + i * u0)` and the remaining index arrays, and `a.shape[d]`
is `i{d}.shape[0]` (a dimension without index array has a descriptor of data.shape[d] elements).
"""

from __future__ import annotations

from mlir.dialects import arith

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError
from mlwarp.core.types import ArrayT

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import types as ft
from .values import Var


def is_indexed(t) -> bool:
    return wt.is_struct(t) and getattr(t, "_wp_indexed_", None) is not None


def _field(arr: Var, k: int, t) -> Var:
    return Var(wc.struct_get(arr.value, k, ft.to_mlir(t)), t)


def data(arr: Var) -> Var:
    dtype, ndim = arr.type._wp_indexed_
    return _field(arr, 0, ArrayT(dtype, ndim))


def _index_array(arr: Var, d: int) -> Var:
    return _field(arr, 1 + d, ArrayT(wt.int32, 1))


def _unindexed(arr: Var, d: int) -> Var:
    return _field(arr, 1 + arr.type._wp_indexed_[1] + d, wt.int32)


def mapped(arr: Var, d: int, i):
    """Dimension d's index `i` (an i32 value) as the data array's: i{d}[i] + i * u{d}."""
    looked_up = wb.load(_index_array(arr, d).value, [i])
    return arith.addi(looked_up, arith.muli(i, _unindexed(arr, d).value))


def access(em, node, arr: Var, indices, allow_view: bool):
    """expressions.py's array_access for an indexed array: the data array and its indices, all dimensions given;
    with `allow_view` and fewer indices, the indexed sub-array (`Var`) and None."""
    ndim = arr.type._wp_indexed_[1]
    rows = [mapped(arr, d, i) for d, i in enumerate(indices)]
    if len(indices) == ndim:
        return data(arr), rows
    if not allow_view:
        raise em.error(node, f"a {ndim}-d array needs {ndim} indices, got {len(indices)}", CompileError)
    return view(arr, rows), None


def view(arr: Var, rows) -> Var:
    """The indexed array of rank N-k over `view(data, rows)` (k = len(rows) data indices) and the index
    arrays of the remaining dimensions."""
    t = arr.type
    ndim = t._wp_indexed_[1]
    k = len(rows)
    out = t
    for _ in range(k):
        out = out._wp_indexed_view_
    value = wc.construct(ft.to_mlir(out), [])
    value = wc.struct_set(value, 0, wb.view(data(arr).value, rows))
    rest = ndim - k
    for d in range(rest):
        value = wc.struct_set(value, 1 + d, _index_array(arr, k + d).value)
        value = wc.struct_set(value, 1 + rest + d, _unindexed(arr, k + d).value)
    return Var(value, out)


def dim(arr: Var, d: int) -> Var:
    """`a.shape[d]`."""
    return Var(wb.array_dim(_index_array(arr, d).value, 0), wt.int32)
