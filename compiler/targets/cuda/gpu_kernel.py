"""warp-gpu-kernel: each kernel becomes `gpu.func @<name>_cuda(%launch) kernel` in a `gpu.module`.

`%launch` is the launch struct of runtime/abi.py, passed BY VALUE as the one
kernel parameter (`{i64 dims[4], param0, param1, ...}`, arrays already lowered
to descriptors): the runtime hands cuLaunchKernel a pointer to the same ctypes
struct the CPU entry reads, and the driver copies it into parameter memory.

The body runs in a grid-stride loop over the linear thread index
(`blockIdx.x * blockDim.x + threadIdx.x`, step `gridDim.x * blockDim.x`) up to
dims[0]*dims[1]*dims[2]*dims[3], as Warp does: the loop bound is the launch
guard, and a grid capped by `max_blocks` still covers the whole launch. The
linear index is split over the launch dims exactly as on the CPU.

Array data pointers are asserted to be global memory (addrspacecast to 1 and
back), so LLVM's address-space inference emits `ld.global`/`st.global`/
`atom.global` instead of generic accesses."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...dialects import llvm
from ...dialects.warp import builders as wb
from ...passes import registry
from ...passes.registry import PassError
from ...passes.ir_walk import kernels, ops_named
from ..cpu.cpu_entry import thread_indices

# (cooperative_tiles.py's: a kernel whose block's lanes share its tiles; its adjoint, on lane 0 of each block)
COOPERATIVE_ATTR, LANE_ZERO_ATTR = "warp.cooperative_tiles", "warp.lane_zero_tiles"

GPU_MODULE = "kernels"


def entry_name(kernel_name: str) -> str:
    return f"{kernel_name}_cuda"


def _i64():
    return ir.IntegerType.get_signless(64)


def _ptr(space: int = 0) -> ir.Type:
    return ir.Type.parse("!llvm.ptr" if space == 0 else f"!llvm.ptr<{space}>")


def _gpu():
    """mlir.dialects.gpu, imported by CUDA compiles only (~20 ms of a CPU compile's import otherwise)."""
    from mlir.dialects import gpu

    return gpu


def _linear_index_and_stride():
    gpu = _gpu()
    """(first linear index of this thread, grid stride), both i64."""
    x = gpu.Dimension.x
    block = arith.MulIOp(gpu.BlockIdOp(x).result, gpu.BlockDimOp(x).result).result
    first = arith.AddIOp(block, gpu.ThreadIdOp(x).result).result
    stride = arith.MulIOp(gpu.GridDimOp(x).result, gpu.BlockDimOp(x).result).result
    return (arith.IndexCastOp(_i64(), first).result, arith.IndexCastOp(_i64(), stride).result)


# (op name, operand index of the address) for the ops that may read an address in addrspace(1)
_ADDRESS_OPERAND = {"llvm.load": 0, "llvm.store": 1, "llvm.atomicrmw": 0, "llvm.cmpxchg": 0}


def mark_global_pointers(root: ir.Operation) -> None:
    """Makes every array data pointer (`extractvalue %desc[0]`) an addrspace(1) pointer for the GEPs and
    memory ops that use it; other uses keep the generic pointer."""
    for op in ops_named(root, {"llvm.extractvalue"}):
        pos = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
        if pos == [0] and str(op.results[0].type) == "!llvm.ptr" and not _on_the_stack(op.operands[0]):
            with ir.InsertionPoint.after(op), op.location:
                as_global = llvm.addrspacecast(_ptr(1), op.results[0])
            _retarget_uses(op.results[0], as_global)


def _on_the_stack(desc: ir.Value) -> bool:
    """Whether an array descriptor's data pointer is an `llvm.alloca` (a fixed-size array, wp.zeros in a kernel:
    local memory, which stays generic), following the descriptor's insertvalue chain."""
    owner = desc.owner
    while isinstance(owner, ir.Operation) or hasattr(owner, "operation"):
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.name != "llvm.insertvalue":
            return False
        if list(ir.DenseI64ArrayAttr(op.attributes["position"])) == [0]:
            source = op.operands[1].owner
            return getattr(source, "name", None) == "llvm.alloca" or \
                getattr(getattr(source, "operation", None), "name", None) == "llvm.alloca"
        owner = op.operands[0].owner
    return False


def _retarget_uses(generic: ir.Value, global_: ir.Value) -> None:
    for use in list(generic.uses):
        user = use.owner
        name = user.operation.name
        if name == "llvm.getelementptr" and use.operand_number == 0:
            user.operands[0] = global_
            result = user.results[0]
            result.set_type(_ptr(1))
            with ir.InsertionPoint.after(user), user.location:
                back = llvm.addrspacecast(_ptr(0), result)
            _restore_generic_uses(result, back)
        elif _ADDRESS_OPERAND.get(name) == use.operand_number:
            user.operands[use.operand_number] = global_


def _restore_generic_uses(global_: ir.Value, generic: ir.Value) -> None:
    """After a GEP became addrspace(1): memory ops keep the global address, anything else gets `generic`."""
    for use in list(global_.uses):
        user = use.owner
        if user == generic.owner:
            continue
        if _ADDRESS_OPERAND.get(user.operation.name) != use.operand_number:
            user.operands[use.operand_number] = generic
    if not list(generic.uses):
        generic.owner.erase()


def printf_to_gpu_printf(module: ir.Operation, gmod: ir.Operation) -> None:
    """The frontend's libc calls (`printf(fmt, ...)` then `fflush(NULL)`, fmt a private string global of
    the host module) become `gpu.printf`, which convert-gpu-to-nvvm lowers to the driver's `vprintf`."""
    gpu = _gpu()
    strings = {}
    gbody = gmod.regions[0].blocks[0]
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "llvm.mlir.global" and "value" in op.operation.attributes:
            name = ir.StringAttr(op.operation.attributes["sym_name"]).value
            strings[name] = ir.StringAttr(op.operation.attributes["value"]).value.rstrip("\0")
            # `%s` arguments (bool names, string literals) point at these: the device needs its own copy
            op.operation.clone(ip=ir.InsertionPoint.at_block_begin(gbody))
    for call in ops_named(gmod, {"llvm.call"}):
        callee = call.attributes["callee"] if "callee" in call.attributes else None
        name = ir.FlatSymbolRefAttr(callee).value if callee is not None else None
        if name not in ("printf", "fflush"):
            continue
        if name == "printf":
            fmt_op = call.operands[0].owner
            fmt = strings[ir.FlatSymbolRefAttr(fmt_op.attributes["global_name"]).value]
            with ir.InsertionPoint(call), call.location:
                # gpu.printf takes numbers only; vprintf reads a `%s` pointer from an 8-byte slot all the same
                args = [llvm.ptrtoint(_i64(), a) if isinstance(a.type, llvm.PointerType) else a
                        for a in list(call.operands)[1:]]
                gpu.printf(ir.StringAttr.get(fmt), *args)
        operands = [o.owner.operation for o in call.operands if not isinstance(o.owner, ir.Block)]
        call.erase()
        for o in operands:  # the format's llvm.mlir.addressof and fflush's null pointer
            if o.name in ("llvm.mlir.addressof", "llvm.mlir.zero") and not list(o.results[0].uses):
                o.erase()


class GpuKernel(registry.GpuKernel):
    def run(self, module):
        gpu = _gpu()
        found = kernels(module)
        if not found:
            return
        body = module.regions[0].blocks[0]
        module.attributes["gpu.container_module"] = ir.UnitAttr.get()
        with ir.InsertionPoint(body), module.location:
            gmod = gpu.GPUModuleOp(GPU_MODULE)
            gmod.regions[0].blocks.append()
        gbody = gmod.regions[0].blocks[0]
        for kernel in found:
            self.wrap(kernel, gbody)
        # helper functions (non-kernel func.func) are device code too; gbody holds the kernels already
        for op in list(body.operations):
            # and so are the constant buffers bufferized tiles read (memref.global: a tile_zeros folded to one)
            if op.operation.name in ("func.func", "memref.global"):
                op.operation.move_before(gbody.operations[0])
        printf_to_gpu_printf(module, gmod.operation)
        mark_global_pointers(gmod.operation)

    def wrap(self, kernel, gbody):
        gpu = _gpu()
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        body = kernel.regions[0].blocks[0]
        params = list(body.arguments)
        launch = ir.Type.parse("!llvm.struct<(array<4 x i64>" + "".join(f", {p.type}" for p in params) + ")>")
        with ir.InsertionPoint(gbody), kernel.location:
            entry = gpu.GPUFuncOp(ir.FunctionType.get([launch], []), sym_name=entry_name(name), kernel=True)
            block = entry.regions[0].blocks.append(launch)
        (args,) = block.arguments
        with ir.InsertionPoint(block), kernel.location:
            dims = [llvm.extractvalue(_i64(), args, [0, d]) for d in range(4)]
            values = [llvm.extractvalue(p.type, args, [k + 1]) for k, p in enumerate(params)]
            total = dims[0]
            for d in dims[1:]:
                total = arith.MulIOp(total, d).result
            first, stride = _linear_index_and_stride()
            loop = scf.ForOp(first, total, stride)
            with ir.InsertionPoint(loop.body):
                terminator = scf.YieldOp([])
            gpu.ReturnOp([])
        for p, v in zip(params, values):
            p.replace_all_uses_with(v)
        for op in list(body.operations):
            if op.operation.name == "func.return":
                op.erase()
            else:
                op.move_before(terminator)
        tids = ops_named(entry.operation, {"warp.tid"})
        # launch dimensions past the widest: folded (fold_dims); a linear tid (an error record's) is the loop's index
        widest = max((len(t.results) for t in tids if wb.LINEAR_TID_ATTR not in t.attributes), default=0)
        if COOPERATIVE_ATTR in kernel.attributes or LANE_ZERO_ATTR in kernel.attributes:
            # launched as dim + [block_dim] (unfolded): wp.tid() gives a thread's leading indices of all four
            # dimensions, the block's, then the lane's to a kernel asking for one more
            widest = 4
        for tid in tids:
            with ir.InsertionPoint(tid), tid.location:
                if wb.LINEAR_TID_ATTR in tid.attributes:
                    idx = [arith.TruncIOp(ir.IntegerType.get_signless(32), loop.induction_variable).result]
                else:
                    idx = thread_indices(loop.induction_variable, dims, len(tid.results), widest)
            for r, v in zip(tid.results, idx):
                r.replace_all_uses_with(v)
            tid.erase()
        kernel.erase()
        if ops_named(entry.operation, lambda n: n.startswith("warp.")):
            raise PassError(f"kernel '{name}' still has warp ops; lower builtins and arrays first")

