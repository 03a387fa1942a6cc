"""warp-cpu-vectorize-gathers: a thread loop that gathers vec2/3/4 values through loaded indices (a mass-spring's
`x[a[s]]`) into stack buffers runs VF (8) threads a step, each thread's vector loaded whole and the loads
transposed into one vector per component.

warp-cpu-interchange-loops cuts a scattering kernel before its first atomic: its gathers and arithmetic run over
a block of threads into buffers, then the atomics. LLVM's loop vectoriser vectorises that first loop across
threads, but it has no wide load for an element whose address is loaded: each thread's vec3 becomes three
scalar loads, each inserted into a vector alone (24 loads and inserts for 8 threads' vec3). Here each thread's
vec3 is one 16-byte load (masked to its 12 bytes: it never reaches past the array), and the 8 of them become
x, y and z vectors in 11 shuffles. On one thread: the 10,000-particle mass-spring's springs 94-95 -> 86 us a
launch, diffray's vertex-normal sum (100,000 triangles) 746-764 -> 691-706 us, Warp's cloth benchmark's springs
(128 x 128, 97,026 springs) 490-495 -> 485-488 us; the compile of such a kernel takes ~0.1 s more (+50-135 ms
for the vertex-normal sum: the pass, and LLVM on the wider loop).

The loop is rewritten as the vector loop `for t in [lo, lo + 8 * floor((hi - lo) / 8)) step 8` over the same
ops on `vector<8 x T>` (a vecN: N of them, one per component), then the original loop for the rest. Each op is
the same operation lane by lane (same flags, same rounding): the results are the bits of one thread at a time.
Loads at consecutive addresses across threads (`rest[s]`, a buffer's slots) are vector loads; other scalars
(an index pair's `indices[2 * s]`, a scalar at a loaded address) are gathers of scalar loads (as one masked load
of the span and a shuffle, cloth's index pairs ran 540 us against 487); values the same for every thread stay
scalar. Integer arithmetic is made as vectors (for the stores and vector ops that use it) and again per thread
for the addresses: each thread's address from scalar registers. (Measured alternatives, mass-spring and cloth
springs: addresses extracted from the offsets vector, 99 and 555 us; vectors only where a store needs them, 86 and
575 us; 16 threads a step, 82 and 509 us, with twice the compile.)

A loop qualifies when its body is straight-line code of arithmetic (arith, the exact math ops: sqrt, abs, fma,
rounding: a libm call would round differently in a vector), vec component ops, loads, and stores at consecutive
addresses into stack buffers (allocas) that it does not read: so no thread reads what another of the 8 writes,
and their loads may run before their stores. Index steps follow integer casts: Warp's indices are 32-bit (the
launch checks each dimension < 2**31). The module then keeps its vectors (no LLVM scalarizer, which would split
them back: object_code.py), so a module changes only when no other loop of it is one LLVM's vectoriser would
take once its vecNs are split (loops with atomics or stores at loaded addresses are not), and when every
qualifying loop of it is rewritten.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, vector

from ...dialects import llvm
from ...passes import registry
from ...passes.ir_walk import depends_on_load, innermost_loops, is_inside
from .keep_vectors import KEEP_VECTORS_ATTR

VF = 8  # threads a vector step: 8 x f32, an AVX2 register (16 ran the mass-spring 5% faster, compiled 2x longer)
COMPONENT_LANES = (2, 3, 4)  # vec2, vec3, vec4/quat: one 16-byte load each
# math ops that round as their scalar forms do (no libm call: a vector libm rounds otherwise)
EXACT_MATH = frozenset({"math.sqrt", "math.absf", "math.absi", "math.fma", "math.copysign", "math.floor",
                        "math.ceil", "math.round", "math.roundeven", "math.trunc"})
_CONSTANT_OPS = frozenset({"arith.constant", "llvm.mlir.constant", "llvm.mlir.undef", "llvm.mlir.poison",
                           "llvm.mlir.zero"})
_UNIFORM_PURE = frozenset({"llvm.extractvalue", "llvm.insertvalue", "llvm.getelementptr",
                           "vector.extract", "vector.broadcast", "vector.from_elements", "vector.insert",
                           "vector.shuffle", "llvm.extractelement", "llvm.insertelement", "llvm.shufflevector"})
_WIDTH_CASTS = ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui")
_SCALAR_BYTES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}


class _Unsupported(Exception):
    pass


class _Ptr:
    """A pointer that differs per thread: `base` (the same for every thread) plus the sum of `terms` (pairs of an
    integer value of the loop and its scale in bytes) and `constant` bytes; `step`: bytes from one thread's to
    the next's (None: not evenly)."""

    def __init__(self, base, terms, constant, step):
        self.base, self.terms, self.constant, self.step = base, terms, constant, step


def _op(owner):
    return owner.operation if hasattr(owner, "operation") else owner


def _defining(value):
    owner = value.owner
    return None if isinstance(owner, ir.Block) else _op(owner)


def _composite(t):
    """(lanes, element type) of a vecN type, else None."""
    if isinstance(t, ir.VectorType) and t.rank == 1 and not t.scalable and t.shape[0] > 1:
        return t.shape[0], t.element_type
    return None


def _wide_type(t):
    if isinstance(t, ir.VectorType):
        raise _Unsupported(f"a vector of {t}")
    return ir.VectorType.get([VF], t)


def _i64():
    return ir.IntegerType.get_signless(64)


def _const_int(value):
    op = _defining(value)
    if op is None or op.name not in ("arith.constant", "llvm.mlir.constant"):
        return None
    attr = op.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _attributes(op) -> dict:
    named = [op.attributes[i] for i in range(len(op.attributes))]
    return {a.name: a.attr for a in named}


def _root(value):
    """The value a pointer is computed from through getelementptrs."""
    while True:
        op = _defining(value)
        if op is None or op.name != "llvm.getelementptr":
            return value
        value = op.operands[0]


class _Vectorizer:
    """Builds the vector loop's body for `loop` at the current insertion point (inside the new loop)."""

    def __init__(self, loop, iv):
        self.loop = loop
        self.rep = {}  # original value -> ("u", value) | ("s", vector) | ("c", [vectors]) | ("p", _Ptr)
        self.step = {}  # original integer value -> its increase from one thread to the next (int), when known
        self.broadcasts = {}
        self.lanes = {}  # (original value, thread) -> that thread's scalar (lane())
        self.iv = iv
        self.rep[loop.regions[0].blocks[0].arguments[0]] = ("s", self._thread_indices(iv))
        self.step[loop.regions[0].blocks[0].arguments[0]] = 1

    # -- representations ------------------------------------------------------------------------------------
    def _thread_indices(self, iv):
        t = ir.VectorType.get([VF], _i64())
        offsets = arith.ConstantOp(t, ir.Attribute.parse(f"dense<{list(range(VF))}> : vector<{VF}xi64>")).result
        return arith.AddIOp(vector.broadcast(t, iv), offsets).result

    def get(self, value):
        rep = self.rep.get(value)
        if rep is not None:
            return rep
        op = _defining(value)
        if op is None or not is_inside(op, self.loop):
            return ("u", value)
        raise _Unsupported("a value used before it is made")

    def wide(self, value):
        """`value` as vector<VFxT> (a scalar)."""
        kind, v = self.get(value)
        if kind == "s":
            return v
        if kind == "u":
            if _composite(v.type):
                raise _Unsupported("a whole vecN where a scalar is expected")
            if v not in self.broadcasts:
                self.broadcasts[v] = vector.broadcast(_wide_type(v.type), v)
            return self.broadcasts[v]
        raise _Unsupported(f"a {kind} where a scalar is expected")

    def component(self, value, k):
        kind, v = self.get(value)
        if kind == "c":
            return v[k]
        if kind == "u" and _composite(v.type):
            key = (v, k)
            if key not in self.broadcasts:
                element = vector.extract(v, [], [k])
                self.broadcasts[key] = vector.broadcast(_wide_type(element.type), element)
            return self.broadcasts[key]
        raise _Unsupported("a component of a non-vector")

    def pointer(self, value) -> _Ptr:
        kind, v = self.get(value)
        if kind == "p":
            return v
        raise _Unsupported("a pointer the same for every thread where one per thread is expected")

    # -- ops ------------------------------------------------------------------------------------------------
    def run(self) -> None:
        for op in self.loop.regions[0].blocks[0].operations:
            op = _op(op)
            if op.name == "scf.yield":
                continue
            if op.regions and len(op.regions):
                raise _Unsupported(op.name)
            if op.name in _CONSTANT_OPS or (
                    op.name in _UNIFORM_PURE or op.name.startswith(("arith.", "math."))) and \
                    all(self.get(o)[0] == "u" for o in op.operands):
                self._uniform(op)
            elif op.name.startswith("arith."):
                self._elementwise(op)
            elif op.name.startswith("math."):
                if op.name not in EXACT_MATH:
                    raise _Unsupported(op.name)
                self._elementwise(op)
            else:
                handler = getattr(self, "_" + op.name.replace(".", "_"), None)
                if handler is None:
                    raise _Unsupported(op.name)
                handler(op)

    def _uniform(self, op):
        clone = op.clone()
        for n, operand in enumerate(op.operands):
            kind, v = self.get(operand)
            if v != operand:
                clone.operands[n] = v
        for old, new in zip(op.results, clone.results):
            self.rep[old] = ("u", new)
            if isinstance(old.type, ir.IntegerType):
                self.step[old] = 0

    def _elementwise(self, op):
        result_t = op.results[0].type
        shape = _composite(result_t) or next((_composite(o.type) for o in op.operands if _composite(o.type)), None)
        attributes = _attributes(op)
        if shape is None:
            self._track_step(op)
            new = ir.Operation.create(op.name, results=[_wide_type(result_t)],
                                      operands=[self.wide(o) for o in op.operands], attributes=attributes)
            self.rep[op.results[0]] = ("s", new.results[0])
            return
        lanes = shape[0]
        element_t = _composite(result_t)[1] if _composite(result_t) else None
        if element_t is None:
            raise _Unsupported(f"{op.name} of vectors to {result_t}")
        parts = []
        for k in range(lanes):
            operands = [self.component(o, k) if _composite(o.type) else self.wide(o) for o in op.operands]
            parts.append(ir.Operation.create(op.name, results=[_wide_type(element_t)], operands=operands,
                                             attributes=attributes).results[0])
        self.rep[op.results[0]] = ("c", parts)

    def _constant(self, value):
        """The integer a value the same for every thread is, when known: a constant, or a descriptor field set to
        one (warp-cpu-entry's contiguous copy of the thread loop rebuilds each descriptor with constant strides)."""
        kind, v = self.get(value)
        return _const_int(_field_value(v)) if kind == "u" else None

    def _step(self, value):
        return 0 if self.get(value)[0] == "u" else self.step.get(value)

    def _track_step(self, op):
        """The thread-to-thread increase of integer results (for consecutive addresses)."""
        steps = [self._step(o) for o in op.operands]
        step = None
        if op.name in ("arith.addi", "arith.subi") and None not in steps:
            step = steps[0] + steps[1] if op.name == "arith.addi" else steps[0] - steps[1]
        elif op.name == "arith.muli" and None not in steps:
            constants = [self._constant(o) for o in op.operands]
            if steps[0] == 0 and steps[1] == 0:
                step = 0
            elif constants[1] is not None:
                step = steps[0] * constants[1]
            elif constants[0] is not None:
                step = steps[1] * constants[0]
        elif op.name in _WIDTH_CASTS and steps[0] is not None:
            # (an index narrowed to i32 and widened back: a thread index or an array index fits in 32 bits, as
            # the launch checks and Warp's 32-bit indexing assume)
            step = steps[0]
        elif op.name in ("arith.shli",) and None not in steps:
            shift = self._constant(op.operands[1])
            if shift is not None:
                step = steps[0] << shift
        if step is not None:
            self.step[op.results[0]] = step

    # vecN component ops
    def _vector_extract(self, op):
        positions = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
        if len(op.operands) != 1 or len(positions) != 1:
            raise _Unsupported("vector.extract at a dynamic position")
        self._set(op.results[0], self.component(op.operands[0], positions[0]))

    def _vector_broadcast(self, op):
        shape = _composite(op.results[0].type)
        if shape is None or _composite(op.operands[0].type):
            raise _Unsupported("vector.broadcast")
        self.rep[op.results[0]] = ("c", [self.wide(op.operands[0])] * shape[0])

    def _vector_from_elements(self, op):
        self.rep[op.results[0]] = ("c", [self.wide(o) for o in op.operands])

    def _vector_insert(self, op):
        positions = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
        if len(op.operands) != 2 or len(positions) != 1 or _composite(op.operands[0].type):
            raise _Unsupported("vector.insert")
        lanes = _composite(op.results[0].type)[0]
        parts = [self.component(op.operands[1], k) for k in range(lanes)]
        parts[positions[0]] = self.wide(op.operands[0])
        self.rep[op.results[0]] = ("c", parts)

    def _vector_shuffle(self, op):
        self._shuffle(op, list(ir.DenseI64ArrayAttr(op.attributes["mask"])))

    def _llvm_shufflevector(self, op):
        self._shuffle(op, list(ir.DenseI32ArrayAttr(op.attributes["mask"])))

    def _shuffle(self, op, mask):
        if any(m < 0 for m in mask):
            raise _Unsupported("a shuffle with undefined lanes")
        a, b = op.operands[0], op.operands[1]
        na = _composite(a.type)[0]
        parts = [self.component(a, m) if m < na else self.component(b, m - na) for m in mask]
        self.rep[op.results[0]] = ("c", parts)

    def _llvm_extractelement(self, op):
        k = _const_int(op.operands[1])
        if k is None:
            raise _Unsupported("llvm.extractelement at a dynamic position")
        self._set(op.results[0], self.component(op.operands[0], k))

    def _llvm_insertelement(self, op):
        k = _const_int(op.operands[2])
        if k is None:
            raise _Unsupported("llvm.insertelement at a dynamic position")
        lanes = _composite(op.results[0].type)[0]
        parts = [self.component(op.operands[0], j) for j in range(lanes)]
        parts[k] = self.wide(op.operands[1])
        self.rep[op.results[0]] = ("c", parts)

    def _set(self, result, wide_value):
        self.rep[result] = ("s", wide_value)

    # memory
    def _llvm_getelementptr(self, op):
        indices = list(ir.DenseI32ArrayAttr(op.attributes["rawConstantIndices"]))
        element = str(ir.TypeAttr(op.attributes["elem_type"]).value)
        size = _SCALAR_BYTES.get(element)
        if size is None or len(indices) != 1:
            raise _Unsupported(f"llvm.getelementptr over {element}")
        kind, base = self.get(op.operands[0])
        if kind == "u":
            ptr = _Ptr(base, [], 0, 0)
        elif kind == "p":
            ptr = base
        else:
            raise _Unsupported("a pointer from a vector")
        if indices[0] == -2147483648:  # a dynamic index
            index = op.operands[1]
            if not isinstance(index.type, ir.IntegerType) or ir.IntegerType(index.type).width != 64:
                raise _Unsupported("an index other than i64")
            index_step = self._step(index)
            step = None if index_step is None or ptr.step is None else ptr.step + index_step * size
            self.rep[op.results[0]] = ("p", _Ptr(ptr.base, ptr.terms + [(index, size)], ptr.constant, step))
        else:
            self.rep[op.results[0]] = ("p", _Ptr(ptr.base, ptr.terms, ptr.constant + indices[0] * size, ptr.step))

    def lane(self, value, k: int):
        """Thread k's (of the step's VF) scalar of a loop value, computed in scalar registers where it is integer
        arithmetic on loads and the thread index (a gather's address: extracting it from a vector costs more)."""
        key = (value, k)
        done = self.lanes.get(key)
        if done is not None:
            return done
        kind, v = self.get(value)
        op = _defining(value)
        if kind == "u":
            result = v
        elif op is None:  # the thread index
            result = arith.AddIOp(self.iv, arith.ConstantOp(self.iv.type, k).result).result
        elif op.name.startswith("arith.") and not isinstance(value.type, ir.VectorType) and not \
                isinstance(value.type, ir.FloatType):
            result = ir.Operation.create(op.name, results=[value.type],
                                         operands=[self.lane(o, k) for o in op.operands],
                                         attributes=_attributes(op)).results[0]
        elif op.name == "llvm.load" and self.get(op.operands[0])[0] == "p" and not _composite(value.type):
            result = llvm.load(value.type, self._lane_address(self.pointer(op.operands[0]), k),
                               alignment=_alignment_value(op))
        else:
            result = vector.extract(self.wide(value), [], [k])
        self.lanes[key] = result
        return result

    def _lane_address(self, ptr: _Ptr, lane: int):
        offset = None
        for index, scale in ptr.terms:
            term = self.lane(index, lane)
            if scale != 1:
                term = arith.MulIOp(term, arith.ConstantOp(_i64(), scale).result).result
            offset = term if offset is None else arith.AddIOp(offset, term).result
        if ptr.constant or offset is None:
            constant = arith.ConstantOp(_i64(), ptr.constant).result
            offset = constant if offset is None else arith.AddIOp(offset, constant).result
        return llvm.getelementptr(ptr.base.type, ptr.base, [offset], [-2147483648], ir.IntegerType.get_signless(8))

    def _llvm_load(self, op):
        kind, _ = self.get(op.operands[0])
        if kind == "u":
            self._uniform(op)
            return
        ptr = self.pointer(op.operands[0])
        t = op.results[0].type
        shape = _composite(t)
        if shape is None:
            size = _SCALAR_BYTES.get(str(t))
            if size is None:
                raise _Unsupported(f"a load of {t}")
            if ptr.step == size:  # consecutive: one vector load, aligned as the scalar was (not as a vector)
                load = ir.Operation.create("llvm.load", results=[_wide_type(t)], operands=[self._lane_address(ptr, 0)],
                                           attributes={"alignment": _alignment(op, size)})
                self._set(op.results[0], load.results[0])
            else:
                lanes = [llvm.load(t, self._lane_address(ptr, k)) for k in range(VF)]
                self._set(op.results[0], vector.from_elements(_wide_type(t), lanes))
            return
        lanes, element = shape
        if lanes not in COMPONENT_LANES or _SCALAR_BYTES.get(str(element)) != 4:
            raise _Unsupported(f"a load of {t}")
        row_t = ir.VectorType.get([4], element)
        if lanes < 4:
            bits = ", ".join("true" if k < lanes else "false" for k in range(4))
            mask = arith.ConstantOp(ir.VectorType.get([4], ir.IntegerType.get_signless(1)),
                                    ir.Attribute.parse(f"dense<[{bits}]> : vector<4xi1>")).result
            poison = ir.Operation.create("llvm.mlir.poison", results=[row_t]).results[0]
            i32 = ir.IntegerType.get_signless(32)
            rows = [ir.Operation.create("llvm.intr.masked.load", results=[row_t],
                                        operands=[self._lane_address(ptr, k), mask, poison],
                                        attributes={"alignment": ir.IntegerAttr.get(i32, 4)}).results[0]
                    for k in range(VF)]
        else:
            rows = [llvm.load(row_t, self._lane_address(ptr, k), alignment=4) for k in range(VF)]
        self.rep[op.results[0]] = ("c", _transpose_all(rows, lanes))

    def _llvm_store(self, op):
        value, address = op.operands[0], op.operands[1]
        t = value.type
        size = _SCALAR_BYTES.get(str(t))
        kind, _ = self.get(address)
        if size is None or kind != "p":
            raise _Unsupported("a store other than a scalar's at a per-thread address")
        ptr = self.pointer(address)
        if ptr.step != size or _defining(_root(ptr.base)) is None or _defining(_root(ptr.base)).name != "llvm.alloca":
            raise _Unsupported("a store other than to consecutive slots of a stack buffer")
        ir.Operation.create("llvm.store", operands=[self.wide(value), self._lane_address(ptr, 0)],
                            attributes={"alignment": _alignment(op, size)})


def _field_value(value):
    """`value`, or where it reads a field of a descriptor rebuilt field by field (llvm.insertvalue), the value
    written there."""
    op = _defining(value)
    while op is not None and op.name == "llvm.extractvalue":
        position = tuple(ir.DenseI64ArrayAttr(op.attributes["position"]))
        container = op.operands[0]
        inserted = _defining(container)
        # through a descriptor rebuilt field by field (llvm.insertvalue): the field's own value, or the container's
        while inserted is not None and inserted.name == "llvm.insertvalue":
            at = tuple(ir.DenseI64ArrayAttr(inserted.attributes["position"]))
            if at == position:
                break
            container = inserted.operands[0]
            inserted = _defining(container)
        if inserted is not None and inserted.name == "llvm.insertvalue":
            value = inserted.operands[1]
            op = _defining(value)
            continue
        return value
    return value


def _alignment_value(access):
    return ir.IntegerAttr(access.attributes["alignment"]).value if "alignment" in access.attributes else None


def _alignment(access, size: int) -> ir.Attribute:
    """A scalar access's alignment for its vector form: the scalar's (an unaligned vector would be assumed
    aligned to its own size)."""
    if "alignment" in access.attributes:
        return access.attributes["alignment"]
    return ir.IntegerAttr.get(_i64(), size)


def _transpose_all(rows, count: int):
    """VF rows of 4 lanes -> `count` vectors of VF: 8 rows at a time (_transpose), the pieces put side by side."""
    pieces = [_transpose(rows[k:k + 8], count) for k in range(0, len(rows), 8)]
    while len(pieces) > 1:
        pieces = [[vector.shuffle(a, b, list(range(2 * ir.VectorType(a.type).shape[0]))) for a, b in zip(p, q)]
                  for p, q in zip(pieces[0::2], pieces[1::2])]
    return pieces[0]


def _transpose(rows, count: int):
    """8 rows of 4 lanes (thread k's vector: rows[k]) -> 4 vectors of 8 (lane j of every thread): the 256-bit
    unpack pattern (rows k and k + 4 side by side, then unpacks of singles and of pairs)."""
    halves = [vector.shuffle(rows[k], rows[k + 4], list(range(8))) for k in range(4)]
    lo01 = vector.shuffle(halves[0], halves[1], [0, 8, 1, 9, 4, 12, 5, 13])
    hi01 = vector.shuffle(halves[0], halves[1], [2, 10, 3, 11, 6, 14, 7, 15])
    lo23 = vector.shuffle(halves[2], halves[3], [0, 8, 1, 9, 4, 12, 5, 13])
    hi23 = vector.shuffle(halves[2], halves[3], [2, 10, 3, 11, 6, 14, 7, 15])
    pick_lo, pick_hi = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
    picks = [(lo01, lo23, pick_lo), (lo01, lo23, pick_hi), (hi01, hi23, pick_lo), (hi01, hi23, pick_hi)]
    return [vector.shuffle(a, b, pick) for a, b, pick in picks[:count]]


def _gathers_vectors(loop) -> bool:
    """Whether the loop loads a vecN from an address computed from a value it loaded (a gather)."""
    body = loop.regions[0].blocks[0]
    for op in body.operations:
        op = _op(op)
        if op.name == "llvm.load" and _composite(op.results[0].type) and depends_on_load(op.operands[0], loop):
            return True
    return False


def _candidate(loop) -> bool:
    if len(loop.results) or len(loop.regions[0].blocks) != 1:
        return False
    iv_type = loop.regions[0].blocks[0].arguments[0].type
    if not isinstance(iv_type, ir.IntegerType) or ir.IntegerType(iv_type).width != 64:
        return False
    if _const_int(loop.operands[2]) != 1:
        return False
    return _gathers_vectors(loop)


def _stored_allocas_read(loop) -> bool:
    """Whether the loop loads from a stack buffer it stores into."""
    stored, loaded = set(), set()
    for op in loop.regions[0].blocks[0].operations:
        op = _op(op)
        if op.name == "llvm.store":
            stored.add(_root(op.operands[1]))
        elif op.name == "llvm.load":
            loaded.add(_root(op.operands[0]))
    return bool(stored & loaded)


class _Rewrite:
    """A vector loop built before `loop` (its bounds' ops in `made`): `commit` starts the original loop where the
    vector loop ends, `undo` erases what was built."""

    def __init__(self, loop, wide, made, split):
        self.loop, self.wide, self.made, self.split = loop, wide, made, split

    def commit(self) -> None:
        self.loop.operands[0] = self.split

    def undo(self) -> None:
        self.wide.operation.erase()
        for op in reversed(self.made):
            op.erase()


def vectorize(loop):
    """The vector loop for `loop` (a _Rewrite), or None (nothing left built) when an op of its body is not one
    this pass vectorises."""
    if _stored_allocas_read(loop):
        return None
    lower, upper = loop.operands[0], loop.operands[1]
    with ir.InsertionPoint(loop), loop.location:
        count = arith.SubIOp(upper, lower).result
        mask = arith.ConstantOp(count.type, -VF).result
        whole = arith.AndIOp(count, mask).result
        split = arith.AddIOp(lower, whole).result
        step = arith.ConstantOp(count.type, VF).result
        made = [_defining(v) for v in (count, mask, whole, split, step)]
        wide = scf.ForOp(lower, split, step)
        with ir.InsertionPoint(wide.body):
            try:
                _Vectorizer(loop, wide.induction_variable).run()
            except _Unsupported:
                failed = True
            else:
                failed = False
                scf.YieldOp([])
    rewrite = _Rewrite(loop, wide, made, split)
    if failed:
        rewrite.undo()
        return None
    return rewrite


def _llvm_may_vectorize(loop) -> bool:
    """Whether LLVM's loop vectoriser may vectorise this loop after the scalarizer splits its vecN values: a
    straight-line body that computes on vecN values, without atomics, calls, or stores at loaded addresses."""
    composite = False
    for op in loop.regions[0].blocks[0].operations:
        op = _op(op)
        if op.regions and len(op.regions):
            return False
        if op.name in ("llvm.atomicrmw", "llvm.cmpxchg", "llvm.call", "func.call"):
            return False
        if op.name == "llvm.store" and depends_on_load(op.operands[1], loop):
            return False
        composite = composite or any(_composite(r.type) for r in op.results)
    return composite


class VectorizeGathers(registry.VectorizeGathers):
    def run(self, module):
        loops = [loop for function in module.regions[0].blocks[0].operations
                 if _op(function).name == "func.func" for loop in innermost_loops(_op(function))]
        candidates = [loop for loop in loops if _candidate(loop)]
        if not candidates:
            return
        kept = KEEP_VECTORS_ATTR in module.operation.attributes
        if not kept and any(_llvm_may_vectorize(loop) for loop in loops if loop not in candidates):
            return  # the module would keep its vectors, and LLVM no longer vectorise that loop
        rewrites = [vectorize(loop) for loop in candidates]
        if None in rewrites and not kept:  # a candidate left to LLVM needs the scalarizer: all are
            for rewrite in rewrites:
                if rewrite is not None:
                    rewrite.undo()
            return
        for rewrite in rewrites:
            if rewrite is not None:
                rewrite.commit()
        module.operation.attributes[KEEP_VECTORS_ATTR] = ir.UnitAttr.get()
