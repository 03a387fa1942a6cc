"""warp-autodiff: reverse-mode differentiation of kernels, in the warp dialect.

For each kernel `k(args...)` the pass adds the kernel `k_adj(args..., adj_args...,
consumed, own_grads)` (one adjoint argument per argument, of the same type; a scalar's
adjoint is where print(x) starts, as in Warp; `consumed`, `own_grads`: see "Stores" below). Its body
replays the forward computation without its effects (stores and atomics are
skipped, as Warp's replay does),
then runs the reverse sweep with the rules of the builtin table
(`builtins/derivatives.py`). Array semantics follow Warp:
  x[i] read            -> adj_x[i] += adj (atomically)
  y[i] = v             -> adj_v += adj_y[i], then adj_y[i] = 0 if it is y's .grad
  y[i] += v / -= v     -> adj_v += adj_y[i] / -= adj_y[i]   (warp.atomic add/sub)
An array built in the kernel over raw memory (warp.array_from_ptr) has no adjoint unless
the op has a grad address; then its adjoint is an array over that address, whose accesses
run only where the address is not 0 (wp.mesh_get's points of a mesh without a .grad).
The adjoint of a struct argument is a struct of its type whose array fields are the
adjoint arrays of the argument's array fields: `s.a[i]` (also `s.inner.a`, or `q.a`
of a copy `q` of `s` with other fields replaced) accumulates into `adj_s.a[i]`.

Control flow is structured (scf) and handled exactly:
  scf.if     the reverse is an scf.if on the same condition; each branch
             recomputes its forward values, then reverses them.
  scf.for / scf.while (static or dynamic trip count, any carried state)
             the reverse is a loop over the iterations from last to first.
             Iteration j needs the carried state s_j: one more forward run
             keeps the states in a tape on the thread's stack
             (warp.stack_array), read back from last to first: O(n) body
             evaluations, exact (no stale state: Warp reuses the final state
             for every iteration and gets such gradients wrong). Past
             `tape_bytes` of state the tape holds one segment, and every k-th
             state is kept as a checkpoint to re-run the segments from
             (LoopReverse.taped_reverse_loop). With tape_bytes=0 (the CUDA
             build: GPU threads have a small stack), or state the tape cannot
             hold (an array), s_j is recomputed by re-running the forward
             body j times from the loop's initial state: O(n^2), no memory.
             When the reverse of the body does not depend on the carried
             state (e.g. `s += x[k]`), neither is needed: O(n).
             A while loop first counts its iterations (one more forward run).

Stores follow Warp 1.19: the reverse of `y[i] = v` reads adj_y[i] into adj_v and
then clears adj_y[i] when the launch passed y's own `.grad` as its adjoint (what
Tape.backward does), so an earlier write to the location (in this kernel or an
earlier one) gets no adjoint from the value it no longer holds. An adjoint array
the caller passed itself (`adj_outputs=[...]`) is only read. k_adj takes two more
parameters for that, after the adjoints: i64s whose bit k says that argument k's
adjoint is its `.grad`, `consumed` leaving out an array with retain_grad (which keeps
it), `own_grads` not: a row or slice taken in the kernel drops retain_grad, as Warp's
views drop the array's flags. A member write into an element (`y[i].y = v`,
`y[i][2] += v`: load, insert, store) always clears the written member's adjoint
(adj_v += adj_y[i].y, adj_y[i].y = 0); the load's adjoint passes the other
members on. The replay reads arrays as they are when k_adj runs: a recording wp.Tape puts back the values a
launch overwrote that its replay reads (python/mlwarp/autodiff/overwrites.py).

When an array is only ever indexed by the thread's own linear index (`i =
wp.tid()`), no two threads share its adjoint elements, so reads accumulate with
a plain load/add/store instead of an atomic (Warp always uses atomics).

What the pass refuses, with a message instead of a wrong gradient: a builtin
without a derivative rule, a result of an atomic that a derivative needs
(the replay does not repeat atomics), a function call (run the inliner first), any op it does not know
that produces a floating-point value.

Kernels with the `warp.no_backward` attribute (`enable_backward=False`) are skipped.
A kernel the pass refuses keeps running forward: the pass records the reason in
its `warp.adjoint_error` attribute, raised when the adjoint is launched (option
`strict=true`: fail the pass instead).
"""

from __future__ import annotations

import contextlib
import json

from mlir import ir
from mlir.dialects import arith, func, math, scf

from ..builtins.derivatives import NOT_DIFFERENTIABLE, Expansion, V, rule_of
from ..dialects.warp import array_dtype, array_ndim, builders as wb, is_array_type, is_tile_type, tile_params, \
    tile_type
from ..dialects.warp import composite as wc
from ..dialects.warp.ops import MAP_ARITY
from .autodiff_ir import (REPLAYS, add_values, body_ops, clone_ops, companions_of, derived_kernel, expansion_block,
                          free_values, has_adjoint_effects, i32_const, is_constant, is_diff, raw_grad_address,
                          required_companion, tainted_uses, terminator, trip_count, unreplayed_atomics, where, without_adjoint,
                          writes_own_memory, zero)
from . import registry
from .registry import PassError
from .ir_walk import kernels, ops_named

ADJ_SUFFIX = "_adj"
ADJOINT_ERROR = "warp.adjoint_error"
# On the module: {kernel name: why it has no adjoint}, which compiler/build.py moves into the kernel's record
ADJOINT_ERRORS_ATTR = "warp.adjoint_errors"
# @wp.func_grad links, set by the frontend (frontend/custom_grad.py) on the two private functions
CUSTOM_GRAD, CUSTOM_GRAD_OF = "warp.custom_grad", "warp.custom_grad_of"
# wp.grad(f) (frontend/grad_call.py, passes/grad_calls.py): on the function a wp.grad call calls; its calls are
# constants for the backward pass, and it stays a call until this pass has run
GRAD_OF = "warp.grad_of"
# @wp.func_native declarations (frontend/native_calls.py): the mark, the parameters' kinds, the adjoint's symbol
NATIVE, NATIVE_KINDS, NATIVE_ADJOINT = "warp.native", "warp.native_kinds", "warp.native_adjoint"


def adjoint_name(kernel_name: str) -> str:
    return kernel_name + ADJ_SUFFIX


class ReverseBuilder:
    """Emits the reverse sweep; `mapping` maps original values to their forward values at the insertion
    point, `adj` original values to their current adjoints (absent = zero)."""

    def __init__(self, adj_arrays: dict, owned=frozenset(), custom_grads=None, params=(), consumed=None,
                 tape_bytes: int = 0, constant_calls=frozenset(), natives=None, given_adjoints=None, own_grads=None):
        self.adj_arrays = adj_arrays  # original array or struct argument -> its adjoint argument
        # by-value argument -> the adjoint the launch passed for it (adj_inputs): where print(x) finds x's adjoint
        # starting, as Warp's adjoint kernel accumulates into its adjoint arguments
        self.given_adjoints = given_adjoints or {}
        self.owned = owned  # arrays only ever indexed by the thread's own linear index: no atomics needed
        self.custom_grads = custom_grads or {}  # @wp.func symbol -> its @wp.func_grad function op
        self.params = list(params)  # the kernel's parameters, numbered as the bits of `consumed`
        self.consumed = consumed  # i64: bit k set = argument k's adjoint is its .grad (stores consume it)
        self.own_grads = own_grads  # i64: the same, also where the array keeps its gradient (retain_grad)
        self.tape_bytes = tape_bytes  # a loop tape's stack budget per thread (0: recompute states instead)
        # functions whose calls are replayed but carry no adjoint: those wp.grad(f) calls (warp-grad-calls), which
        # Warp's grad() makes forward-only
        self.constant_calls = constant_calls
        self.natives = natives or {}  # @wp.func_native declaration symbol -> its op (frontend/native_calls.py)

    # -- adjoint bookkeeping -----------------------------------------------------------
    @staticmethod
    def accumulate(adj: dict, v: ir.Value, g) -> None:
        if g is None or not is_diff(v.type):
            return
        g = g.value if isinstance(g, V) else g
        adj[v] = g if v not in adj else add_values(adj[v], g)

    @staticmethod
    def adj_or_zero(adj: dict, v: ir.Value) -> ir.Value:
        return adj[v] if v in adj else zero(v.type)

    # -- the sweep -------------------------------------------------------------------------
    def reverse(self, ops, mapping: dict, adj: dict) -> None:
        for op in reversed(list(ops)):
            op = op.operation
            handler = getattr(self, "op_" + op.name.replace(".", "_"), None)
            tiled = any(is_tile_type(v.type) for v in list(op.operands) + list(op.results))
            if tiled and handler is None and op.name.startswith("warp.tile_"):
                raise PassError(f"{where(op)}: cannot differentiate '{op.name}': mlwarp has no adjoint of it yet")
            if tiled and (handler is None or op.name == "warp.cast") and op.name.startswith("warp."):
                self.tile_builtin(op, mapping, adj)  # a builtin of tiles: element by element
            elif handler is not None:
                handler(op, mapping, adj)
            elif op.name.startswith("warp."):
                self.builtin(op, mapping, adj)
            elif op.name == "func.call" and callee(op) in self.constant_calls:
                pass  # wp.grad(f)(x): a constant for the backward pass, as in Warp
            elif op.name == "func.call" and callee(op) in self.natives:
                self.native_call(op, mapping, adj)
            elif op.name == "func.call" and callee(op) in self.custom_grads:
                self.custom_call(op, mapping, adj)
            elif op.name == "func.call" and callee(op) in REPLAYS:
                self.replayed_call(op)
            elif op.name == "func.call":  # even a call without results may write arrays
                raise PassError(f"{where(op)}: cannot differentiate a call of "
                                f"{op.attributes['callee']}; "
                                f"inline wp.func calls before warp-autodiff")
            elif op.regions or (any(is_diff(r.type) for r in op.results) and op.name != "arith.constant"):
                raise PassError(f"{where(op)}: cannot differentiate '{op.name}'")

    @staticmethod
    def replayed_call(op):
        """A @wp.func with a @wp.func_replay (and no @wp.func_grad): the forward replay called the replay; the call
        has no derivative, which holds when nothing it takes or returns carries one."""
        carried = [v for v in list(op.operands) + list(op.results)
                   if is_diff(v.type) or (is_array_type(v.type) and is_diff(array_dtype(v.type)))]
        if carried:
            raise PassError(f"{where(op)}: cannot differentiate a call of {op.attributes['callee']}, which has a "
                            f"@wp.func_replay: mlwarp differentiates such a call only when its arguments and "
                            f"results carry no derivative (integers, integer arrays); give it a @wp.func_grad too")

    def custom_call(self, op, mapping, adj):
        """A @wp.func with a @wp.func_grad: its adjoint function maps (args, adj_result) to the args' adjoints."""
        results = list(op.results)
        if not any(r in adj for r in results) and not any(
                is_array_type(v.type) and is_diff(array_dtype(v.type)) for v in op.operands):
            return  # (with an array argument it runs anyway: it may add to the array's adjoint)
        grad = self.custom_grads[callee(op)]
        grad_types = ir.FunctionType(ir.TypeAttr(grad.attributes["function_type"]).value).results
        # an array argument's adjoint is its adjoint array, passed after the results' adjoints (the adjoint adds
        # into it); an array without a derivative is passed itself (python/mlwarp/kernels/func_grad.py refuses writes to it)
        arrays = [v for v in op.operands if is_array_type(v.type)]
        companions = [self.adj_array(op, v, mapping) if is_diff(array_dtype(v.type)) else mapping.get(v, v)
                      for v in arrays]
        args = [mapping.get(v, v) for v in op.operands] + [self.adj_or_zero(adj, r) for r in results] + companions
        call = func.CallOp(list(grad_types), ir.FlatSymbolRefAttr.get(symbol(grad)), args)
        for v, g in zip([v for v in op.operands if not is_array_type(v.type)], call.results):
            self.accumulate(adj, v, g)

    def native_call(self, op, mapping, adj):
        """A @wp.func_native call: its adjoint snippet's entry (Warp's adj_<f>) takes the arguments, the current
        adjoints of the parameters (by reference: the snippet adds to them, or sets them) and of the result, and
        gives the parameters' adjoints back: a value's replaces its adjoint (the snippet saw the sum so far), a
        wp.ref[T]'s (the referenced storage's after the call) becomes its argument's before the call. An array's
        adjoint is its adjoint array, which the snippet writes itself. No adj_snippet: no adjoint (Warp's empty
        one)."""
        decl = self.natives[callee(op)]
        if NATIVE_ADJOINT not in decl.attributes:
            return
        kinds = ir.StringAttr(decl.attributes[NATIVE_KINDS]).value
        operands, results = list(op.operands), list(op.results)
        ret = results.pop(0) if len(results) > kinds.count("r") + kinds.count("p") else None
        ref_results = iter(results)
        args = [mapping.get(v, v) for v in operands]
        adjoints, seen = [], set()
        for v, kind in zip(operands, kinds):
            if kind == "a":
                adjoints.append(self.adj_array(op, v, mapping) if is_diff(array_dtype(v.type)) else mapping.get(v, v))
            elif kind == "r":
                adjoints.append(self.adj_or_zero(adj, next(ref_results)))
            elif kind == "p":  # wp.address_of(local): an address, without adjoint
                next(ref_results)
                adjoints.append(zero(v.type))
            else:  # (an argument given twice: its adjoint once)
                adjoints.append(zero(v.type) if v in seen else self.adj_or_zero(adj, v))
                seen.add(v)
        if ret is not None:
            adjoints.append(mapping.get(ret, ret) if is_array_type(ret.type) else self.adj_or_zero(adj, ret))
        symbol = ir.FlatSymbolRefAttr(decl.attributes[NATIVE_ADJOINT]).value
        grad = self.natives[symbol]
        grad_types = ir.FunctionType(ir.TypeAttr(grad.attributes["function_type"]).value).results
        call = func.CallOp(list(grad_types), ir.FlatSymbolRefAttr.get(symbol), args + adjoints)
        replaced = {}
        for (v, kind), g in zip([(v, k) for v, k in zip(operands, kinds) if k != "a"], call.results):
            if kind == "r":
                self.accumulate(adj, v, g)
            elif kind == "v" and is_diff(v.type):
                replaced[v] = add_values(replaced[v], g) if v in replaced else g
        adj.update(replaced)

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

    # -- tiles (frontend/tiles.py): adjoints as tile ops, element-wise ones as a warp.tile_map of the scalar rule ----
    def tile_builtin(self, op, mapping, adj):
        """warp.<builtin> of tiles (and scalars): a warp.tile_map whose body runs the builtin's scalar rule on each
        element; a scalar operand's adjoint is the sum of its elements' contributions."""
        out = op.results[0]
        if out not in adj:
            return
        name = op.name[len("warp."):]
        operands = list(op.operands)
        if name == "cast":  # tile_astype: float to float carries the adjoint back, as Warp
            src = operands[0]
            if is_diff(src.type):
                self.accumulate(adj, src, wb.create("cast", adj[out], results=[src.type]).result)
            return
        elements = [tile_params(v.type)[0] if is_tile_type(v.type) else v.type for v in operands]
        rule = rule_of(name, elements)
        if rule is NOT_DIFFERENTIABLE:
            return
        if rule is None or isinstance(rule, Expansion):
            raise PassError(f"{where(op)}: cannot differentiate '{name}' of tiles: its derivative rule is not an "
                            f"element-wise one mlwarp maps over tiles")
        shape = tile_params(out.type)[1]
        wanted = [k for k, (v, t) in enumerate(zip(operands, elements)) if is_diff(t) and not is_constant(v)]
        if not wanted:
            return
        tiles = [k for k, v in enumerate(operands) if is_tile_type(v.type)]
        inputs = [mapping.get(operands[k], operands[k]) for k in tiles] + [mapping[out], adj[out]]
        result_types = [tile_type(elements[k], shape) for k in wanted]

        def body(args):
            by_operand = dict(zip(tiles, args))
            values = [V(by_operand[k]) if k in by_operand else V(mapping.get(v, v)) for k, v in enumerate(operands)]
            grads = rule.vjp(V(args[-1]), values, V(args[-2]))
            return [(grads[k].value if isinstance(grads[k], V) else grads[k]) if grads[k] is not None
                    else zero(elements[k]) for k in wanted]

        mapped = tile_map(inputs, result_types, body)
        for k, g in zip(wanted, mapped):
            v = operands[k]
            if is_tile_type(v.type):
                self.accumulate(adj, v, g)
            else:
                total = wb.tile_reduce(g, "add", tile_type(elements[k], (1,)))
                self.accumulate(adj, v, tile_element(total, 0))

    def op_warp_tile_map(self, op, mapping, adj):
        """The body reversed in a tile_map of its own: its arguments the inputs' elements and the results'
        adjoints' elements; it yields the inputs' elements' adjoints."""
        results = list(op.results)
        if not any(r in adj for r in results):
            return
        src = op.regions[0].blocks[0]
        free = free_values(op)
        if free:
            raise PassError(f"{where(op)}: cannot differentiate a tile_map whose function reads a value from "
                            f"outside it that carries a derivative")
        inputs = list(op.operands)
        wanted = [k for k, v in enumerate(inputs) if is_diff(v.type)]
        if not wanted:
            return
        ins = [mapping.get(v, v) for v in inputs] + [self.adj_or_zero(adj, r) for r in results]

        def body(args):
            local_map = dict(mapping)
            for a, b in zip(src.arguments, args[:len(inputs)]):
                local_map[a] = b
            clone_ops(body_ops(src), local_map)
            local_adj = {}
            for y, g in zip(terminator(src).operands, args[len(inputs):]):
                self.accumulate(local_adj, y, g)
            self.reverse(body_ops(src), local_map, local_adj)
            return [self.adj_or_zero(local_adj, src.arguments[k]) for k in wanted]

        mapped = tile_map(ins, [inputs[k].type for k in wanted], body)
        for k, g in zip(wanted, mapped):
            self.accumulate(adj, inputs[k], g)

    def op_warp_tile_load(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            arr, offsets = op.operands[0], [mapping.get(v, v) for v in list(op.operands)[1:]]
            wb.create("tile_atomic_add", self.adj_array(op, arr, mapping), adj[out], offsets)

    def op_warp_tile_store(self, op, mapping, adj):
        arr, tile, offsets = op.operands[0], op.operands[1], [mapping.get(v, v) for v in list(op.operands)[2:]]
        if not is_diff(tile.type):
            return
        target = self.adj_array(op, arr, mapping)
        self.accumulate(adj, tile, wb.create("tile_load", target, offsets, results=[tile.type]).result)
        consumes = self.consumes(arr)
        if consumes is not None:  # the stored region's adjoint ends here, as Warp's tile_store
            guard = scf.IfOp(consumes, [], has_else=False)
            with ir.InsertionPoint(guard.then_block):
                wb.create("tile_store", target, zero(tile.type), offsets)
                scf.YieldOp([])

    def op_warp_tile_load_indexed(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            arr, indices = op.operands[0], mapping.get(op.operands[1], op.operands[1])
            offsets = [mapping.get(v, v) for v in list(op.operands)[2:]]
            i64 = ir.IntegerType.get_signless(64)
            wb.create("tile_store_indexed", self.adj_array(op, arr, mapping), indices, adj[out], offsets,
                      attributes={"axis": op.attributes["axis"], "atomic": ir.IntegerAttr.get(i64, 1)})

    def op_warp_tile_store_indexed(self, op, mapping, adj):
        arr, tile = op.operands[0], op.operands[2]
        if is_diff(tile.type):
            indices = mapping.get(op.operands[1], op.operands[1])
            offsets = [mapping.get(v, v) for v in list(op.operands)[3:]]
            gathered = wb.create("tile_load_indexed", self.adj_array(op, arr, mapping), indices, offsets,
                                 results=[tile.type], attributes={"axis": op.attributes["axis"]}).result
            self.accumulate(adj, tile, gathered)

    def op_warp_tile_atomic_add(self, op, mapping, adj):
        arr, tile, offsets = op.operands[0], op.operands[1], [mapping.get(v, v) for v in list(op.operands)[2:]]
        if is_diff(tile.type):
            target = self.adj_array(op, arr, mapping)
            self.accumulate(adj, tile, wb.create("tile_load", target, offsets, results=[tile.type]).result)

    def op_warp_tile_full(self, op, mapping, adj):
        out, value = op.results[0], op.operands[0]
        if out in adj and is_diff(value.type) and not is_constant(value):
            total = wb.tile_reduce(adj[out], "add", tile_type(value.type, (1,)))
            self.accumulate(adj, value, tile_element(total, 0))

    def op_warp_tile_arange(self, op, mapping, adj):
        pass  # start and step are constants (the frontend folds them)

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

    def op_warp_tile_sync(self, op, mapping, adj):
        """A barrier of Warp's CPU lanes (warp-cpu-block-lanes): the reverse sweep meets at it too, so the adjoints of
        what the lanes did after it are all in before any lane's adjoint of what came before (a lane reading the
        adjoint of a tile element every lane added to)."""
        wb.create("tile_sync")

    def op_warp_tile_extract(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile, indices = op.operands[0], [mapping.get(v, v) for v in list(op.operands)[1:]]
            self.accumulate(adj, tile, wb.create("tile_insert", zero(tile.type), adj[out], indices,
                                                 results=[tile.type]).result)

    def op_warp_tile_insert(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile, value, indices = op.operands[0], op.operands[1], [mapping.get(v, v) for v in list(op.operands)[2:]]
            self.accumulate(adj, tile, wb.create("tile_insert", adj[out], zero(value.type), indices,
                                                 results=[tile.type]).result)
            self.accumulate(adj, value, wb.create("tile_extract", adj[out], indices, results=[value.type]).result)

    def op_warp_tile_reduce(self, op, mapping, adj):
        out = op.results[0]
        kind = ir.StringAttr(op.attributes["kind"]).value
        if out not in adj or kind in ("argmax", "argmin"):
            return
        tile = op.operands[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        if kind in ("max", "min", "mul"):
            self.accumulate(adj, tile, reduction_adjoint(mapping.get(tile, tile), adj[out], kind, axis))
            return
        if kind != "add":
            raise PassError(f"{where(op)}: cannot differentiate a tile reduction by '{kind}' yet")
        if axis < 0:
            spread = wb.create("tile_broadcast", adj[out], results=[tile.type]).result
        else:
            spread = wb.create("tile_spread", adj[out], results=[tile.type],
                               attributes={"axis": op.attributes["axis"]}).result
        self.accumulate(adj, tile, spread)

    def op_warp_tile_matmul(self, op, mapping, adj):
        out = op.results[0]
        if out not in adj:
            return
        a, b, acc = op.operands
        ma, mb = mapping.get(a, a), mapping.get(b, b)
        g = adj[out]

        def product(x, y, like):
            return wb.create("tile_matmul", x, y, zero(like), results=[like]).result

        def transposed(t):
            dtype, (m, n) = tile_params(t.type)
            return wb.create("tile_transpose", t, results=[tile_type(dtype, (n, m))]).result

        if is_diff(a.type):
            self.accumulate(adj, a, product(g, transposed(mb), a.type))
        if is_diff(b.type):
            self.accumulate(adj, b, product(transposed(ma), g, b.type))
        self.accumulate(adj, acc, g)

    def op_warp_tile_dft(self, op, mapping, adj):
        """The adjoint of the unnormalised DFT is the DFT of the other sign (Warp: the inverse FFT of the incoming
        gradient, not divided by N)."""
        out = op.results[0]
        if out in adj:
            tile = op.operands[0]
            flipped = 1 - ir.IntegerAttr(op.attributes["inverse"]).value
            self.accumulate(adj, tile, wb.create("tile_dft", adj[out], results=[tile.type], attributes={
                "inverse": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), flipped)}).result)

    def op_warp_tile_solve(self, op, mapping, adj):
        """x = M^-1 y (M or its transpose triangular): adj_y = M^-T adj_x (the solve of the transposed form), and
        adj_M = -(adj_y x^T) (transposed forms: -(x adj_y^T)) on the triangle the solve reads."""
        out = op.results[0]
        if out not in adj:
            return
        m, y = op.operands
        form = ir.StringAttr(op.attributes["form"]).value
        flipped = {"lower": "lower_t", "lower_t": "lower", "upper": "upper_t", "upper_t": "upper"}[form]
        mm, x = mapping.get(m, m), mapping[out]
        adj_y = wb.create("tile_solve", mm, adj[out], results=[y.type],
                          attributes={"form": ir.StringAttr.get(flipped)}).result
        self.accumulate(adj, y, adj_y)
        if not is_diff(m.type):
            return
        dtype, (n, _) = tile_params(m.type)

        def as_matrix(t):  # (n,) -> (n, 1); (n, k) as it is
            shape = tile_params(t.type)[1]
            return t if len(shape) == 2 else wb.create("tile_reshape", t, results=[tile_type(dtype, (n, 1))]).result

        def transposed(t):
            _, (r, c) = tile_params(t.type)
            return wb.create("tile_transpose", t, results=[tile_type(dtype, (c, r))]).result

        a, b = (as_matrix(adj_y), as_matrix(x)) if form in ("lower", "upper") else (as_matrix(x), as_matrix(adj_y))
        outer = wb.create("tile_matmul", a, transposed(b), zero(m.type), results=[m.type]).result
        kept = triangle(outer, upper=form.startswith("upper"))
        self.accumulate(adj, m, wb.builtin("neg", [kept], m.type))

    def op_warp_tile_triangle(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            self.accumulate(adj, op.operands[0], wb.create("tile_triangle", adj[out], results=[out.type],
                                                           attributes=dict(op.attributes)).result)

    def op_warp_tile_cholesky(self, op, mapping, adj):
        """Murray's rule for A = L L^T read from A's lower triangle: S = L^-T Phi(L^T adj_L) L^-1, and the
        lower triangle's adjoint Phi(S + S^T) (Phi: the lower triangle, its diagonal halved); the upper fill
        is the same on the transposes."""
        out = op.results[0]
        if out not in adj:
            return
        a = op.operands[0]
        upper = ir.StringAttr(op.attributes["fill"]).value == "upper"

        def t(v):
            return wb.create("tile_transpose", v, results=[v.type]).result

        factor, g = mapping[out], adj[out]
        if upper:
            factor, g = t(factor), t(g)
        phi = triangle(wb.create("tile_matmul", t(factor), g, zero(a.type), results=[a.type]).result, half=True)

        def solve_lower_t(rhs):  # L^-T rhs
            return wb.create("tile_solve", factor, rhs, results=[a.type],
                             attributes={"form": ir.StringAttr.get("lower_t")}).result

        x = solve_lower_t(phi)  # L^-T Phi
        s = t(solve_lower_t(t(x)))  # (L^-T X^T)^T = X L^-1
        grad = triangle(wb.builtin("add", [s, t(s)], a.type), half=True)
        self.accumulate(adj, a, t(grad) if upper else grad)

    def op_warp_tile_view(self, op, mapping, adj):
        """The view's adjoint lands in its region of the tile's (zero elsewhere)."""
        out = op.results[0]
        if out in adj:
            tile, offsets = op.operands[0], [mapping.get(v, v) for v in list(op.operands)[1:]]
            steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))
            self.accumulate(adj, tile, wb.tile_insert_view(zero(tile.type), adj[out], offsets, steps))

    def op_warp_tile_insert_view(self, op, mapping, adj):
        """The tile's adjoint is the result's outside the replaced region, the part's is the region's."""
        out = op.results[0]
        if out in adj:
            tile, part = op.operands[0], op.operands[1]
            offsets = [mapping.get(v, v) for v in list(op.operands)[2:]]
            steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))
            self.accumulate(adj, tile, wb.tile_insert_view(adj[out], zero(part.type), offsets, steps))
            self.accumulate(adj, part, wb.tile_view(adj[out], offsets, part.type, steps))

    def op_warp_tile_gather(self, op, mapping, adj):
        """Each gathered element's adjoint goes back to the element it was read from (a repeated index adds)."""
        out = op.results[0]
        if out in adj:
            tile, indices = op.operands[0], mapping.get(op.operands[1], op.operands[1])
            self.accumulate(adj, tile, wb.create("tile_gather_add", zero(tile.type), adj[out], indices,
                                                 results=[tile.type], attributes={"axis": op.attributes["axis"]}).result)

    def op_warp_tile_gather_add(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile, part, indices = op.operands[0], op.operands[1], mapping.get(op.operands[2], op.operands[2])
            self.accumulate(adj, tile, adj[out])
            self.accumulate(adj, part, wb.create("tile_gather", adj[out], indices, results=[part.type],
                                                 attributes={"axis": op.attributes["axis"]}).result)

    def op_warp_tile_sort(self, op, mapping, adj):
        pass  # not differentiable (Warp's tile_sort: is_differentiable=False)

    def op_warp_tile_random(self, op, mapping, adj):
        pass  # random numbers: no derivative (Warp's tile_randf has no adjoint either)

    def op_warp_tile_reshape(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.operands[0]
            self.accumulate(adj, tile, wb.create("tile_reshape", adj[out], results=[tile.type]).result)

    def op_warp_tile_transpose(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.operands[0]
            self.accumulate(adj, tile, wb.create("tile_transpose", adj[out], results=[tile.type]).result)

    def op_warp_tile_broadcast(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.operands[0]
            self.accumulate(adj, tile, wb.create("tile_sum_to", adj[out], results=[tile.type]).result)

    def op_warp_tile_sum_to(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.operands[0]
            self.accumulate(adj, tile, wb.create("tile_broadcast", adj[out], results=[tile.type]).result)

    # -- composite values: construct / extract / insert, struct fields ----------------------
    def op_warp_construct(self, op, mapping, adj):
        out = op.opview.composite
        if out not in adj:
            return
        c = wc.composite(out.type)
        for k, e in enumerate(op.opview.elements):
            if c.kind == "struct":
                self.accumulate(adj, e, wc.struct_get(adj[out], k, e.type))
            else:
                idx = divmod(k, c.shape[1]) if c.kind == "mat" else (k,)
                self.accumulate(adj, e, wc.extract(adj[out], [i32_const(i) for i in idx], e.type))

    def op_warp_extract(self, op, mapping, adj):
        extract = op.opview
        out = extract.element
        if out in adj:
            src = extract.aggregate
            idx = self.indices(op, mapping)
            self.accumulate(adj, src, wc.insert(zero(src.type), adj[out], idx))

    def op_warp_insert(self, op, mapping, adj):
        insert = op.opview
        out = insert.updated
        if out in adj:
            src, elem = insert.aggregate, insert.element
            idx = self.indices(op, mapping)
            self.accumulate(adj, src, wc.insert(adj[out], zero(elem.type), idx))
            self.accumulate(adj, elem, wc.extract(adj[out], idx, elem.type))

    def op_warp_struct_get(self, op, mapping, adj):
        get = op.opview
        out = get.element
        if out in adj:
            src = get.aggregate
            self.accumulate(adj, src, wc.struct_set(zero(src.type), get.field, adj[out]))

    def op_warp_struct_set(self, op, mapping, adj):
        set_ = op.opview
        out = set_.updated
        if out in adj:
            src, elem = set_.aggregate, set_.element
            if not is_diff(elem.type):  # an int or array field (arrays' adjoints are companions): no adjoint
                self.accumulate(adj, src, adj[out])
                return
            self.accumulate(adj, src, wc.struct_set(adj[out], set_.field, zero(elem.type)))
            self.accumulate(adj, elem, wc.struct_get(adj[out], set_.field, elem.type))

    def op_warp_cast(self, op, mapping, adj):
        src, out = op.opview.input, op.opview.output
        if out in adj and is_diff(src.type):
            self.accumulate(adj, src, wb.cast(adj[out], src.type))

    def op_arith_select(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            c = mapping.get(op.operands[0], op.operands[0])
            z = zero(out.type)
            self.accumulate(adj, op.operands[1], arith.SelectOp(c, adj[out], z).result)
            self.accumulate(adj, op.operands[2], arith.SelectOp(c, z, adj[out]).result)

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
            elif (wc.composite(out.type) or wc.Composite("", ())).kind == "struct":
                raise PassError(f"{where(op)}: cannot differentiate a read of a struct array at an index other "
                                f"than the thread's own (`i = wp.tid()`; x[i]): its adjoint would need an atomic "
                                f"add of a struct")
            else:
                with grad_present(arr, mapping):
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
                with grad_present(arr, mapping):
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

    # -- scf.if -------------------------------------------------------------------------------
    def op_scf_if(self, op, mapping, adj):
        results = list(op.results)
        if not any(r in adj for r in results) and not has_adjoint_effects(op):
            return
        free = free_values(op)
        cond = mapping.get(op.operands[0], op.operands[0])
        rev = scf.IfOp(cond, [v.type for v in free], has_else=True)
        for src_region, block in zip(op.regions, (rev.then_block, rev.else_block)):
            if not src_region.blocks:  # an scf.if without else (canonicalize drops an empty one)
                with ir.InsertionPoint(block):
                    scf.YieldOp([self.adj_or_zero({v: adj[v] for v in free if v in adj}, v) for v in free])
                continue
            src = src_region.blocks[0]
            with ir.InsertionPoint(block):
                local_map, local_adj = dict(mapping), {v: adj[v] for v in free if v in adj}
                clone_ops(body_ops(src), local_map)
                for y, r in zip(terminator(src).operands, results):
                    if r in adj:
                        self.accumulate(local_adj, y, adj[r])
                self.reverse(body_ops(src), local_map, local_adj)
                scf.YieldOp([self.adj_or_zero(local_adj, v) for v in free])
        for v, r in zip(free, rev.results):
            adj[v] = r

    # -- loops -----------------------------------------------------------------------------------
    def op_scf_for(self, op, mapping, adj):
        LoopReverse(self, op, mapping, adj).emit()

    def op_scf_while(self, op, mapping, adj):
        LoopReverse(self, op, mapping, adj).emit()


def reduction_adjoint(tile: ir.Value, adjoint: ir.Value, kind: str, axis: int) -> ir.Value:
    """warp.tile_reduce_adjoint of a max, min or product: along `axis`, or (axis < 0) over every element, the
    tile seen as 1-d in row-major order."""
    dtype, shape = tile_params(tile.type)
    i64 = ir.IntegerType.get_signless(64)
    attrs = {"kind": ir.StringAttr.get(kind), "axis": ir.IntegerAttr.get(i64, max(axis, 0))}
    if axis >= 0:
        return wb.create("tile_reduce_adjoint", tile, adjoint, results=[tile.type], attributes=attrs).result
    n = 1
    for d in shape:
        n *= d
    flat_t = tile_type(dtype, (n,))
    flat = wb.create("tile_reshape", tile, results=[flat_t]).result if len(shape) > 1 else tile
    grad = wb.create("tile_reduce_adjoint", flat, adjoint, results=[flat_t], attributes=attrs).result
    return wb.create("tile_reshape", grad, results=[tile.type]).result if len(shape) > 1 else grad


def triangle(tile: ir.Value, upper: bool = False, half: bool = False) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    return wb.create("tile_triangle", tile, results=[tile.type], attributes={
        "upper": ir.IntegerAttr.get(i64, int(upper)), "half_diagonal": ir.IntegerAttr.get(i64, int(half))}).result


def tile_element(tile: ir.Value, index: int) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    return wb.create("tile_extract", tile, [arith.ConstantOp(i32, index).result],
                     results=[tile_params(tile.type)[0]]).result


def tile_map(inputs: list, result_types: list, body) -> list:
    """A warp.tile_map over `inputs` at the insertion point; `body(element arguments)` returns the yielded values."""
    if len(inputs) > MAP_ARITY:
        raise PassError(f"cannot differentiate a tile_map of more than {MAP_ARITY - 1} tiles")
    op = wb.tile_map(inputs, result_types)
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        yielded = body(list(block.arguments))
        ir.Operation.create("gpu.yield", operands=list(yielded))
    return list(op.results)


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


def tapeable(t: ir.Type) -> bool:
    """A carried state type the loop tape can store: scalars and composites of them (no arrays: a
    descriptor is not an array element)."""
    if is_array_type(t):
        return False
    c = wc.composite(t)
    if c is not None and c.kind == "struct":
        return all(tapeable(f) for f in c.fields)
    return wc.storage_layout(t) is not None


# Builtins a loop tape keeps the results of (each a libm call: the reverse reads them instead of calling again;
# `v = v + a * sin(v)` needs sin(v) for a's adjoint beside cos(v) for v's)
TAPED_BUILTINS = frozenset(f"warp.{name}" for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "exp2", "log", "log2",
    "log10", "pow", "cbrt", "erf", "erfc", "erfinv"))


def state_bytes(types) -> int:
    return max(1, sum(wc.storage_layout(t)[0] for t in types))


def _i32():
    return ir.IntegerType.get_signless(32)


def _f64():
    return ir.F64Type.get()


class LoopReverse:
    """The reverse of one scf.for or scf.while: iterations j = n-1 .. 0, each recomputing its carried state
    s_j from the initial state (unless the reverse body does not need it), then reversing the body."""

    def __init__(self, rb: ReverseBuilder, op, mapping, adj):
        self.rb, self.op, self.mapping, self.adj = rb, op, mapping, adj
        self.is_for = op.name == "scf.for"
        self.m = lambda v: mapping.get(v, v)
        if self.is_for:
            self.lo, self.hi, self.step = (self.m(v) for v in list(op.operands)[:3])
            self.inits = list(op.operands)[3:]
            self.body = op.regions[0].blocks[0]
        else:
            self.inits = list(op.operands)
            self.before, self.after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        self.state_types = [v.type for v in self.inits]

    def emit(self):
        op, adj = self.op, self.adj
        results = list(op.results)
        if not any(r in adj for r in results) and not has_adjoint_effects(op):
            return
        if writes_own_memory(op):
            raise PassError(f"{where(op)}: cannot differentiate a loop that writes a wp.zeros array of the thread "
                            f"and carries a derivative (its reverse reruns iterations, which would read the array as "
                            f"the last one left it); compute the derivative's inputs outside that loop, or launch "
                            f"with enable_backward=False")
        self.free = free_values(op)
        self.diff_state = [k for k, t in enumerate(self.state_types) if is_diff(t)]
        n = trip_count(self.lo, self.hi, self.step) if self.is_for else self.count_iterations()
        # Adjoints of the state after the last iteration: from the loop's results.
        if self.is_for:
            adj_state = {k: self.rb.adj_or_zero(adj, results[k]) for k in self.diff_state}
            free_adj = [self.rb.adj_or_zero(adj, v) for v in self.free]
        else:
            adj_state, free_adj = self.reverse_exit(n, results)
        # A first attempt without recomputation; kept only if the reverse body ignores the state.
        loop = self.reverse_loop(n, adj_state, free_adj, recompute=False)
        if tainted_uses(loop.operation, self.placeholders):
            loop.operation.erase()
            if self.rb.tape_bytes and all(tapeable(t) for t in self.state_types):
                loop = self.taped_reverse_loop(n, adj_state, free_adj)
            else:
                loop = self.reverse_loop(n, adj_state, free_adj, recompute=True)
        res = list(loop.results)
        for v, r in zip(self.free, res[len(self.diff_state):]):  # first: an init may also be a free value
            adj[v] = r
        for k, r in zip(self.diff_state, res):
            ReverseBuilder.accumulate(adj, self.inits[k], r)

    # -- forward pieces ---------------------------------------------------------------------------
    def iteration(self, state, iv_index, mapping, given=None):
        """Clones one forward iteration (pure) from `state`; returns (next state, mapping). `given`: values of
        the body read from a tape (original -> value), not computed again."""
        m = dict(mapping)
        if self.is_for:
            for a, s in zip(list(self.body.arguments)[1:], state):
                m[a] = s
            m[self.body.arguments[0]] = self.induction(iv_index)
            m.update(given or {})
            clone_ops(body_ops(self.body), m, given=frozenset(given or ()))
            return [m.get(v, v) for v in terminator(self.body).operands], m
        passed = self.before_at(state, m)
        for a, p in zip(self.after.arguments, passed):
            m[a] = p
        clone_ops(body_ops(self.after), m)
        return [m.get(v, v) for v in terminator(self.after).operands], m

    def before_at(self, state, m):
        for a, s in zip(self.before.arguments, state):
            m[a] = s
        clone_ops(body_ops(self.before), m)
        return [m.get(v, v) for v in list(terminator(self.before).operands)[1:]]

    def induction(self, j):
        return arith.AddIOp(self.lo, arith.MulIOp(j, self.step).result).result

    def state_at(self, j):
        """The carried state before iteration j: the forward loop re-run j times from the initial state."""
        inits = [self.m(v) for v in self.inits]
        if not inits:
            return []
        loop = scf.ForOp(i32_const(0), j, i32_const(1), inits)
        with ir.InsertionPoint(loop.body):
            nxt, _ = self.iteration(list(loop.inner_iter_args), loop.induction_variable, self.mapping)
            scf.YieldOp(nxt)
        return list(loop.results)

    def count_iterations(self):
        """A while loop's trip count: the forward loop re-run with a counter."""
        types = self.state_types + [ir.IntegerType.get_signless(32)]
        loop = scf.WhileOp(types, [self.m(v) for v in self.inits] + [i32_const(0)])
        before = loop.before.blocks.append(*types)
        after = loop.after.blocks.append(*types)
        with ir.InsertionPoint(before):
            m = dict(self.mapping)
            for a, s in zip(self.before.arguments, before.arguments):
                m[a] = s
            clone_ops(body_ops(self.before), m)
            cond = m.get(terminator(self.before).operands[0], terminator(self.before).operands[0])
            scf.ConditionOp(cond, list(before.arguments))
        with ir.InsertionPoint(after):
            state = list(after.arguments)
            count = state.pop()
            m = dict(self.mapping)
            passed = self.before_at(state, m)
            for a, p in zip(self.after.arguments, passed):
                m[a] = p
            clone_ops(body_ops(self.after), m)
            nxt = [m.get(v, v) for v in terminator(self.after).operands]
            scf.YieldOp(nxt + [arith.AddIOp(count, i32_const(1)).result])
        return list(loop.results)[-1]

    # -- reverse pieces -----------------------------------------------------------------------------
    def reverse_exit(self, n, results):
        """A while loop ends in its `before` region with state s_n: reverse that region."""
        m = dict(self.mapping)
        passed_src = list(terminator(self.before).operands)[1:]
        self.before_at(self.state_at(n), m)
        local = {v: self.adj[v] for v in self.free if v in self.adj}
        for y, r in zip(passed_src, results):
            if r in self.adj:
                ReverseBuilder.accumulate(local, y, self.adj[r])
        self.rb.reverse(body_ops(self.before), m, local)
        adj_state = {k: self.rb.adj_or_zero(local, self.before.arguments[k]) for k in self.diff_state}
        return adj_state, [self.rb.adj_or_zero(local, v) for v in self.free]

    def reverse_loop(self, n, adj_state, free_adj, recompute):
        carried = [adj_state[k] for k in self.diff_state] + list(free_adj)
        loop = scf.ForOp(i32_const(0), n, i32_const(1), carried)
        self.placeholders = []
        with ir.InsertionPoint(loop.body):
            jj = loop.induction_variable
            j = arith.SubIOp(arith.SubIOp(n, i32_const(1)).result, jj).result
            if recompute:
                state = self.state_at(j)
            else:
                state = [zero(t) for t in self.state_types]
                self.placeholders = list(state)
            scf.YieldOp(self.reverse_step(list(loop.inner_iter_args), state, j))
        return loop

    def reverse_step(self, carried, state, j, given=None) -> list:
        """Reverses iteration j from its incoming `state`, with the carried adjoints (the state's differentiable
        part, then the free values); returns the adjoints to carry to iteration j - 1."""
        state_adj, local = carried[:len(self.diff_state)], {}
        for v, a in zip(self.free, carried[len(self.diff_state):]):
            local[v] = a
        self.reverse_iteration(state, j, dict(zip(self.diff_state, state_adj)), local, given)
        src_state = list(self.body.arguments)[1:] if self.is_for else list(self.before.arguments)
        return ([self.rb.adj_or_zero(local, src_state[k]) for k in self.diff_state]
                + [self.rb.adj_or_zero(local, v) for v in self.free])

    def taped_reverse_loop(self, n, adj_state, free_adj):
        """The reverse in O(n) body evaluations: the state of every iteration is recomputed once, into a tape
        on the thread's stack (warp.stack_array), and read back from last to first, with the results of the
        iteration's libm builtins (TAPED_BUILTINS, at the body's top level of a for loop), which the reverse
        reads rather than calling again.

        When n iterations fit in the pass's tape_bytes (TAPE_BYTES) the tape holds all of them (segment k = n:
        one forward run into the tape, then the reverse). Beyond that, checkpoints: a first forward run keeps
        the state at every k-th iteration (k = max(iterations per TAPE_BYTES, isqrt(n) + 1)); the reverse then
        takes the segments from last to first, re-running each from its checkpoint into the tape. Cost: at most
        2n forward bodies besides the reverse's own (whose taped builtins it does not call); memory:
        ceil(n / k) states + k (states and taped values)."""
        one, zero_ = i32_const(1), i32_const(0)
        taped = self.taped_values()
        per_iteration = state_bytes(self.state_types + [v.type for v in taped])
        per_budget = i32_const(max(1, self.rb.tape_bytes // per_iteration))
        root = arith.AddIOp(arith.FPToSIOp(_i32(), math.SqrtOp(arith.SIToFPOp(_f64(), n).result).result).result,
                            one).result
        big = arith.MaxSIOp(per_budget, root).result
        fits = arith.CmpIOp(arith.CmpIPredicate.sle, n, per_budget).result
        k = arith.MaxSIOp(arith.SelectOp(fits, n, big).result, one).result
        c = arith.DivSIOp(arith.SubIOp(arith.AddIOp(n, k).result, one).result, k).result
        checkpoints = [wb.stack_array(t, arith.MaxSIOp(c, one).result) for t in self.state_types]
        slots = arith.AddIOp(k, one).result  # (the state after a segment's last iteration lands in slot k)
        tape = [wb.stack_array(t, slots) for t in self.state_types]
        values = [wb.stack_array(v.type, k) for v in taped]
        state = [self.m(v) for v in self.inits]
        for buf, v in zip(checkpoints, state):
            wb.store(buf, v, [zero_])
        # the checkpoints: the forward loop in segments of k, keeping the state after each segment
        fill = scf.ForOp(one, c, one, state)
        with ir.InsertionPoint(fill.body):
            s = fill.induction_variable
            lo = arith.MulIOp(arith.SubIOp(s, one).result, k).result
            segment = scf.ForOp(zero_, k, one, list(fill.inner_iter_args))
            with ir.InsertionPoint(segment.body):
                j = arith.AddIOp(lo, segment.induction_variable).result
                nxt, _ = self.iteration(list(segment.inner_iter_args), j, self.mapping)
                scf.YieldOp(nxt)
            for buf, v in zip(checkpoints, segment.results):
                wb.store(buf, v, [s])
            scf.YieldOp(list(segment.results))
        carried = [adj_state[i] for i in self.diff_state] + list(free_adj)
        outer = scf.ForOp(zero_, c, one, carried)
        with ir.InsertionPoint(outer.body):
            s = arith.SubIOp(arith.SubIOp(c, one).result, outer.induction_variable).result
            lo = arith.MulIOp(s, k).result
            length = arith.MinSIOp(arith.SubIOp(n, lo).result, k).result
            start = [wb.load(buf, [s]) for buf in checkpoints]
            for buf, v in zip(tape, start):
                wb.store(buf, v, [zero_])
            # tape[t] = the state before iteration lo + t, values[t] = its taped builtins' results
            rerun = scf.ForOp(zero_, length, one, start)
            with ir.InsertionPoint(rerun.body):
                t = rerun.induction_variable
                nxt, m = self.iteration(list(rerun.inner_iter_args), arith.AddIOp(lo, t).result, self.mapping)
                after = arith.AddIOp(t, one).result
                for buf, v in zip(tape, nxt):
                    wb.store(buf, v, [after])
                for buf, v in zip(values, taped):
                    wb.store(buf, m[v], [t])
                scf.YieldOp(nxt)
            back = scf.ForOp(zero_, length, one, list(outer.inner_iter_args))
            with ir.InsertionPoint(back.body):
                t = arith.SubIOp(arith.SubIOp(length, one).result, back.induction_variable).result
                state = [wb.load(buf, [t]) for buf in tape]
                given = {v: wb.load(buf, [t]) for buf, v in zip(values, taped)}
                scf.YieldOp(self.reverse_step(list(back.inner_iter_args), state, arith.AddIOp(lo, t).result,
                                              given))
            scf.YieldOp(list(back.results))
        return outer

    def taped_values(self) -> list:
        """The results of a for loop body's top-level libm builtins (TAPED_BUILTINS) that a tape can hold."""
        if not self.is_for:
            return []
        return [op.results[0] for op in body_ops(self.body)
                if op.name in TAPED_BUILTINS and len(op.results) == 1 and tapeable(op.results[0].type)]

    def reverse_iteration(self, state, j, adj_next, local, given=None):
        """Reverses iteration j in place: adjoints of its yielded state in `adj_next` (by state index);
        leaves the adjoints of its incoming state and of the free values in `local`."""
        nxt, m = self.iteration(state, j, self.mapping, given)
        block = self.body if self.is_for else self.after
        for k, g in adj_next.items():
            ReverseBuilder.accumulate(local, terminator(block).operands[k], g)
        self.rb.reverse(body_ops(block), m, local)
        if not self.is_for:
            cond_args = list(terminator(self.before).operands)[1:]
            for a, y in zip(self.after.arguments, cond_args):
                if a in local:
                    ReverseBuilder.accumulate(local, y, local.pop(a))
            self.rb.reverse(body_ops(self.before), m, local)


def symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def callee(call) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def custom_grads(module) -> dict:
    """@wp.func symbol -> the func.func of its @wp.func_grad adjoint (frontend/custom_grad.py links them)."""
    funcs = {symbol(f): f for f in ops_named(module, {"func.func"})}
    return {name: funcs[ir.FlatSymbolRefAttr(f.attributes[CUSTOM_GRAD]).value]
            for name, f in funcs.items() if CUSTOM_GRAD in f.attributes}


def unlink_custom_grads(module) -> None:
    """Drops the links once used (and the wp.grad functions' marks), so that the next warp-inline inlines these
    functions like any other."""
    for f in ops_named(module, {"func.func"}):
        for a in (CUSTOM_GRAD, CUSTOM_GRAD_OF, "warp.custom_replay", "warp.custom_replay_of", GRAD_OF):
            if a in f.attributes:
                del f.attributes[a]


@contextlib.contextmanager
def grad_present(arr: ir.Value, mapping: dict):
    """Emits what the body emits under `if grad != 0` when `arr` is raw memory with a grad address (a mesh whose
    points have no .grad has 0 there: nothing may be written through it), else as it is."""
    address = raw_grad_address(arr, mapping)
    if address is None:
        yield
        return
    guard = scf.IfOp(nonzero(address), [], has_else=False)
    with ir.InsertionPoint(guard.then_block):
        yield
        scf.YieldOp([])


def read_adjoint(arr: ir.Value, target: ir.Value, idx, mapping: dict) -> ir.Value:
    """target[idx], the adjoint of arr[idx]; zero where `arr` is raw memory whose grad address is 0."""
    address = raw_grad_address(arr, mapping)
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
    return load.array == store.array and list(load.indices) == list(store.indices)


def thread_owned_arrays(params) -> frozenset:
    """1-D array arguments whose every access (load, store, atomic) is at index `wp.tid()` (the linear thread
    index, distinct per thread): their adjoint elements have a single writer, so reads accumulate into
    them without atomics (Warp always uses atomics; they are the cost of a backward pass on the CPU)."""
    owned = set()
    for p in params:
        if not (is_array_type(p.type) and array_ndim(p.type) == 1):
            continue
        ok = True
        for use in p.uses:
            o = use.owner
            if o.name not in ("warp.load", "warp.store", "warp.atomic") or use.operand_number != 0:
                ok = False
                break
            index = o.opview.indices[-1]

            if not (isinstance(index, ir.OpResult) and index.owner.name == "warp.tid"
                    and len(index.owner.results) == 1):
                ok = False
                break
        if ok:
            owned.add(p)
    return frozenset(owned)


def build_adjoint(kernel, grads=None, tape_bytes: int = 0, constant_calls=frozenset(), natives=None) -> func.FuncOp:
    """Adds `<k>_adj` after `kernel`."""
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    body = kernel.regions[0].blocks[0]
    i64 = ir.IntegerType.get_signless(64)
    f, params, args = derived_kernel(kernel, adjoint_name(name), "warp.adjoint_of", [i64, i64])
    entry = f.regions[0].blocks[0]
    mapping = dict(zip(params, args[:len(params)]))
    adj_arrays = companions_of(params, args[len(params):2 * len(params)],
                               lambda t: is_array_type(t) and is_diff(array_dtype(t)))
    with ir.InsertionPoint(entry), kernel.location:
        ops = body_ops(body)
        given = {p: a for p, a in zip(params, args[len(params):2 * len(params)]) if not is_array_type(p.type)}
        with unreplayed_atomics():
            clone_ops(ops, mapping)
            ReverseBuilder(adj_arrays, thread_owned_arrays(params), grads, params, args[-2],
                           tape_bytes, constant_calls, natives, given_adjoints=given,
                           own_grads=args[-1]).reverse(ops, mapping, {})
        func.ReturnOp([])
    return f


class Autodiff(registry.Autodiff):
    def run(self, module):
        grads = custom_grads(module)
        REPLAYS.clear()  # @wp.func_replay links: what the forward replay calls instead (autodiff_ir.clone_ops)
        REPLAYS.update({symbol(f): ir.FlatSymbolRefAttr(f.attributes["warp.custom_replay"]).value
                        for f in ops_named(module, {"func.func"}) if "warp.custom_replay" in f.attributes})
        try:
            self._run(module, grads)
        finally:
            REPLAYS.clear()

    def _run(self, module, grads):
        refused = {}
        constant_calls = frozenset(symbol(f) for f in ops_named(module, {"func.func"}) if GRAD_OF in f.attributes)
        natives = {symbol(f): f for f in ops_named(module, {"func.func"}) if NATIVE in f.attributes}
        for k in kernels(module):
            if "warp.no_backward" in k.attributes or "warp.adjoint_of" in k.attributes \
                    or "warp.tangent_of" in k.attributes:
                continue
            try:
                build_adjoint(k, grads, self.tape_bytes, constant_calls, natives)
            except PassError as e:
                # A kernel that cannot be differentiated still runs forward: the reason is kept on it
                # (`warp.adjoint_error`) and raised when its adjoint is launched. strict: fail here.
                if self.strict:
                    raise
                name = adjoint_name(ir.StringAttr(k.attributes["sym_name"]).value)
                for f in kernels(module):
                    if ir.StringAttr(f.attributes["sym_name"]).value == name:
                        f.erase()
                k.attributes[ADJOINT_ERROR] = ir.StringAttr.get(str(e))
                refused[ir.StringAttr(k.attributes["sym_name"]).value] = str(e)
        if refused:  # the kernel ops are gone after lowering: the table travels on the module
            module.attributes[ADJOINT_ERRORS_ATTR] = ir.StringAttr.get(json.dumps(refused))
        unlink_custom_grads(module)
        erase_adjoint_prints(module)


def erase_adjoint_prints(module) -> None:
    """The warp.adjoint_print ops left in forward code (and its replays): the reverse sweeps have cloned them."""
    for op in ops_named(module, {"warp.adjoint_print"}):
        op.erase()


def mark_no_backward(module) -> None:
    """`enable_backward=False`: the pass leaves these kernels without an adjoint."""
    for k in kernels(module.operation):
        k.attributes["warp.no_backward"] = ir.UnitAttr.get()

