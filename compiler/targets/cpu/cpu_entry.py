"""warp-cpu-entry: each kernel becomes `<name>_cpu(args: ptr, begin: i64, end: i64)`.

`args` points to the launch struct of runtime/abi.py: `{i64 dims[4], param0, param1, ...}`
(arrays already lowered to descriptors). The entry loads every parameter once,
then runs the kernel body for each linear thread index in [begin, end), so the
runtime can split one launch into ranges on several threads, and LLVM sees the
body inside the loop it may vectorise.

What LLVM needs to vectorise that loop, and how the entry gives it:
- a k-dimensional tid (k >= 2) runs as a loop over rows with an inner loop over the
  last index: no division per thread, and the inner index is a plain induction variable;
- thread indices are i32 in the kernel but the address arithmetic is i64: the
  `extsi(trunci(iv))` round trip is removed (each index fits in i32: the launch checks
  every dim < 2**31), so `x[i]` is an affine function of the loop counter;
- the range start and the dims are assumed >= 0 (llvm.intr.assume), so the thread indices are known
  non-negative and the wrap of negative array indices (`a[-1]`, as in Warp) folds away for them;
- the loop nest is versioned on "every array's innermost stride == its element size":
  in that copy the stride is a constant, so accesses are consecutive. The other copy
  handles any strides. Arrays may alias: LLVM adds its own runtime overlap checks.
  A kernel whose threads run a loop of data-dependent length (an scf.while: a mesh or BVH
  query's traversal) is not versioned: its thread loop does not vectorise whatever the
  strides, and the second copy of its body (a mesh query inlined is ~10,000 ops) doubled
  its compile time (raycast's draw kernel: passes and LLVM).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, scf

from ...dialects import llvm
from ...dialects.warp import builders as wb
from ...passes import registry
from ...passes.autodiff import adjoint_name
from ...passes.registry import PassError
from ...passes.ir_walk import kernels, ops_named
from ...lowering.arrays_to_llvm import ELEM_BYTES_ATTR

_DESCRIPTOR_PREFIX = "!llvm.struct<(ptr, array<"
# On the loop over the last thread index (the innermost loop of the nest), for warp-cpu-interchange-loops
THREAD_LOOP_ATTR = "warp.thread_loop"


def entry_name(kernel_name: str) -> str:
    return f"{kernel_name}_cpu"


def cpu_entries(module) -> list:
    """The CPU entries warp-cpu-entry made (their `_serial` copies excluded)."""
    return [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value.endswith(entry_name(""))]


def _i(bits):
    return ir.IntegerType.get_signless(bits)


def _const(value, bits=64):
    return arith.ConstantOp(_i(bits), value).result


def split_linear(linear: ir.Value, dims: list, count: int, spans: int | None = None) -> list:
    """The leading `count` indices (i64) of a linear index over dims[0..spans-1] (default: `count`): the last
    index varies fastest, as in Warp, whose wp.tid() gives a thread's leading indices."""
    out = []
    rest = linear
    for d in range(count, spans or count):
        rest = arith.DivSIOp(rest, dims[d]).result
    for d in range(count - 1, 0, -1):
        out.append(arith.RemSIOp(rest, dims[d]).result)
        rest = arith.DivSIOp(rest, dims[d]).result
    out.append(rest)
    return list(reversed(out))


def thread_indices(linear: ir.Value, dims: list, count: int, spans: int | None = None) -> list:
    """The leading `count` i32 thread indices of a linear i64 index over dims[0..spans-1] (used by the GPU
    lowering too)."""
    return [arith.TruncIOp(_i(32), v).result for v in split_linear(linear, dims, count, spans)]


def _descriptor_ndim(t: ir.Type) -> int:
    s = str(t)
    return int(s[len(_DESCRIPTOR_PREFIX):].split(" ")[0]) if s.startswith(_DESCRIPTOR_PREFIX) else 0


def _loop(lo, hi, one):
    """An empty scf.for over [lo, hi); returns (loop, its yield)."""
    loop = scf.ForOp(lo, hi, one)
    with ir.InsertionPoint(loop.body):
        return loop, scf.YieldOp([])


class _Nest:
    """The loops over the linear range [begin, end), 1-D or rows x last index (tid_dims >= 2).

    `bounds` computes the loop-invariant values first (before any branch), so the nest
    itself uses only values that dominate both copies of it."""

    def __init__(self, begin, end, dims, tid_dims):
        self.begin, self.end, self.dims, self.tid_dims = begin, end, dims, tid_dims
        self.one, self.zero = _const(1), _const(0)
        if tid_dims >= 2:
            row = self.row = dims[tid_dims - 1]
            self.rows_begin = arith.DivSIOp(begin, row).result
            last = arith.SubIOp(arith.AddIOp(end, row).result, self.one).result
            self.rows_end = arith.DivSIOp(last, row).result

    def build(self):
        """Returns (outermost loop, innermost yield, i64 thread indices)."""
        if self.tid_dims < 2:
            loop, yield_ = _loop(self.begin, self.end, self.one)
            loop.operation.attributes[THREAD_LOOP_ATTR] = ir.UnitAttr.get()
            return loop, yield_, [loop.induction_variable]
        outer, outer_yield = _loop(self.rows_begin, self.rows_end, self.one)
        with ir.InsertionPoint(outer_yield):
            r = outer.induction_variable
            base = arith.MulIOp(r, self.row).result
            lo = arith.MaxSIOp(arith.SubIOp(self.begin, base).result, self.zero).result
            hi = arith.MinSIOp(arith.SubIOp(self.end, base).result, self.row).result
            leading = split_linear(r, self.dims, self.tid_dims - 1)
            inner, inner_yield = _loop(lo, hi, self.one)
            inner.operation.attributes[THREAD_LOOP_ATTR] = ir.UnitAttr.get()
        return outer, inner_yield, leading + [inner.induction_variable]


def _replace_in(root: ir.Operation, old: list, new: list) -> None:
    """Replaces uses of `old[k]` by `new[k]` inside `root` only."""
    pairs = list(zip(old, new))

    def visit(op):
        for n, operand in enumerate(op.operands):
            for o, v in pairs:
                if operand == o:
                    op.operands[n] = v
                    break
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)


def _drop_index_round_trips(truncs: list) -> None:
    """extsi(trunci(x: i64) : i32) : i64 -> x, for thread indices (each known to fit in i32)."""
    for t in truncs:
        source = t.operands[0]
        for use in list(t.result.uses):
            owner = use.owner
            if owner.name == "arith.extsi" and owner.results[0].type == source.type:
                owner.results[0].replace_all_uses_with(source)


def _assume_non_negative(values) -> None:
    """Tells LLVM the range start and the launch dimensions are >= 0 (the runtime passes no other), so that the
    thread indices made from them are known non-negative: the wrap of a negative array index (lowering/
    arrays_to_llvm.py wrapped_index) then folds away and `x[i]` stays an affine access the loop vectorises."""
    zero = _const(0)
    for v in values:
        non_negative = arith.CmpIOp(arith.CmpIPredicate.sge, v, zero).result
        llvm.intr_assume(non_negative, [], [])


class CpuEntry(registry.CpuEntry):
    def run(self, module):
        found = kernels(module)
        if self.adjoint_only:  # (an adjoint replays what it needs of k: k's own code would be compiled for nothing)
            names = {ir.StringAttr(k.attributes["sym_name"]).value: k for k in found}
            primal = [k for name, k in names.items() if adjoint_name(name) in names]
            found = [k for k in found if k not in primal]
            for kernel in primal:
                kernel.erase()
        for kernel in found:
            self.wrap(module, kernel)

    def wrap(self, module, kernel):
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        body = kernel.regions[0].blocks[0]
        params = list(body.arguments)
        elem_bytes = (list(ir.DenseI64ArrayAttr(kernel.attributes[ELEM_BYTES_ATTR]))
                      if ELEM_BYTES_ATTR in kernel.attributes else [0] * len(params))
        tids = ops_named(kernel.operation, {"warp.tid"})
        tid_counts = {len(t.results) for t in tids if wb.LINEAR_TID_ATTR not in t.attributes}
        # the runtime folds launch dimensions past the widest wp.tid() into repeated launches (launch_args.py
        # fold_dims), so the linear index spans that many dimensions
        widest = max(tid_counts, default=0)
        tid_dims = tid_counts.pop() if len(tid_counts) == 1 else 1  # mixed tid shapes: flat loop
        launch = ir.Type.parse("!llvm.struct<(array<4 x i64>" + "".join(f", {p.type}" for p in params) + ")>")
        ptr = ir.Type.parse("!llvm.ptr")
        with ir.InsertionPoint(kernel), kernel.location:
            entry = func.FuncOp(entry_name(name), ([ptr, _i(64), _i(64)], []))
            block = entry.add_entry_block()
        args, begin, end = block.arguments
        with ir.InsertionPoint(block), kernel.location:
            def field(*path, t):
                p = llvm.getelementptr(ptr, args, [], [0, *path], launch, no_wrap_flags=0)
                return llvm.load(t, p)

            dims = [field(0, d, t=_i(64)) for d in range(4)]
            _assume_non_negative([begin, *dims])
            values = [field(k + 1, t=p.type) for k, p in enumerate(params)]
            contiguous, fast = [], list(values)
            versioned = not ops_named(kernel.operation, {"scf.while"})
            for k, (p, v) in enumerate(zip(params, values)):
                ndim = _descriptor_ndim(p.type)
                if ndim and elem_bytes[k] and versioned:
                    size = _const(elem_bytes[k])
                    stride = llvm.extractvalue(_i(64), v, [2, ndim - 1])
                    contiguous.append(arith.CmpIOp(arith.CmpIPredicate.eq, stride, size).result)
                    fast[k] = llvm.insertvalue(v, size, [2, ndim - 1])
            loops = _Nest(begin, end, dims, tid_dims)
            if contiguous:
                cond = contiguous[0]
                for c in contiguous[1:]:
                    cond = arith.AndIOp(cond, c).result
                branch = scf.IfOp(cond, [], has_else=True)
                with ir.InsertionPoint(branch.then_block):
                    nest, terminator, indices = loops.build()
                    scf.YieldOp([])
                with ir.InsertionPoint(branch.else_block):
                    generic_at = scf.YieldOp([])
            else:
                nest, terminator, indices = loops.build()
            func.ReturnOp([])
        for p, v in zip(params, fast):
            p.replace_all_uses_with(v)
        hoisted = branch.operation if contiguous else nest.operation
        for op in list(body.operations):
            if op.name == "func.return":
                op.erase()
            elif op.name == "memref.alloca" and not list(op.operands):
                # a tile's buffer (convert-warp-tiles-to-linalg, bufferized): one for the whole range, as each
                # thread writes a tile before it reads it; inside the thread loop it would take new stack per thread
                op.move_before(hoisted)
            else:
                op.move_before(terminator)
        truncs = []
        flags = ir.Attribute.parse("#arith.overflow<nsw, nuw>")
        for tid in tids:
            with ir.InsertionPoint(tid), tid.location:
                if wb.LINEAR_TID_ATTR in tid.attributes:  # the linear index: the leading indices raveled
                    linear = indices[0]
                    for d in range(1, len(indices)):
                        linear = arith.AddIOp(arith.MulIOp(linear, dims[d]).result, indices[d]).result
                    wide = [linear]
                elif tid_dims == len(tid.results) == widest:
                    wide = indices
                else:
                    wide = split_linear(indices[0], dims, len(tid.results), widest)
                narrow = [arith.TruncIOp(_i(32), v, overflowFlags=flags) for v in wide]
            truncs += narrow
            for r, v in zip(tid.results, narrow):
                r.replace_all_uses_with(v.result)
            tid.erase()
        for extent in ops_named(entry.operation, {"warp.launch_dim"}):  # (warp-cpu-block-lanes' thread grid)
            with ir.InsertionPoint(extent), extent.location:
                d = ir.IntegerAttr(extent.attributes["dim"]).value
                extent.results[0].replace_all_uses_with(arith.TruncIOp(_i(32), dims[d]).result)
            extent.erase()
        _drop_index_round_trips(truncs)
        if contiguous:
            generic = nest.operation.clone(ip=ir.InsertionPoint(generic_at))
            _replace_in(generic, fast, values)
        kernel.erase()
        if ops_named(entry.operation, lambda n: n.startswith("warp.")):
            raise PassError(f"kernel '{name}' still has warp ops; lower builtins and arrays first")
