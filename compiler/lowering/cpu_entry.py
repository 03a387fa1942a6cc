"""warp-cpu-entry: each kernel becomes `<name>_cpu(args: ptr, begin: i64, end: i64)`.

`args` points to the launch struct of runtime/abi.py: `{i64 dims[4], param0, param1, ...}`
(arrays already lowered to descriptors). The entry loads every parameter once,
then runs the kernel body for each linear thread index in [begin, end), so the
runtime can split one launch into ranges on several threads, and LLVM sees the
body inside the loop it may vectorise."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, llvm, scf

from ..passes.registry import Pass, PassError, kernels, ops_named, register


def entry_name(kernel_name: str) -> str:
    return f"{kernel_name}_cpu"


def _i(bits):
    return ir.IntegerType.get_signless(bits)


def thread_indices(linear: ir.Value, dims: list, count: int) -> list:
    """Splits a linear index over the launch dims: the last index varies fastest, as in Warp."""
    out = []
    rest = linear
    for d in range(count - 1, 0, -1):
        out.append(arith.RemSIOp(rest, dims[d]).result)
        rest = arith.DivSIOp(rest, dims[d]).result
    out.append(rest)
    return [arith.TruncIOp(_i(32), v).result for v in reversed(out)]


@register
class CpuEntry(Pass):
    name = "warp-cpu-entry"
    description = "Wrap each kernel in a CPU entry point looping over a range of linear thread indices"

    def run(self, module):
        for kernel in kernels(module):
            self.wrap(module, kernel)

    def wrap(self, module, kernel):
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        body = kernel.regions[0].blocks[0]
        params = list(body.arguments)
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
            values = [field(k + 1, t=p.type) for k, p in enumerate(params)]
            loop = scf.ForOp(begin, end, arith.ConstantOp(_i(64), 1).result)
            with ir.InsertionPoint(loop.body):
                terminator = scf.YieldOp([])
            func.ReturnOp([])
        for p, v in zip(params, values):
            p.replace_all_uses_with(v)
        for op in list(body.operations):
            if op.name == "func.return":
                op.erase()
            else:
                op.move_before(terminator)
        for tid in ops_named(entry.operation, {"warp.tid"}):
            with ir.InsertionPoint(tid), tid.location:
                idx = thread_indices(loop.induction_variable, dims, len(tid.results))
            for r, v in zip(tid.results, idx):
                r.replace_all_uses_with(v)
            tid.erase()
        kernel.erase()
        if ops_named(entry.operation, lambda n: n.startswith("warp.")):
            raise PassError(f"kernel '{name}' still has warp ops; lower builtins and arrays first")
