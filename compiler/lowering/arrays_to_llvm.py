"""convert-warp-arrays-to-llvm: `!warp.array<T, N>` becomes the descriptor struct
`!llvm.struct<(ptr, array<N x i64>, array<N x i64>)>` (data, shape, byte strides), and
array ops become address arithmetic, loads, stores and atomicrmw.

The struct matches runtime/abi.py, which packs arrays for a launch."""

from __future__ import annotations

import weakref

from mlir import ir
from mlir.dialects import arith, scf

from ..dialects import llvm
from ..dialects.warp import array_dtype, array_ndim, is_array_type, views
from ..dialects.warp.composite import composite, storage_layout
from ..passes import registry
from ..passes.registry import PassError
from ..passes.ir_walk import ops_named
from .index_signs import non_negative
from .patterns import lower_ops

# On each lowered func: the element byte size of each array argument (0: not an array, or no fast path).
ELEM_BYTES_ATTR = "warp.elem_bytes"


def descriptor_type(ndim: int) -> ir.Type:
    return ir.Type.parse(f"!llvm.struct<(ptr, array<{ndim} x i64>, array<{ndim} x i64>)>")


def lower_type(t: ir.Type) -> ir.Type:
    return descriptor_type(array_ndim(t)) if is_array_type(t) else t


def _i64():
    return ir.IntegerType.get_signless(64)


def _constant_int(v: ir.Value):
    """The value of an integer arith.constant, else None."""
    op = getattr(v.owner, "operation", None)  # (a block argument's owner is its block)
    if op is not None and op.name == "arith.constant" and isinstance(v.type, ir.IntegerType):
        return ir.IntegerAttr(op.attributes["value"]).value
    return None


def wrapped_index(desc: ir.Value, d: int, idx: ir.Value, at=None) -> ir.Value:
    """Index `idx` (i32) of dimension `d` as i64, a negative one counted from the end of the dimension, as
    Warp's array indexing does (`a[-1]` is the last element); a constant one is wrapped here, one known
    non-negative where operation `at` uses it (index_signs.py: the thread index, loop counters, their sums and
    products) is not wrapped."""
    i64 = _i64()
    known = _constant_int(idx)
    if (known is not None and known >= 0) or (known is None and non_negative(idx, at)):
        return arith.ExtSIOp(i64, idx).result
    shape = llvm.extractvalue(i64, desc, [1, d])
    wide = arith.ExtSIOp(i64, idx).result
    if known is not None:
        return arith.AddIOp(wide, shape).result
    negative = arith.CmpIOp(arith.CmpIPredicate.slt, wide, _i64_const(0)).result
    return arith.SelectOp(negative, arith.AddIOp(wide, shape).result, wide).result


def element_address(desc: ir.Value, ndim: int, indices, at=None) -> ir.Value:
    """data + sum(index_d * stride_d), strides in bytes (fewer indices than dims: the leading ones); a
    negative index counts from the end of its dimension (wrapped_index; `at`: the access op).

    The offset arithmetic is `nsw` and the GEP `inbounds`: an access outside the array is
    undefined in Warp, and these facts let LLVM's SCEV see `x[i]` as an affine, consecutive
    access (and so vectorise the thread loop)."""
    data = llvm.extractvalue(ir.Type.parse("!llvm.ptr"), desc, [0])
    nsw = ir.Attribute.parse("#arith.overflow<nsw>")
    offset = None
    for d, idx in enumerate(indices):
        stride = llvm.extractvalue(_i64(), desc, [2, d])
        term = arith.MulIOp(wrapped_index(desc, d, idx, at), stride, overflowFlags=nsw).result
        offset = term if offset is None else arith.AddIOp(offset, term, overflowFlags=nsw).result
    return inbounds_gep(data, offset)


def sub_array(desc: ir.Value, ndim: int, indices) -> ir.Value:
    """The descriptor of the sub-array at the leading `indices`: its data starts at their element offset,
    its shape and strides are the remaining ones (Warp's `a[i]` of a 2-d array: a row view)."""
    k = len(indices)
    out_t = descriptor_type(ndim - k)
    out = llvm.mlir_undef(out_t)
    out = llvm.insertvalue(out, element_address(desc, ndim, indices), [0])
    for d in range(ndim - k):
        out = llvm.insertvalue(out, llvm.extractvalue(_i64(), desc, [1, k + d]), [1, d])
        out = llvm.insertvalue(out, llvm.extractvalue(_i64(), desc, [2, k + d]), [2, d])
    return out


def inbounds_gep(base: ir.Value, byte_offset: ir.Value) -> ir.Value:
    """`getelementptr inbounds i8, base, byte_offset`.

    The Python GEPOp builder drops `no_wrap_flags` and the flag is a property that the
    attribute API cannot set, so the op is cloned from a parsed template and re-wired."""
    gep = _inbounds_template().clone()
    gep.operands[0] = base
    gep.operands[1] = byte_offset
    return gep.result


_TEMPLATE = """llvm.func @inbounds_template(%p: !llvm.ptr, %o: i64) -> !llvm.ptr {
  %0 = llvm.getelementptr inbounds %p[%o] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.return %0 : !llvm.ptr
}"""


def _inbounds_template() -> ir.Operation:
    ctx = ir.Context.current
    found = _templates.get(ctx)
    if found is None:
        module = ir.Module.parse(_TEMPLATE)
        found = _templates[ctx] = (module, module.body.operations[0].regions[0].blocks[0].operations[0])
    return found[1]


_templates: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def element_bytes(dtype: ir.Type) -> int:
    """The byte size of an array element whose accesses LLVM can vectorise once its stride is a constant:
    a plain int/float, or a vector, matrix, quaternion or transform of them (packed, as arrays store
    them); 0 for anything else (no fast path then)."""
    if isinstance(dtype, (ir.IntegerType, ir.FloatType)):
        return dtype.width // 8 if dtype.width % 8 == 0 else 0
    c = composite(dtype)
    if c is not None and c.kind != "struct" and isinstance(c.dtype, (ir.IntegerType, ir.FloatType)):
        return c.length * element_bytes(c.dtype)
    return 0


# (warp.atomic kind, element kind) -> llvm.atomicrmw operation. Integer types are signless here: the
# frontend names unsigned min/max "umin"/"umax". Float min/max are LLVM's fmin/fmax (a NaN loses), as
# Warp's float min/max.
_RMW = {("add", "float"): "fadd", ("sub", "float"): "fsub", ("add", "int"): "add", ("sub", "int"): "sub",
        ("min", "int"): "min", ("max", "int"): "max", ("umin", "int"): "umin", ("umax", "int"): "umax",
        ("min", "float"): "fmin", ("max", "float"): "fmax", ("exch", "int"): "xchg", ("exch", "float"): "xchg",
        ("and", "int"): "_and", ("or", "int"): "_or", ("xor", "int"): "_xor"}


def lower_atomic(kind: str, ptr: ir.Value, value: ir.Value) -> ir.Value:
    is_float = isinstance(value.type, ir.FloatType)
    op = _RMW.get((kind, "float" if is_float else "int"))
    if op is None:
        raise PassError(f"warp.atomic kind '{kind}' is not supported on {value.type}")
    if isinstance(value.type, ir.BF16Type) and op in _BF16_CAS:
        return _bf16_cas_loop(_BF16_CAS[op], ptr, value)
    return llvm.atomicrmw(getattr(llvm.AtomicBinOp, op), ptr, value, llvm.AtomicOrdering.monotonic)


# bfloat16 read-modify-writes become a compare-and-swap loop on the i16 bits: the CPU build carries bf16 as
# i16 in the end (lowering/bf16_as_i16.py), and atomicrmw's float operations take no integer operand.
_BF16_CAS = {"fadd": arith.AddFOp, "fsub": arith.SubFOp, "fmin": arith.MinNumFOp, "fmax": arith.MaxNumFOp}


def _bf16_cas_loop(combine, ptr: ir.Value, value: ir.Value) -> ir.Value:
    """old = *ptr; until cmpxchg(ptr, old, combine(old, value)) succeeds, retry with what it saw; returns the
    value the successful exchange replaced (the element before this thread's update)."""
    t = value.type
    first = llvm.load(t, ptr)
    loop = scf.WhileOp([t], [first])
    before = loop.before.blocks.append(t)
    with ir.InsertionPoint(before):
        old = before.arguments[0]
        updated = combine(old, value).result
        seen = lower_cas(ptr, old, updated)
        same = arith.CmpIOp(arith.CmpIPredicate.eq, arith.BitcastOp(ir.IntegerType.get_signless(16), seen).result,
                            arith.BitcastOp(ir.IntegerType.get_signless(16), old).result).result
        retry = arith.XOrIOp(same, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result
        scf.ConditionOp(retry, [seen])
    after = loop.after.blocks.append(t)
    with ir.InsertionPoint(after):
        scf.YieldOp([after.arguments[0]])
    return loop.results[0]


def lower_cas(ptr: ir.Value, compare: ir.Value, value: ir.Value) -> ir.Value:
    """cmpxchg, returning the old value; floats compare and swap their bits (LLVM's cmpxchg is integer-only)."""
    t = value.type
    bits = ir.IntegerType.get_signless(ir.FloatType(t).width) if isinstance(t, ir.FloatType) else None
    if bits is not None:
        compare, value = arith.BitcastOp(bits, compare).result, arith.BitcastOp(bits, value).result
    pair = llvm.cmpxchg(ptr, compare, value, llvm.AtomicOrdering.monotonic, llvm.AtomicOrdering.monotonic)
    old = llvm.extractvalue(bits or t, pair, [0])
    return arith.BitcastOp(t, old).result if bits is not None else old


class ConvertArraysToLLVM(registry.ConvertArraysToLLVM):
    def run(self, module):
        for f in ops_named(module, {"func.func"}):
            ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            if not any(is_array_type(t) for t in list(ft.inputs) + list(ft.results)):
                continue
            if f.regions[0].blocks:  # (a @wp.func_native's declaration has none: frontend/native_calls.py)
                # cpu_entry versions the thread loop on "each innermost stride == element size"
                f.attributes[ELEM_BYTES_ATTR] = ir.DenseI64ArrayAttr.get(
                    [element_bytes(array_dtype(t)) if is_array_type(t) else 0 for t in ft.inputs])
                for a in f.regions[0].blocks[0].arguments:
                    a.set_type(lower_type(a.type))
            f.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([lower_type(t) for t in ft.inputs], [lower_type(t) for t in ft.results]))
        for cast in ops_named(module, {"builtin.unrealized_conversion_cast"}):
            _unwrap_struct_field_array(cast)
        # The warp ops that make arrays are lowered below; every other op that yields or carries one (a call of a
        # @wp.func_native, scf.if / for / while, arith.select of `v = a if c else b` or of a branch that binds
        # an earlier array: canonicalization makes an scf.if that only picks one of two arrays a select of them)
        # yields the descriptor its operands become.
        for op in ops_named(module, lambda name: not name.startswith("warp.")):
            _retype_carried_arrays(op)
        saved = []  # (function, the op the function's allocas go before)
        for op in ops_named(module, {"warp.local_array"}):
            lower_local_array(op, saved)
        for op in ops_named(module, {"warp.stack_array"}):
            lower_stack_array(op)
        lower_ops(module, LOWERINGS)


# -- the array ops, one lowering each (lowering/patterns.py) -------------------------------------------
def _ndim(op) -> int:
    """The rank of the op's array, which the pass has made a descriptor (PassError if it is not one)."""
    return _descriptor_ndim(op.array.type)


def _element(op) -> ir.Value:
    """The address of the element an access op names."""
    return element_address(op.array, _ndim(op), op.indices, op)


def _array_dim(op: views.ArrayDimOp) -> ir.Value:
    _ndim(op)
    return arith.TruncIOp(ir.IntegerType.get_signless(32), llvm.extractvalue(_i64(), op.array, [1, op.dim])).result


def _store(op: views.StoreOp) -> None:
    llvm.store(op.value, _element(op))


def _slice(op: views.SliceOp) -> ir.Value:
    """warp.slice: Python's slice rules per dimension, in i64 at run time (a dynamic step may be negative):
    omitted bounds default by the step's sign, negative ones count from the end, both are clamped, the
    length is ceil(span / |step|) (0 for an empty span); the data moves to the start element, the stride is
    multiplied by the step. An index dimension (negative: from the end) moves the data and is dropped. A zero
    step gives an empty dimension (Warp traps)."""
    ndim = _ndim(op)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dims"]))
    bounds = list(op.bounds)
    i64 = _i64()
    zero, one, minus_one = _i64_const(0), _i64_const(1), _i64_const(-1)

    def cmp(pred, a, b):
        return arith.CmpIOp(getattr(arith.CmpIPredicate, pred), a, b).result

    def select(c, a, b):
        return arith.SelectOp(c, a, b).result

    def from_end(i, n):  # a negative bound or index counts from the end
        return select(cmp("slt", i, zero), arith.AddIOp(i, n).result, i)

    def clamp(i, lo, hi):
        return select(cmp("slt", i, lo), lo, select(cmp("sgt", i, hi), hi, i))

    data = llvm.extractvalue(ir.Type.parse("!llvm.ptr"), op.array, [0])
    offset, shapes, strides = zero, [], []
    for d, code in enumerate(dims):
        n = llvm.extractvalue(i64, op.array, [1, d])
        stride = llvm.extractvalue(i64, op.array, [2, d])
        if code < 0:
            i = from_end(arith.ExtSIOp(i64, bounds.pop(0)).result, n)
            offset = arith.AddIOp(offset, arith.MulIOp(i, stride).result).result
            continue
        given = [arith.ExtSIOp(i64, bounds.pop(0)).result if code & bit else None for bit in (1, 2, 4)]
        step = given[2] if given[2] is not None else one
        neg = cmp("slt", step, zero)
        lo = select(neg, minus_one, zero)
        hi = select(neg, arith.SubIOp(n, one).result, n)
        start = select(neg, hi, zero) if given[0] is None else clamp(from_end(given[0], n), lo, hi)
        stop = select(neg, minus_one, n) if given[1] is None else clamp(from_end(given[1], n), lo, hi)
        span = select(neg, arith.SubIOp(start, stop).result, arith.SubIOp(stop, start).result)
        size = select(neg, arith.SubIOp(zero, step).result, step)
        safe = select(cmp("eq", size, zero), one, size)  # no division by zero for a zero step
        count = arith.DivSIOp(arith.AddIOp(span, arith.SubIOp(safe, one).result).result, safe).result
        count = select(arith.OrIOp(cmp("sle", span, zero), cmp("eq", size, zero)).result, zero, count)
        offset = arith.AddIOp(offset, arith.MulIOp(start, stride).result).result
        shapes.append(count)
        strides.append(arith.MulIOp(stride, step).result)
    for d in range(len(dims), ndim):  # trailing dimensions stay
        shapes.append(llvm.extractvalue(i64, op.array, [1, d]))
        strides.append(llvm.extractvalue(i64, op.array, [2, d]))
    out = llvm.mlir_undef(descriptor_type(len(shapes)))
    start_ptr = llvm.getelementptr(ir.Type.parse("!llvm.ptr"), data, [offset], [-2147483648],
                                   ir.IntegerType.get_signless(8), 0)  # not inbounds: an empty slice may start past it
    out = llvm.insertvalue(out, start_ptr, [0])
    for d, (n, s) in enumerate(zip(shapes, strides)):
        out = llvm.insertvalue(out, n, [1, d])
        out = llvm.insertvalue(out, s, [2, d])
    return out


def _array_data(op: views.ArrayDataOp) -> ir.Value:
    _ndim(op)
    return llvm.ptrtoint(_i64(), llvm.extractvalue(ir.Type.parse("!llvm.ptr"), op.array, [0]))


def _array_from_ptr(op: views.ArrayFromPtrOp) -> ir.Value:
    """A row-major descriptor: byte strides from the element's storage size (C layout) and the shape. The
    optional grad address has no place in it: warp-autodiff, which ran before, built its own arrays over it."""
    t = op.operation.results[0].type
    shape = [arith.ExtSIOp(_i64(), n).result for n in op.shape]
    out = llvm.mlir_undef(descriptor_type(len(shape)))
    out = llvm.insertvalue(out, llvm.inttoptr(ir.Type.parse("!llvm.ptr"), op.address), [0])
    stride = _i64_const(_storage_bytes(array_dtype(t)))
    strides = []
    for n in reversed(shape):
        strides.insert(0, stride)
        stride = arith.MulIOp(stride, n).result
    for d, (n, s) in enumerate(zip(shape, strides)):
        out = llvm.insertvalue(out, n, [1, d])
        out = llvm.insertvalue(out, s, [2, d])
    return out


LOWERINGS = {
    views.ArrayDataOp: _array_data,
    views.ArrayFromPtrOp: _array_from_ptr,
    views.SliceOp: _slice,
    views.ArrayDimOp: _array_dim,
    views.LoadOp: lambda op: llvm.load(op.element.type, _element(op)),
    views.ViewOp: lambda op: sub_array(op.array, _ndim(op), op.indices),
    views.AddressOp: _element,
    views.StoreOp: _store,
    views.AtomicOp: lambda op: lower_atomic(op.kind, _element(op), op.value),
    views.AtomicCasOp: lambda op: lower_cas(_element(op), op.compare, op.value),
}


def _function_of(op):
    parent = op.operation.parent
    while parent.name != "func.func":
        parent = parent.parent
    return parent


def _i64_const(n: int) -> ir.Value:
    return arith.ConstantOp(_i64(), ir.IntegerAttr.get(_i64(), n)).result


def _storage_bytes(t: ir.Type) -> int:
    """Bytes of one element as arrays store it (Warp's C layout, as ctypes lays a struct out)."""
    layout = storage_layout(t)
    if layout is None:
        raise PassError(f"warp.local_array: no storage size for element type {t}")
    return layout[0]


def lower_local_array(op, saved: list) -> None:
    """warp.local_array (wp.zeros in a kernel, Warp's fixedarray): its bytes are allocated once at the top of
    the function, as Warp's C++ declares a fixed array with the function's locals, and zeroed where the op
    is (a loop's wp.zeros starts from zero each iteration). The function's body runs once per thread inside
    the thread loop (warp-cpu-entry, warp-gpu-kernel), so it saves the stack pointer first and restores it
    before returning: the threads' stack arrays do not pile up."""
    shape = list(ir.DenseI64ArrayAttr(op.attributes["shape"]))
    elem = _storage_bytes(array_dtype(op.results[0].type))
    total = elem
    for n in shape:
        total *= n
    f = _function_of(op)
    entry = f.regions[0].blocks[0]
    ptr_t = ir.Type.parse("!llvm.ptr")
    with op.location:
        marker = next((m for g, m in saved if g == f), None)
        if marker is None:
            with ir.InsertionPoint.at_block_begin(entry):
                sp = llvm.intr_stacksave(ptr_t)
                marker = _i64_const(1).owner  # the allocas go between the save and this (unused) constant
            saved.append((f, marker))
            for ret in ops_named(f, {"func.return"}):
                with ir.InsertionPoint(ret):
                    llvm.intr_stackrestore(sp)
        with ir.InsertionPoint(marker):
            storage = llvm.alloca(ptr_t, _i64_const(1), ir.Type.parse(f"!llvm.array<{max(total, 1)} x i8>"),
                                  alignment=16)
        with ir.InsertionPoint(op):
            i8 = ir.IntegerType.get_signless(8)
            llvm.intr_memset(storage, arith.ConstantOp(i8, ir.IntegerAttr.get(i8, 0)).result, _i64_const(total), False)
            desc = llvm.insertvalue(llvm.mlir_undef(descriptor_type(len(shape))), storage, [0])
            strides, stride = [], elem
            for n in reversed(shape):  # row-major, in bytes
                strides.insert(0, stride)
                stride *= n
            for d, (n, s) in enumerate(zip(shape, strides)):
                desc = llvm.insertvalue(desc, _i64_const(n), [1, d])
                desc = llvm.insertvalue(desc, _i64_const(s), [2, d])
    op.results[0].replace_all_uses_with(desc)
    op.erase()


def lower_stack_array(op) -> None:
    """warp.stack_array: `length` elements allocated where the op is, after saving the stack pointer, which
    is restored before its block's terminator: an array made in a loop body does not pile up per iteration."""
    elem = _storage_bytes(array_dtype(op.results[0].type))
    ptr_t = ir.Type.parse("!llvm.ptr")
    with op.location:
        with ir.InsertionPoint(op):
            sp = llvm.intr_stacksave(ptr_t)
            length = arith.ExtSIOp(_i64(), op.operands[0]).result
            storage = llvm.alloca(ptr_t, length, ir.Type.parse(f"!llvm.array<{elem} x i8>"), alignment=16)
            desc = llvm.insertvalue(llvm.mlir_undef(descriptor_type(1)), storage, [0])
            desc = llvm.insertvalue(desc, length, [1, 0])
            desc = llvm.insertvalue(desc, _i64_const(elem), [2, 0])
        block = op.operation.block
        with ir.InsertionPoint(block.operations[len(block.operations) - 1]):
            llvm.intr_stackrestore(sp)
    op.results[0].replace_all_uses_with(desc)
    op.erase()


def _unwrap_struct_field_array(cast) -> None:
    """An array field read from a struct (convert-warp-composites-to-vector: its descriptor, cast to the array
    type): its users take the descriptor."""
    if len(cast.operands) == 1 and len(cast.results) == 1 and is_array_type(cast.results[0].type):
        if str(cast.operands[0].type).startswith("!llvm.struct<(ptr, array<"):
            cast.results[0].replace_all_uses_with(cast.operands[0])
            cast.erase()


def _retype_carried_arrays(op) -> None:
    """Arrays that an op other than the warp ops yields or carries (`r = a[0]`, then `r = a[1]` in a branch
    or loop) become descriptors in the op's results and its blocks' arguments, like the function's parameters."""
    for r in op.results:
        if is_array_type(r.type):
            r.set_type(lower_type(r.type))
    for region in op.regions:
        for block in region.blocks:
            for a in block.arguments:
                if is_array_type(a.type):
                    a.set_type(lower_type(a.type))


def _descriptor_ndim(t: ir.Type) -> int:
    s = str(t)
    if not s.startswith("!llvm.struct<(ptr, array<"):
        raise PassError(f"expected an array descriptor, got {t}")
    return int(s[len("!llvm.struct<(ptr, array<"):].split(" ")[0])
