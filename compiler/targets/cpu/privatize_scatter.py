"""warp-cpu-privatize-scatter: a CPU entry whose atomics sum into arrays it touches no other way gets a copy
`<entry>_private` in which those atomics are plain read-modify-writes, and a table `<entry>_private_params` of
the parameters they sum into, so the runtime can give each part of a parallel launch its own copy of them.

Scattered atomic adds (mass-spring's `wp.atomic_add(f, i, force)`, an adjoint's gradient accumulation) into a
small array make every core fight over its cache lines, and a float atomic is a compare-exchange loop: such
launches ran on one thread (the `_serial` copy, warp-cpu-serial-copy). With the table, runtime/cpu.py runs a
parallel launch of `<entry>_private` with one launch struct per range of chunks (runtime/cpu_pool.py), in which
those parameters' data pointers point to zeroed private copies; the copies are then added into the arrays in
a fixed order. The launch struct is the only thing that changes: the kernel reads its arrays' pointers from it.

A parameter qualifies when it is a top-level array (its descriptor loaded whole from the launch struct, field
k = parameter k - 1) and every use of its data pointer is address arithmetic ending in an atomicrmw add, sub,
fadd or fsub (f32, f64, i32, i64) whose old value is unused (through copies of the descriptor with another
shape or stride): nothing reads the array back (a private copy holds
only this part's sum), stores to it, or does another atomic on it (min, max, exchange do not commute with
a sum moved to the end), and every such atomic has one value type. Its shape and strides may be read.
Atomics on other arrays stay atomic in the copy. Runs after warp-cpu-privatize-atomics (the copy keeps its
accumulators, whose flushes then go to the private copy) and before warp-cpu-serial-copy.

With `replace-entry` (a CPU adjoint library's, compiler/targets/cpu/table.py) the entry itself becomes
`<entry>_private`: no atomic form of it is compiled. Its atomic form runs only where private copies cannot (an
array over the runtime's size limit, or overlapping another parameter), and it is about a third of an adjoint
library's compile (diffray's draw adjoint: 0.35 s of a cold run); there the runtime runs `_private` on one thread
and asks for the library with atomics (autodiff/adjoint.py), which later launches use.

The table is an i64 array: [2 (its version), the launch struct's size, the number of rows, flags, then per
top-level array parameter the entry loads: parameter index, its descriptor's byte offset in the launch struct,
ndim, and the type code (TYPE_CODES) of its sums when it is private, else 0]. Flag SUMS_ONLY: the copy writes
memory only through its private sums and into its own stack slots (no other store, atomic or call), so running
it with every private array pointed at a scratch copy has no effect but on those copies: the runtime runs it so,
a chunk at a time, to see where each chunk's sums land and to give each range of a parallel launch the chunks
summing into the part of the arrays it owns (runtime/cpu.py `_Private`, chunk orders). LLVM lays the offsets out (constant GEPs
on the launch struct type), so they are the runtime's ctypes layout; the other arrays' rows let the runtime
see a private array that aliases another parameter (then it launches the plain entry).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...dialects import llvm
from ...passes import registry
from .cpu_entry import cpu_entries

TYPE_CODES = {"f32": 1, "f64": 2, "i32": 3, "i64": 4}
TABLE_VERSION = 2
SUMS_ONLY = 1  # the table's flags: the copy writes memory through its private sums alone
_SUMS = {"add": arith.AddIOp, "sub": arith.SubIOp, "fadd": arith.AddFOp, "fsub": arith.SubFOp}
_DESCRIPTOR_PREFIX = "!llvm.struct<(ptr, array<"


def private_name(entry: str) -> str:
    """The copy of an entry whose summed-only arrays' atomics are plain, for launches with private copies."""
    return f"{entry}_private"


def params_table_name(entry: str) -> str:
    return f"{entry}_private_params"


def _op(owner):
    return owner.operation if hasattr(owner, "operation") else owner


def _bin_op(rmw) -> str:
    return llvm.AtomicBinOp(ir.IntegerAttr(rmw.attributes["bin_op"]).value).name


def _param_loads(entry) -> dict:
    """{field k: [descriptor loads]} of the top-level array parameters the entry loads from its launch struct."""
    args = entry.regions[0].blocks[0].arguments[0]
    found = {}
    for op in entry.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "llvm.load" or not str(op.results[0].type).startswith(_DESCRIPTOR_PREFIX):
            continue
        address = op.operands[0]
        gep = address.owner
        if isinstance(gep, ir.Block):
            continue
        gep = _op(gep)
        if gep.name != "llvm.getelementptr" or len(gep.operands) != 1 or gep.operands[0] != args:
            continue
        indices = list(ir.DenseI32ArrayAttr(gep.attributes["rawConstantIndices"]))
        if len(indices) == 2 and indices[0] == 0 and indices[1] >= 1:
            found.setdefault(indices[1], []).append(op)
    return found


def _summed_atomics(descriptor, atomics=None) -> list | None:
    """The atomics summing into the array of `descriptor` (a value), None when the array is used otherwise.
    Descriptors made from it with another shape or stride (warp-cpu-entry's contiguous-stride loop version
    inserts a constant stride) are followed."""
    atomics = [] if atomics is None else atomics
    for use in descriptor.uses:
        user = _op(use.owner)
        if user.name not in ("llvm.extractvalue", "llvm.insertvalue") or use.operand_number != 0:
            return None
        position = list(ir.DenseI64ArrayAttr(user.attributes["position"]))
        if user.name == "llvm.insertvalue":
            if position[0] == 0 or _summed_atomics(user.results[0], atomics) is None:
                return None  # another data pointer, or the new descriptor used otherwise
            continue
        if position[0] != 0:  # shape or strides: read freely
            continue
        if not _addresses_only_summed(user.results[0], atomics):
            return None
    return atomics


def _addresses_only_summed(pointer, atomics: list) -> bool:
    for use in pointer.uses:
        user = _op(use.owner)
        if user.name == "llvm.getelementptr" and use.operand_number == 0:
            if not _addresses_only_summed(user.results[0], atomics):
                return False
        elif user.name == "llvm.atomicrmw" and use.operand_number == 0:
            if _bin_op(user) not in _SUMS or str(user.operands[1].type) not in TYPE_CODES \
                    or not _dead(user.results[0]):
                return False
            atomics.append(user)
        else:
            return False
    return True


_PURE = ("arith.", "vector.", "llvm.insertvalue", "llvm.extractvalue", "llvm.bitcast", "llvm.mlir.")


def _dead(value, depth: int = 0) -> bool:
    """No use of `value` reaches memory or control flow: only pure ops (building a vec3 that `wp.atomic_add`
    returns and nobody reads, before canonicalize removes them) whose results are dead too."""
    for use in value.uses:
        user = _op(use.owner)
        if depth > 8 or not user.name.startswith(_PURE) or user.regions and len(user.regions) \
                or not all(_dead(r, depth + 1) for r in user.results):
            return False
    return True


def summed_params(entry) -> list:
    """[(parameter index, value type, atomics)] of the arrays `entry` only sums into."""
    out = []
    for field, loads in sorted(_param_loads(entry).items()):
        atomics = []
        for load in loads:
            found = _summed_atomics(load.results[0])
            if found is None:
                atomics = None
                break
            atomics += found
        if not atomics:
            continue
        types = {str(a.operands[1].type) for a in atomics}
        if len(types) == 1:
            out.append((field - 1, types.pop(), atomics))
    return out


# ops that write no memory (their operands read at most): what a SUMS_ONLY copy may hold besides its sums and
# stores into its own stack slots
_WRITE_FREE_PREFIXES = ("arith.", "math.", "scf.", "cf.", "index.", "ub.", "llvm.mlir.")
_WRITE_FREE = frozenset({
    "func.return", "llvm.return", "llvm.load", "llvm.getelementptr", "llvm.extractvalue", "llvm.insertvalue",
    "llvm.extractelement", "llvm.insertelement", "llvm.shufflevector", "llvm.alloca", "llvm.ptrtoint",
    "llvm.inttoptr", "llvm.bitcast", "llvm.select", "llvm.icmp", "llvm.fcmp", "llvm.sext", "llvm.zext",
    "llvm.trunc", "llvm.add", "llvm.sub", "llvm.mul", "llvm.and", "llvm.or", "llvm.xor", "llvm.shl", "llvm.lshr",
    "llvm.ashr", "llvm.fadd", "llvm.fsub", "llvm.fmul", "llvm.fdiv", "llvm.fneg", "llvm.sitofp", "llvm.uitofp",
    "llvm.fptosi", "llvm.fptoui", "llvm.fpext", "llvm.fptrunc", "llvm.freeze"})
_WRITING_WORDS = ("store", "scatter", "memcpy", "memset", "memmove", "trap", "call", "atomic", "cmpxchg")


def _writes_nothing(name: str) -> bool:
    if name in _WRITE_FREE or name.startswith(_WRITE_FREE_PREFIXES):
        return True
    if name.startswith(("vector.", "llvm.intr.")):  # (vector.load, llvm.intr.masked.load, llvm.intr.fma, ...)
        return not any(word in name for word in _WRITING_WORDS)
    return False


def _stack_slot(pointer) -> bool:
    """Whether `pointer` addresses one of the function's own `llvm.alloca` slots (through GEPs)."""
    for _ in range(64):
        owner = pointer.owner
        if isinstance(owner, ir.Block):
            return False
        owner = _op(owner)
        if owner.name == "llvm.alloca":
            return True
        if owner.name != "llvm.getelementptr":
            return False
        pointer = owner.operands[0]
    return False


def sums_only(entry, atomics) -> bool:
    """Whether `entry` writes memory through `atomics` (its private sums) and its stack slots alone."""
    sums = set(atomics)
    found = [True]

    def visit(op):
        if op in sums:
            return ir.WalkResult.ADVANCE
        name = op.name
        if name == "llvm.store" and _stack_slot(op.operands[1]):
            return ir.WalkResult.ADVANCE
        if name == "func.func" or _writes_nothing(name):
            return ir.WalkResult.ADVANCE
        found[0] = False
        return ir.WalkResult.INTERRUPT

    entry.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0]


def _make_plain(rmw) -> None:
    op = _SUMS[_bin_op(rmw)]
    ptr, value = rmw.operands[0], rmw.operands[1]
    with ir.InsertionPoint(rmw), rmw.location:
        old = llvm.load(value.type, ptr)
        llvm.store(op(old, value).result, ptr)
    rmw.results[0].replace_all_uses_with(old)  # dead uses only (_dead)
    rmw.erase()


def _table_op(name: str, entry, private: dict, flags: int):
    """The table global: [TABLE_VERSION, launch struct size, arrays, flags, (parameter, byte offset, ndim, type
    code or 0) per top-level array parameter the entry loads], the offsets and size laid out by LLVM (constant
    GEPs)."""
    loads = _param_loads(entry)
    rows = []
    struct_type = None
    for field in sorted(loads):
        load = loads[field][0]
        gep = _op(load.operands[0].owner)
        struct_type = str(ir.TypeAttr(gep.attributes["elem_type"]).value)
        ndim = int(str(load.results[0].type)[len(_DESCRIPTOR_PREFIX):].split(" ")[0])
        rows.append((field - 1, field, ndim, TYPE_CODES[private[field - 1]] if field - 1 in private else 0))
    count = 4 + 4 * len(rows)
    t = f"!llvm.array<{count} x i64>"
    lines = [f"llvm.mlir.global external constant @{name}() {{addr_space = 0 : i32}} : {t} {{",
             "  %z = llvm.mlir.zero : !llvm.ptr", f"  %a = llvm.mlir.undef : {t}"]
    values = [("c", TABLE_VERSION), ("size", None), ("c", len(rows)), ("c", flags)]
    for param, field, ndim, code in rows:
        values += [("c", param), ("offset", field), ("c", ndim), ("c", code)]
    last = "%a"
    for i, (kind, v) in enumerate(values):
        if kind == "c":
            lines.append(f"  %v{i} = llvm.mlir.constant({v} : i64) : i64")
        else:
            index = "[1]" if kind == "size" else f"[0, {v}]"
            lines.append(f"  %g{i} = llvm.getelementptr %z{index} : (!llvm.ptr) -> !llvm.ptr, {struct_type}")
            lines.append(f"  %v{i} = llvm.ptrtoint %g{i} : !llvm.ptr to i64")
        lines.append(f"  %a{i} = llvm.insertvalue %v{i}, {last}[{i}] : {t}")
        last = f"%a{i}"
    lines += [f"  llvm.return {last} : {t}", "}"]
    return ir.Operation.parse("\n".join(lines))


def add_private_copy(module, entry, replace_entry: bool = False) -> list:
    """Adds `<entry>_private` and its parameter table when the entry sums into some array only; returns the
    summed parameters [(index, value type)]. `replace_entry`: the entry itself becomes `<entry>_private` (renamed,
    no copy: the module keeps no atomic form of it)."""
    params = summed_params(entry)
    if not params:
        return []
    name = ir.StringAttr(entry.attributes["sym_name"]).value
    if replace_entry:
        copy = entry.operation
    else:
        copy = entry.operation.clone(ip=ir.InsertionPoint.after(entry))
        params = summed_params(copy)
    copy.attributes["sym_name"] = ir.StringAttr.get(private_name(name))
    flags = SUMS_ONLY if sums_only(copy, [rmw for _, _, atomics in params for rmw in atomics]) else 0
    for _, _, atomics in params:
        for rmw in atomics:
            _make_plain(rmw)
    ir.InsertionPoint.after(copy).insert(_table_op(params_table_name(name), copy, {p: t for p, t, _ in params},
                                                   flags))
    return [(p, t) for p, t, _ in params]


class PrivatizeScatter(registry.PrivatizeScatter):
    def run(self, module):
        for entry in cpu_entries(module):
            add_private_copy(module, entry, self.replace_entry)
