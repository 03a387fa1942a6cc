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
             reverses its forward branch, reading the values it needs from
             the replay's branch, which yields them as extra results (not
             replaying the branch again: that copied a branch once per
             level of nesting; autodiff_control.ForwardYields).
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

The replay computes every forward value; those no adjoint reads (what fed the skipped stores: a branch's
result, a dead tile FFT) are erased once the adjoint is built (erase_dead_code), as the lowering would not erase
the ops of the warp dialect, nor a tile computation once it is loops over buffers.

Kernels with the `warp.no_backward` attribute (`enable_backward=False`) are skipped.
A kernel the pass refuses keeps running forward: the pass records the reason in
its `warp.adjoint_error` attribute, raised when the adjoint is launched (option
`strict=true`: fail the pass instead).
"""

from __future__ import annotations

import functools
import json

from mlir import ir
from mlir.dialects import func

from ..builtins.derivatives import V
from ..lazy import LazyModule

tile_table = LazyModule("mlwarp.compiler.builtins.tile_table")  # (a kernel without tiles never loads it)
from ..dialects.warp import array_dtype, array_ndim, is_array_type, is_tile_type
from ..dialects.warp.rules import ALLOC, PURE, READ
from .autodiff_composite import CompositeAdjoints
from .autodiff_control import ControlFlowAdjoints
from .autodiff_ir import (REPLAYS, add_values, body_ops, clone_ops, companions_of, derived_kernel, is_diff,
                          unreplayed_atomics, where, zero)
from .autodiff_scalar import ScalarAdjoints
from .autodiff_tiles import TileAdjoints
from . import registry
from .registry import PassError
from .ir_walk import kernels, ops_named
from .warp_cse import effect

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


class ReverseBuilder(ScalarAdjoints, CompositeAdjoints, ControlFlowAdjoints, TileAdjoints):
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
            handler = self.handler(op)
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

    def handler(self, op):
        """The reverse of `op`: a tile op's adjoint (the tile table's record), else the method op_<dialect>_<op>."""
        record = tile_table.TILE_OPS.get(op.name[len("warp."):]) if op.name.startswith("warp.tile_") else None
        if record is not None:
            return None if record.adjoint is None else functools.partial(record.adjoint, self)
        return getattr(self, "op_" + op.name.replace(".", "_"), None)

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


def build_adjoint(kernel, grads=None, tape_bytes: int = 0, constant_calls=frozenset(), natives=None,
                  keep_reads: bool = False) -> func.FuncOp:
    """Adds `<k>_adj` after `kernel` (`keep_reads`: erase_dead_code's)."""
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
    erase_dead_code(f, keep_reads)
    return f


def erase_dead_code(f, keep_reads: bool = False) -> None:
    """Erases the ops of `f` whose results nothing reads and that have no other effect (by the op table's effects,
    passes/warp_cse.py): the replayed forward values the reverse sweep does not read, with the branches and loops
    that computed only those. `keep_reads`: array reads stay (a debug build checks their bounds)."""
    for region in f.regions:
        for block in region.blocks:
            _erase_dead_ops(block, keep_reads)


def _erase_dead_ops(block, keep_reads: bool) -> None:
    for op in reversed(list(block.operations)):  # readers first: a dead chain goes in one sweep
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                _erase_dead_ops(inner, keep_reads)
        # (unread first: most ops are read, and the effect test of a branch or loop walks its whole body)
        if all(not any(True for _ in r.uses) for r in op.results) and _effect_free(op, keep_reads):
            op.erase()


_STRUCTURED = ("scf.if", "scf.for", "scf.while")


def _effect_free(op, keep_reads: bool = False) -> bool:
    """Whether erasing `op` (when its results are unused) loses nothing: a warp op the table says is pure, reads
    (unless `keep_reads`) or allocates thread memory, arith and math, and branches and loops of such ops only."""
    if op.name in _STRUCTURED:
        return all(o.operation.name in ("scf.yield", "scf.condition") or _effect_free(o.operation, keep_reads)
                   for region in op.regions for block in region.blocks for o in block.operations)
    if len(op.regions) or not len(op.results):
        return False
    if op.name.startswith(("arith.", "math.")):
        return True
    return op.name.startswith("warp.") and effect(op) in ((PURE, ALLOC) if keep_reads else (PURE, READ, ALLOC))


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
                build_adjoint(k, grads, self.tape_bytes, constant_calls, natives, self.keep_reads)
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

