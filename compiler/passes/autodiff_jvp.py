"""warp-jvp: forward-mode differentiation (Jacobian-vector products) of kernels, in the warp dialect.

For each kernel `k(args...)` the pass adds `k_jvp(args..., tan_args...)`: the
forward computation itself (with its stores and atomics), plus the tangent of
every floating-point value, from the same rules of the builtin table that
reverse mode uses (`Rule.jvp`). Tangent arguments: an array of the same
shape per array (read for inputs, written where the kernel writes), a number
per scalar (float scalars are differentiable here, unlike in reverse mode), a
value of the argument's type per vector, matrix, ..., struct (a struct tangent's
array fields are the tangent arrays of the argument's array fields).
  x[i] read        -> tangent tan_x[i]
  y[i] = v         -> tan_y[i] = tan_v
  y[i] += v        -> tan_y[i] += tan_v (atomically)
Loops carry the tangents of their state as extra loop values, so loops of any
kind cost nothing beyond the forward run: forward mode needs no recomputation.
Refused, with a message: a builtin without a rule, a used atomic result, calls.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, scf

from ..builtins.derivatives import NOT_DIFFERENTIABLE, Expansion, V, rule_of
from ..dialects.warp import array_dtype, builders as wb, is_array_type
from ..dialects.warp import composite as wc
from .autodiff_ir import (body_ops, companions_of, create_like, derived_kernel, expansion_block, from_raw_pointer,
                          required_companion,
                          is_diff, terminator, where, zero)
from . import registry
from .registry import PassError
from .ir_walk import kernels

JVP_SUFFIX = "_jvp"


def tangent_name(kernel_name: str) -> str:
    return kernel_name + JVP_SUFFIX


class TangentBuilder:
    """Clones ops at the insertion point with `mapping` (original -> new value) and fills `tan`
    (original value -> its tangent; absent = zero)."""

    def __init__(self, tan_arrays: dict):
        self.tan_arrays = tan_arrays

    def m(self, mapping, v):
        return mapping.get(v, v)

    def t_or_zero(self, tan, v):
        return tan[v] if v in tan else zero(v.type)

    def emit(self, ops, mapping, tan):
        for op in ops:
            op = op.operation
            handler = getattr(self, "op_" + op.name.replace(".", "_"), None)
            if handler is not None:
                handler(op, mapping, tan)
            elif op.name.startswith("warp."):
                self.plain(op, mapping)
                self.builtin(op, mapping, tan)
            else:
                if op.regions:
                    raise PassError(f"{where(op)}: forward mode cannot differentiate '{op.name}'")
                if any(is_diff(r.type) for r in op.results) and op.name != "arith.constant":
                    raise PassError(f"{where(op)}: forward mode cannot differentiate '{op.name}'")
                self.plain(op, mapping)

    def op_warp_adjoint_print(self, op, mapping, tan):
        pass  # a reverse-sweep print (Warp has no tangent print): erased after the pass

    def plain(self, op, mapping):
        new = create_like(op, [self.m(mapping, v) for v in op.operands])
        for r, nr in zip(op.results, new.results):
            mapping[r] = nr
        return new

    def builtin(self, op, mapping, tan):
        if len(op.results) != 1 or not is_diff(op.results[0].type):
            return
        tangents = [tan.get(v) for v in op.operands]
        if all(t is None for t in tangents):
            return
        name = op.name[len("warp."):]
        rule = rule_of(name, [v.type for v in op.operands])
        if rule is None or rule is NOT_DIFFERENTIABLE:
            raise PassError(f"{where(op)}: the builtin '{name}' has no derivative rule in the builtin table")
        out = op.results[0]
        if isinstance(rule, Expansion):  # the formula again, with tangents
            scratch, block, ops, result = expansion_block(rule, op)  # noqa: F841 (scratch owns the ops)
            m = {a: self.m(mapping, v) for a, v in zip(block.arguments, op.operands)}
            t = {a: tan[v] for a, v in zip(block.arguments, op.operands) if v in tan}
            self.emit(ops, m, t)
            if result in t:
                tan[out] = t[result]
            return
        t = rule.jvp([V(x) if x is not None else None for x in tangents],
                     [V(self.m(mapping, v)) for v in op.operands], V(mapping[out]))
        if t is not None:
            tan[out] = t.value

    # -- composite values: the tangent is built like the value -------------------------------
    def op_warp_construct(self, op, mapping, tan):
        self.plain(op, mapping)
        construct = op.opview
        if any(e in tan for e in construct.elements):
            out = construct.composite
            tan[out] = wc.construct(out.type, [self.t_or_zero(tan, e) for e in construct.elements])

    def op_warp_extract(self, op, mapping, tan):
        self.plain(op, mapping)
        extract = op.opview
        src, out = extract.aggregate, extract.element
        if src in tan and is_diff(out.type):
            tan[out] = wc.extract(tan[src], self.indices(op, mapping), out.type)

    def op_warp_insert(self, op, mapping, tan):
        self.plain(op, mapping)
        insert = op.opview
        src, elem = insert.aggregate, insert.element
        if (src in tan or elem in tan) and is_diff(src.type):
            tan[insert.updated] = wc.insert(self.t_or_zero(tan, src), self.t_or_zero(tan, elem),
                                            self.indices(op, mapping))

    def op_warp_struct_get(self, op, mapping, tan):
        self.plain(op, mapping)
        get = op.opview
        src, out = get.aggregate, get.element
        if src in tan and is_diff(out.type):
            tan[out] = wc.struct_get(tan[src], get.field, out.type)

    def op_warp_struct_set(self, op, mapping, tan):
        self.plain(op, mapping)
        set_ = op.opview
        src, elem, out = set_.aggregate, set_.element, set_.updated
        if not is_diff(elem.type):  # an int or array field (arrays' tangents are companions): no tangent
            if src in tan:
                tan[out] = tan[src]
        elif (src in tan or elem in tan) and is_diff(src.type):
            tan[out] = wc.struct_set(self.t_or_zero(tan, src), set_.field, self.t_or_zero(tan, elem))

    def op_warp_cast(self, op, mapping, tan):
        self.plain(op, mapping)
        src, out = op.opview.input, op.opview.output
        if src in tan and is_diff(out.type):
            tan[out] = wb.cast(tan[src], out.type)

    def op_arith_select(self, op, mapping, tan):
        self.plain(op, mapping)
        out = op.results[0]
        if op.operands[1] in tan or op.operands[2] in tan:
            tan[out] = arith.SelectOp(self.m(mapping, op.operands[0]), self.t_or_zero(tan, op.operands[1]),
                                      self.t_or_zero(tan, op.operands[2])).result

    def tan_array(self, op, arr, mapping):
        return required_companion(op, arr, self.tan_arrays, mapping, "tangent")

    def indices(self, op, mapping):
        """The (mapped) index operands of a warp op that has them (load, store, atomic, extract, ...)."""
        return [self.m(mapping, v) for v in op.opview.indices]

    def op_warp_load(self, op, mapping, tan):
        self.plain(op, mapping)
        load = op.opview
        out = load.element
        if is_diff(out.type) and not from_raw_pointer(load.array) and "warp.no_adjoint" not in op.attributes:  # raw memory: a constant (autodiff_ir.py)
            tan[out] = wb.load(self.tan_array(op, load.array, mapping), self.indices(op, mapping))

    def op_warp_store(self, op, mapping, tan):
        self.plain(op, mapping)
        store = op.opview
        value = store.value
        if is_diff(value.type) and not from_raw_pointer(store.array) and "warp.no_adjoint" not in op.attributes:
            wb.store(self.tan_array(op, store.array, mapping), self.t_or_zero(tan, value),
                     self.indices(op, mapping))

    def op_warp_atomic(self, op, mapping, tan):
        self.plain(op, mapping)
        atomic = op.opview
        value = atomic.value
        if not is_diff(value.type):
            return
        if list(atomic.old.uses):
            raise PassError(f"{where(op)}: forward mode cannot differentiate the value returned by an atomic")
        kind = atomic.kind
        if kind == "exch":  # not differentiable, as Warp's
            return
        if kind not in ("add", "sub"):
            raise PassError(f"{where(op)}: cannot differentiate atomic '{kind}'")
        if value in tan:
            wb.atomic(kind, self.tan_array(op, atomic.array, mapping), tan[value], self.indices(op, mapping))


    # -- structured control flow: tangents of float results/state ride along as extra values ----------
    def op_scf_if(self, op, mapping, tan):
        results = list(op.results)
        diff = [r for r in results if is_diff(r.type)]
        new = scf.IfOp(self.m(mapping, op.operands[0]), [r.type for r in results] + [r.type for r in diff],
                       has_else=True)
        for src_region, block in zip(op.regions, (new.then_block, new.else_block)):
            with ir.InsertionPoint(block):
                if not src_region.blocks:  # no else: nothing changes
                    scf.YieldOp([])
                    continue
                src = src_region.blocks[0]
                local_map, local_tan = dict(mapping), dict(tan)
                self.emit(body_ops(src), local_map, local_tan)
                ys = list(terminator(src).operands)
                scf.YieldOp([self.m(local_map, y) for y in ys]
                            + [self.t_or_zero(local_tan, y) for y, r in zip(ys, results) if is_diff(r.type)])
        out = list(new.results)
        for r, nr in zip(results, out):
            mapping[r] = nr
        for r, t in zip(diff, out[len(results):]):
            tan[r] = t

    def op_scf_for(self, op, mapping, tan):
        lo, hi, step, *inits = list(op.operands)
        body = op.regions[0].blocks[0]
        diff = [k for k, v in enumerate(inits) if is_diff(v.type)]
        loop = scf.ForOp(self.m(mapping, lo), self.m(mapping, hi), self.m(mapping, step),
                         [self.m(mapping, v) for v in inits] + [self.t_or_zero(tan, inits[k]) for k in diff])
        with ir.InsertionPoint(loop.body):
            local_map, local_tan = dict(mapping), dict(tan)
            args = list(loop.inner_iter_args)
            local_map[body.arguments[0]] = loop.induction_variable
            src_args = list(body.arguments)[1:]
            for a, v in zip(src_args, args):
                local_map[a] = v
            for k, t in zip(diff, args[len(inits):]):
                local_tan[src_args[k]] = t
            self.emit(body_ops(body), local_map, local_tan)
            ys = list(terminator(body).operands)
            scf.YieldOp([self.m(local_map, y) for y in ys] + [self.t_or_zero(local_tan, ys[k]) for k in diff])
        self.bind_results(op, list(loop.results), diff, mapping, tan)

    def op_scf_while(self, op, mapping, tan):
        inits = list(op.operands)
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        diff = [k for k, v in enumerate(inits) if is_diff(v.type)]
        passed_types = [r.type for r in op.results]
        pdiff = [k for k, t in enumerate(passed_types) if is_diff(t)]
        state_types = [v.type for v in inits] + [inits[k].type for k in diff]
        out_types = passed_types + [passed_types[k] for k in pdiff]
        loop = scf.WhileOp(out_types, [self.m(mapping, v) for v in inits] + [self.t_or_zero(tan, inits[k]) for k in diff])
        b = loop.before.blocks.append(*state_types)
        a = loop.after.blocks.append(*out_types)
        with ir.InsertionPoint(b):
            local_map, local_tan = dict(mapping), dict(tan)
            self.bind_block(before, list(b.arguments), diff, local_map, local_tan)
            self.emit(body_ops(before), local_map, local_tan)
            cond, *passed = list(terminator(before).operands)
            scf.ConditionOp(self.m(local_map, cond), [self.m(local_map, v) for v in passed]
                            + [self.t_or_zero(local_tan, passed[k]) for k in pdiff])
        with ir.InsertionPoint(a):
            local_map, local_tan = dict(mapping), dict(tan)
            self.bind_block(after, list(a.arguments), pdiff, local_map, local_tan)
            self.emit(body_ops(after), local_map, local_tan)
            ys = list(terminator(after).operands)
            scf.YieldOp([self.m(local_map, y) for y in ys] + [self.t_or_zero(local_tan, ys[k]) for k in diff])
        self.bind_results(op, list(loop.results), pdiff, mapping, tan)

    @staticmethod
    def bind_block(src, args, diff, mapping, tan):
        n = len(src.arguments)
        for s, v in zip(src.arguments, args[:n]):
            mapping[s] = v
        for k, t in zip(diff, args[n:]):
            tan[src.arguments[k]] = t

    @staticmethod
    def bind_results(op, new_results, diff, mapping, tan):
        n = len(op.results)
        for r, nr in zip(op.results, new_results[:n]):
            mapping[r] = nr
        for k, t in zip(diff, new_results[n:]):
            tan[op.results[k]] = t


def build_tangent(kernel) -> func.FuncOp:
    """Adds `<k>_jvp` after `kernel`."""
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    body = kernel.regions[0].blocks[0]
    f, params, args = derived_kernel(kernel, tangent_name(name), "warp.tangent_of")
    entry = f.regions[0].blocks[0]
    mapping = dict(zip(params, args[:len(params)]))
    tan_params = args[len(params):]
    tan_arrays = companions_of(params, tan_params, lambda t: is_array_type(t) and is_diff(array_dtype(t)))
    tan = {p: t for p, t in zip(params, tan_params) if is_diff(p.type)}
    with ir.InsertionPoint(entry), kernel.location:
        TangentBuilder(tan_arrays).emit(body_ops(body), mapping, tan)
        func.ReturnOp([])
    return f


class Jvp(registry.Jvp):
    def run(self, module):
        from .autodiff import erase_adjoint_prints, unlink_custom_grads
        from .inline import Inline

        unlink_custom_grads(module)  # forward mode differentiates a @wp.func_grad function's body itself
        Inline().run(module)
        for k in kernels(module):
            if any(a in k.attributes for a in ("warp.adjoint_of", "warp.tangent_of")):
                continue
            build_tangent(k)
        erase_adjoint_prints(module)
