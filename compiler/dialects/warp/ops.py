"""The warp ops, declared once: operand and result constraints, attributes, a summary.

`OPS` is the table. From it come the IRDL the verifier runs (`irdl_text`, loaded by dialect.py), the
builders' result types (builders.py: `create`) and the named accessors (views.py). This module
imports no MLIR. A constraint is a small value:

  Is("i32")            exactly that type
  Base("warp.struct")  any parameters of a warp type; Base("!builtin.integer") a builtin type kind
                       (the latter not inside AnyOf: see WARP_TYPE_PARAMS)
  Array(T)             !warp.array<T, N> for any rank N (an operand: or its LLVM descriptor, see Array)
  AnyOf(a, b, ...)     one of them
  ANY                  any type
  Var("T", c)          c, and every use of Var "T" in the op is the same type (IRDL's constraint
                       variables: load's result is its array's dtype, insert's result its value's type)

  AttrBase("#builtin.string")  an attribute's kind

Everything that is not a Var is a fresh constraint at each use, so `ANY` twice means two types.
"""

from __future__ import annotations

from .opdefs import (  # noqa: F401  (the table's vocabulary, also used by geometry_ops.py and builders)
    ANY, COMPOSITE, I32, MAX_NDIM, WARP_TYPE_PARAMS, AnyOf, AnyType, Array, Attr, AttrBase, Base, Is, OpDef, Operand,
    Result, Tile, Var, descriptor_spelling,
)
from .rules import (  # the checks beyond types and the effects each op declares (verify.py walks them)
    ALLOC, PURE, READ, ArrayOfShape, AxisOf, Components, ComponentAt, Convertible, Count, ElementIs, InRange,
    LeadingIndices, OneOf, PerDimension, SliceDims, StructField, TileElements, TileRank, TileShapes,
)

T = Var("T", ANY)  # an array's element type, shared by the ops reading and writing it
ARRAY_T = Operand("array", Array(T, or_descriptor=True))
ARRAY_ANY = Operand("array", Array(ANY, or_descriptor=True))
INDICES = Operand("indices", I32, variadic=True)  # the frontend casts every index to int32
# what warp.atomic's {kind} may be (convert-warp-arrays-to-llvm's _RMW lowers each) and tile_reduce's
ATOMIC_KINDS = ("add", "sub", "min", "max", "umin", "umax", "exch", "and", "or", "xor")
TILE_REDUCE_KINDS = ("add", "mul", "max", "min", "argmax", "argmin")

OPS = [
    OpDef("tid", "thread index, one i32 per launch dimension (1..4)",
          results=(Result("ids", I32, variadic=True),),
          checks=(Count("ids", (1, 2, 3, 4)),), effect=PURE),
    OpDef("load", "element read a[i, ...]",
          (ARRAY_T, INDICES), (Result("element", T),),
          checks=(PerDimension("indices", "array"),), effect=READ),
    OpDef("store", "element write a[i, ...] = value",
          (ARRAY_T, Operand("value", T), INDICES),
          checks=(PerDimension("indices", "array"),)),
    OpDef("address", "element address (array lowering)",
          (ARRAY_ANY, INDICES), (Result("pointer", Is("!llvm.ptr")),),
          checks=(PerDimension("indices", "array"),), effect=PURE),
    OpDef("atomic", "atomic read-modify-write of the element {kind = \"add\", \"min\", ...}; the old value",
          (ARRAY_T, Operand("value", T), INDICES), (Result("old", T),),
          (Attr("kind", AttrBase("#builtin.string")),),
          checks=(PerDimension("indices", "array"), OneOf("kind", ATOMIC_KINDS))),
    OpDef("atomic_cas", "stores value if the element equals compare; the old value",
          (ARRAY_T, Operand("compare", T), Operand("value", T), INDICES),
          (Result("old", T),),
          checks=(PerDimension("indices", "array"),)),
    OpDef("array_dim", "the extent of dimension {dim = d}",
          (ARRAY_ANY,), (Result("extent", I32),),
          (Attr("dim", AttrBase("#builtin.integer")),),
          checks=(AxisOf("dim", "array"),), effect=PURE),
    OpDef("view", "the sub-array at k leading indices (a[i] of a 2-d array); same dtype, rank N-k",
          (ARRAY_T, INDICES), (Result("subarray", Array(T)),),
          checks=(LeadingIndices("indices", "array", "subarray"),), effect=PURE),
    OpDef("slice", "a[i, start:stop:step, ...] inside a kernel (Python's slice rules, clamped): per source dimension "
          "{dims = array<i64: ...>} -1 for an index (one bound), else a slice whose bits 1/2/4 say which of start, "
          "stop, step follow in `bounds`; trailing dimensions stay; rank = the slices' and the trailing ones",
          (ARRAY_T, Operand("bounds", I32, variadic=True)), (Result("subarray", Array(T)),),
          (Attr("dims", AttrBase("#builtin.dense_array")),),
          checks=(SliceDims("dims", "array", "bounds", "subarray"),), effect=PURE),
    OpDef("array_data", "the address of the array's data as an integer (a.ptr in a kernel: Warp's uint64)",
          (ARRAY_ANY,), (Result("address", Is("i64")),),
          effect=PURE),
    OpDef("array_from_ptr", "a C-contiguous array of the result's dtype over the memory at `address` with the "
          "given shape (wp.array(ptr=..., shape=..., dtype=...) in a kernel); `grad`, when given, the address of "
          "its adjoint array of the same layout (0: none), as Warp's array_t grad pointer: only warp-autodiff "
          "reads it",
          (Operand("address", Is("i64")), Operand("shape", I32, variadic=True),
           Operand("grad", Is("i64"), optional=True)),
          (Result("array", Array(ANY)),),
          checks=(ArrayOfShape("array", group="shape"),), effect=PURE),
    OpDef("local_array", "a zero-filled array of constant {shape = array<i64: ...>} on the thread's stack "
          "(wp.zeros in kernels: Warp's fixedarray)", (), (Result("array", Array(ANY)),),
          (Attr("shape", AttrBase("#builtin.dense_array")),),
          checks=(ArrayOfShape("array", attr="shape"),), effect=ALLOC),
    OpDef("stack_array", "a 1-d array of a run-time length on the thread's stack, live until the end of the "
          "block it is in; not zeroed (warp-autodiff's loop tapes)", (Operand("length", I32),),
          (Result("array", Array(ANY)),),
          checks=(ArrayOfShape("array"),), effect=ALLOC),
    OpDef("cast", "numeric conversion with Warp's rules (scalars and composites)",
          (Operand("input", ANY),), (Result("output", ANY),),
          checks=(Convertible("input", "output"),), effect=PURE),
    OpDef("construct", "a composite from its components in storage order; no operand: the zero value",
          (Operand("elements", ANY, variadic=True),), (Result("composite", COMPOSITE),),
          checks=(Components("elements", "composite"),), effect=PURE),
    OpDef("extract", "v[i], m[i, j], m[i] (a row), q[i]",
          (Operand("aggregate", COMPOSITE), INDICES), (Result("element", ANY),),
          checks=(ComponentAt("aggregate", "indices", "element"),), effect=PURE),
    OpDef("insert", "the value with one element (or row) replaced",
          (Operand("aggregate", Var("V", COMPOSITE)), Operand("element", ANY), INDICES),
          (Result("updated", Var("V", COMPOSITE)),),
          checks=(ComponentAt("aggregate", "indices", "element"),), effect=PURE),
    OpDef("struct_get", "field {field = k} of a struct",
          (Operand("aggregate", Base("warp.struct")),), (Result("element", ANY),),
          (Attr("field", AttrBase("#builtin.integer")),),
          checks=(StructField("field", "aggregate", "element"),), effect=PURE),
    OpDef("struct_field_grad", "the gradient of array field {field = k}: the grad address the struct records "
          "beside the array (0: none), with the array's shape and strides (warp-autodiff's adjoint of an array "
          "read from a struct that is no kernel argument: one stored in an array)",
          (Operand("aggregate", Base("warp.struct")),), (Result("grad", Array(ANY)),),
          (Attr("field", AttrBase("#builtin.integer")),),
          checks=(StructField("field", "aggregate", "grad"),), effect=PURE),
    # a tile of structs is a tensor of their bytes (warp-struct-tiles-as-bytes: MLIR's buffers hold no struct)
    OpDef("struct_bytes", "the struct's bytes in its C layout, a vector<K x i8> of its storage size",
          (Operand("aggregate", Base("warp.struct")),), (Result("bytes", ANY),), effect=PURE),
    OpDef("struct_of_bytes", "the struct whose C layout the bytes (vector<K x i8>) hold",
          (Operand("bytes", ANY),), (Result("aggregate", Base("warp.struct")),), effect=PURE),
    OpDef("struct_set", "the struct with field {field = k} replaced",
          (Operand("aggregate", Var("S", Base("warp.struct"))), Operand("element", ANY)),
          (Result("updated", Var("S", Base("warp.struct"))),),
          (Attr("field", AttrBase("#builtin.integer")),),
          checks=(StructField("field", "aggregate", "element"),), effect=PURE),
]
# Tiles (Warp's tile_* builtins): values of !warp.tile<dtype, shape>; element-wise builtins on tiles are the
# builtin ops with tile operands (warp.add(tile, tile) -> tile). convert-warp-tiles-to-linalg lowers them all.
TILE_T = Tile(T)
OFFSETS = Operand("offsets", I32, variadic=True)  # one per array dimension
OPS += [
    OpDef("tile_load", "a tile of the result's shape read from the array at `offsets` (elements past the array's "
          "upper extent read as zero)", (ARRAY_T, OFFSETS), (Result("tile", TILE_T),),
          checks=(PerDimension("offsets", "array"), TileShapes("array_rank", ("array", "tile"))), effect=READ),
    OpDef("tile_store", "the tile written into the array at `offsets` (elements past its upper extent skipped)",
          (ARRAY_T, Operand("tile", TILE_T), OFFSETS),
          checks=(PerDimension("offsets", "array"), TileShapes("array_rank", ("array", "tile")))),
    OpDef("tile_load_indexed", "tile_load gathering along {axis = k}: element c is read at offsets + c, along the axis "
          "at offsets[k] + indices[c[k]] (a position outside the array, either side, reads zero)",
          (ARRAY_T, Operand("indices", Tile(I32)), OFFSETS), (Result("tile", TILE_T),),
          (Attr("axis", AttrBase("#builtin.integer")),),
          checks=(PerDimension("offsets", "array"), AxisOf("axis", "array"), TileRank("indices", 1, 1),
                  TileShapes("indexed", ("array", "indices", "tile"))), effect=READ),
    OpDef("tile_store_indexed", "tile_store scattering along {axis = k} through the indices (outside: skipped); "
          "{atomic = 1} adds atomically (tile_atomic_add_indexed); the array's elements before (zero where skipped)",
          (ARRAY_T, Operand("indices", Tile(I32)), Operand("tile", Var("TT", TILE_T)), OFFSETS),
          (Result("previous", Var("TT", TILE_T)),),
          (Attr("axis", AttrBase("#builtin.integer")), Attr("atomic", AttrBase("#builtin.integer"))),
          checks=(PerDimension("offsets", "array"), AxisOf("axis", "array"), InRange("atomic", 0, 1),
                  TileRank("indices", 1, 1), TileShapes("indexed", ("array", "indices", "tile")))),
    OpDef("tile_full", "a tile of the result's shape with every element `value` (tile_zeros/ones/full)",
          (Operand("value", T),), (Result("tile", TILE_T),),
          effect=PURE),
    OpDef("tile_arange", "start + i * step at flat index i, a 1-d tile", (Operand("start", T), Operand("step", T)),
          (Result("tile", TILE_T),),
          checks=(TileRank("tile", 1, 1),), effect=PURE),
    OpDef("tile_extract", "t[i, ...]: one element", (Operand("tile", TILE_T), INDICES), (Result("element", T),),
          checks=(PerDimension("indices", "tile"),), effect=PURE),
    OpDef("tile_insert", "the tile with one element replaced (t[i, ...] = value)",
          (Operand("tile", Var("TT", TILE_T)), Operand("value", T), INDICES), (Result("updated", Var("TT", TILE_T)),),
          checks=(PerDimension("indices", "tile"),), effect=PURE),
    OpDef("tile_reduce", "the {kind = \"add\" | \"mul\" | \"max\" | \"min\" | \"argmax\" | \"argmin\"} of every "
          "element (a tile of shape (1,)), or {axis = k >= 0} along that axis (the result without it)",
          (Operand("tile", Tile(ANY)),), (Result("reduced", Tile(ANY)),),
          (Attr("kind", AttrBase("#builtin.string")), Attr("axis", AttrBase("#builtin.integer"))),
          checks=(OneOf("kind", TILE_REDUCE_KINDS), AxisOf("axis", "tile", whole=True),
                  TileShapes("reduce", ("tile", "reduced"))), effect=PURE),
    OpDef("tile_reduce_adjoint", "the adjoint of a tile_reduce {kind = \"max\" | \"min\" | \"mul\"} along {axis = k} "
          "(the whole of a 1-d tile: `adjoint` of shape (1,)) given the reduction's `adjoint`: max and min route it "
          "to the first extreme along the axis (tile_argmax's), mul multiplies it by the product of the others",
          (Operand("tile", TILE_T), Operand("adjoint", TILE_T)), (Result("grad", TILE_T),),
          (Attr("kind", AttrBase("#builtin.string")), Attr("axis", AttrBase("#builtin.integer"))),
          checks=(OneOf("kind", ("max", "min", "mul")), AxisOf("axis", "tile", whole=True),
                  TileShapes("reduce_adjoint", ("tile", "adjoint", "grad"))), effect=PURE),
    OpDef("tile_spread", "the tile repeated along a new dimension {axis = k} of the result's shape (an axis "
          "reduction's adjoint)", (Operand("tile", TILE_T),), (Result("spread", TILE_T),),
          (Attr("axis", AttrBase("#builtin.integer")),),
          checks=(TileShapes("spread", ("tile", "spread")),), effect=PURE),
    OpDef("tile_matmul", "acc + a @ b (2-d tiles), accumulated in acc's element type",
          (Operand("a", Tile(ANY)), Operand("b", Tile(ANY)), Operand("acc", Var("C", Tile(ANY)))),
          (Result("product", Var("C", Tile(ANY))),),
          checks=(TileShapes("matmul", ("a", "b", "acc")),), effect=PURE),
    OpDef("tile_transpose", "the 2-d tile transposed", (Operand("tile", TILE_T),), (Result("transposed", TILE_T),),
          checks=(TileShapes("transpose", ("tile", "transposed")),), effect=PURE),
    OpDef("tile_broadcast", "the tile broadcast to the result's shape (numpy's rules: size-1 and leading dimensions)",
          (Operand("tile", TILE_T),), (Result("broadcast", TILE_T),),
          checks=(TileShapes("broadcast", ("tile", "broadcast")),), effect=PURE),
    OpDef("tile_cholesky", "the Cholesky factor of the symmetric positive-definite 2-d tile: {fill = \"lower\"} L "
          "(L L^T = A, from A's lower triangle) or \"upper\" U (U^T U = A, from its upper one); the other triangle zero",
          (Operand("a", TILE_T),), (Result("factor", TILE_T),), (Attr("fill", AttrBase("#builtin.string")),),
          checks=(OneOf("fill", ("lower", "upper")), TileShapes("square", ("a", "factor"))), effect=PURE),
    OpDef("tile_solve", "x with M x = y for a triangular M: {form = \"lower\" | \"upper\"} (M's triangle read), or "
          "\"lower_t\" / \"upper_t\" (M's transpose: L^T x = y, U^T x = y); y of shape (n,) or (n, k)",
          (Operand("m", TILE_T), Operand("y", Var("Y", TILE_T))), (Result("x", Var("Y", TILE_T)),),
          (Attr("form", AttrBase("#builtin.string")),),
          checks=(OneOf("form", ("lower", "upper", "lower_t", "upper_t")), TileShapes("solve", ("m", "y"))),
          effect=PURE),
    OpDef("tile_dft", "the unnormalised discrete Fourier transform along the last dimension of a tile of vec2 "
          "(complex) elements: X[k] = sum_n x[n] exp(-+2 pi i k n / N), {inverse = 1} the + sign",
          (Operand("tile", TILE_T),), (Result("transformed", TILE_T),), (Attr("inverse", AttrBase("#builtin.integer")),),
          checks=(InRange("inverse", 0, 1), ElementIs("tile", "!warp.vec<2 : i64, {}>")), effect=PURE),
    OpDef("tile_triangle", "the 2-d tile with the other triangle zeroed: {upper = 0} keeps j <= i, 1 keeps j >= i; "
          "{half_diagonal = 1} halves the diagonal (the Cholesky adjoint's Phi)", (Operand("tile", TILE_T),),
          (Result("kept", TILE_T),), (Attr("upper", AttrBase("#builtin.integer")),
                                      Attr("half_diagonal", AttrBase("#builtin.integer"))),
          checks=(InRange("upper", 0, 1), InRange("half_diagonal", 0, 1), TileRank("tile", 2, 2)), effect=PURE),
    OpDef("tile_scan", "the running {kind = \"add\" | \"add_exclusive\" | \"max\" | \"min\"} over the tile's "
          "elements in row-major order (an exclusive sum starts at zero)", (Operand("tile", TILE_T),),
          (Result("scanned", TILE_T),), (Attr("kind", AttrBase("#builtin.string")),),
          checks=(OneOf("kind", ("add", "add_exclusive", "max", "min")),), effect=PURE),
    OpDef("tile_reshape", "the tile's elements in row-major order, in the result's shape (reshape, squeeze)",
          (Operand("tile", TILE_T),), (Result("reshaped", TILE_T),),
          checks=(TileShapes("reshape", ("tile", "reshaped")),), effect=PURE),
    OpDef("tile_view", "the view at `offsets` (one per dimension of the tile) of the result's shape: {steps} gives "
          "each of the tile's dimensions its step (0: the dimension is dropped, its index the offset), so view element "
          "(.., j_k, ..) is the tile's at offset_d + step_d * j_k, in order over the kept dimensions (t[2:8:2, 3] "
          "and t[::-1] are views, tile_view(t, offset=(i,)) row i)",
          (Operand("tile", TILE_T), OFFSETS), (Result("view", TILE_T),),
          (Attr("steps", AttrBase("#builtin.dense_array")),), checks=(PerDimension("offsets", "tile"),), effect=PURE),
    OpDef("tile_insert_view", "the tile with the region tile_view(tile, offsets) {steps} of the part's shape replaced "
          "by the part (tile_view's adjoint, tile_assign, writes through a view)",
          (Operand("tile", Var("TT", TILE_T)), Operand("part", TILE_T), OFFSETS),
          (Result("updated", Var("TT", TILE_T)),), (Attr("steps", AttrBase("#builtin.dense_array")),),
          checks=(PerDimension("offsets", "tile"),), effect=PURE),
    OpDef("tile_gather", "the tile gathered along {axis} by the 1-d int tile `indices`: element (.., k, ..) is the "
          "tile's at (.., i, ..) with i = indices[k], a negative i counting from the end (t[indices, :])",
          (Operand("tile", TILE_T), Operand("indices", Tile(ANY))), (Result("gathered", TILE_T),),
          (Attr("axis", AttrBase("#builtin.integer")),), effect=PURE),
    OpDef("tile_gather_add", "the tile plus the part added back along {axis} at the positions `indices` gathered "
          "(tile_gather's adjoint: a repeated index adds each of its parts)",
          (Operand("tile", Var("TT", TILE_T)), Operand("part", TILE_T), Operand("indices", Tile(ANY))),
          (Result("updated", Var("TT", TILE_T)),), (Attr("axis", AttrBase("#builtin.integer")),), effect=PURE),
    OpDef("tile_random", "random numbers from the uint32 `state` as Warp's tile_randi / tile_randf on one lane: "
          "s = rand_pcg(state), then each element in row-major order advances s = rand_pcg(s) and is "
          "{kind = \"randi\"} int32(s) or {kind = \"randf\"} (s >> 8) / 2^24; with `bounds` (low, high), randi "
          "is int32(s % uint32(high - low)) + low and randf (high - low) * u + low",
          (Operand("state", Is("ui32")), Operand("bounds", ANY, variadic=True)),
          (Result("tile", Tile(ANY)),), (Attr("kind", AttrBase("#builtin.string")),),
          checks=(OneOf("kind", ("randi", "randf")), Count("bounds", (0, 2))), effect=PURE),
    OpDef("tile_sort", "the keys in ascending order and the values permuted with them, both tiles seen as their "
          "row-major sequence (equal keys keep their order)",
          (Operand("keys", Var("K", Tile(ANY))), Operand("values", Var("V", Tile(ANY)))),
          (Result("sorted_keys", Var("K", Tile(ANY))), Result("sorted_values", Var("V", Tile(ANY)))),
          checks=(TileShapes("same", ("keys", "values")),), effect=PURE),
    OpDef("tile_sum_to", "the tile summed over the dimensions a broadcast to its shape added (the result's shape: "
          "tile_broadcast's adjoint)", (Operand("tile", TILE_T),), (Result("summed", TILE_T),),
          checks=(TileShapes("sum_to", ("tile", "summed")),), effect=PURE),
    OpDef("tile_atomic_add", "adds the tile into the array at `offsets` (atomically; elements past the array's upper "
          "extent skipped); the array's elements before the add (zero where skipped)",
          (ARRAY_T, Operand("tile", Var("TT", TILE_T)), OFFSETS), (Result("previous", Var("TT", TILE_T)),),
          checks=(PerDimension("offsets", "array"), TileShapes("array_rank", ("array", "tile")))),
    # Warp's CPU lanes (wp.config.enable_cpu_blocks, a module of `warp.cpu_lanes`): what the frontend emits for
    # the lanes of a block, and warp-cpu-block-lanes turns into loops over them
    OpDef("assert", "Python's `assert condition` in a kernel, its source text {message}: checked in debug builds "
          "(warp-bounds-check reports a false condition as the launch's error), erased in release builds "
          "(warp-strip-asserts), as Warp compiles C's assert", (Operand("condition", Is("i1")),), (),
          (Attr("message", AttrBase("#builtin.string")),)),
    OpDef("adjoint_print", "what print(x) prints in the reverse sweep (Warp's adj_print: `adj: ` and x's adjoint): "
          "the body, its block's one argument x's adjoint (none without `value`: a text or a type without print "
          "implementation), is cloned there by warp-autodiff with the adjoint the sweep has reached; nothing in the "
          "forward code (the derivative passes erase it)", (Operand("value", ANY, optional=True),), regions=("body",)),
    OpDef("tile_sync", "a barrier of the block's lanes: each lane's code before it runs before any lane's code "
          "after it (Warp's WP_TILE_SYNC around cooperative stack and scatter operations)"),
    OpDef("lane_index", "the lane of the running thread inside its block, 0..block_dim-1",
          results=(Result("lane", I32),),
          effect=PURE),
    OpDef("launch_dim", "the extent of launch dimension {dim = d} (of the thread grid)", (), (Result("extent", I32),),
          (Attr("dim", AttrBase("#builtin.integer")),),
          checks=(InRange("dim", 0, MAX_NDIM - 1),), effect=PURE),
    # up to MAP_ARITY tiles in and out, each its own optional group: IRDL gives a variadic group one type, and
    # the tiles' element types may differ
    OpDef("tile_map", "the body applied to the tiles' elements (its block's arguments, one per tile), element by "
          "element; it yields one element per result tile (tiles of one shape)",
          tuple(Operand(f"t{k}", Tile(ANY), optional=True) for k in range(16)),
          tuple(Result(f"r{k}", Tile(ANY), optional=True) for k in range(16)), regions=("body",),
          checks=(TileElements(),)),
]
MAP_ARITY = 16
from .geometry_ops import GEOMETRY_OPS  # noqa: E402  (queries of wp.HashGrid, wp.Bvh, ...: issue 17)

OPS += GEOMETRY_OPS
BY_NAME = {op.name: op for op in OPS}


def builtin_op(name: str, fixed: int) -> OpDef:
    """A builtin of the builtin table: its operands stay unconstrained here (the table checks them per
    overload when the frontend resolves a call), and so does its result: IRDL cannot say "not an array"
    (no negation, and in MLIR 22 no irdl.base inside irdl.any_of, so no "scalar, composite or vector").
    IRDL unifies the types of a variadic group, so the leading `fixed` operands (as many as the shortest
    overload takes: `mul(vec3, f32)`) each get their own."""
    operands = tuple(Operand(f"a{k}", ANY) for k in range(fixed)) + (Operand("args", ANY, variadic=True),)
    return OpDef(name, "a builtin of the builtin table", operands, (Result("result", ANY),))


# -- IRDL ------------------------------------------------------------------------------------------
class _Emitter:
    """The IRDL body of one op: one SSA constraint per use, one per Var name."""

    def __init__(self):
        self.lines: list[str] = []
        self.vars: dict[str, str] = {}

    def emit(self, text: str) -> str:
        name = f"%{len(self.lines)}"
        self.lines.append(f"    {name} = {text}")
        return name

    def constraint(self, c, in_any_of=False) -> str:
        if isinstance(c, Var):
            if c.name not in self.vars:
                self.vars[c.name] = self.constraint(c.constraint)
            return self.vars[c.name]
        if isinstance(c, AnyType):
            return self.emit("irdl.any")
        if isinstance(c, Is):
            return self.emit(f"irdl.is {c.type}")
        if isinstance(c, Base):
            if in_any_of:
                kind = c.name[len("warp."):]
                if not c.name.startswith("warp.") or kind not in WARP_TYPE_PARAMS:
                    raise ValueError(f"irdl.any_of cannot hold a base constraint on {c.name}")
                params = [self.emit("irdl.any") for _ in range(WARP_TYPE_PARAMS[kind])]
                return self.emit(f"irdl.parametric @warp::@{kind}<{', '.join(params)}>")
            if c.name.startswith("warp."):
                return self.emit(f"irdl.base @warp::@{c.name[len('warp.'):]}")
            return self.emit(f'irdl.base "{c.name}"')
        if isinstance(c, AttrBase):
            return self.emit(f'irdl.base "{c.name}"')
        if isinstance(c, Array):
            dtype = self.constraint(c.dtype)
            ndim = self.emit('irdl.base "#builtin.integer"')
            array = self.emit(f"irdl.parametric @warp::@array<{dtype}, {ndim}>")
            if not c.or_descriptor:
                return array
            descriptors = [self.emit(f"irdl.is {descriptor_spelling(n)}") for n in range(1, MAX_NDIM + 1)]
            return self.emit(f"irdl.any_of({', '.join([array, *descriptors])})")
        if isinstance(c, Tile):
            dtype = self.constraint(c.dtype)
            shape = self.emit('irdl.base "#builtin.dense_array"')
            return self.emit(f"irdl.parametric @warp::@tile<{dtype}, {shape}>")
        if isinstance(c, AnyOf):
            return self.emit(f"irdl.any_of({', '.join(self.constraint(o, in_any_of=True) for o in c.options)})")
        raise TypeError(f"not a constraint: {c!r}")


def _values(emitter: _Emitter, items) -> str:
    return ", ".join(f"{x.name}: {'variadic ' if x.variadic else 'optional ' if x.optional else ''}"
                     f"{emitter.constraint(x.constraint)}" for x in items)


def op_irdl(op: OpDef) -> str:
    e = _Emitter()
    tail = []
    if op.operands:
        tail.append(f"    irdl.operands({_values(e, op.operands)})")
    if op.results:
        tail.append(f"    irdl.results({_values(e, op.results)})")
    if op.attributes:
        attrs = ", ".join(f'"{a.name}" = {e.constraint(a.constraint)}' for a in op.attributes)
        tail.append(f"    irdl.attributes {{{attrs}}}")
    if op.regions:
        regions = [f"{name}: {e.emit('irdl.region')}" for name in op.regions]
        tail.append(f"    irdl.regions({', '.join(regions)})")
    return "\n".join([f"  irdl.operation @{op.name} {{", *e.lines, *tail, "  }"])


def irdl_text(ops) -> str:
    return "\n".join(op_irdl(op) for op in ops)


def table_markdown(ops=None) -> str:
    """The op table as markdown: one row per op, then what each constraint variable stands for."""
    variables: dict = {}

    def show(c) -> str:
        if isinstance(c, Var):
            variables.setdefault(c.name, show(c.constraint))
            return c.name
        if isinstance(c, AnyType):
            return "any"
        if isinstance(c, Is):
            return c.type
        if isinstance(c, (Base, AttrBase)):
            return c.name.replace("!builtin.", "").replace("#builtin.", "")
        if isinstance(c, Array):
            return f"array<{show(c.dtype)}>" + (" or its descriptor" if c.or_descriptor else "")
        if isinstance(c, Tile):
            return f"tile<{show(c.dtype)}>"
        if c == COMPOSITE:
            return "composite"
        return " or ".join(show(o) for o in c.options)

    def items(xs) -> str:
        return ", ".join(f"{x.name}: {show(x.constraint)}"
                         f"{'...' if getattr(x, 'variadic', False) else '?' if getattr(x, 'optional', False) else ''}"
                         for x in xs) or "-"

    rows = ["| op | operands | results | attributes | summary |", "| --- | --- | --- | --- | --- |"]
    for op in ops or OPS:
        rows.append(f"| warp.{op.name} | {items(op.operands)} | {items(op.results)} | "
                    f"{items(op.attributes)} | {op.summary} |")
    legend = [f"- `{name}`: {what}, the same type at each use in an op" for name, what in variables.items()]
    return "\n".join(rows + [""] + legend + [
        "- `composite`: a warp vec, mat, quat, transform or struct; `...`: variadic; `?`: optional",
        "- descriptor: the array's LLVM struct, as an array field of a struct is once the struct is lowered"])
