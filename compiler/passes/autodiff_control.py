"""warp-autodiff's adjoints of structured control flow: scf.if (each branch reversed from the values the forward
replay's branch yields) and scf.for / scf.while (LoopReverse: the iterations from last to first, their states taped,
checkpointed or recomputed; autodiff.py's docstring). ReverseBuilder (autodiff.py) mixes ControlFlowAdjoints in."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math, scf

from ..dialects.warp import builders as wb, is_array_type
from ..dialects.warp import composite as wc
from .autodiff_ir import (body_ops, clone_ops, free_values, has_adjoint_effects, i32_const, is_diff, tainted_uses,
                          terminator, trip_count, where, writes_own_memory, zero)
from .registry import PassError


class ControlFlowAdjoints:
    """The reverse of scf.if, scf.for and scf.while (`self`: the ReverseBuilder)."""

    # -- scf.if -------------------------------------------------------------------------------
    def op_scf_if(self, op, mapping, adj):
        """The reverse of a branch: an scf.if on the replayed condition whose branches reverse the forward
        branches. The values a branch's reverse reads are the forward replay's (`forward`, the clone of `op` that
        clone_ops made before this sweep), which yields them (ForwardYields); a branch replayed again inside its
        reverse would put a copy of its body in every enclosing branch's reverse (a copy per level of nesting: a
        mesh traversal inside two branches was compiled three times more). Where the replay cannot yield a value
        (one computed in a loop of the branch), the reverse replays the branch as before."""
        results = list(op.results)
        if not any(r in adj for r in results) and not has_adjoint_effects(op):
            return
        forward = mapping.get(op)
        if forward is not None:
            rev, free = self.reverse_branches(op, mapping, adj, replay=False)
            yields = ForwardYields(forward, rev.operation)
            if yields.possible():
                mapping[op] = yields.apply()
                take_adjoints(free, rev, adj)
                return
            rev.operation.erase()
        rev, free = self.reverse_branches(op, mapping, adj, replay=True)
        take_adjoints(free, rev, adj)

    def reverse_branches(self, op, mapping, adj, replay: bool):
        """The reverse scf.if of `op`, yielding the adjoints of the values its branches read from outside. With
        `replay`, each branch first replays its forward part (else `mapping` holds the forward replay's values)."""
        free = free_values(op)
        cond = mapping.get(op.operands[0], op.operands[0])
        rev = scf.IfOp(cond, [v.type for v in free], has_else=True)
        for src_region, block in zip(op.regions, (rev.then_block, rev.else_block)):
            if not src_region.blocks:  # an scf.if without else (canonicalize drops an empty one)
                with ir.InsertionPoint(block):
                    scf.YieldOp([self.adj_or_zero(adj, v) for v in free])
                continue
            src = src_region.blocks[0]
            with ir.InsertionPoint(block):
                local_map, local_adj = dict(mapping), {v: adj[v] for v in free if v in adj}
                if replay:
                    clone_ops(body_ops(src), local_map)
                for y, r in zip(terminator(src).operands, op.results):
                    if r in adj:
                        self.accumulate(local_adj, y, adj[r])
                self.reverse(body_ops(src), local_map, local_adj)
                scf.YieldOp([self.adj_or_zero(local_adj, v) for v in free])
        return rev, free

    # -- loops -----------------------------------------------------------------------------------
    def op_scf_for(self, op, mapping, adj):
        LoopReverse(self, op, mapping, adj).emit()

    def op_scf_while(self, op, mapping, adj):
        LoopReverse(self, op, mapping, adj).emit()


def take_adjoints(free, rev, adj) -> None:
    for v, r in zip(free, rev.results):
        adj[v] = r


def inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    """Whether `op` is nested (at any depth) in `ancestor`'s regions."""
    parent = op.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


class ForwardYields:
    """The values of a forward replay's scf.if (`forward`) that its reverse (`reverse`, the scf.if after it) reads,
    made available after `forward`: the ifs holding them (`forward`, or an if nested in it) yield them as extra
    results, the other branch a zero, from the innermost if out. `possible()` first: a value defined in a loop of
    the branch, or of a type without a zero to yield in the other branch (an array, a struct holding one), is not
    (the reverses of loops and of memory accesses replay or remap what they read, so neither has been seen)."""

    def __init__(self, forward: ir.Operation, reverse: ir.Operation):
        self.forward, self.reverse = forward.operation, reverse.operation
        self.inner = set()  # the values defined inside forward (its results are not)

        def collect(o):
            if o != self.forward:
                self.inner.update(o.results)
            for region in o.regions:
                for block in region.blocks:
                    self.inner.update(block.arguments)
            return ir.WalkResult.ADVANCE

        self.forward.walk(collect)
        self.readers = []  # (op of the reverse, forward value it reads)

        def scan(o):
            for v in o.operands:
                if v in self.inner:
                    self.readers.append((o, v))
            return ir.WalkResult.ADVANCE

        self.reverse.walk(scan)
        self.yielded = {}  # inner value -> its current stand-in (the value itself, then each if's new result)

    def possible(self) -> bool:
        return all(self._plan(v) for _, v in self.readers)

    def _plan(self, v) -> bool:
        if v in self.yielded:
            return True
        if not isinstance(v, ir.OpResult) or not tapeable(v.type):
            return False  # (a block argument: a loop's)
        parent = v.owner.operation.parent
        while parent != self.forward:
            if parent.name != "scf.if":
                return False
            parent = parent.parent
        self.yielded[v] = v
        return True

    def apply(self) -> ir.Operation:
        """Rewrites the forward replay and the reverse's readers; returns the forward replay's new scf.if."""
        replaced, renamed = [], {}  # the ifs rebuilt with more results (erased at the end); old result -> new
        while True:
            depth = {}
            for v, current in self.yielded.items():
                holder = current.owner.operation.parent
                if inside(holder, self.forward) or holder == self.forward:
                    depth.setdefault(holder, self._depth(holder))
            if not depth:
                break
            holder = max(depth, key=depth.get)
            values = [v for v, current in self.yielded.items() if current.owner.operation.parent == holder]
            new_if, outs = yield_more(holder, [self.yielded[v] for v in values])
            if new_if != holder:
                renamed.update(zip(holder.results, new_if.results))
                replaced.append(holder)
            for v, out in zip(values, outs):
                for use in list(self.yielded[v].uses):
                    if not inside(use.owner.operation, new_if):
                        use.owner.operation.replace_uses_of_with(self.yielded[v], out)
                self.yielded[v] = out
            for v, current in self.yielded.items():
                self.yielded[v] = renamed.get(current, current)
            if holder == self.forward:
                self.forward = new_if
        for op in reversed(replaced):  # (kept until here: their old results were keys of `renamed`)
            op.erase()
        return self.forward

    def _depth(self, op) -> int:
        n = 0
        while op != self.forward:
            op, n = op.parent, n + 1
        return n


def yield_more(if_op: ir.Operation, values) -> tuple:
    """The results of `if_op` that give `values` (each defined in one of its branches) where their branch runs: a
    value the branch yields already is that result; the others are extra results of an scf.if built before
    `if_op` to replace it (the other branch yields a zero for each; `if_op`'s blocks move there, and it is left
    empty: the caller erases it). Returns (the scf.if now, the values' results)."""
    blocks = [region.blocks[0] if len(region.blocks) else None for region in if_op.regions]

    def yielded_at(v):
        block = blocks[0] if v.owner.operation.block == blocks[0] else blocks[1]
        operands = list(terminator(block).operands)
        return operands.index(v) if v in operands else None

    n = len(if_op.results)
    positions = [yielded_at(v) for v in values]
    extra = [v for v, k in zip(values, positions) if k is None]
    if not extra:
        return if_op, [if_op.results[k] for k in positions]
    with ir.InsertionPoint(if_op), if_op.location:
        new = ir.Operation.create("scf.if", results=[r.type for r in if_op.results] + [v.type for v in extra],
                                  operands=list(if_op.operands),
                                  attributes={a: if_op.attributes[a] for a in if_op.attributes}, regions=2)
    for block, new_region in zip(blocks, new.regions):
        if block is not None:
            block.append_to(new_region)
            last = terminator(block)
            kept = list(last.operands)
        else:  # an scf.if without else and without results: it gets an else
            block, last, kept = new_region.blocks.append(), None, []
        with ir.InsertionPoint(last) if last is not None else ir.InsertionPoint(block), if_op.location:
            scf.YieldOp(kept + [v if v.owner.operation.block == block else zero(v.type) for v in extra])
        if last is not None:
            last.erase()
    for old, new_result in zip(if_op.results, list(new.results)[:n]):
        old.replace_all_uses_with(new_result)
    outs, added = [], iter(list(new.results)[n:])
    for k in positions:
        outs.append(new.results[k] if k is not None else next(added))
    return new, outs


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

    def __init__(self, rb, op, mapping, adj):
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
            self.rb.accumulate(adj, self.inits[k], r)

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
                self.rb.accumulate(local, y, self.adj[r])
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
            self.rb.accumulate(local, terminator(block).operands[k], g)
        self.rb.reverse(body_ops(block), m, local)
        if not self.is_for:
            cond_args = list(terminator(self.before).operands)[1:]
            for a, y in zip(self.after.arguments, cond_args):
                if a in local:
                    self.rb.accumulate(local, y, local.pop(a))
            self.rb.reverse(body_ops(self.before), m, local)
