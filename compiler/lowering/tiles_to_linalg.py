"""convert-warp-tiles-to-linalg: Warp's tiles as tensors, their ops as linalg and tensor ops.

A `!warp.tile<T, array<i64: M, N>>` becomes `tensor<MxNxT>` (block arguments and loop results too), and:

  warp.tile_load(a, offsets)      tensor.generate: element (i, j) is a[off0 + i, off1 + j], or zero past the
                                  array's upper extent (Warp's bounds_check)
  warp.tile_store(a, t, offsets)  a loop nest over the tile: tensor.extract, warp.store where inside the array
  warp.tile_full(v)               tensor.splat
  warp.tile_arange(start, step)   tensor.generate: start + i * step
  warp.<builtin>(tiles, scalars)  linalg.generic, every map the identity, the builtin on elements in its body
  warp.tile_reduce {kind}         linalg.generic reducing every dimension into a 0-d tensor (in row-major
                                  order, as Warp's CPU loop), then a tensor of shape (1,)
  warp.tile_matmul(a, b, acc)     linalg.generic (m, k, n): acc[m, n] += a[m, k] * b[k, n], n innermost (it
                                  vectorises), each element summed in increasing k; with float32 or float64
                                  operands alike, arith.mulf/addf in its body and `warp.tile_matmul` on it
                                  (the CPU's warp-cpu-vectorize-tile-matmul makes it register-blocked FMAs)
  warp.tile_transpose / broadcast linalg.generic with the transposing / broadcasting input map
  warp.tile_extract / insert      tensor.extract / tensor.insert

The element computations stay warp builtins (warp.add, warp.max, warp.sin, ...), which
convert-warp-builtins-to-arith lowers with the rest. Bufferization (one-shot-bufferize, the CPU stage
table's "tiles" stage) then gives each tile a buffer: an accumulator updated in a loop is updated in place.
Ops without tiles are left alone.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import _linalg_ops_gen as linalg  # (the ODS builders: the opdsl module costs ~150 ms to import)
from mlir.dialects import arith, scf, tensor, vector

from ..dialects import llvm
from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from ..dialects.warp import is_tile_type, tile_params
from ..passes import registry
from ..passes.registry import PassError
from ..passes.ir_walk import ops_named

# Rows up to this many elements load as one vector each; a wider row as one vector would be split by LLVM's
# backend into register-sized loads that all complete (spilled) before the first store: a 4096-element row
# read and wrote its 16 KB twice. Wider rows take the element loop, which LLVM vectorises as a copy.
ROW_VECTOR_MAX = 64
MATMUL_ATTR = "warp.tile_matmul"  # a float tile_matmul's linalg.generic (m, k, n), arith in its body
# On the outermost op of a tile_store's / tile_atomic_add's loop nest over the tile (an scf.for, or the bounds
# check's scf.if of a tile of one element): the op name. CUDA's warp-gpu-cooperative-tiles spreads such a nest
# over a block's lanes (each element written once per block), as it spreads the linalg ops.
TILE_WRITE_ATTR = "warp.writes_tile"
# On the module: the first tile op (or builtin) whose lowering assumes one lane per block (wp.tile, tile_sort, ...),
# set here or by the frontend. warp-gpu-cooperative-tiles leaves such a module's kernels one thread per block.
ONE_LANE_ATTR = "warp.one_lane_tiles"
# The tile ops whose lowerings are linalg ops, copies, tile-write nests (TILE_WRITE_ATTR) and element reads only:
# what warp-gpu-cooperative-tiles can spread over a block's lanes. Builtins on tiles (warp.add(tile, tile)) too.
COOPERATIVE_TILE_OPS = frozenset({
    "tile_load", "tile_store", "tile_full", "tile_arange", "tile_extract", "tile_reduce", "tile_matmul",
    "tile_transpose", "tile_broadcast", "tile_map", "tile_atomic_add", "tile_sum_to", "tile_view", "tile_reshape",
    "tile_reduce_adjoint", "tile_insert"})


def element_of(t: ir.Type):
    """A tile type's (shape, element type, its composite or None)."""
    dtype, shape = tile_params(t)
    return shape, dtype, wc.composite(dtype)


def tensor_type(t: ir.Type) -> ir.RankedTensorType:
    """A tile of scalars: a tensor of its shape; of vectors, matrices or quaternions: their components as the
    tensor's trailing dimensions (a tile of 4 vec3f is tensor<4x3xf32>)."""
    shape, dtype, c = element_of(t)
    if c is not None:
        return ir.RankedTensorType.get(list(shape) + list(c.shape), c.dtype)
    return ir.RankedTensorType.get(list(shape), dtype)


def _component_indices(c):
    """Every component's indices of a composite, in storage (row-major) order."""
    out = [()]
    for n in c.shape:
        out = [p + (k,) for p in out for k in range(n)]
    return out


def _has_tiles(op) -> bool:
    return any(is_tile_type(v.type) for v in list(op.operands) + list(op.results))


def _index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


def _i32(v: ir.Value) -> ir.Value:
    return arith.IndexCastOp(ir.IntegerType.get_signless(32), v).result


def _constant_of(t: ir.Type, n) -> ir.Value:
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, float(n))).result
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).is_unsigned:
        return wb.int_constant(t, n)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, int(n))).result


def _vector_element(t: ir.Type) -> bool:
    """Whether memory holds `t` as LLVM's vector<N x t> lays it out (bytes packed; i1 is not: a bool is a byte)."""
    if isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return True
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width in (8, 16, 32, 64)


def _element_bytes(t: ir.Type) -> int:
    return (ir.FloatType(t).width if isinstance(t, ir.FloatType) else ir.IntegerType(t).width) // 8


def _zero(t: ir.Type) -> ir.Value:
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, 0.0)).result
    return _constant_of(t, 0)


def _sum_identity(t: ir.Type) -> ir.Value:
    """-0.0 for floats (-0.0 + x is x for every x, -0.0 included, as Warp's sum from the first element gives;
    0.0 + -0.0 would be +0.0), 0 for integers."""
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, -0.0)).result
    return _zero(t)


def _parallel(rank: int) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank)


def _iterators(kinds) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def _maps(*maps) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _map(rank: int, exprs) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(e) if isinstance(e, int) else e for e in exprs])


class _Lowering:
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
                                   _maps(*maps), iterators)
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

    # -- the ops ------------------------------------------------------------------------------------------
    def lower(self, op, signature) -> list:
        """The values replacing `op`'s results; `signature`: its operand and result types before the tiles
        became tensors (a tensor does not say whether its trailing dimensions are a composite's)."""
        self.operand_types, self.result_types = signature
        name = op.name[len("warp."):]
        composite = any(is_tile_type(t) and element_of(t)[2] is not None for t in signature[0] + signature[1])
        if composite:
            method = getattr(self, f"lower_{name}_composite", None)
            if method is None and name.startswith("tile_"):
                raise PassError(f"{name} of tiles of vectors or matrices is not supported yet")
            return method(op) if method is not None else [self.elementwise_composite(op)]
        method = getattr(self, f"lower_{name}", None)
        if method is not None:
            return method(op)
        return [self.elementwise(op)]  # a builtin of the builtin table with tile operands

    # -- tiles of composites: their components are the tensors' trailing dimensions ----------------------------
    def element(self, tensor, tile_t, ivs) -> ir.Value:
        """The element at `ivs` (index values) of a tile tensor: a scalar, or a composite built of its components."""
        _, dtype, c = element_of(tile_t)
        if c is None:
            return self.tensor.ExtractOp(tensor, list(ivs)).result
        parts = [self.tensor.ExtractOp(tensor, list(ivs) + [_index(k) for k in p]).result for p in _component_indices(c)]
        return wc.construct(dtype, parts)

    def generate_elements(self, result_t, element_at) -> ir.Value:
        """tensor.generate of tile type `result_t`; `element_at(ivs)` gives the element (scalar or composite)
        at the tile indices, whose component at the trailing indices is yielded."""
        shape, dtype, c = element_of(result_t)
        rank = len(shape)

        def body(ivs):
            value = element_at(ivs[:rank])
            if c is None:
                return value
            return wc.extract(value, [_i32(iv) for iv in ivs[rank:]], c.dtype)

        return self.generate(tensor_type(result_t), body)

    def lower_tile_load_composite(self, op):
        arr, offsets = op.operands[0], list(op.operands)[1:]
        dtype = element_of(self.result_types[0])[1]

        def element_at(ivs):
            positions = [arith.AddIOp(_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            branch = scf.IfOp(_inside(arr, positions), [dtype], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([wb.load(arr, positions)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([wc.construct(dtype, [])])
            return branch.results[0]

        return [self.generate_elements(self.result_types[0], element_at)]

    def _store_like(self, op, write):
        arr, tile, offsets = op.operands[0], op.operands[1], list(op.operands)[2:]
        tile_t = self.operand_types[1]
        made = []

        def store(ivs):
            positions = [arith.AddIOp(_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            branch = scf.IfOp(_inside(arr, positions))
            made.append(branch)
            with ir.InsertionPoint(branch.then_block):
                write(arr, self.element(tile, tile_t, ivs), positions)
                scf.YieldOp([])

        _mark_write(_loop_nest(element_of(tile_t)[0], store) or made[0], op.name)
        return []

    def lower_tile_store_composite(self, op):
        return self._store_like(op, lambda arr, v, pos: wb.store(arr, v, pos))

    def lower_tile_atomic_add_composite(self, op):
        return self._store_like(op, lambda arr, v, pos: wb.atomic("add", arr, v, pos))

    def lower_tile_full_composite(self, op):
        return [self.generate_elements(self.result_types[0], lambda ivs: op.operands[0])]

    def lower_tile_extract_composite(self, op):
        tile, indices = op.operands[0], list(op.operands)[1:]
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        return [self.element(tile, self.operand_types[0], idx)]

    def lower_tile_insert_composite(self, op):
        tile, value, indices = op.operands[0], op.operands[1], list(op.operands)[2:]
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        c = element_of(self.operand_types[0])[2]
        out = tile
        for p in _component_indices(c):
            part = wc.extract(value, [arith.ConstantOp(ir.IntegerType.get_signless(32), k).result for k in p], c.dtype)
            out = self.tensor.InsertOp(part, out, idx + [_index(k) for k in p]).result
        return [out]

    def elementwise_composite(self, op):
        """A builtin of tiles of composites (or with a composite result: dot of vec3 tiles, a vec3 tile times a
        float): each element computed from the operands' elements, component by component."""
        name = op.name[len("warp."):]
        operands, types = list(op.operands), self.operand_types
        rt = element_of(self.result_types[0])[1]

        def element_at(ivs):
            values = [self.element(v, t, ivs) if is_tile_type(t) else v for v, t in zip(operands, types)]
            return wb.builtin(name, values, rt)

        return self.generate_elements(self.result_types[0], element_at)

    def lower_tile_map_composite(self, op):
        """One tensor.generate per result, each with a copy of the body computing the element."""
        source = op.regions[0].blocks[0]
        inputs = list(op.operands)
        body = [o.operation for o in source.operations]
        results = []
        for j, result_t in enumerate(self.result_types):
            def element_at(ivs, j=j):
                mapping = {arg: self.element(v, t, ivs) for arg, v, t in zip(source.arguments, inputs,
                                                                              self.operand_types)}
                _clone(body[:-1], mapping)
                value = body[-1].operands[j]  # gpu.yield's
                return mapping.get(value, value)

            results.append(self.generate_elements(result_t, element_at))
        return results

    def lower_tile_reduce_composite(self, op):
        """Sums, maxima and minima of vectors and matrices are component-wise (Warp's add, max and min of two):
        reductions over the tile's dimensions of the tensor, its trailing component dimensions kept."""
        kind = ir.StringAttr(op.attributes["kind"]).value
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        if kind not in ("add", "max", "min"):
            raise PassError(f"tile_{kind} of tiles of vectors or matrices is not supported yet")
        tile = op.operands[0]
        shape, _, c = element_of(self.operand_types[0])
        out = tensor_type(self.result_types[0])  # (the reduced tile's shape, components...)
        if axis >= 0:
            return [self.reduce_axis(tile, kind, axis, out)]
        rank, extra = len(shape), len(c.shape)
        dims = rank + extra
        components = ir.RankedTensorType.get(list(c.shape), c.dtype)
        if kind == "add":
            init = self.tensor.SplatOp(components, _sum_identity(c.dtype), []).result
        else:  # from the first element (max and min are idempotent)
            init = self.generate(components, lambda ivs: self.tensor.ExtractOp(tile, [_index(0)] * rank +
                                                                                list(ivs)).result)
        maps = [ir.AffineMap.get_identity(dims), _map(dims, list(range(rank, dims)))]
        iterators = _iterators(["reduction"] * rank + ["parallel"] * extra)
        folded = self.generic(None, [tile], maps, iterators, init=init,
                              body=lambda a: [wb.builtin(kind, [a[1], a[0]], c.dtype)]).results[0]
        return [self.generate(out, lambda ivs: self.tensor.ExtractOp(folded, list(ivs[1:])).result)]

    def lower_tile_load(self, op):
        arr, offsets = op.operands[0], list(op.operands)[1:]
        return [self.checked_load(arr, offsets, tensor_type(op.results[0].type))]

    def checked_load(self, arr, offsets, result):
        """Element i is arr[offsets + i], or zero past the array's upper extent. A tile wholly inside the
        array (the usual case) takes a branch without per-element checks, whose copy LLVM vectorises."""
        dtype = result.element_type
        inside_all = None
        for d, off in enumerate(offsets):
            end = arith.AddIOp(off, _constant_of(off.type, result.shape[d])).result
            fits = arith.CmpIOp(arith.CmpIPredicate.sle, end, wb.array_dim(arr, d)).result
            inside_all = fits if inside_all is None else arith.AndIOp(inside_all, fits).result
        rank, width = len(offsets), result.shape[len(offsets) - 1]
        i64 = ir.IntegerType.get_signless(64)
        if width > 1:  # rows contiguous in memory (the inner stride is one element): loads LLVM can vectorise
            first = [*offsets[:-1], offsets[-1]]
            second = [*offsets[:-1], arith.AddIOp(offsets[-1], _constant_of(offsets[-1].type, 1)).result]
            step = arith.SubIOp(llvm.ptrtoint(i64, wb.address(arr, second)),
                                llvm.ptrtoint(i64, wb.address(arr, first))).result
            contiguous = arith.CmpIOp(arith.CmpIPredicate.eq, step,
                                      _constant_of(i64, _element_bytes(dtype))).result
            inside_all = arith.AndIOp(inside_all, contiguous).result

        def row_element(ivs):
            positions = [arith.AddIOp(_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            if width == 1:
                return wb.load(arr, positions)
            start = llvm.ptrtoint(i64, wb.address(arr, [*positions[:-1], offsets[-1]]))
            row = wb.array_from_ptr(start, [_constant_of(ir.IntegerType.get_signless(32), width)], dtype)
            return wb.load(row, [_i32(ivs[rank - 1])])

        version = scf.IfOp(inside_all, [result], has_else=True)
        with ir.InsertionPoint(version.then_block):
            if self.row_vectors and 1 < width <= ROW_VECTOR_MAX and rank <= 2 and _vector_element(dtype):
                scf.YieldOp([self.vector_rows(arr, offsets, result)])
            else:
                scf.YieldOp([self.generate(result, row_element)])
        with ir.InsertionPoint(version.else_block):
            scf.YieldOp([self.guarded_load(arr, offsets, result)])
        return version.results[0]

    def vector_rows(self, arr, offsets, result):
        """The tile of a 1-d or 2-d array whose rows are contiguous, one vector load a row (each row written
        into the tile by vector.transfer_write)."""
        dtype, rank = result.element_type, len(offsets)
        width = result.shape[-1]
        row_t = ir.VectorType.get([width], dtype)
        identity = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))
        in_bounds = ir.ArrayAttr.get([ir.BoolAttr.get(True)])

        def row(r, state):
            positions = [arith.AddIOp(_i32(r), offsets[0]).result] if rank == 2 else []
            v = llvm.load(row_t, wb.address(arr, [*positions, offsets[-1]]), alignment=_element_bytes(dtype))
            at = [r, _index(0)] if rank == 2 else [_index(0)]
            return [vector.transfer_write(result, v, state[0], at, identity, in_bounds)]

        empty = self.tensor.EmptyOp(list(result.shape), dtype).result
        return _for(_index(0), _index(result.shape[0] if rank == 2 else 1), [empty], row)[0]

    def guarded_load(self, arr, offsets, result):
        dtype = result.element_type

        def element(ivs):
            return load_or_zero(arr, [arith.AddIOp(_i32(iv), off).result for iv, off in zip(ivs, offsets)], dtype)

        return self.generate(result, element)

    def lower_tile_store(self, op):
        arr, tile, offsets = op.operands[0], op.operands[1], list(op.operands)[2:]
        made = []

        def store(ivs):
            positions = [arith.AddIOp(_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            inside = None
            for d, p in enumerate(positions):
                below = arith.CmpIOp(arith.CmpIPredicate.slt, p, wb.array_dim(arr, d)).result
                inside = below if inside is None else arith.AndIOp(inside, below).result
            branch = scf.IfOp(inside)
            made.append(branch)
            with ir.InsertionPoint(branch.then_block):
                wb.store(arr, self.tensor.ExtractOp(tile, ivs).result, positions)
                scf.YieldOp([])

        _mark_write(_loop_nest(ir.RankedTensorType(tile.type).shape, store) or made[0], op.name)
        return []

    def _indexed_positions(self, op, indices, offsets, ivs):
        """Positions of tile element `ivs` for an indexed load/store along the op's axis, and i1: inside the array
        on both sides (a negative index is a padding sentinel)."""
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        arr = op.operands[0]
        positions = []
        for d, (iv, off) in enumerate(zip(ivs, offsets)):
            rel = self.tensor.ExtractOp(indices, [iv]).result if d == axis else _i32(iv)
            positions.append(arith.AddIOp(rel, off).result)
        inside = _inside(arr, positions)
        zero = arith.ConstantOp(ir.IntegerType.get_signless(32), 0).result
        for p in positions:
            inside = arith.AndIOp(inside, arith.CmpIOp(arith.CmpIPredicate.sge, p, zero).result).result
        return positions, inside

    def lower_tile_load_indexed(self, op):
        arr, indices, offsets = op.operands[0], op.operands[1], list(op.operands)[2:]
        result_t = self.result_types[0]
        dtype = element_of(result_t)[1]

        def element_at(ivs):
            positions, inside = self._indexed_positions(op, indices, offsets, ivs)
            branch = scf.IfOp(inside, [dtype], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([wb.load(arr, positions)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([wc.construct(dtype, []) if wc.composite(dtype) else _zero(dtype)])
            return branch.results[0]

        return [self.generate_elements(result_t, element_at)]

    lower_tile_load_indexed_composite = lower_tile_load_indexed

    def lower_tile_store_indexed(self, op):
        arr, indices, tile, offsets = op.operands[0], op.operands[1], op.operands[2], list(op.operands)[3:]
        tile_t = self.operand_types[2]
        atomic = ir.IntegerAttr(op.attributes["atomic"]).value

        def store(ivs):
            positions, inside = self._indexed_positions(op, indices, offsets, ivs)
            branch = scf.IfOp(inside)
            with ir.InsertionPoint(branch.then_block):
                value = self.element(tile, tile_t, ivs)
                if atomic:
                    wb.atomic("add", arr, value, positions)
                else:
                    wb.store(arr, value, positions)
                scf.YieldOp([])

        _loop_nest(element_of(tile_t)[0], store)
        return []

    lower_tile_store_indexed_composite = lower_tile_store_indexed

    def lower_tile_atomic_add(self, op):
        arr, tile, offsets = op.operands[0], op.operands[1], list(op.operands)[2:]
        made = []

        def add(ivs):
            positions = [arith.AddIOp(_i32(iv), off).result for iv, off in zip(ivs, offsets)]
            inside = None
            for d, p in enumerate(positions):
                below = arith.CmpIOp(arith.CmpIPredicate.slt, p, wb.array_dim(arr, d)).result
                inside = below if inside is None else arith.AndIOp(inside, below).result
            branch = scf.IfOp(inside)
            made.append(branch)
            with ir.InsertionPoint(branch.then_block):
                wb.atomic("add", arr, self.tensor.ExtractOp(tile, ivs).result, positions)
                scf.YieldOp([])

        _mark_write(_loop_nest(ir.RankedTensorType(tile.type).shape, add) or made[0], op.name)
        return []

    def lower_tile_map(self, op):
        """The body moves into a linalg.generic's (its block arguments the tiles' elements, then the outputs')."""
        results = [tensor_type(r.type) for r in op.results]
        rank = results[0].rank
        inits = [self.tensor.EmptyOp(list(r.shape), r.element_type).result for r in results]
        identity = ir.AffineMap.get_identity(rank)
        inputs = list(op.operands)
        generic = self.linalg.GenericOp(results, inputs, inits, _maps(*[identity] * (len(inputs) + len(inits))),
                                        _parallel(rank))
        types = [ir.RankedTensorType(v.type).element_type for v in inputs] + [r.element_type for r in results]
        block = generic.regions[0].blocks.append(*types)
        source = op.regions[0].blocks[0]
        for old, new in zip(source.arguments, block.arguments):
            old.replace_all_uses_with(new)
        yield_op = None
        with ir.InsertionPoint(block):
            marker = _index(0).owner  # (the bindings move an op before another, not to a block's end)
            for inner in list(source.operations):
                inner = inner.operation
                if inner.name == "gpu.yield":
                    yield_op = inner
                else:
                    inner.move_before(marker)
            self.linalg.YieldOp(list(yield_op.operands))
        marker.erase()
        return list(generic.results)

    def lower_tile_sum_to(self, op):
        """tile_broadcast's adjoint: the sums over the dimensions the broadcast made (leading ones, and size-1
        dimensions it widened), each element added in row-major order."""
        source = ir.RankedTensorType(op.operands[0].type)
        result = tensor_type(op.results[0].type)
        rank, lead = source.rank, source.rank - result.rank
        kept = [ir.AffineConstantExpr.get(0) if n == 1 and source.shape[lead + k] != 1 else ir.AffineDimExpr.get(lead + k)
                for k, n in enumerate(result.shape)]
        reduced = {d for d in range(rank) if d < lead or (result.shape[d - lead] == 1 and source.shape[d] != 1)}
        iterators = _iterators(["reduction" if d in reduced else "parallel" for d in range(rank)])
        zero = self.tensor.SplatOp(result, _zero(result.element_type), []).result
        maps = [ir.AffineMap.get_identity(rank), ir.AffineMap.get(rank, 0, kept)]
        add = self.generic(None, [op.operands[0]], maps, iterators, init=zero,
                           body=lambda a: [wb.builtin("add", [a[1], a[0]], result.element_type)])
        return [add.results[0]]

    def lower_tile_full(self, op):
        result = tensor_type(op.results[0].type)
        return [self.tensor.SplatOp(result, op.operands[0], []).result]

    def lower_tile_arange(self, op):
        result = tensor_type(op.results[0].type)
        start, step = op.operands
        dtype = result.element_type

        def element(ivs):
            i64 = arith.IndexCastOp(ir.IntegerType.get_signless(64), ivs[0]).result
            i = arith.SIToFPOp(dtype, i64).result if isinstance(dtype, ir.FloatType) else \
                arith.TruncIOp(dtype, i64).result if ir.IntegerType(dtype).width < 64 else i64
            return wb.builtin("add", [start, wb.builtin("mul", [i, step], dtype)], dtype)

        return [self.generate(result, element)]

    def lower_tile_extract(self, op):
        tile, indices = op.operands[0], list(op.operands)[1:]
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        return [self.tensor.ExtractOp(tile, idx).result]

    def lower_tile_insert(self, op):
        tile, value, indices = op.operands[0], op.operands[1], list(op.operands)[2:]
        idx = [arith.IndexCastOp(ir.IndexType.get(), i).result for i in indices]
        return [self.tensor.InsertOp(value, tile, idx).result]

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
        return self.generic(result, tiles, [identity] * (len(tiles) + 1), _parallel(rank), body=body).results[0]

    def lower_tile_reduce(self, op):
        kind = ir.StringAttr(op.attributes["kind"]).value
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        tile = op.operands[0]
        source = ir.RankedTensorType(tile.type)
        rank, dtype = source.rank, source.element_type
        if axis >= 0:
            return [self.reduce_axis(tile, kind, axis, tensor_type(op.results[0].type))]
        identity = ir.AffineMap.get_identity(rank)
        to_scalar = ir.AffineMap.get(rank, 0, [])
        iterators = _iterators(["reduction"] * rank)
        out_t = tensor_type(op.results[0].type)
        if kind in ("add", "mul", "max", "min"):
            first = self.tensor.ExtractOp(tile, [_index(0)] * rank).result if kind in ("max", "min") else \
                (_sum_identity(dtype) if kind == "add" else _constant_of(dtype, 1))
            init = self.tensor.FromElementsOp(ir.RankedTensorType.get([], dtype), [first]).result
            red = self.generic(None, [tile], [identity, to_scalar], iterators, init=init,
                               body=lambda a: [wb.builtin(kind, [a[1], a[0]], dtype)])
            value = self.tensor.ExtractOp(red.results[0], []).result
        elif kind in ("argmax", "argmin"):
            i32 = ir.IntegerType.get_signless(32)
            first = self.tensor.ExtractOp(tile, [_index(0)] * rank).result
            inits = [self.tensor.FromElementsOp(ir.RankedTensorType.get([], dtype), [first]).result,
                     self.tensor.FromElementsOp(ir.RankedTensorType.get([], i32), [_zero(i32)]).result]
            shape = source.shape

            def body(a):
                flat = None
                for d in range(rank):  # the element's flat (row-major) index
                    i = _i32(self.linalg.IndexOp(d).result)
                    flat = i if flat is None else arith.AddIOp(arith.MulIOp(flat, arith.ConstantOp(
                        i32, shape[d]).result).result, i).result
                better = wb.builtin("gt" if kind == "argmax" else "lt", [a[0], a[1]],
                                    ir.IntegerType.get_signless(1))
                return [arith.SelectOp(better, a[0], a[1]).result, arith.SelectOp(better, flat, a[2]).result]

            red = self.generic(None, [tile], [identity, to_scalar, to_scalar], iterators, init=inits, body=body)
            value = self.tensor.ExtractOp(red.results[1], []).result
        else:
            raise PassError(f"warp.tile_reduce: unknown kind '{kind}'")
        return [self.tensor.FromElementsOp(out_t, [value]).result]

    def reduce_axis(self, tile, kind, axis, out_t):
        """The reduction along `axis` (row-major order along it), into a tensor without that dimension."""
        if kind not in ("add", "mul", "max", "min"):
            raise PassError(f"tile reductions by '{kind}' along an axis are not supported yet")
        source = ir.RankedTensorType(tile.type)
        rank, dtype = source.rank, source.element_type
        if kind in ("max", "min"):  # from the first slice along the axis (max and min are idempotent)
            init = self.generate(out_t, lambda ivs: self.tensor.ExtractOp(
                tile, list(ivs[:axis]) + [_index(0)] + list(ivs[axis:])).result)
        else:
            init = self.tensor.SplatOp(out_t, _sum_identity(dtype) if kind == "add" else _constant_of(dtype, 1),
                                       []).result
        maps = [ir.AffineMap.get_identity(rank), _map(rank, [d for d in range(rank) if d != axis])]
        iterators = _iterators(["reduction" if d == axis else "parallel" for d in range(rank)])
        return self.generic(None, [tile], maps, iterators, init=init,
                            body=lambda a: [wb.builtin(kind, [a[1], a[0]], dtype)]).results[0]

    def lower_tile_reduce_adjoint(self, op):
        """Max and min: the first extreme's position along the axis for each slice (a loop per slice, a strict
        comparison as tile_argmax's), then a tensor.generate giving each element the slice's adjoint where it is
        that position, else zero. Mul: each element's adjoint times the product of the slice's other elements
        (a loop skipping its own position: exact where an element is zero)."""
        kind = ir.StringAttr(op.attributes["kind"]).value
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        tile, adjoint = op.operands
        source = ir.RankedTensorType(tile.type)
        shape, dtype = list(source.shape), source.element_type
        n = shape[axis]
        # a tile of vectors or matrices: its components are trailing dimensions, each reduced on its own
        rank = len(element_of(self.operand_types[0])[0])
        kept = rank > 1  # the adjoint has the tile's other dimensions (else its tile shape is (1,))

        def at(ivs, k):  # the tile's index with position k along the axis
            return list(ivs[:axis]) + [k] + list(ivs[axis:])

        def reduced(ivs):
            return [iv for d, iv in enumerate(ivs) if d != axis] if kept else [_index(0)] + list(ivs[rank:])

        if kind in ("max", "min"):
            slice_t = ir.RankedTensorType.get([d for i, d in enumerate(shape) if i != axis] if kept else
                                              [1] + shape[rank:], ir.IndexType.get())

            def position(ivs):
                base = list(ivs) if kept else list(ivs[1:])
                first = self.tensor.ExtractOp(tile, at(base, _index(0))).result

                def step(k, carried):
                    best, where = carried
                    x = self.tensor.ExtractOp(tile, at(base, k)).result
                    better = wb.builtin("gt" if kind == "max" else "lt", [x, best], ir.IntegerType.get_signless(1))
                    return [arith.SelectOp(better, x, best).result, arith.SelectOp(better, k, where).result]

                return _for(_index(1), _index(n), [first, _index(0)], step)[1]

            positions = self.generate(slice_t, position)

            def element(ivs):
                hit = arith.CmpIOp(arith.CmpIPredicate.eq, ivs[axis],
                                   self.tensor.ExtractOp(positions, reduced(ivs)).result).result
                g = self.tensor.ExtractOp(adjoint, reduced(ivs)).result
                return arith.SelectOp(hit, g, _zero(dtype)).result
        elif kind == "mul":
            def element(ivs):
                def step(k, carried):
                    own = arith.CmpIOp(arith.CmpIPredicate.eq, k, ivs[axis]).result
                    x = self.tensor.ExtractOp(tile, at([iv for d, iv in enumerate(ivs) if d != axis], k)).result
                    factor = arith.SelectOp(own, _constant_of(dtype, 1), x).result
                    return [wb.builtin("mul", [carried[0], factor], dtype)]

                others = _for(_index(0), _index(n), [_constant_of(dtype, 1)], step)[0]
                return wb.builtin("mul", [self.tensor.ExtractOp(adjoint, reduced(ivs)).result, others], dtype)
        else:
            raise PassError(f"warp.tile_reduce_adjoint: unknown kind '{kind}'")
        return [self.generate(source, element)]

    lower_tile_reduce_adjoint_composite = lower_tile_reduce_adjoint

    def lower_tile_broadcast_composite(self, op):
        source, source_t = op.operands[0], self.operand_types[0]
        src_shape, out_shape = element_of(source_t)[0], element_of(self.result_types[0])[0]
        lead = len(out_shape) - len(src_shape)

        def element_at(ivs):
            idx = [_index(0) if n == 1 and out_shape[lead + k] != 1 else ivs[lead + k] for k, n in enumerate(src_shape)]
            return self.element(source, source_t, idx)

        return [self.generate_elements(self.result_types[0], element_at)]

    def lower_tile_transpose_composite(self, op):
        source, source_t = op.operands[0], self.operand_types[0]
        return [self.generate_elements(self.result_types[0], lambda ivs: self.element(source, source_t, ivs[::-1]))]

    def lower_tile_spread_composite(self, op):
        source, source_t = op.operands[0], self.operand_types[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        return [self.generate_elements(self.result_types[0], lambda ivs: self.element(
            source, source_t, list(ivs[:axis]) + list(ivs[axis + 1:])))]

    # -- linear algebra: sequential loops over the tensors (one lane does the whole factorisation) ---------------
    def lower_tile_cholesky(self, op):
        """Cholesky-Banachiewicz, column by column: L[j, j] = sqrt(A[j, j] - sum_k<j L[j, k]^2), then
        L[i, j] = (A[i, j] - sum_k<j L[i, k] L[j, k]) / L[j, j] below it. The upper factor is the same
        computation on A's upper triangle (A[j, i]), its results stored transposed."""
        a = op.operands[0]
        t = ir.RankedTensorType(a.type)
        n, dtype = t.shape[0], t.element_type
        upper = ir.StringAttr(op.attributes["fill"]).value == "upper"
        ex = self.tensor.ExtractOp

        def read_a(i, j):
            return ex(a, [j, i] if upper else [i, j]).result

        def read_l(fac, i, j):
            return ex(fac, [j, i] if upper else [i, j]).result

        def write(fac, v, i, j):
            return self.tensor.InsertOp(v, fac, [j, i] if upper else [i, j]).result

        def dot_down(fac, i, j, start):  # start - sum_k<j L[i, k] L[j, k]
            return _for(_index(0), j, [start], lambda k, acc: [wb.builtin(
                "sub", [acc[0], wb.builtin("mul", [read_l(fac, i, k), read_l(fac, j, k)], dtype)], dtype)])[0]

        def column(j, state):
            fac = state[0]
            d = wb.builtin("sqrt", [dot_down(fac, j, j, read_a(j, j))], dtype)
            fac = write(fac, d, j, j)
            below = arith.AddIOp(j, _index(1)).result

            def row(i, inner):
                v = wb.builtin("div", [dot_down(inner[0], i, j, read_a(i, j)), d], dtype)
                return [write(inner[0], v, i, j)]

            return _for(below, _index(n), [fac], row)

        zero = self.tensor.SplatOp(t, _zero(dtype), []).result
        return _for(_index(0), _index(n), [zero], column)

    def lower_tile_solve(self, op):
        """Forward substitution (lower, upper_t: the matrix read transposed) or back substitution (upper,
        lower_t), column by column of the right-hand side, each row's sum in increasing k."""
        m, y = op.operands
        form = ir.StringAttr(op.attributes["form"]).value
        yt = ir.RankedTensorType(y.type)
        n, dtype = yt.shape[0], yt.element_type
        columns = yt.shape[1] if yt.rank == 2 else None
        transposed = form in ("lower_t", "upper_t")
        forward = form in ("lower", "upper_t")
        ex = self.tensor.ExtractOp

        def read_m(i, k):
            return ex(m, [k, i] if transposed else [i, k]).result

        def solve_column(c, state):
            def at(i):
                return [i] if c is None else [i, c]

            def row(r, inner):
                x = inner[0]
                i = r if forward else arith.SubIOp(_index(n - 1), r).result
                lo, hi = (_index(0), i) if forward else (arith.AddIOp(i, _index(1)).result, _index(n))
                s = _for(lo, hi, [ex(y, at(i)).result], lambda k, acc: [wb.builtin(
                    "sub", [acc[0], wb.builtin("mul", [read_m(i, k), ex(x, at(k)).result], dtype)], dtype)])[0]
                return [self.tensor.InsertOp(wb.builtin("div", [s, read_m(i, i)], dtype), x, at(i)).result]

            return _for(_index(0), _index(n), state, row)

        zero = self.tensor.SplatOp(yt, _zero(dtype), []).result
        if columns is None:
            return solve_column(None, [zero])
        return _for(_index(0), _index(columns), [zero], lambda c, state: solve_column(c, state))

    def lower_tile_dft_composite(self, op):
        """X[..., k] = sum_n x[..., n] (cos a + i sin a), a = -+2 pi ((k n) mod N) / N: the DFT as its sum (O(N^2)
        per transform), n in increasing order, the twiddle's angle reduced mod N first (no loss for large k n)."""
        tile, tile_t = op.operands[0], self.operand_types[0]
        shape, _, c = element_of(tile_t)
        dtype = c.dtype
        n = shape[-1]
        sign = 1.0 if ir.IntegerAttr(op.attributes["inverse"]).value else -1.0
        ex = self.tensor.ExtractOp
        scale = _constant_of(dtype, sign * 2.0 * 3.141592653589793 / n)

        def element(ivs):  # ivs: the tile index, then the component (0: real, 1: imaginary)
            lead, k, comp = list(ivs[:len(shape) - 1]), ivs[len(shape) - 1], ivs[len(shape)]

            def term(j, acc):
                kj = arith.RemUIOp(arith.MulIOp(k, j).result, _index(n)).result
                angle = wb.builtin("mul", [scale, arith.SIToFPOp(dtype, arith.IndexCastOp(
                    ir.IntegerType.get_signless(64), kj).result).result], dtype)
                cs, sn = wb.builtin("cos", [angle], dtype), wb.builtin("sin", [angle], dtype)
                re, im = ex(tile, lead + [j, _index(0)]).result, ex(tile, lead + [j, _index(1)]).result
                mul = lambda a, b: wb.builtin("mul", [a, b], dtype)  # noqa: E731
                add = lambda a, b: wb.builtin("add", [a, b], dtype)  # noqa: E731
                sub = lambda a, b: wb.builtin("sub", [a, b], dtype)  # noqa: E731
                return [add(acc[0], sub(mul(re, cs), mul(im, sn))), add(acc[1], add(mul(re, sn), mul(im, cs)))]

            re, im = _for(_index(0), _index(n), [_zero(dtype), _zero(dtype)], term)
            first = arith.CmpIOp(arith.CmpIPredicate.eq, comp, _index(0)).result
            return arith.SelectOp(first, re, im).result

        return [self.generate(tensor_type(self.result_types[0]), element)]

    def lower_tile_triangle(self, op):
        tile = op.operands[0]
        upper = ir.IntegerAttr(op.attributes["upper"]).value
        half = ir.IntegerAttr(op.attributes["half_diagonal"]).value
        dtype = ir.RankedTensorType(tile.type).element_type

        def element(ivs):
            i, j = ivs
            keep = arith.CmpIOp(arith.CmpIPredicate.uge if upper else arith.CmpIPredicate.ule, j, i).result
            v = self.tensor.ExtractOp(tile, [i, j]).result
            if half:
                diagonal = arith.CmpIOp(arith.CmpIPredicate.eq, i, j).result
                v = arith.SelectOp(diagonal, wb.builtin("mul", [v, _constant_of(dtype, 0.5)], dtype), v).result
            return arith.SelectOp(keep, v, _zero(dtype)).result

        return [self.generate(ir.RankedTensorType(tile.type), element)]

    def lower_tile_scan(self, op):
        """A loop over the elements in row-major order carrying the running value."""
        tile = op.operands[0]
        t = ir.RankedTensorType(tile.type)
        kind = ir.StringAttr(op.attributes["kind"]).value
        shape, dtype = t.shape, t.element_type
        total = 1
        for n in shape:
            total *= n

        def at(flat):
            return _unravel(flat, shape)

        def step(i, state):
            out, running = state
            idx = at(i)
            x = self.tensor.ExtractOp(tile, idx).result
            if kind == "add_exclusive":
                return [self.tensor.InsertOp(running, out, idx).result, wb.builtin("add", [running, x], dtype)]
            first = arith.CmpIOp(arith.CmpIPredicate.eq, i, _index(0)).result
            op_kind = "add" if kind == "add" else kind
            value = arith.SelectOp(first, x, wb.builtin(op_kind, [running, x], dtype)).result
            return [self.tensor.InsertOp(value, out, idx).result, value]

        init = self.tensor.SplatOp(t, _zero(dtype), []).result
        return [_for(_index(0), _index(total), [init, _zero(dtype)], step)[0]]

    # -- views: regions of the tensors, element by element (tensor.generate: bufferized in place, where an
    # extract_slice / insert_slice would bufferize to strided memref copies, a runtime call) ------------------
    def lower_tile_view(self, op):
        """tile_view: element (.., j_k, ..) of the view is the tile's at offset_d + step_d * j_k over the kept
        dimensions (step_d != 0), at offset_d where a dimension is dropped (step_d == 0)."""
        tile, tile_t = op.operands[0], self.operand_types[0]
        offsets = [arith.IndexCastOp(ir.IndexType.get(), o).result for o in list(op.operands)[1:]]
        steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))

        def element_at(ivs):
            return self.element(tile, tile_t, _view_positions(offsets, steps, ivs))

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_view_composite = lower_tile_view

    def lower_tile_insert_view(self, op):
        """tile_insert_view: the element at `ivs` is the part's where `ivs` lies in the view (each kept dimension
        offset_d + step_d * j for a j inside the part, each dropped one at its offset), else the tile's."""
        tile, part, tile_t, part_t = op.operands[0], op.operands[1], self.operand_types[0], self.operand_types[1]
        offsets = [arith.IndexCastOp(ir.IndexType.get(), o).result for o in list(op.operands)[2:]]
        steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))
        part_shape = list(element_of(part_t)[0])

        def element_at(ivs):
            inside = None
            local = []
            extents = iter(part_shape)
            for i, o, step in zip(ivs, offsets, steps):
                rel = arith.SubIOp(i, o).result
                if step == 0:
                    ok = arith.CmpIOp(arith.CmpIPredicate.eq, rel, _index(0)).result
                elif step == 1:
                    ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, rel, _index(0)).result,
                                      arith.CmpIOp(arith.CmpIPredicate.slt, rel, _index(next(extents))).result).result
                    local.append(rel)
                else:
                    j = arith.DivSIOp(rel, _index(step)).result
                    exact = arith.CmpIOp(arith.CmpIPredicate.eq, arith.MulIOp(j, _index(step)).result, rel).result
                    ok = arith.AndIOp(exact, arith.AndIOp(
                        arith.CmpIOp(arith.CmpIPredicate.sge, j, _index(0)).result,
                        arith.CmpIOp(arith.CmpIPredicate.slt, j, _index(next(extents))).result).result).result
                    local.append(j)
                inside = ok if inside is None else arith.AndIOp(inside, ok).result
            branch = scf.IfOp(inside, [element_of(tile_t)[1]], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([self.element(part, part_t, local)])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([self.element(tile, tile_t, ivs)])
            return branch.results[0]

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_insert_view_composite = lower_tile_insert_view

    def lower_tile_gather(self, op):
        """tile_gather: element (.., k, ..) is the tile's at (.., indices[k], ..) along the axis, a negative index
        counted from the end."""
        tile, indices, tile_t = op.operands[0], op.operands[1], self.operand_types[0]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        extent = element_of(tile_t)[0][axis]

        def element_at(ivs):
            at = list(ivs)
            at[axis] = _wrapped_index(self.tensor.ExtractOp(indices, [ivs[axis]]).result, extent)
            return self.element(tile, tile_t, at)

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_gather_composite = lower_tile_gather

    def lower_tile_gather_add(self, op):
        """tile_gather_add: the tile plus, at each position i along the axis, the part's slices k whose index
        indices[k] is i (wrapped), added in k's order."""
        tile, part, indices = op.operands[0], op.operands[1], op.operands[2]
        tile_t, part_t = self.operand_types[0], self.operand_types[1]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        extent = element_of(tile_t)[0][axis]
        count = element_of(part_t)[0][axis]
        dtype = element_of(tile_t)[1]

        def element_at(ivs):
            def step(k, carried):
                hit = arith.CmpIOp(arith.CmpIPredicate.eq, _wrapped_index(
                    self.tensor.ExtractOp(indices, [k]).result, extent), ivs[axis]).result
                branch = scf.IfOp(hit, [dtype], has_else=True)
                with ir.InsertionPoint(branch.then_block):
                    at = list(ivs)
                    at[axis] = k
                    scf.YieldOp([wb.builtin("add", [carried[0], self.element(part, part_t, at)], dtype)])
                with ir.InsertionPoint(branch.else_block):
                    scf.YieldOp([carried[0]])
                return [branch.results[0]]

            return _for(_index(0), _index(count), [self.element(tile, tile_t, ivs)], step)[0]

        return [self.generate_elements(self.result_types[0], element_at)]

    lower_tile_gather_add_composite = lower_tile_gather_add

    # -- sorting -------------------------------------------------------------------------------------------
    def lower_tile_sort(self, op):
        """A bottom-up merge sort of the keys' row-major sequence carrying each key's position (stable), one
        scf.for over the output per run width (1, 2, 4, ...: ceil(log2 n) passes, O(n log n)); then the sorted
        keys and the values gathered through the positions (tensor.generate), in the tiles' shapes."""
        keys, values = op.operands
        keys_t, values_t = self.operand_types
        shape, dtype, _ = element_of(keys_t)
        n = 1
        for d in shape:
            n *= d
        index = ir.IndexType.get()
        i1 = ir.IntegerType.get_signless(1)

        def unravel(flat):
            return _unravel(flat, shape)

        def ravel(ivs):
            return _ravel(ivs, shape)

        flat_keys_t = ir.RankedTensorType.get([n], dtype)
        flat_pos_t = ir.RankedTensorType.get([n], index)
        sorted_keys = self.generate(flat_keys_t, lambda ivs: self.tensor.ExtractOp(keys, unravel(ivs[0])).result)
        positions = self.generate(flat_pos_t, lambda ivs: ivs[0])
        width = 1
        while width < n:
            sorted_keys, positions = self._merge_pass(sorted_keys, positions, n, width, dtype)
            width *= 2
        keys_out = self.generate(tensor_type(keys_t), lambda ivs: self.tensor.ExtractOp(sorted_keys,
                                                                                          [ravel(ivs)]).result)

        def value_at(ivs):
            source = self.tensor.ExtractOp(positions, [ravel(ivs)]).result
            return self.element(values, values_t, unravel(source))

        return [keys_out, self.generate_elements(values_t, value_at)]

    lower_tile_sort_composite = lower_tile_sort

    def _merge_pass(self, src_keys, src_pos, n, width, dtype):
        """Merges each pair of sorted runs of `width` (the left run's element first among equal keys)."""
        i1 = ir.IntegerType.get_signless(1)
        last = _index(n - 1)

        def minimum(a, b):
            return arith.MinUIOp(a, b).result

        def step(k, carried):
            out_keys, out_pos, i, j = carried
            lo = arith.MulIOp(arith.DivUIOp(k, _index(2 * width)).result, _index(2 * width)).result
            mid = minimum(arith.AddIOp(lo, _index(width)).result, _index(n))
            hi = minimum(arith.AddIOp(lo, _index(2 * width)).result, _index(n))
            start = arith.CmpIOp(arith.CmpIPredicate.eq, k, lo).result
            i = arith.SelectOp(start, lo, i).result
            j = arith.SelectOp(start, mid, j).result
            ci, cj = minimum(i, last), minimum(j, last)
            ki = self.tensor.ExtractOp(src_keys, [ci]).result
            kj = self.tensor.ExtractOp(src_keys, [cj]).result
            left_open = arith.CmpIOp(arith.CmpIPredicate.ult, i, mid).result
            right_done = arith.CmpIOp(arith.CmpIPredicate.uge, j, hi).result
            right_less = wb.builtin("lt", [kj, ki], i1)
            not_less = arith.XOrIOp(right_less, arith.ConstantOp(i1, 1).result).result
            take_left = arith.AndIOp(left_open, arith.OrIOp(right_done, not_less).result).result
            key = arith.SelectOp(take_left, ki, kj).result
            pos = arith.SelectOp(take_left, self.tensor.ExtractOp(src_pos, [ci]).result,
                                 self.tensor.ExtractOp(src_pos, [cj]).result).result
            step_i = arith.SelectOp(take_left, _index(1), _index(0)).result
            step_j = arith.SelectOp(take_left, _index(0), _index(1)).result
            return [self.tensor.InsertOp(key, out_keys, [k]).result, self.tensor.InsertOp(pos, out_pos, [k]).result,
                    arith.AddIOp(i, step_i).result, arith.AddIOp(j, step_j).result]

        inits = [self.tensor.EmptyOp([n], dtype).result, self.tensor.EmptyOp([n], ir.IndexType.get()).result,
                 _index(0), _index(0)]
        out_keys, out_pos, _, _ = _for(_index(0), _index(n), inits, step)
        return out_keys, out_pos

    # -- random tiles ----------------------------------------------------------------------------------------
    def lower_tile_random(self, op):
        """Warp's tile_randi / tile_randf on one lane (native tile.h): s = rand_pcg(state), then a loop over the
        elements in row-major order, each advancing s = rand_pcg(s) (rand.h: randi, randf and their ranges)."""
        kind = ir.StringAttr(op.attributes["kind"]).value
        state, bounds = op.operands[0], list(op.operands)[1:]
        t = tensor_type(self.result_types[0])
        shape, dtype = list(t.shape), t.element_type
        i32 = ir.IntegerType.get_signless(32)
        total = 1
        for n in shape:
            total *= n

        def c(n):
            return arith.ConstantOp(i32, n - (1 << 32) if n >= 1 << 31 else n).result

        def pcg(x):
            b = arith.AddIOp(arith.MulIOp(x, c(747796405)).result, c(2891336453)).result
            shift = arith.AddIOp(arith.ShRUIOp(b, c(28)).result, c(4)).result
            mixed = arith.MulIOp(arith.XOrIOp(arith.ShRUIOp(b, shift).result, b).result, c(277803737)).result
            return arith.XOrIOp(arith.ShRUIOp(mixed, c(22)).result, mixed).result

        def at(flat):
            return _unravel(flat, shape)

        def value_of(s):
            if kind == "randi":
                if not bounds:
                    return s
                lo, hi = bounds
                return arith.AddIOp(arith.RemUIOp(s, arith.SubIOp(hi, lo).result).result, lo).result
            u = arith.MulFOp(arith.UIToFPOp(dtype, arith.ShRUIOp(s, c(8)).result).result,
                             arith.ConstantOp(dtype, 1.0 / 16777216.0).result).result
            if not bounds:
                return u
            lo, hi = bounds
            return arith.AddFOp(arith.MulFOp(arith.SubFOp(hi, lo).result, u).result, lo).result

        def step(i, carried):
            out, s = carried
            s = pcg(s)
            return [self.tensor.InsertOp(value_of(s), out, at(i)).result, s]

        init = self.tensor.EmptyOp(shape, dtype).result
        state = wb.cast(state, i32)  # the uint32 state's bits (warp.cast: same width)
        return [_for(_index(0), _index(total), [init, pcg(state)], step)[0]]

    def lower_tile_reshape(self, op):
        return [self.reshape(op)]

    def lower_tile_reshape_composite(self, op):
        return [self.reshape(op)]

    def reshape(self, op):
        """Element i of the result (row-major) is element i of the source."""
        source, source_t, result_t = op.operands[0], self.operand_types[0], self.result_types[0]
        src_shape, out_shape = element_of(source_t)[0], element_of(result_t)[0]

        def element_at(ivs):
            return self.element(source, source_t, _unravel(_ravel(ivs, out_shape), src_shape))

        return self.generate_elements(result_t, element_at)

    def lower_tile_spread(self, op):
        result = tensor_type(op.results[0].type)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        rank = result.rank
        maps = [_map(rank, [d for d in range(rank) if d != axis]), ir.AffineMap.get_identity(rank)]
        return [self.generic(result, [op.operands[0]], maps, _parallel(rank), body=lambda a: [a[0]]).results[0]]

    def lower_tile_matmul(self, op):
        a, b, acc = op.operands
        dtype = ir.RankedTensorType(acc.type).element_type
        # dimensions (m, k, n): n innermost, contiguous in b and acc, so the loop over it vectorises; each
        # acc[m, n] still adds its products in increasing k
        maps = [_map(3, [0, 1]), _map(3, [1, 2]), _map(3, [0, 2])]

        floats = all(ir.RankedTensorType(v.type).element_type == dtype for v in (a, b)) and \
            isinstance(dtype, (ir.F32Type, ir.F64Type))

        def body(args):
            x, y, c = args
            if floats:  # arith, which linalg's vectoriser reads as a contraction; `contract`: each product
                # fused with its addition, as in Warp's CPU build (clang, fuse_fp) and the vectorised kernel
                contract = ir.Attribute.parse("#arith.fastmath<contract>")
                return [arith.AddFOp(c, arith.MulFOp(x, y, fastmath=contract).result, fastmath=contract).result]
            if x.type != dtype:
                x, y = wb.cast(x, dtype), wb.cast(y, dtype)
            return [wb.builtin("add", [c, wb.builtin("mul", [x, y], dtype)], dtype)]

        op2 = self.generic(None, [a, b], maps, _iterators(["parallel", "reduction", "parallel"]), init=acc, body=body)
        if floats:  # for warp-cpu-vectorize-tile-matmul
            op2.operation.attributes[MATMUL_ATTR] = ir.UnitAttr.get()
        return [op2.results[0]]

    def lower_tile_transpose(self, op):
        result = tensor_type(op.results[0].type)
        maps = [_map(2, [1, 0]), ir.AffineMap.get_identity(2)]
        return [self.generic(result, [op.operands[0]], maps, _parallel(2), body=lambda a: [a[0]]).results[0]]

    def lower_tile_broadcast(self, op):
        result = tensor_type(op.results[0].type)
        source = ir.RankedTensorType(op.operands[0].type)
        rank, lead = result.rank, result.rank - source.rank
        exprs = [ir.AffineConstantExpr.get(0) if n == 1 and result.shape[lead + k] != 1 else ir.AffineDimExpr.get(lead + k)
                 for k, n in enumerate(source.shape)]
        maps = [ir.AffineMap.get(rank, 0, exprs), ir.AffineMap.get_identity(rank)]
        return [self.generic(result, [op.operands[0]], maps, _parallel(rank), body=lambda a: [a[0]]).results[0]]


def _for(lo, hi, inits, body) -> list:
    """scf.for over [lo, hi) (index) carrying `inits`; `body(iv, carried)` returns the next values."""
    loop = scf.ForOp(lo, hi, _index(1), list(inits))
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(body(loop.induction_variable, list(loop.inner_iter_args)))
    return list(loop.results)


def _clone(ops, mapping: dict) -> None:
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


def _inside(arr, positions) -> ir.Value:
    """i1: every position below its dimension's extent (Warp's bounds_check checks the upper bounds)."""
    inside = None
    for d, p in enumerate(positions):
        below = arith.CmpIOp(arith.CmpIPredicate.slt, p, wb.array_dim(arr, d)).result
        inside = below if inside is None else arith.AndIOp(inside, below).result
    return inside


def _ravel(ivs, shape) -> ir.Value:
    """The row-major flat index (index type) of the tile indices `ivs` in `shape`."""
    flat = None
    for iv, n in zip(ivs, shape):
        flat = iv if flat is None else arith.AddIOp(arith.MulIOp(flat, _index(n)).result, iv).result
    return flat


def _view_positions(offsets, steps, ivs) -> list:
    """The tile's indices of a view's element `ivs` (index values): offset_d + step_d * j over the kept
    dimensions, offset_d over the dropped ones (step 0)."""
    kept = iter(ivs)
    return [o if s == 0 else arith.AddIOp(o, _scaled(next(kept), s)).result for o, s in zip(offsets, steps)]


def _scaled(j, step: int):
    return j if step == 1 else arith.MulIOp(j, _index(step)).result


def _wrapped_index(i, extent: int) -> ir.Value:
    """An index tile's element as an index: a negative one counts from the end (numpy's, Warp's t[indices])."""
    i = arith.IndexCastOp(ir.IndexType.get(), i).result
    negative = arith.CmpIOp(arith.CmpIPredicate.slt, i, _index(0)).result
    return arith.SelectOp(negative, arith.AddIOp(i, _index(extent)).result, i).result


def _unravel(flat, shape) -> list:
    """The tile indices of the row-major flat index `flat` (index type, below the shape's size) in `shape`: the
    outermost index is what the inner ones leave (no remainder to take)."""
    idx = []
    for n in reversed(shape[1:]):
        idx.append(arith.RemUIOp(flat, _index(n)).result)
        flat = arith.DivUIOp(flat, _index(n)).result
    return [flat, *reversed(idx)] if shape else []


def load_or_zero(arr, positions, dtype) -> ir.Value:
    """arr[positions], or zero where a position is past its dimension's extent (tile_load's rule)."""
    branch = scf.IfOp(_inside(arr, positions), [dtype], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([wb.load(arr, positions)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_zero(dtype)])
    return branch.results[0]


def _loop_nest(shape, body, ivs=()):
    """scf.for loops over `shape` (row-major) at the insertion point; `body(ivs)` in the innermost. A dimension
    of extent 1 is index 0, no loop (a reduction's tile of shape (1,) on its way to an atomic: a loop's variable
    would make the atomic's address look different per thread to warp-cpu-interchange-loops). Returns the
    outermost loop, None without loops."""
    if len(ivs) == len(shape):
        body(list(ivs))
        return None
    if shape[len(ivs)] == 1:
        return _loop_nest(shape, body, (*ivs, _index(0)))
    loop = scf.ForOp(_index(0), _index(shape[len(ivs)]), _index(1))
    with ir.InsertionPoint(loop.body):
        _loop_nest(shape, body, (*ivs, loop.induction_variable))
        scf.YieldOp([])
    return loop


def _mark_write(op, name: str) -> None:
    """Marks the outermost op of a tile write's nest (TILE_WRITE_ATTR) with the tile op's name."""
    op.operation.attributes[TILE_WRITE_ATTR] = ir.StringAttr.get(name[len("warp."):])


def _retype_tiles(root) -> None:
    """Block arguments and results of the ops that merely carry tiles (scf.for, scf.if, func.call) as tensors."""

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    if is_tile_type(a.type):
                        a.set_type(tensor_type(a.type))
        if not op.name.startswith("warp."):
            for r in op.results:
                if is_tile_type(r.type):
                    r.set_type(tensor_type(r.type))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)


class ConvertTilesToLinalg(registry.ConvertTilesToLinalg):
    def run(self, module):
        ops = ops_named(module, lambda n: n.startswith("warp."))
        ops = [op for op in ops if _has_tiles(op)]
        if not ops:
            return
        for f in ops_named(module, {"func.func"}):
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            if any(is_tile_type(t) for t in list(ftype.inputs) + list(ftype.results)):
                raise PassError(f"function '{ir.StringAttr(f.attributes['sym_name']).value}' takes or returns a "
                                f"tile: inline it first (warp-inline)")
        signatures = [([v.type for v in op.operands], [r.type for r in op.results]) for op in ops]
        one_lane = next((op.name[len("warp."):] for op in ops if op.name.startswith("warp.tile_")
                         and op.name[len("warp."):] not in COOPERATIVE_TILE_OPS), None)
        if one_lane is not None and ONE_LANE_ATTR not in module.attributes:
            module.attributes[ONE_LANE_ATTR] = ir.StringAttr.get(one_lane)
        with module.location:
            _retype_tiles(module)
        lowering = _Lowering(self.row_vectors)
        for op, signature in zip(ops, signatures):
            with ir.InsertionPoint(op), op.location:
                new = lowering.lower(op, signature)
            for r, v in zip(op.results, new):
                r.replace_all_uses_with(v)
            op.erase()
