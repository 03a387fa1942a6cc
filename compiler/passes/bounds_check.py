"""warp-bounds-check: debug mode's array bounds checks, on the warp dialect (before array lowering).

Each kernel gets a hidden trailing parameter, the error record of
runtime/error_record.py (`!warp.array<i64, 1>`). Every warp.load / store /
atomic is guarded: when an index is outside `[-shape[d], shape[d])` (a negative
one counts from the end, as the array lowering wraps it) the access is
skipped (a load yields 0) and the first failing thread writes the site, its
thread index, the indices and the shape into the record, which the runtime
reads after the launch. warp.address is checked and recorded but not skipped:
its user does the access (an address only a prefetch reads is not checked: a hint, it cannot fault).
An out-of-range warp.view (`a[i]` of a 2-d array)
is recorded and views index 0 instead, so the accesses through it stay inside.
A warp.assert (the kernel's `assert`) whose condition is false is recorded
the same way (a site of op "assert" with the statement's text, no indices).

Each guarded access becomes a "site": its op, the array's parameter index
and its source location, read from the op's location (the frontend gives
every op `file:line:col`). The sites go to the module attribute
`warp.debug_sites` (JSON), which the driver moves into the kernel's metadata.
"""

from __future__ import annotations

import json
import re

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.runtime import error_record as rec

from ..dialects.warp import array_ndim, array_type, builders as wb, composite as wc, is_array_type
from . import registry
from .registry import PassError
from .ir_walk import kernels, ops_named

SITES_ATTR = "warp.debug_sites"
CHECKED_ATTR = "warp.bounds_checked"  # on a kernel: already has its record parameter and guards
_CHECKED_OPS = {"warp.load", "warp.store", "warp.atomic", "warp.address", "warp.view"}
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def _only_prefetched(op) -> bool:
    """An address only a prefetch reads (core/hints.py): a hint, which cannot fault, not an access."""
    uses = [u.owner for u in op.results[0].uses] if op.name == "warp.address" else []
    return bool(uses) and all(u.name == "llvm.intr.prefetch" for u in uses)


def _i(bits):
    return ir.IntegerType.get_signless(bits)


def _const(value, t):
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, value)).result


def zero_of(t: ir.Type) -> ir.Value:
    """The value a skipped load yields."""
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, 0.0)).result
    if isinstance(t, ir.IntegerType):
        v = _const(0, _i(t.width))
        return v if t.is_signless else wb.cast(v, t)
    if wc.is_composite_type(t):  # vec/mat/quat/transform/struct: warp.construct without operands is zero
        return wc.construct(t, [])
    if isinstance(t, ir.VectorType):
        return arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(t, zero_attr(t.element_type))).result
    raise PassError(f"warp-bounds-check: no zero value for array element type {t}")


def zero_attr(t: ir.Type) -> ir.Attribute:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerAttr.get(t, 0)
    return ir.FloatAttr.get(t, 0.0)


def source_locations(loc: ir.Location) -> list:
    """`file:line:col` of a location, innermost first (a callsite location lists its callers after it)."""
    return [f"{m.group(1)}:{m.group(2)}:{m.group(3)}" for m in _FILE_LOC.finditer(str(loc))]


class BoundsCheck(registry.BoundsCheck):
    def run(self, module):
        sites = _read_sites(module)
        for kernel in kernels(module):
            if CHECKED_ATTR in kernel.attributes:
                continue
            with kernel.location:
                self.check_kernel(kernel, sites)
        if sites:
            module.attributes[SITES_ATTR] = ir.StringAttr.get(json.dumps(sites))

    def check_kernel(self, kernel, sites):
        body = kernel.regions[0].blocks[0]
        params = list(body.arguments)
        ft = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
        record_t = array_type(_i(64), 1)
        record = body.add_argument(record_t, kernel.location)
        kernel.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([*ft.inputs, record_t], list(ft.results)))
        kernel.attributes[CHECKED_ATTR] = ir.UnitAttr.get()
        for op in ops_named(kernel, {"warp.assert"}):
            locs = source_locations(op.location)
            sites.append({"op": "assert", "arg": -1, "fields": [], "message": ir.StringAttr(op.attributes["message"]).value,
                          "location": locs[0] if locs else str(op.location), "called_from": locs[1:]})
            with ir.InsertionPoint(op), op.location:
                failed = arith.XOrIOp(op.operands[0], _const(1, _i(1))).result
                report = scf.IfOp(failed, [], has_else=False)
                with ir.InsertionPoint(report.then_block):
                    self.record(record, len(sites) - 1, [], [])
                    scf.YieldOp([])
            op.erase()
        for op in ops_named(kernel, _CHECKED_OPS):
            if _only_prefetched(op):
                continue
            access = op.opview
            arr, indices = access.array, access.indices
            if not is_array_type(arr.type):
                raise PassError(f"warp-bounds-check: {op.name} on a non-array operand of type {arr.type}")
            locs = source_locations(op.location)
            arg, fields = _array_origin(arr, params)
            site = {"op": op.name[len("warp."):], "arg": arg, "fields": fields,
                    "location": locs[0] if locs else str(op.location), "called_from": locs[1:]}
            sites.append(site)
            with ir.InsertionPoint(op), op.location:
                self.guard(op, arr, indices, record, len(sites) - 1)

    def guard(self, op, arr, indices, record, site_id):
        dims = [wb.array_dim(arr, d) for d in range(array_ndim(arr.type))]
        ok = None
        zero32 = _const(0, _i(32))
        for idx, dim in zip(indices, dims):
            # a negative index counts from the end (as the lowering wraps it), so [-shape, shape) is inside;
            # unsigned after the wrap: a still negative index is a huge one, so one compare checks both ends
            negative = arith.CmpIOp(arith.CmpIPredicate.slt, idx, zero32).result
            wrapped = arith.SelectOp(negative, arith.AddIOp(idx, dim).result, idx).result
            inside = arith.CmpIOp(arith.CmpIPredicate.ult, wrapped, dim).result
            ok = inside if ok is None else arith.AndIOp(ok, inside).result
        if ok is None:  # a 0-d access has nothing to check
            return
        if op.name == "warp.view":  # out of range: the view at index 0 instead, so its accesses stay inside
            zero = _const(0, _i(32))
            op.opview.indices = [arith.SelectOp(ok, idx, zero).result for idx in indices]
        if op.name in ("warp.address", "warp.view"):
            failed = arith.XOrIOp(ok, _const(1, _i(1))).result
            report = scf.IfOp(failed, [], has_else=False)
            with ir.InsertionPoint(report.then_block):
                self.record(record, site_id, indices, dims)
                scf.YieldOp([])
            return
        results = list(op.results)
        guarded = scf.IfOp(ok, [r.type for r in results], has_else=True)
        for r, g in zip(results, guarded.results):
            r.replace_all_uses_with(g)
        with ir.InsertionPoint(guarded.then_block):
            then_yield = scf.YieldOp(results)
        op.move_before(then_yield)
        with ir.InsertionPoint(guarded.else_block):
            self.record(record, site_id, indices, dims)
            scf.YieldOp([zero_of(r.type) for r in results])

    def record(self, record, site_id, indices, dims):
        """The first failing thread fills the record; later ones only count."""
        i64, i32 = _i(64), _i(32)
        old = wb.atomic("add", record, _const(1, i64), [_const(rec.COUNT, i32)])
        first = arith.CmpIOp(arith.CmpIPredicate.eq, old, _const(0, i64)).result
        fill = scf.IfOp(first, [], has_else=False)
        with ir.InsertionPoint(fill.then_block):
            def put(slot, value):
                if value.type != i64:
                    value = arith.ExtSIOp(i64, value).result
                wb.store(record, value, [_const(slot, i32)])

            put(rec.SITE, _const(site_id, i64))
            put(rec.THREAD, wb.linear_tid())
            put(rec.NDIM, _const(len(indices), i64))
            for d, (idx, dim) in enumerate(zip(indices, dims)):
                put(rec.INDEX + d, idx)
                put(rec.SHAPE + d, dim)
            scf.YieldOp([])


def _array_origin(value, params) -> tuple:
    """(parameter index, struct field indices) of an array that is a kernel parameter or a field (of a field
    ...) of a struct parameter; (-1, []) otherwise."""
    fields = []
    while True:
        for k, p in enumerate(params):
            if value == p:
                return k, fields[::-1]
        owner = value.owner if isinstance(value, ir.OpResult) else None
        if owner is not None and owner.name in ("warp.view", "warp.slice"):  # a row or slice: reported as the array
            value = owner.opview.array
            continue
        if owner is None or owner.name != "warp.struct_get":
            return -1, []
        fields.append(owner.opview.field)
        value = owner.opview.aggregate


def _read_sites(module) -> list:
    if SITES_ATTR in module.attributes:
        return json.loads(ir.StringAttr(module.attributes[SITES_ATTR]).value)
    return []
