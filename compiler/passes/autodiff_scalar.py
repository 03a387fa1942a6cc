"""warp-autodiff's adjoints of scalar code: builtins by the builtin table's derivative rules, array reads,
writes and atomics (Warp's rules, autodiff.py's docstring), asserts and adjoint prints. ReverseBuilder
(autodiff.py) mixes ScalarAdjoints in."""

from __future__ import annotations

import contextlib

from mlir import ir
from mlir.dialects import arith, scf

from ..builtins.derivatives import NOT_DIFFERENTIABLE, Expansion, V, rule_of
from ..dialects.warp import array_dtype, builders as wb
from ..dialects.warp import composite as wc
from .autodiff_ir import (add_values, body_ops, clone_ops, expansion_block, i32_const, is_diff, raw_grad_address,
                          required_companion, where, without_adjoint, zero)
from .registry import PassError


class ScalarAdjoints:
    """The reverse of builtins and array accesses (`self`: the ReverseBuilder)."""

    def builtin(self, op, mapping, adj):
        name = op.name[len("warp."):]
        out = op.results[0] if len(op.results) == 1 else None
        if out is None or out not in adj:
            return
        rule = rule_of(name, [v.type for v in op.operands])
        if rule is NOT_DIFFERENTIABLE:
            return
        if rule is None:
            raise PassError(f"{where(op)}: the builtin '{name}' has no derivative rule in the builtin table; "
                            f"add one (compiler/builtins/derivatives.py) or launch with enable_backward=False")
        if isinstance(rule, Expansion):
            return self.expanded(op, rule, mapping, adj)
        args = [V(mapping.get(v, v)) for v in op.operands]
        grads = rule.vjp(V(adj[out]), args, V(mapping[out]))
        for v, g in zip(op.operands, grads):
            self.accumulate(adj, v, g)

    def expanded(self, op, rule, mapping, adj):
        """Replays the builtin's formula, then reverses it like kernel code."""
        scratch, block, ops, out = expansion_block(rule, op)  # noqa: F841 (scratch owns the ops)
        m = {a: mapping.get(v, v) for a, v in zip(block.arguments, op.operands)}
        clone_ops(ops, m)
        local = {out: adj[op.results[0]]}
        self.reverse(ops, m, local)
        for a, v in zip(block.arguments, op.operands):
            if a in local:
                self.accumulate(adj, v, local[a])

    def op_warp_assert(self, op, mapping, adj):
        pass  # checked in the forward replay; nothing flows back

    def op_warp_adjoint_print(self, op, mapping, adj):
        """print(x) in the reverse sweep: its body with x's adjoint so far (what the launch passed for an argument
        plus what the sweep has added; zero for a value without a derivative), as Warp's adj_print."""
        body = op.regions[0].blocks[0]
        local = dict(mapping)
        if len(body.arguments):
            x = op.operands[0]
            given = self.given_adjoints.get(x)
            if x in adj:
                value = adj[x] if given is None else add_values(given, adj[x])
            else:
                value = given if given is not None else zero(x.type)
            local[body.arguments[0]] = value
        clone_ops(body_ops(body), local)

    def adj_array(self, op, arr, mapping):
        return required_companion(op, arr, self.adj_arrays, mapping, "adjoint")

    @staticmethod
    def indices(op, mapping):
        """The (mapped) index operands of a warp op that has them (load, store, atomic, extract, ...)."""
        return [mapping.get(v, v) for v in op.opview.indices]

    def op_warp_load(self, op, mapping, adj):
        load = op.opview
        out = load.element
        if "warp.no_adjoint" in op.attributes:  # a composite atomic_cas's read (frontend/atomics.py)
            return
        if out in adj and not without_adjoint(load.array):  # raw memory without grad: none (autodiff_ir.py)
            arr = load.array
            target, idx = self.adj_array(op, arr, mapping), self.indices(op, mapping)
            if arr in self.owned:  # no other thread touches adj[i]: a plain read-add-write
                wb.store(target, add_values(wb.load(target, idx), adj[out]), idx)
            else:  # (a struct's atomic add is field by field: convert-warp-composites-to-vector)
                with grad_present(arr, mapping, target):
                    wb.atomic("add", target, adj[out], idx)

    def op_warp_store(self, op, mapping, adj):
        arr, value = op.opview.array, op.opview.value
        if "warp.no_adjoint" in op.attributes:  # a composite atomic_cas's write (frontend/atomics.py)
            return
        if is_diff(value.type) and not without_adjoint(arr):
            target, idx = self.adj_array(op, arr, mapping), self.indices(op, mapping)
            self.accumulate(adj, value, read_adjoint(arr, target, idx, mapping))
            if is_member_write(op):
                # The element's other members pass through the load that the write started from, whose
                # adjoint adds them back; the written member's adjoint ends here (as Warp's in-place store).
                with grad_present(arr, mapping, target):
                    wb.store(target, zero(value.type), idx)
                return
            consumes = self.consumes(arr)
            if consumes is not None:  # the stored value's adjoint ends here, as Warp 1.19's store
                guard = scf.IfOp(consumes, [], has_else=False)
                with ir.InsertionPoint(guard.then_block):
                    wb.store(target, zero(value.type), idx)
                    scf.YieldOp([])

    def consumes(self, arr):
        """i1: whether stores into `arr` consume their adjoint, i.e. the launch passed the argument that `arr`
        is (or is a row, slice or struct field of) its own `.grad` (Warp clears a stored element's adjoint then,
        and keeps an adjoint buffer the caller passed otherwise); None when `arr` is no argument's. An array with
        retain_grad keeps it, but not through a row or slice taken in the kernel: Warp's views drop the array's
        flags, so a store through one consumes the gradient all the same."""
        k = argument_index(arr, self.params)
        if k is None or self.consumed is None:
            return None
        bits = self.own_grads if self.own_grads is not None and through_view(arr) else self.consumed
        i64 = ir.IntegerType.get_signless(64)
        bit = arith.AndIOp(arith.ShRUIOp(bits, arith.ConstantOp(i64, k).result).result,
                           arith.ConstantOp(i64, 1).result).result
        return arith.CmpIOp(arith.CmpIPredicate.ne, bit, arith.ConstantOp(i64, 0).result).result

    def op_warp_atomic(self, op, mapping, adj):
        atomic = op.opview
        arr, value, kind = atomic.array, atomic.value, atomic.kind
        if not is_diff(value.type) or without_adjoint(arr):
            return
        if kind in ("min", "max"):
            # As Warp: the value's adjoint is the element's where the value is what the element holds after
            # the forward launch (component-wise; two NaNs count as equal), zero elsewhere.
            idx = self.indices(op, mapping)
            g = read_adjoint(arr, self.adj_array(op, arr, mapping), idx, mapping)
            final = wb.load(mapping.get(arr, arr), idx)
            self.accumulate(adj, value, minmax_adjoint(mapping.get(value, value), final, g))
            return
        if kind == "exch":  # as Warp's adj_atomic_exch: no adjoint (atomic_exch is not differentiable)
            return
        if kind not in ("add", "sub"):
            raise PassError(f"{where(op)}: cannot differentiate atomic '{kind}'")
        g = read_adjoint(arr, self.adj_array(op, arr, mapping), self.indices(op, mapping), mapping)
        self.accumulate(adj, value, g if kind == "add" else wb.builtin("neg", [g], g.type))


def minmax_adjoint(value: ir.Value, final: ir.Value, g: ir.Value) -> ir.Value:
    """g where value == final (or both are NaN), 0 elsewhere; component by component for vectors and matrices."""
    c = wc.composite(value.type)
    if c is None:
        same = arith.OrIOp(arith.CmpFOp(arith.CmpFPredicate.OEQ, value, final).result,
                           arith.AndIOp(arith.CmpFOp(arith.CmpFPredicate.UNO, value, value).result,
                                        arith.CmpFOp(arith.CmpFPredicate.UNO, final, final).result).result).result
        return arith.SelectOp(same, g, zero(g.type)).result
    if len(c.shape) == 1:
        positions = [[i32_const(i)] for i in range(c.shape[0])]
    else:
        positions = [[i32_const(i), i32_const(j)] for i in range(c.shape[0]) for j in range(c.shape[1])]
    parts = [minmax_adjoint(wc.extract(value, p, c.dtype), wc.extract(final, p, c.dtype), wc.extract(g, p, c.dtype))
             for p in positions]
    return wc.construct(value.type, parts)

@contextlib.contextmanager
def grad_present(arr: ir.Value, mapping: dict, target: ir.Value):
    """Emits what the body emits under `if grad != 0` when `arr` is raw memory with a grad address (a mesh whose
    points have no .grad has 0 there: nothing may be written through it) or its adjoint `target` the gradient a
    struct records (0 when the array it holds had none), else as it is."""
    address = raw_grad_address(arr, mapping, target)
    if address is None:
        yield
        return
    guard = scf.IfOp(nonzero(address), [], has_else=False)
    with ir.InsertionPoint(guard.then_block):
        yield
        scf.YieldOp([])

def read_adjoint(arr: ir.Value, target: ir.Value, idx, mapping: dict) -> ir.Value:
    """target[idx], the adjoint of arr[idx]; zero where its grad address is 0 (grad_present)."""
    address = raw_grad_address(arr, mapping, target)
    if address is None:
        return wb.load(target, idx)
    t = array_dtype(target.type)
    guard = scf.IfOp(nonzero(address), [t], has_else=True)
    with ir.InsertionPoint(guard.then_block):
        scf.YieldOp([wb.load(target, idx)])
    with ir.InsertionPoint(guard.else_block):
        scf.YieldOp([zero(t)])
    return guard.results[0]

def nonzero(address: ir.Value) -> ir.Value:
    return arith.CmpIOp(arith.CmpIPredicate.ne, address, arith.ConstantOp(address.type, 0).result).result

def argument_index(arr: ir.Value, params) -> int | None:
    """The index of the kernel argument that the array `arr` is, or is a row (warp.view), a slice (warp.slice)
    or a struct field (warp.struct_get) of; None for anything else."""
    while True:
        for k, p in enumerate(params):
            if arr == p:
                return k
        owner = arr.owner if isinstance(arr, ir.OpResult) else None
        if owner is None or owner.name not in ("warp.view", "warp.slice", "warp.struct_get"):
            return None
        arr = owner.opview.aggregate if owner.name == "warp.struct_get" else owner.opview.array

def through_view(arr: ir.Value) -> bool:
    """Whether the array `arr` is a row (warp.view) or slice (warp.slice) of an argument, at some depth."""
    while isinstance(arr, ir.OpResult) and arr.owner.name in ("warp.view", "warp.slice", "warp.struct_get"):
        if arr.owner.name != "warp.struct_get":
            return True
        arr = arr.owner.opview.aggregate
    return False

def is_member_write(store) -> bool:
    """Whether a warp.store writes back the element it loaded with some members replaced (`y[i].y = v`,
    `y[i][2] += v`, `out[i].pos.x = v`: the frontend's load -> insert / struct_set -> store)."""
    store = store.opview
    value = store.value
    while isinstance(value, ir.OpResult) and value.owner.name in ("warp.insert", "warp.struct_set"):
        value = value.owner.opview.aggregate
    if not (isinstance(value, ir.OpResult) and value.owner.name == "warp.load"):
        return False
    load = value.owner.opview
    return same_place(load.array, store.array) and len(load.indices) == len(store.indices) and \
        all(same_place(a, b) for a, b in zip(load.indices, store.indices))


_PLACE_OPS = ("warp.load", "warp.struct_get", "warp.view")


def same_place(a: ir.Value, b: ir.Value) -> bool:
    """Whether two values are the same, or the same read of the same place made twice (`holders[0].values`
    in `holders[0].values[0].x = v`: the frontend reads the struct again for the store)."""
    if a == b:
        return True
    if not (isinstance(a, ir.OpResult) and isinstance(b, ir.OpResult)):
        return False
    x, y = a.owner, b.owner
    if x.name != y.name or x.name not in _PLACE_OPS or a.result_number != b.result_number:
        return False
    if {n: str(x.attributes[n]) for n in x.attributes} != {n: str(y.attributes[n]) for n in y.attributes}:
        return False
    return len(x.operands) == len(y.operands) and all(same_place(p, q) for p, q in zip(x.operands, y.operands))
