"""convert-warp-composites-to-vector: composite values become MLIR vectors and LLVM structs.

  !warp.vec<N, T>, !warp.quat<T>, !warp.transform<T>  ->  vector<N x T'>   (T' = T made signless)
  !warp.mat<R, C, T>                                  ->  vector<R*C x T'> (rows, concatenated)
  !warp.struct<"S", [F...]>                           ->  !llvm.struct<(storage(F)...)>
where a field or kernel argument is stored in C layout: a vector-like as
`!llvm.array<N x T'>` (a vector<3xf32> would take 16 bytes), an array as its
descriptor. The pass runs before convert-warp-builtins-to-arith and lowers:
  - builtin ops with a composite operand or result, by their overload in the table;
  - warp.construct / extract / insert / struct_get / struct_set;
  - warp.load / store / atomic of composite elements (via warp.address, which
    convert-warp-arrays-to-llvm lowers next; loads use the scalar's alignment);
  - kernel arguments of composite type (storage types in the launch struct).
Lowered integers are signless; where a scalar result or operand is unsigned
(the rest of the kernel is lowered later) a builtin.unrealized_conversion_cast
bridges the two, and becomes an identity cast that reconcile-unrealized-casts removes.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from mlwarp.core import types as wt

from ..builtins import vecmath as vm
from ..builtins.table import BUILTINS, select_overload
from ..builtins.vecmath import V
from ..dialects import builtin, llvm
from ..dialects.warp import composite as wc
from ..dialects.warp import is_array_type, array_ndim
from ..passes import registry
from ..passes.registry import PassError
from ..passes.ir_walk import ops_named

_COMPOSITE_OPS = {"warp.construct", "warp.extract", "warp.insert", "warp.struct_get", "warp.struct_set",
                  "warp.struct_field_grad",
                  "warp.struct_bytes", "warp.struct_of_bytes"}
_MEMORY_OPS = {"warp.load", "warp.store", "warp.atomic"}
_TABLE_OPS = {n[len("warp."):] for n in _COMPOSITE_OPS | _MEMORY_OPS}  # lowered through their named views


# -- types -----------------------------------------------------------------------------------------
def signless(t: ir.Type) -> ir.Type:
    if isinstance(t, ir.IntegerType) and not t.is_signless:
        return ir.IntegerType.get_signless(t.width)
    return t


def value_type(t: ir.Type) -> ir.Type:
    """The lowered type of a value of type `t` (unchanged when `t` is not composite)."""
    c = wc.composite(t)
    if c is None:
        return t
    if c.kind == "struct":
        return storage_type(t)
    # a zero-length vector or (0, 0) matrix (an empty slice, Warp's vec0) holds one zero lane: MLIR has no empty
    # vectors, and the lane is never read as a component (equal zero lanes compare equal, as empty ones do)
    return ir.VectorType.get([max(c.length, 1)], signless(c.dtype))


# A struct's array field as Warp's C `array_t` lays it out (what `.numpy()` of an array of such structs shows, and
# what runtime/abi.py's WarpArrayField packs): data, grad, shape[4] and strides[4] as int32, ndim, flags. A kernel
# reads and writes it as the array descriptor of convert-warp-arrays-to-llvm (array_of_field / field_of_array).
WARP_ARRAY_FIELD = "!llvm.struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>"


def field_storage_type(t: ir.Type) -> ir.Type:
    """The C-layout type of a struct's field of type `t` (an array: Warp's array_t)."""
    return ir.Type.parse(WARP_ARRAY_FIELD) if is_array_type(t) else storage_type(t)


def array_of_field(raw: ir.Value, t: ir.Type, address: int = 0) -> ir.Value:
    """The descriptor (data, shape, byte strides as i64) of the array field `raw` (WARP_ARRAY_FIELD), over its
    data (`address` 0) or over its gradient (1: warp.struct_field_grad; the address may be 0)."""
    n, i64 = array_ndim(t), ir.IntegerType.get_signless(64)
    d = llvm.mlir_undef(storage_type(t))
    d = llvm.insertvalue(d, llvm.inttoptr(ir.Type.parse("!llvm.ptr"), llvm.extractvalue(i64, raw, [address])), [0])
    for k in range(n):
        for src, dst in ((2, 1), (3, 2)):  # shape, strides
            v = llvm.extractvalue(ir.IntegerType.get_signless(32), raw, [src, k])
            d = llvm.insertvalue(d, arith.ExtSIOp(i64, v).result, [dst, k])
    return d


def field_of_array(desc: ir.Value, t: ir.Type) -> ir.Value:
    """The array field (WARP_ARRAY_FIELD) holding the descriptor `desc`: no gradient address (a kernel's arrays
    carry none), the unused dimensions zero."""
    n, i64, i32 = array_ndim(t), ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(32)
    raw = llvm.mlir_zero(ir.Type.parse(WARP_ARRAY_FIELD))
    raw = llvm.insertvalue(raw, llvm.ptrtoint(i64, llvm.extractvalue(ir.Type.parse("!llvm.ptr"), desc, [0])), [0])
    for k in range(n):
        for src, dst in ((1, 2), (2, 3)):
            v = llvm.extractvalue(i64, desc, [src, k])
            raw = llvm.insertvalue(raw, arith.TruncIOp(i32, v).result, [dst, k])
    i16 = ir.IntegerType.get_signless(16)
    return llvm.insertvalue(raw, arith.ConstantOp(i16, ir.IntegerAttr.get(i16, n)).result, [4])


def storage_type(t: ir.Type) -> ir.Type:
    """The C-layout type of `t` in memory (struct fields, kernel arguments)."""
    c = wc.composite(t)
    if c is None:
        if is_array_type(t):
            n = array_ndim(t)
            return ir.Type.parse(f"!llvm.struct<(ptr, array<{n} x i64>, array<{n} x i64>)>")
        return signless(t)
    if c.kind == "struct":
        # an empty struct holds one byte, as its ctypes layout (python/mlwarp/kernels/struct.py) and Warp's C struct
        fields = ", ".join(str(field_storage_type(f)) for f in c.fields) or "i8"
        return ir.Type.parse(f"!llvm.struct<({fields})>")
    return ir.Type.parse(f"!llvm.array<{c.length} x {signless(c.dtype)}>")


def to_storage(value: ir.Value, t: ir.Type) -> ir.Value:
    """A lowered value of warp type `t` -> its storage form."""
    c = wc.composite(t)
    if c is None or c.kind == "struct":
        return value
    out = llvm.mlir_undef(storage_type(t))
    for k in range(c.length):
        out = llvm.insertvalue(out, vm.extract(value, k), [k])
    return out


def from_storage(value: ir.Value, t: ir.Type) -> ir.Value:
    c = wc.composite(t)
    if c is None or c.kind == "struct":
        return value
    e = signless(c.dtype)
    return vm.from_elements([llvm.extractvalue(e, value, [k]) for k in range(c.length)], e).value


def through_memory(value: ir.Value, stored: ir.Type, loaded: ir.Type, slot: ir.Value) -> ir.Value:
    """`value` (of LLVM type `stored`) read back as `loaded` through the stack slot `slot`: a struct's C layout as
    its bytes or back (LLVM has no bitcast of aggregates)."""
    llvm.store(value, slot, alignment=16)
    return llvm.load(loaded, slot, alignment=16)


def function_slot(op, size: int, slots: dict) -> ir.Value:
    """A pointer to `size` bytes of stack for op's function: a `memref.alloca` at its top (warp-cpu-entry keeps such
    buffers out of the thread loop; an llvm.alloca there would take new stack each thread), one per function and
    size, reused by every conversion (each stores then loads at once). A dynamic alloca freed by stackrestore
    would not do: LLVM may move the load after the restore, past the next conversion's store."""
    f = op.parent
    while f.name not in ("func.func", "gpu.func"):
        f = f.parent
    for (g, n), buffer in slots.items():
        if g == f and n == size:
            break
    else:
        with ir.InsertionPoint.at_block_begin(f.regions[0].blocks[0]), op.location:
            i8 = ir.IntegerType.get_signless(8)
            buffer = memref.AllocaOp(ir.MemRefType.get([size], i8), [], [],
                                     alignment=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 16)).result
        slots[(f, size)] = buffer
    i64 = ir.IntegerType.get_signless(64)
    address = arith.IndexCastOp(i64, memref.ExtractAlignedPointerAsIndexOp(buffer).result).result
    return llvm.inttoptr(ir.Type.parse("!llvm.ptr"), address)


def warp_type(t: ir.Type):
    """The Warp type behind a (not yet lowered) MLIR type, to pick a builtin's overload."""
    from mlwarp.core.vector import matrix, quaternion, transformation, vector

    from ..frontend.types import from_mlir

    c = wc.composite(t)
    if c is None:
        return from_mlir(t)
    if c.kind == "struct":
        return None
    s = from_mlir(c.dtype)
    return {"vec": lambda: vector(c.shape[0], s), "mat": lambda: matrix(c.shape, s),
            "quat": lambda: quaternion(s), "transform": lambda: transformation(s)}[c.kind]()


def _kind(t: ir.Type) -> str:
    c = wc.composite(t)
    e = c.dtype if c is not None and c.dtype is not None else t
    if isinstance(e, ir.FloatType):
        return "float"
    w = ir.IntegerType(e)
    return "bool" if w.width == 1 else "uint" if w.is_unsigned else "int"


def _involves_composite(op) -> bool:
    return any(wc.is_composite_type(v.type) for v in list(op.operands) + list(op.results))


# -- the pass ----------------------------------------------------------------------------------------
class ConvertCompositesToVector(registry.ConvertCompositesToVector):
    def run(self, module):
        builtin_names = {f"warp.{n}" for n in BUILTINS}
        work = []
        for op in ops_named(module, _COMPOSITE_OPS | _MEMORY_OPS | builtin_names):
            if op.name in _MEMORY_OPS:
                vt = (op.opview.element if op.name == "warp.load" else op.opview.value).type
                if not wc.is_composite_type(vt):
                    continue
            elif op.name in builtin_names and not _involves_composite(op):
                continue
            work.append((op, [v.type for v in op.operands], [r.type for r in op.results]))
        self.slots = {}  # (function, size) -> its stack slot for struct <-> bytes (function_slot)
        with ir.Location.unknown():
            self.convert_signatures(module)
            self.convert_values(module)
        for op, operand_types, result_types in work:
            with ir.InsertionPoint(op), op.location:
                new = self.lower(op, operand_types, result_types)
            if new is not None:
                if isinstance(new, V):
                    new = new.value
                if result_types and isinstance(result_types[0], ir.IntegerType) and new.type != result_types[0]:
                    with ir.InsertionPoint(op), op.location:  # a scalar for the not-yet-lowered rest
                        new = builtin.unrealized_conversion_cast([result_types[0]], [new])
                op.results[0].replace_all_uses_with(new)
            op.erase()

    # -- types of every value ------------------------------------------------------------------------
    def convert_signatures(self, module):
        """Kernel arguments take storage types (the launch struct's C layout) and are converted to values on
        entry; other functions (wp.func) take and return value types."""
        for f in ops_named(module, {"func.func"}):
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            if not any(wc.is_composite_type(t) for t in list(ftype.inputs) + list(ftype.results)):
                continue
            is_kernel = "warp.kernel" in f.attributes
            arg_type = storage_type if is_kernel else value_type
            if f.regions[0].blocks:
                entry = f.regions[0].blocks[0]
                first = entry.operations[0]
                for a in entry.arguments:
                    t = a.type
                    if not wc.is_composite_type(t):
                        continue
                    old_uses = [(u.owner, u.operand_number) for u in a.uses]
                    a.set_type(arg_type(t))
                    if not is_kernel:
                        continue
                    with ir.InsertionPoint(first), f.location:
                        v = from_storage(a, t)
                    for owner, k in old_uses:
                        owner.operands[k] = v
            f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [arg_type(t) if wc.is_composite_type(t) else t for t in ftype.inputs],
                [value_type(t) for t in ftype.results]))

    def convert_values(self, module):
        def visit(op):
            for r in op.results:
                if wc.is_composite_type(r.type):
                    r.set_type(value_type(r.type))
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        if wc.is_composite_type(a.type):
                            a.set_type(value_type(a.type))
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)

    # -- one op ----------------------------------------------------------------------------------------
    def lower(self, op, operand_types, result_types):
        name = op.name[len("warp."):]
        if name not in _TABLE_OPS:  # a builtin of the builtin table: positional operands
            return self.lower_builtin(name, list(op.operands), operand_types, result_types[0])
        w = op.opview
        # each value's type before convert_values retyped it (operand_types / result_types are in op order)
        old = dict(zip([*op.operands, *op.results], [*operand_types, *result_types])).__getitem__
        if name in ("load", "store", "atomic"):
            return self.lower_memory(w, name, old)
        if name == "construct":
            return self.construct(w.elements, old(w.composite))
        if name == "extract":
            return self.extract(w.aggregate, old(w.aggregate), w.indices, old(w.element))
        if name == "insert":
            return self.insert(w.aggregate, old(w.aggregate), w.element, old(w.element), w.indices)
        if name in ("struct_bytes", "struct_of_bytes"):
            struct, raw = storage_type(old(w.aggregate)), w.bytes.type
            slot = function_slot(op, ir.VectorType(raw).shape[0], self.slots)
            if name == "struct_bytes":
                return through_memory(w.aggregate, struct, raw, slot)
            return through_memory(w.bytes, raw, struct, slot)
        k, c = w.field, wc.composite(old(w.aggregate))
        if name in ("struct_get", "struct_field_grad"):
            field = llvm.extractvalue(field_storage_type(c.fields[k]), w.aggregate, [k])
            if is_array_type(c.fields[k]):  # typed as the array until convert-warp-arrays-to-llvm: an scf.if or
                # loop that carries it still has the array's type in its results and block arguments
                address = 0 if name == "struct_get" else 1  # the data's, or the gradient's
                return builtin.unrealized_conversion_cast([c.fields[k]], [array_of_field(field, c.fields[k], address)])
            return from_storage(field, c.fields[k])
        field = w.element  # struct_set
        if is_array_type(c.fields[k]):  # its descriptor (convert-warp-arrays-to-llvm lowers the array next)
            desc = builtin.unrealized_conversion_cast([storage_type(c.fields[k])], [field])
            return llvm.insertvalue(w.aggregate, field_of_array(desc, c.fields[k]), [k])
        return llvm.insertvalue(w.aggregate, to_storage(self.scalar_in(field), c.fields[k]), [k])

    @staticmethod
    def scalar_in(v: ir.Value) -> ir.Value:
        """An operand from the not-yet-lowered scalar world, made signless."""
        if isinstance(v.type, ir.IntegerType) and not v.type.is_signless:
            return builtin.unrealized_conversion_cast([signless(v.type)], [v])
        return v

    def lower_builtin(self, name, operands, operand_types, result_type):
        arg_types = [warp_type(t) for t in operand_types]
        b = select_overload(name, arg_types)
        args = [V(self.scalar_in(v), _kind(t)) for v, t in zip(operands, operand_types)]
        return b.lower(args, arg_types, value_type(signless(result_type)))

    def construct(self, operands, t):
        c = wc.composite(t)
        if c.kind == "struct":
            if operands:
                raise PassError("warp.construct of a struct takes no operands")
            return llvm.mlir_zero(storage_type(t))
        if not operands:
            return vm.constant(0, value_type(t))
        if len(operands) != c.length:
            raise PassError(f"warp.construct of {t} needs {c.length} elements, got {len(operands)}")
        return vm.from_elements([self.scalar_in(v) for v in operands], signless(c.dtype))

    @staticmethod
    def _const(v: ir.Value):
        owner = v.owner
        if not isinstance(owner, ir.Block) and owner.name == "arith.constant":
            return ir.IntegerAttr(owner.attributes["value"]).value
        return None

    def _flat_index(self, c, indices, row_only):
        """The storage index of v[i] / m[i, j] / the first element of row m[i]: an int or an i32 value."""
        consts = [self._const(i) for i in indices]
        if c.kind == "mat":
            cols = c.shape[1]
            if all(k is not None for k in consts):
                return consts[0] * cols + (consts[1] if not row_only else 0)
            i32 = ir.IntegerType.get_signless(32)
            flat = arith.MulIOp(indices[0], arith.ConstantOp(i32, cols).result).result
            return flat if row_only else arith.AddIOp(flat, indices[1]).result
        return consts[0] if consts[0] is not None else indices[0]

    @staticmethod
    def _offset(base, k):
        if k == 0:
            return base
        if isinstance(base, int):
            return base + k
        i32 = ir.IntegerType.get_signless(32)
        return arith.AddIOp(base, arith.ConstantOp(i32, k).result).result

    def extract(self, value, t, indices, result_type):
        c = wc.composite(t)
        row = c.kind == "mat" and len(indices) == 1
        base = self._flat_index(c, indices, row)
        if row:
            return vm.from_elements([vm.extract(value, self._offset(base, j)) for j in range(c.shape[1])],
                                    signless(c.dtype))
        return vm.extract(value, base)

    def insert(self, value, t, element, element_type, indices):
        c = wc.composite(t)
        row = c.kind == "mat" and len(indices) == 1
        base = self._flat_index(c, indices, row)
        if row:
            for j in range(c.shape[1]):
                value = vm.insert(value, vm.extract(element, j), self._offset(base, j))
            return value
        return vm.insert(value, self.scalar_in(element), base)

    # -- memory ------------------------------------------------------------------------------------------
    def lower_memory(self, w, name, old):
        """warp.load / store / atomic of a composite element (`w`: the op's view; `old`: a value's type before
        the pass retyped it)."""
        from ..dialects.warp import builders as wb

        t = old(w.element) if name == "load" else old(w.value)
        ptr = wb.address(w.array, w.indices)
        c = wc.composite(t)
        align = max(1, ir.IntegerType(c.dtype).width // 8 if not isinstance(c.dtype, ir.FloatType) else
                    ir.FloatType(c.dtype).width // 8) if c.kind != "struct" else None
        if c.kind != "struct" and isinstance(c.dtype, ir.IntegerType) and ir.IntegerType(c.dtype).width == 1:
            # bools are one byte each in memory; a vector<N x i1> load/store would pack them into bits
            bytes_t = ir.VectorType.get([c.length], ir.IntegerType.get_signless(8))
            if name == "load":
                return arith.trunci(value_type(t), llvm.load(bytes_t, ptr, alignment=1))
            if name == "store":
                llvm.store(arith.extui(bytes_t, w.value), ptr, alignment=1)
                return None
        if name == "load":
            return llvm.load(value_type(t), ptr, alignment=align)
        if name == "store":
            llvm.store(w.value, ptr, alignment=align)
            return None
        return self.atomic(w.kind, ptr, w.value, c)


    def struct_atomic(self, kind, ptr, value, c, lower_atomic):
        """Field by field (Warp's tile_atomic_add of structs, and a struct tile_load's adjoint): a field whose
        scalars have an atomic add (32/64-bit ints, floats; vectors and matrices of them, structs recursively) is
        updated atomically; the others (bool, 8/16-bit ints, arrays) stay as they are. Returns the old struct (the
        others' values read)."""
        if kind not in ("add", "sub"):
            raise PassError(f"atomic {kind} of a struct is not supported (only add and sub, field by field)")
        struct_t = storage_type(wc.struct_type(c.name, c.fields))
        old = llvm.mlir_undef(struct_t)
        for k, f in enumerate(c.fields):
            field_ptr = llvm.getelementptr(ir.Type.parse("!llvm.ptr"), ptr, [], [0, k], struct_t, no_wrap_flags=0)
            stored = llvm.extractvalue(field_storage_type(f), value, [k])
            fc = wc.composite(f)
            if fc is not None and fc.kind == "struct":
                before = self.struct_atomic(kind, field_ptr, stored, fc, lower_atomic)
            elif wc.has_atomic_add(fc.dtype if fc is not None else f):
                if fc is None:
                    before = lower_atomic(kind, field_ptr, stored)
                    before = before.value if isinstance(before, V) else before
                else:
                    before = self.atomic(kind, field_ptr, from_storage(stored, f), fc)
                    before = to_storage(before.value if isinstance(before, V) else before, f)
            else:
                before = llvm.load(field_storage_type(f), field_ptr)
            old = llvm.insertvalue(old, before, [k])
        return old

    def atomic(self, kind, ptr, value, c):
        """Component-wise atomic add/sub; returns the old value, as Warp does."""
        from .arrays_to_llvm import lower_atomic

        if c.kind == "struct":
            return self.struct_atomic(kind, ptr, value, c, lower_atomic)

        e = signless(c.dtype)
        size = (e.width if isinstance(e, ir.IntegerType) else ir.FloatType(e).width) // 8
        olds = []
        for k in range(c.length):
            p = llvm.getelementptr(ir.Type.parse("!llvm.ptr"), ptr, [], [k * size], ir.IntegerType.get_signless(8),
                                   no_wrap_flags=0)
            olds.append(lower_atomic(kind, p, vm.extract(value, k)))
        return vm.from_elements(olds, e)
