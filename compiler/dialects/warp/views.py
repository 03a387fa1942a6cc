"""Named accessors for warp ops, generated from the op table (`ops.OPS`).

Each table op gets an `ir.OpView` subclass registered with the bindings, so every warp op the bindings
hand out (block iteration, `value.owner`, `operation.opview`) reads by name:

    load = value.owner          # a LoadOp
    load.array, load.indices    # the array operand, the index operands (a list)
    atomic.kind                 # "add" (string attributes as str, integer ones as int)
    view.indices = [...]        # operands can be assigned (a variadic group: as many values as it has)

`register()` (called by `load_dialect`) installs them. Wrapping a bare `ir.Operation` works too:
`view(op)` or `LoadOp(op)`. Builtin-table ops have no view class (their operands are positional:
`op.operands`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects._ods_common import _cext

from .ops import OPS, OpDef


def group_slices(items, count: int, segments=None) -> dict:
    """name -> (slice of the operand (or result) list, whether the group is a list); `segments`: the op's
    operandSegmentSizes (resultSegmentSizes), which an op with several variadic or optional groups carries,
    else at most one group is variadic."""
    if segments is not None:
        starts = [sum(segments[:k]) for k in range(len(segments))]
        return {x.name: (slice(i, i + n), x.variadic) for x, i, n in zip(items, starts, segments)}
    fixed = sum(1 for x in items if not x.variadic)
    out, i = {}, 0
    for x in items:
        n = count - fixed if x.variadic else 1
        out[x.name] = (slice(i, i + n), x.variadic)
        i += n
    return out


def segments(op: ir.Operation, kind: str):
    name = "operandSegmentSizes" if kind == "operands" else "resultSegmentSizes"
    return list(ir.DenseI32ArrayAttr(op.attributes[name])) if name in op.attributes else None


def _value_accessor(name: str, kind: str, defs) -> property:
    def get(self):
        values = list(getattr(self.operation, kind))
        where, variadic = group_slices(defs, len(values), segments(self.operation, kind))[name]
        picked = values[where]
        return picked if variadic else picked[0] if picked else None  # (an absent optional value: None)

    if kind != "operands":
        return property(get, doc=f"the {name} {kind} (table order)")

    def set(self, new):
        """Replaces the operand (a variadic group: as many values as it has) in place."""
        operands = self.operation.operands
        where, variadic = group_slices(defs, len(operands), segments(self.operation, "operands"))[name]
        slots = range(len(operands))[where]
        new = list(new) if variadic else [new]
        if len(new) != len(slots):
            raise ValueError(f"{self.operation.name}.{name}: {len(slots)} operands, got {len(new)} values")
        for k, v in zip(slots, new):
            operands[k] = v

    return property(get, set, doc=f"the {name} {kind} (table order); assigning replaces it in place")


def _attr_accessor(name: str) -> property:
    def get(self):
        a = self.operation.attributes[name]
        if isinstance(a, ir.StringAttr):
            return a.value
        if isinstance(a, ir.IntegerAttr):
            return a.value
        return a

    return property(get, doc=f"the {name} attribute")


class _Dialect(ir.Dialect):
    DIALECT_NAMESPACE = "warp"


def _class_name(op: OpDef) -> str:
    return "".join(part.capitalize() for part in op.name.split("_")) + "Op"


def _make_view(op: OpDef) -> type:
    accessors = {x.name: _value_accessor(x.name, "operands", op.operands) for x in op.operands}
    accessors.update({x.name: _value_accessor(x.name, "results", op.results) for x in op.results})
    accessors.update({a.name: _attr_accessor(a.name) for a in op.attributes})
    clash = sorted(set(accessors) & set(dir(ir.OpView)))
    if clash:  # e.g. a result named "result" would hide OpView.result
        raise AssertionError(f"warp.{op.name}: accessor names {clash} shadow ir.OpView attributes")
    namespace = {"OPERATION_NAME": op.full_name, "_ODS_REGIONS": (0, True), "__doc__": f"warp.{op.name}: {op.summary}"}
    return type(_class_name(op), (ir.OpView,), {**namespace, **accessors})


VIEWS = {op.name: _make_view(op) for op in OPS}
globals().update({cls.__name__: cls for cls in VIEWS.values()})
_registered = False


def register() -> None:
    """Makes the bindings hand out the view classes for warp ops (process-wide; load_dialect calls it)."""
    global _registered
    if _registered:
        return
    _cext.register_dialect(_Dialect)
    for cls in VIEWS.values():
        _cext.register_operation(_Dialect, replace=True)(cls)
    _registered = True


def view(op):
    """The named view of a warp op (an ir.Operation or OpView); None for a builtin-table op or a
    non-warp op."""
    op = op.operation if isinstance(op, ir.OpView) else op
    if not op.name.startswith("warp."):
        return None
    cls = VIEWS.get(op.name[len("warp."):])
    return cls(op) if cls is not None else None


__all__ = ["VIEWS", "register", "view", *(cls.__name__ for cls in VIEWS.values())]
