"""IR helpers shared by the autodiff passes: cloning with a value map, free values, zeros, loop trips."""

from __future__ import annotations

import contextlib

from mlir import ir
from mlir.dialects import arith, func

from ..dialects.warp import array_dtype, builders as wb, is_array_type, is_tile_type, tile_params
from ..dialects.warp import composite as wc
from ..dialects.warp.rules import SIDE_EFFECTS
from .registry import PassError


def is_diff(t: ir.Type) -> bool:
    """Types that carry a derivative: floating-point scalars, vector-likes of them, structs with such a field."""
    if isinstance(t, ir.FloatType):
        return True
    if is_tile_type(t):  # a tile of floats or of vectors of floats (frontend/tiles.py)
        return is_diff(tile_params(t)[0])
    c = wc.composite(t)
    if c is None:
        return False
    return any(is_diff(f) for f in c.fields) if c.kind == "struct" else isinstance(c.dtype, ir.FloatType)


def zero(t: ir.Type) -> ir.Value:
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, 0.0)).result
    if is_tile_type(t):
        return wb.create("tile_full", zero(tile_params(t)[0]), results=[t]).result
    if wc.is_composite_type(t):
        return wc.construct(t, [])  # no elements: the zero value
    signless = ir.IntegerType.get_signless(ir.IntegerType(t).width)  # arith.constant takes no ui32
    return wb.cast(arith.ConstantOp(signless, ir.IntegerAttr.get(signless, 0)).result, t)


def add_values(a: ir.Value, b: ir.Value) -> ir.Value:
    """a + b for any differentiable type (structs field by field)."""
    c = wc.composite(a.type)
    if c is None or c.kind != "struct":
        return wb.builtin("add", [a, b], a.type)
    for k, f in enumerate(c.fields):
        if is_diff(f):
            s = add_values(wc.struct_get(a, k, f), wc.struct_get(b, k, f))
            a = wc.struct_set(a, k, s)
    return a


def i32_const(n: int) -> ir.Value:
    t = ir.IntegerType.get_signless(32)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, n)).result


def where(op: ir.Operation) -> str:
    return str(op.location)


def create_like(op: ir.Operation, operands, result_types=None) -> ir.Operation:
    """A new op with `op`'s name, attributes and region count, at the insertion point."""
    attrs = {a: op.attributes[a] for a in op.attributes}
    return ir.Operation.create(op.name, results=list(result_types if result_types is not None else
                                                      [r.type for r in op.results]),
                               operands=list(operands), attributes=attrs, regions=len(op.regions),
                               loc=op.location)


# @wp.func_replay: primal function symbol -> its replay's symbol, for the module warp-autodiff is running on
REPLAYS: dict = {}


# The values an atomic returned, as the replay stands them in (zero), while an adjoint is built (see unreplayed_atomics)
_STAND_INS: list | None = None


@contextlib.contextmanager
def unreplayed_atomics():
    """While building one adjoint: the replay stands a zero in for each used value an atomic returned (the adjoint
    does not replay atomics; Warp's replay leaves that variable undefined and drops its adjoint, as the reverse
    sweep does here). On leaving, the build is refused if the adjoint code needs such a stand-in (the value feeds a
    derivative, `y = old * x`): a used one would be a wrong gradient. Unneeded (`out[i] = wp.atomic_min(...)`:
    the replay skips the store), it is dead code."""
    global _STAND_INS
    outer, _STAND_INS = _STAND_INS, []
    try:
        yield
        for stand_in, op in _STAND_INS:
            if _needed(stand_in, set()):
                raise PassError(f"{where(op)}: cannot differentiate a kernel that uses the value returned by an "
                                f"atomic operation in a derivative (the adjoint does not replay atomics); launch it "
                                f"with enable_backward=False")
    finally:
        _STAND_INS = outer


# Atomics whose returned value the replay stands in as zero, as Warp's replay leaves it (Warp documents that the
# tile of previous values carries no adjoint: a derivative reading it reads zeros): never refused
_ZERO_REPLAY = {"warp.tile_atomic_add", "warp.tile_store_indexed"}


def stand_in_for_atomic(op: ir.Operation, mapping: dict) -> None:
    if op.name in _ZERO_REPLAY:
        mapping[op.results[0]] = zero(op.results[0].type)
        return
    if _STAND_INS is None:
        raise PassError(f"{where(op)}: cannot differentiate a kernel that uses the value returned by an atomic "
                        f"operation (the adjoint does not replay atomics); launch it with enable_backward=False")
    value = zero(op.results[0].type)
    mapping[op.results[0]] = value
    _STAND_INS.append((value, op))


def _needed(value: ir.Value, seen: set) -> bool:
    """Whether anything with an effect reads `value`, through ops that compute a value and nothing else (arith,
    math, warp builtins) only; any other reader (a store, an assert, a call, a yield, an op with regions) counts
    as needing it."""
    for use in value.uses:
        user = use.owner
        name = user.name
        pure = (name.startswith(("arith.", "math.")) or name.startswith("warp.") and name not in SIDE_EFFECTS) \
            and not len(user.regions) and len(user.results) > 0
        if not pure:
            return True
        for r in user.results:
            if r not in seen:
                seen.add(r)
                if _needed(r, seen):
                    return True
    return False


def clone_ops(ops, mapping: dict, pure: bool = True, given=frozenset()) -> None:
    """Clones `ops` at the insertion point, reading operands through `mapping` (original -> new value) and
    adding the clones' results to it. With `pure`, stores and atomics are dropped (the adjoint replays
    values, not effects); an atomic whose returned value is used cannot be replayed and is refused. An op
    whose one result is in `given` is not cloned: `mapping` already has its value (read from a loop tape)."""
    for op in ops:
        op = op.operation
        if given and len(op.results) == 1 and op.results[0] in given:
            continue
        if pure and op.name in SIDE_EFFECTS and not (op.name == "warp.store" and _own_memory(op.opview.array)):
            # (a store into the thread's own wp.zeros array is replayed: the replay reads that array back)
            if op.results and list(op.results[0].uses):
                stand_in_for_atomic(op, mapping)
            continue
        new = create_like(op, [mapping.get(v, v) for v in op.operands])
        if pure and op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in REPLAYS:
            new.attributes["callee"] = ir.FlatSymbolRefAttr.get(
                REPLAYS[ir.FlatSymbolRefAttr(op.attributes["callee"]).value])  # the replay instead
        for old_region, new_region in zip(op.regions, new.regions):
            for block in old_region.blocks:
                nb = new_region.blocks.append(*[a.type for a in block.arguments])
                for a, b in zip(block.arguments, nb.arguments):
                    mapping[a] = b
                with ir.InsertionPoint(nb):
                    clone_ops(block.operations, mapping, pure)
        for r, nr in zip(op.results, new.results):
            mapping[r] = nr
        if op.name == "scf.if":  # the branch's reverse reads its values from this replay (op_scf_if)
            mapping[op] = new


def derived_kernel(kernel, name: str, link_attr: str, extra=()):
    """A new kernel `name` after `kernel`, taking its parameters twice (values, then their adjoints or
    tangents), then parameters of the `extra` types, and marked `link_attr = <kernel's name>`. Returns it,
    the kernel's parameters, and the new entry block's arguments."""
    body = kernel.regions[0].blocks[0]
    params = list(body.arguments)
    types = [p.type for p in params]
    with ir.InsertionPoint.after(kernel), kernel.location:
        f = func.FuncOp(name, (types + types + list(extra), []))
        f.attributes["warp.kernel"] = ir.UnitAttr.get()
        f.attributes[link_attr] = ir.StringAttr.get(ir.StringAttr(kernel.attributes["sym_name"]).value)
        entry = f.add_entry_block()
    return f, params, list(entry.arguments)


def is_struct(t: ir.Type) -> bool:
    c = wc.composite(t)
    return c is not None and c.kind == "struct"


def companions_of(params, companions, pred) -> dict:
    """Kernel parameter -> its companion argument (adjoint or tangent) for the parameters that `pred` selects
    and for every struct parameter (a struct's companion holds the companion arrays of its array fields)."""
    return {p: c for p, c in zip(params, companions) if pred(p.type) or is_struct(p.type)}


def companion_array(v: ir.Value, companions: dict, mapping: dict, recorded_grads: bool = False):
    """The companion of the array `v`: a kernel parameter's from `companions`, or, for an array field of a
    struct parameter (`s.a`, `s.inner.a`, also read from a copy with other fields replaced: warp.struct_get
    through warp.struct_set), the same field of the struct's companion, read at the insertion point; an array
    stored into a struct field or built into a struct has the companion of that array; a row of an array
    (`a[i]`: warp.view) is the same row of the array's companion, at the indices' values in `mapping`. With
    `recorded_grads` (adjoints, not tangents), an array field of a struct that has no companion (one read from
    an array of structs: `holders[i].values`) has the gradient the struct records beside it
    (warp.struct_field_grad; its address may be 0: recorded_grad_root). None when `v` comes from anywhere else."""
    if v in companions:
        return companions[v]
    if isinstance(v, ir.OpResult) and v.owner.name == "warp.view":
        view = v.owner.opview
        src = companion_array(view.array, companions, mapping, recorded_grads)
        return None if src is None else wb.view(src, [mapping.get(i, i) for i in view.indices])
    if isinstance(v, ir.OpResult) and v.owner.name == "warp.slice":  # a[1:3]: the same slice of the companion
        sl = v.owner.opview
        src = companion_array(sl.array, companions, mapping, recorded_grads)
        dims = list(ir.DenseI64ArrayAttr(sl.operation.attributes["dims"]))
        return None if src is None else wb.slice_(src, dims, [mapping.get(b, b) for b in sl.bounds])
    if isinstance(v, ir.OpResult) and v.owner.name == "warp.array_from_ptr":  # raw memory: over its grad, if any
        src = v.owner.opview
        if src.grad is None:
            return None
        return wb.array_from_ptr(mapping.get(src.grad, src.grad), [mapping.get(n, n) for n in src.shape],
                                 array_dtype(v.type))
    if not (isinstance(v, ir.OpResult) and v.owner.name == "warp.struct_get"):
        return None
    get = v.owner.opview
    field = get.field
    origin = field_origin(get.aggregate, field)
    if origin is None:
        return None
    src, of_struct = origin
    if not of_struct:
        return companion_array(src, companions, mapping, recorded_grads)
    found = companion_array(src, companions, mapping, recorded_grads)
    if found is not None:
        return wc.struct_get(found, field, v.type)
    if recorded_grads and is_array_type(v.type) and read_from_memory(src):
        return wc.struct_field_grad(mapping.get(src, src), field, v.type)
    return None


def read_from_memory(struct: ir.Value) -> bool:
    """Whether the struct value is one read from an array (warp.load), or a struct field of one: its array fields
    are the ones stored there, with the gradients recorded beside them. A struct built or changed in the kernel
    (a loop or branch that sets a field to another array) is not: its array has no single adjoint."""
    while isinstance(struct, ir.OpResult):
        if struct.owner.name == "warp.load":
            return True
        if struct.owner.name != "warp.struct_get":
            return False
        get = struct.owner.opview
        origin = field_origin(get.aggregate, get.field)
        if origin is None or not origin[1]:
            return False
        struct = origin[0]
    return False


def recorded_grad_root(adjoint: ir.Value):
    """The warp.struct_field_grad that the adjoint array `adjoint` is, or is a row or slice of; None otherwise.
    Its address (warp.array_data of it) is 0 where the array stored in the struct had no gradient: nothing may
    be read or written through it then."""
    while isinstance(adjoint, ir.OpResult) and adjoint.owner.name in ("warp.view", "warp.slice"):
        adjoint = adjoint.owner.opview.array
    if isinstance(adjoint, ir.OpResult) and adjoint.owner.name == "warp.struct_field_grad":
        return adjoint
    return None


def field_origin(v: ir.Value, field: int, carried=frozenset()):
    """Where field `field` of the struct value `v` comes from: followed back through copies with other fields
    replaced (warp.struct_set), scf.for / scf.while loops that carry it unchanged (their results and their
    regions' arguments) and scf.if branches that both yield the same origin. (struct value, True): that field
    of that struct value (a parameter, a field of one, or a value this cannot see through); (value, False):
    the value stored into the field (struct_set, construct); None: the field of a zero-built struct.
    `carried`: the loop arguments being checked, taken as their own origin."""
    while True:
        if v in carried:
            return v, True
        if isinstance(v, ir.BlockArgument):
            loop, k = v.owner.owner.operation, v.arg_number
            if loop.name == "scf.while" and v.owner == loop.regions[1].blocks[0]:  # after: what before passed
                v = terminator(loop.regions[0].blocks[0]).operands[1 + k]
                continue
            if loop.name == "scf.for":
                k -= 1  # the induction variable comes first
            if loop.name in ("scf.for", "scf.while") and k >= 0 and carries_field(loop, k, field, carried):
                v = loop_inits(loop)[k]
                continue
            return v, True
        op = v.owner.operation
        if op.name == "scf.while":  # its results: what the last `before` passed
            v = terminator(op.regions[0].blocks[0]).operands[1 + v.result_number]
        elif op.name == "warp.struct_set":
            set_ = op.opview
            if set_.field == field:
                return set_.element, False
            v = set_.aggregate
        elif op.name == "warp.construct":  # all fields given, or none (the zero struct: null arrays)
            elements = op.opview.elements
            return (elements[field], False) if elements else None

        elif op.name == "scf.for" and carries_field(op, v.result_number, field, carried):
            v = loop_inits(op)[v.result_number]
        elif op.name == "scf.if" and all(r.blocks for r in op.regions):
            then, other = (field_origin(terminator(r.blocks[0]).operands[v.result_number], field, carried)
                           for r in op.regions)
            if then != other:  # the branches differ: nothing to follow
                return v, True
            if then is None or not then[1]:  # both a zero struct, or both store the same value
                return then
            v = then[0]
        else:
            return v, True


def loop_inits(loop) -> list:
    """The initial values of an scf.for's or scf.while's carried state."""
    return list(loop.operands)[3:] if loop.name == "scf.for" else list(loop.operands)


def carries_field(loop, k: int, field: int, carried) -> bool:
    """Whether the scf.for / scf.while `loop` yields field `field` of its k-th carried value unchanged."""
    if loop.name == "scf.for":
        body = loop.regions[0].blocks[0]
        arg, yielded = body.arguments[1 + k], terminator(body).operands[k]
    else:
        arg = loop.regions[0].blocks[0].arguments[k]
        yielded = terminator(loop.regions[1].blocks[0]).operands[k]
    return field_origin(yielded, field, carried | {arg}) == (arg, True)


def raw_pointer_origin(v: ir.Value):
    """The warp.array_from_ptr (a `wp.array(ptr=...)` built in the kernel) that the array `v` is, seen through
    rows, slices and struct fields as companion_array() sees them; None when `v` is no such array."""
    while isinstance(v, ir.OpResult):
        name = v.owner.name
        if name == "warp.array_from_ptr":
            return v.owner.opview
        if name in ("warp.view", "warp.slice"):
            v = v.owner.opview.array
        elif name == "warp.struct_get":
            get = v.owner.opview
            origin = field_origin(get.aggregate, get.field)
            if origin is None or origin[1]:
                return None
            v = origin[0]
        else:
            return None
    return None


def from_raw_pointer(v: ir.Value) -> bool:
    """Whether the array `v` is over raw memory (raw_pointer_origin). warp-jvp has no tangent for any such array:
    its loads are constants there."""
    return raw_pointer_origin(v) is not None


def without_adjoint(v: ir.Value) -> bool:
    """Whether the array `v` is over raw memory given no grad address. Such an array has no adjoint, as in Warp
    (its grad pointer is null): reads from it are constants to the derivative, writes to it pass none on. One
    with a grad address (wp.mesh_get's points) has an adjoint over that memory (companion_array), which is absent
    at run time where the address is 0 (raw_grad_address)."""
    origin = raw_pointer_origin(v)
    return origin is not None and origin.grad is None


def raw_grad_address(v: ir.Value, mapping: dict, adjoint: ir.Value | None = None):
    """The grad address (i64, at the insertion point through `mapping`) of the raw-memory array `v`, or of the
    struct-recorded gradient `adjoint` is over (recorded_grad_root), whose adjoint accesses must be skipped
    where it is 0; None when neither."""
    origin = raw_pointer_origin(v)
    if origin is None or origin.grad is None:
        root = recorded_grad_root(adjoint) if adjoint is not None else None
        return None if root is None else wb.array_data(root)
    return mapping.get(origin.grad, origin.grad)


def required_companion(op, arr: ir.Value, companions: dict, mapping: dict, kind: str) -> ir.Value:
    """companion_array(), or the PassError that names `op` and says why there is no `kind` (adjoint/tangent) array."""
    found = companion_array(arr, companions, mapping, recorded_grads=kind == "adjoint")
    if found is None:
        raise PassError(f"{where(op)}: cannot differentiate an access to an array that is neither a kernel "
                        f"argument nor a field of a struct argument (a field that a loop or branch sets to another "
                        f"array has no single {kind} array)")
    return found


def body_ops(block: ir.Block) -> list:
    """A block's ops without its terminator."""
    ops = [op.operation for op in block.operations]
    return ops[:-1] if ops and ops[-1].name in ("scf.yield", "scf.condition", "func.return", "gpu.yield") else ops


def terminator(block: ir.Block) -> ir.Operation:
    return block.operations[-1].operation


def is_constant(v: ir.Value) -> bool:
    return isinstance(v, ir.OpResult) and v.owner.name == "arith.constant"


def free_values(op: ir.Operation, pred=lambda v: is_diff(v.type) and not is_constant(v)) -> list:
    """Values used inside `op`'s regions but defined outside it (in first-use order), filtered by `pred`."""
    inner, out = set(), {}

    def visit(o):
        for region in o.regions:
            for block in region.blocks:
                for a in block.arguments:
                    inner.add(a)
                for child in block.operations:
                    child = child.operation
                    for v in child.operands:
                        if v not in inner and pred(v):
                            out.setdefault(v, None)
                    visit(child)
                    for r in child.results:
                        inner.add(r)

    visit(op)
    return [v for v in out if v not in inner]


def _own_memory(v: ir.Value) -> bool:
    """Whether the array `v` is the thread's own (wp.zeros in the kernel: warp.local_array / stack_array) or raw
    memory without a grad address (without_adjoint): arrays without adjoints, whose stores pass nothing on."""
    while isinstance(v, ir.OpResult) and v.owner.name in ("warp.view", "warp.slice"):
        v = v.owner.operands[0]
    if isinstance(v, ir.OpResult) and v.owner.name in ("warp.local_array", "warp.stack_array"):
        return True
    return without_adjoint(v)


def writes_own_memory(op: ir.Operation) -> bool:
    """Whether `op` (or an op nested in it) stores into a wp.zeros array of the thread: a loop that does cannot be
    reversed by rerunning its iterations (each rerun would read the array as the last iteration left it)."""
    found = []

    def visit(o):
        if o.name == "warp.store" and _own_memory(o.opview.array):
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return bool(found)


def has_adjoint_effects(op: ir.Operation) -> bool:
    """Whether `op` (or an op nested in it) writes memory the adjoint must follow: a store or atomic of a
    differentiable value into an array with an adjoint, or any tile store. A loop or branch whose results carry
    no adjoint and that has none (it fills an int stack, say) needs no reverse: rerunning it would read its
    own memory as the forward left it, not as each iteration saw it."""
    found = []

    def visit(o):
        if o.name in SIDE_EFFECTS:
            view = o.opview if o.name in ("warp.store", "warp.atomic") else None
            if view is None or (is_diff(view.value.type) and not _own_memory(view.array)):
                found.append(o)
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return bool(found)


def contains(op: ir.Operation, names) -> bool:
    found = []

    def visit(o):
        if o.name in names:
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return bool(found)


def trip_count(lo: ir.Value, hi: ir.Value, step: ir.Value) -> ir.Value:
    """max(0, ceil((hi - lo) / step)) for scf.for's positive step."""
    one = arith.ConstantOp(lo.type, ir.IntegerAttr.get(lo.type, 1)).result
    zero_ = arith.ConstantOp(lo.type, ir.IntegerAttr.get(lo.type, 0)).result
    span = arith.SubIOp(hi, lo).result
    n = arith.DivSIOp(arith.SubIOp(arith.AddIOp(span, step).result, one).result, step).result
    return arith.MaxSIOp(n, zero_).result


def tainted_uses(root: ir.Operation, seeds) -> bool:
    """True when a value derived from `seeds` reaches a side effect (or decides whether one runs) or
    root's own terminators, i.e. what `root` computes depends on the seeds. Taint flows through results,
    through region terminators to their op's results and block arguments, and from a region op's operands
    to its block arguments, to a fixpoint."""
    tainted = set(seeds)
    changed = True
    hit = []

    def add(values):
        nonlocal changed
        for v in values:
            if v not in tainted:
                tainted.add(v)
                changed = True

    def block_args(o):
        return [a for region in o.regions for block in region.blocks for a in block.arguments]

    def visit(o):
        if any(v in tainted for v in o.operands):
            terminator_ = o.name in ("scf.yield", "scf.condition")
            if o.name in SIDE_EFFECTS or (terminator_ and o.parent == root):
                hit.append(o)
            if o.regions and contains(o, SIDE_EFFECTS):
                hit.append(o)
            add(o.results)
            add(block_args(o))
            if terminator_:
                add(o.parent.results)
                add(block_args(o.parent))
        return ir.WalkResult.ADVANCE

    while changed:
        changed = False
        hit.clear()
        for region in root.regions:
            for block in region.blocks:
                for o in block.operations:
                    o.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(hit)


def expansion_block(rule, op: ir.Operation):
    """Emits an Expansion rule's formula for `op` into a scratch function whose arguments stand for op's
    operands; returns (scratch module: keep it alive while using the rest, block, ops of the formula, result)."""
    from mlir.dialects import func

    from ..builtins.derivatives import V

    scratch = ir.Module.create(loc=op.location)
    with ir.InsertionPoint(scratch.body), op.location:
        f = func.FuncOp("expansion", ([v.type for v in op.operands], []))
        block = f.add_entry_block()
    with ir.InsertionPoint(block), op.location:
        out = rule.expand(*[V(a) for a in block.arguments]).value
        func.ReturnOp([])
    return scratch, block, body_ops(block), out
