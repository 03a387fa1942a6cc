"""convert-warp-tiles-to-linalg's common ground: tile types as tensors, the linalg / tensor builders every tile op's
lowering uses (TileLowering), and index helpers. The ops' lowerings are in tiles_memory.py, tiles_shapes.py,
tiles_reductions.py and tiles_algebra.py, named by the tile table (compiler/tiles/table.py)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import _linalg_ops_gen as linalg  # (the ODS builders: the opdsl module costs ~150 ms to import)
from mlir.dialects import arith, scf, tensor

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from ..dialects.warp import is_tile_type, tile_params
from ..passes.registry import PassError


# Rows up to this many elements load as one vector each; a wider row as one vector would be split by LLVM's
# backend into register-sized loads that all complete (spilled) before the first store: a 4096-element row
# read and wrote its 16 KB twice. Wider rows take the element loop, which LLVM vectorises as a copy.
ROW_VECTOR_MAX = 64

MATMUL_ATTR = "warp.tile_matmul"  # a float tile_matmul's linalg.generic (m, k, n), arith in its body

# On the outermost op of a tile_store's / tile_atomic_add's loop nest over the tile (an scf.for, or the bounds
# check's scf.if of a tile of one element): the op name. CUDA's warp-gpu-cooperative-tiles spreads such a nest
# over a block's lanes (each element written once per block), as it spreads the linalg ops.
TILE_WRITE_ATTR = "warp.writes_tile"

def element_of(t: ir.Type):
    """A tile type's (shape, element type, its composite or None)."""
    dtype, shape = tile_params(t)
    return shape, dtype, wc.composite(dtype)

def is_struct(c) -> bool:
    """Whether a tile's element composite is a struct: one opaque element of the tensor (its fields differ in
    type), which warp-struct-tiles-as-bytes makes the struct's bytes before bufferization."""
    return c is not None and c.kind == "struct"

def combine(name: str, values, result: ir.Type) -> ir.Value:
    """Builtin `name` of tile elements: of two structs (add, sub), Warp's field-by-field arithmetic."""
    c = wc.composite(result)
    if is_struct(c):
        if name not in ("add", "sub"):
            raise PassError(f"'{name}' of Warp struct tile elements is not supported (Warp adds and subtracts them "
                            f"field by field)")
        return wc.struct_fieldwise(name, *values)
    return wb.builtin(name, values, result)

def tensor_type(t: ir.Type) -> ir.RankedTensorType:
    """A tile of scalars: a tensor of its shape; of vectors, matrices or quaternions: their components as the
    tensor's trailing dimensions (a tile of 4 vec3f is tensor<4x3xf32>); of structs: a tensor of structs."""
    shape, dtype, c = element_of(t)
    if c is not None and not is_struct(c):
        return ir.RankedTensorType.get(list(shape) + list(c.shape), c.dtype)
    return ir.RankedTensorType.get(list(shape), dtype)

def component_indices(c):
    """Every component's indices of a composite, in storage (row-major) order."""
    out = [()]
    for n in c.shape:
        out = [p + (k,) for p in out for k in range(n)]
    return out

def index_const(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result

def as_i32(v: ir.Value) -> ir.Value:
    return arith.IndexCastOp(ir.IntegerType.get_signless(32), v).result

def constant_of(t: ir.Type, n) -> ir.Value:
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, float(n))).result
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).is_unsigned:
        return wb.int_constant(t, n)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, int(n))).result

def is_vector_element(t: ir.Type) -> bool:
    """Whether memory holds `t` as LLVM's vector<N x t> lays it out (bytes packed; i1 is not: a bool is a byte)."""
    if isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return True
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width in (8, 16, 32, 64)

def element_bytes(t: ir.Type) -> int:
    return (ir.FloatType(t).width if isinstance(t, ir.FloatType) else ir.IntegerType(t).width) // 8

def zero_of(t: ir.Type) -> ir.Value:
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, 0.0)).result
    return constant_of(t, 0)

def sum_identity(t: ir.Type) -> ir.Value:
    """-0.0 for floats (-0.0 + x is x for every x, -0.0 included, as Warp's sum from the first element gives;
    0.0 + -0.0 would be +0.0), 0 for integers."""
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, -0.0)).result
    return zero_of(t)

def parallel_iterators(rank: int) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank)

def iterator_kinds(kinds) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])

def affine_maps(*maps) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])

def affine_map(rank: int, exprs) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(e) if isinstance(e, int) else e for e in exprs])

def for_loop(lo, hi, inits, body) -> list:
    """scf.for over [lo, hi) (index) carrying `inits`; `body(iv, carried)` returns the next values."""
    loop = scf.ForOp(lo, hi, index_const(1), list(inits))
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(body(loop.induction_variable, list(loop.inner_iter_args)))
    return list(loop.results)

def clone_into(ops, mapping: dict) -> None:
    """Clones `ops` at the insertion point, their operands (nested ops' too) read through `mapping`, which
    gets the clones' results."""
    for op in ops:
        new = op.clone()

        def remap(o):
            for k, v in enumerate(o.operands):
                if v in mapping:
                    o.operands[k] = mapping[v]
            return ir.WalkResult.ADVANCE

        new.operation.walk(remap, ir.WalkOrder.PRE_ORDER)
        for r, nr in zip(op.results, new.results):
            mapping[r] = nr

def inside_array(arr, positions) -> ir.Value:
    """i1: every position below its dimension's extent (Warp's bounds_check checks the upper bounds)."""
    inside = None
    for d, p in enumerate(positions):
        below = arith.CmpIOp(arith.CmpIPredicate.slt, p, wb.array_dim(arr, d)).result
        inside = below if inside is None else arith.AndIOp(inside, below).result
    return inside

def ravel_index(ivs, shape) -> ir.Value:
    """The row-major flat index (index type) of the tile indices `ivs` in `shape`."""
    flat = None
    for iv, n in zip(ivs, shape):
        flat = iv if flat is None else arith.AddIOp(arith.MulIOp(flat, index_const(n)).result, iv).result
    return flat

def view_positions(offsets, steps, ivs) -> list:
    """The tile's indices of a view's element `ivs` (index values): offset_d + step_d * j over the kept
    dimensions, offset_d over the dropped ones (step 0)."""
    kept = iter(ivs)
    return [o if s == 0 else arith.AddIOp(o, scaled(next(kept), s)).result for o, s in zip(offsets, steps)]

def scaled(j, step: int):
    return j if step == 1 else arith.MulIOp(j, index_const(step)).result

def wrapped_index(i, extent: int) -> ir.Value:
    """An index tile's element as an index: a negative one counts from the end (numpy's, Warp's t[indices])."""
    i = arith.IndexCastOp(ir.IndexType.get(), i).result
    negative = arith.CmpIOp(arith.CmpIPredicate.slt, i, index_const(0)).result
    return arith.SelectOp(negative, arith.AddIOp(i, index_const(extent)).result, i).result

def unravel_index(flat, shape) -> list:
    """The tile indices of the row-major flat index `flat` (index type, below the shape's size) in `shape`: the
    outermost index is what the inner ones leave (no remainder to take)."""
    idx = []
    for n in reversed(shape[1:]):
        idx.append(arith.RemUIOp(flat, index_const(n)).result)
        flat = arith.DivUIOp(flat, index_const(n)).result
    return [flat, *reversed(idx)] if shape else []

def load_or_zero(arr, positions, dtype) -> ir.Value:
    """arr[positions], or zero where a position is past its dimension's extent (tile_load's rule)."""
    branch = scf.IfOp(inside_array(arr, positions), [dtype], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([wb.load(arr, positions)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([zero_of(dtype)])
    return branch.results[0]

def loop_nest(shape, body, ivs=()):
    """scf.for loops over `shape` (row-major) at the insertion point; `body(ivs)` in the innermost. A dimension
    of extent 1 is index 0, no loop (a reduction's tile of shape (1,) on its way to an atomic: a loop's variable
    would make the atomic's address look different per thread to warp-cpu-interchange-loops). Returns the
    outermost loop, None without loops."""
    if len(ivs) == len(shape):
        body(list(ivs))
        return None
    if shape[len(ivs)] == 1:
        return loop_nest(shape, body, (*ivs, index_const(0)))
    loop = scf.ForOp(index_const(0), index_const(shape[len(ivs)]), index_const(1))
    with ir.InsertionPoint(loop.body):
        loop_nest(shape, body, (*ivs, loop.induction_variable))
        scf.YieldOp([])
    return loop

def mark_write(op, name: str) -> None:
    """Marks the outermost op of a tile write's nest (TILE_WRITE_ATTR) with the tile op's name."""
    op.operation.attributes[TILE_WRITE_ATTR] = ir.StringAttr.get(name[len("warp."):])


class TileLowering:
    """The builders a tile op's lowering uses; `operand_types` / `result_types`: the op's types before the tiles became
    tensors (set per op by tiles_to_linalg's dispatch)."""

    def __init__(self, row_vectors: bool = True):
        self.linalg, self.tensor = linalg, tensor
        self.row_vectors = row_vectors

    # -- helpers ------------------------------------------------------------------------------------
    def generic(self, result: ir.RankedTensorType, inputs, maps, iterators, init=None, body=None, results=None):
        """A linalg.generic with one output (`init`, default a tensor.empty of `result`); `body(block_args)`
        returns the yielded values."""
        if init is None:
            init = self.tensor.EmptyOp(list(result.shape), result.element_type).result
        outputs = init if isinstance(init, list) else [init]
        op = self.linalg.GenericOp([o.type for o in outputs] if results is None else results, list(inputs), outputs,
                                   affine_maps(*maps), iterators)
        types = [ir.RankedTensorType(v.type).element_type for v in list(inputs) + outputs]
        block = op.regions[0].blocks.append(*types)
        with ir.InsertionPoint(block):
            self.linalg.YieldOp(body(list(block.arguments)))
        return op

    def generate(self, result: ir.RankedTensorType, body) -> ir.Value:
        """tensor.generate of `result`; `body(indices)` returns the element."""
        op = self.tensor.GenerateOp(result, [])
        block = op.regions[0].blocks.append(*[ir.IndexType.get()] * result.rank)
        with ir.InsertionPoint(block):
            self.tensor.YieldOp(body(list(block.arguments)))
        return op.result

    # -- tiles of composites: their components are the tensors' trailing dimensions ----------------------------
    def element(self, tensor, tile_t, ivs) -> ir.Value:
        """The element at `ivs` (index values) of a tile tensor: a scalar, or a composite built of its components."""
        _, dtype, c = element_of(tile_t)
        if c is None or is_struct(c):
            return self.tensor.ExtractOp(tensor, list(ivs)).result
        parts = [self.tensor.ExtractOp(tensor, list(ivs) + [index_const(k) for k in p]).result for p in component_indices(c)]
        return wc.construct(dtype, parts)

    def generate_elements(self, result_t, element_at) -> ir.Value:
        """tensor.generate of tile type `result_t`; `element_at(ivs)` gives the element (scalar or composite)
        at the tile indices, whose component at the trailing indices is yielded."""
        shape, dtype, c = element_of(result_t)
        rank = len(shape)

        def body(ivs):
            value = element_at(ivs[:rank])
            if c is None or is_struct(c):
                return value
            return wc.extract(value, [as_i32(iv) for iv in ivs[rank:]], c.dtype)

        return self.generate(tensor_type(result_t), body)

    def elementwise_composite(self, op):
        """A builtin of tiles of composites (or with a composite result: dot of vec3 tiles, a vec3 tile times a
        float): each element computed from the operands' elements, component by component."""
        name = op.name[len("warp."):]
        operands, types = list(op.operands), self.operand_types
        rt = element_of(self.result_types[0])[1]

        def element_at(ivs):
            values = [self.element(v, t, ivs) if is_tile_type(t) else v for v, t in zip(operands, types)]
            return combine(name, values, rt)

        return self.generate_elements(self.result_types[0], element_at)

    def elementwise(self, op):
        result = tensor_type(op.results[0].type)
        rank = result.rank
        tiles = [v for v in op.operands if isinstance(v.type, ir.RankedTensorType)]
        name = op.name[len("warp."):]
        operands = list(op.operands)

        def body(args):
            elements = iter(args)  # the tiles' elements, in operand order; scalars as they are
            values = [next(elements) if isinstance(v.type, ir.RankedTensorType) else v for v in operands]
            return [wb.builtin(name, values, result.element_type)]

        identity = ir.AffineMap.get_identity(rank)
        return self.generic(result, tiles, [identity] * (len(tiles) + 1), parallel_iterators(rank), body=body).results[0]
