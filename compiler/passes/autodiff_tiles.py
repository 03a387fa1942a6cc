"""warp-autodiff's adjoints of the tile ops (frontend/tiles.py makes them): each as tile ops, an element-wise
builtin on tiles as a warp.tile_map of its scalar rule. ReverseBuilder (autodiff.py) mixes TileAdjoints in; the tile
table (builtins/tile_table.py) names each op's adjoint_<op> method."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..builtins.derivatives import NOT_DIFFERENTIABLE, Expansion, V, rule_of
from ..dialects.warp import builders as wb, is_tile_type, tile_params, tile_type
from ..dialects.warp import composite as wc
from ..dialects.warp.ops import MAP_ARITY
from .autodiff_ir import body_ops, clone_ops, free_values, is_constant, is_diff, terminator, where, zero
from .registry import PassError


class TileAdjoints:
    """The reverse of the tile ops (`self`: the ReverseBuilder)."""

    # -- tiles (frontend/tiles.py): adjoints as tile ops, element-wise ones as a warp.tile_map of the scalar rule ----
    def tile_builtin(self, op, mapping, adj):
        """warp.<builtin> of tiles (and scalars): a warp.tile_map whose body runs the builtin's scalar rule on each
        element; a scalar operand's adjoint is the sum of its elements' contributions."""
        out = op.results[0]
        if out not in adj:
            return
        name = op.name[len("warp."):]
        operands = list(op.operands)
        if name == "cast":  # tile_astype: float to float carries the adjoint back, as Warp
            src = operands[0]
            if is_diff(src.type):
                self.accumulate(adj, src, wb.create("cast", adj[out], results=[src.type]).result)
            return
        elements = [tile_params(v.type)[0] if is_tile_type(v.type) else v.type for v in operands]
        if any(wc.composite(e) is not None and wc.composite(e).kind == "struct" for e in elements):
            # a + b, a - b of tiles of structs (field by field)
            a, b = operands
            self.accumulate(adj, a, adj[out])
            self.accumulate(adj, b, adj[out] if name == "add" else wb.builtin("sub", [zero(b.type), adj[out]], b.type))
            return
        rule = rule_of(name, elements)
        if rule is NOT_DIFFERENTIABLE:
            return
        if rule is None or isinstance(rule, Expansion):
            raise PassError(f"{where(op)}: cannot differentiate '{name}' of tiles: its derivative rule is not an "
                            f"element-wise one mlwarp maps over tiles")
        shape = tile_params(out.type)[1]
        wanted = [k for k, (v, t) in enumerate(zip(operands, elements)) if is_diff(t) and not is_constant(v)]
        if not wanted:
            return
        tiles = [k for k, v in enumerate(operands) if is_tile_type(v.type)]
        inputs = [mapping.get(operands[k], operands[k]) for k in tiles] + [mapping[out], adj[out]]
        result_types = [tile_type(elements[k], shape) for k in wanted]

        def body(args):
            by_operand = dict(zip(tiles, args))
            values = [V(by_operand[k]) if k in by_operand else V(mapping.get(v, v)) for k, v in enumerate(operands)]
            grads = rule.vjp(V(args[-1]), values, V(args[-2]))
            return [(grads[k].value if isinstance(grads[k], V) else grads[k]) if grads[k] is not None
                    else zero(elements[k]) for k in wanted]

        mapped = tile_map(inputs, result_types, body)
        for k, g in zip(wanted, mapped):
            v = operands[k]
            if is_tile_type(v.type):
                self.accumulate(adj, v, g)
            else:
                total = wb.tile_reduce(g, "add", tile_type(elements[k], (1,)))
                self.accumulate(adj, v, tile_element(total, 0))

    def adjoint_tile_map(self, op, mapping, adj):
        """The body reversed in a tile_map of its own: its arguments the inputs' elements and the results'
        adjoints' elements; it yields the inputs' elements' adjoints."""
        results = list(op.results)
        if not any(r in adj for r in results):
            return
        src = op.regions[0].blocks[0]
        # values from outside the function (a struct or scalar it closes over): each element's adjoint of one,
        # summed over the tile, is its adjoint (as a scalar operand's of a builtin on tiles)
        free = free_values(op)
        if any(is_tile_type(v.type) for v in free):
            raise PassError(f"{where(op)}: cannot differentiate a tile_map whose function reads a tile from outside it")
        inputs = list(op.operands)
        wanted = [k for k, v in enumerate(inputs) if is_diff(v.type)]
        if not wanted and not free:
            return
        shape = tile_params(results[0].type)[1]
        ins = [mapping.get(v, v) for v in inputs] + [self.adj_or_zero(adj, r) for r in results]

        def body(args):
            local_map = dict(mapping)
            for a, b in zip(src.arguments, args[:len(inputs)]):
                local_map[a] = b
            clone_ops(body_ops(src), local_map)
            local_adj = {}
            for y, g in zip(terminator(src).operands, args[len(inputs):]):
                self.accumulate(local_adj, y, g)
            self.reverse(body_ops(src), local_map, local_adj)
            return [self.adj_or_zero(local_adj, src.arguments[k]) for k in wanted] + \
                [self.adj_or_zero(local_adj, v) for v in free]

        mapped = tile_map(ins, [inputs[k].type for k in wanted] + [tile_type(v.type, shape) for v in free], body)
        for k, g in zip(wanted, mapped):
            self.accumulate(adj, inputs[k], g)
        for v, g in zip(free, mapped[len(wanted):]):
            self.accumulate(adj, v, tile_element(wb.tile_reduce(g, "add", tile_type(v.type, (1,))), 0))

    def adjoint_tile_load(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            arr, offsets = op.opview.array, [mapping.get(v, v) for v in op.opview.offsets]
            wb.create("tile_atomic_add", self.adj_array(op, arr, mapping), adj[out], offsets)

    def adjoint_tile_store(self, op, mapping, adj):
        arr, tile, offsets = op.opview.array, op.opview.tile, [mapping.get(v, v) for v in op.opview.offsets]
        if not is_diff(tile.type):
            return
        target = self.adj_array(op, arr, mapping)
        self.accumulate(adj, tile, wb.create("tile_load", target, offsets, results=[tile.type]).result)
        consumes = self.consumes(arr)
        if consumes is not None:  # the stored region's adjoint ends here, as Warp's tile_store
            guard = scf.IfOp(consumes, [], has_else=False)
            with ir.InsertionPoint(guard.then_block):
                wb.create("tile_store", target, zero(tile.type), offsets)
                scf.YieldOp([])

    def adjoint_tile_load_indexed(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            arr, indices = op.opview.array, mapping.get(op.opview.indices, op.opview.indices)
            offsets = [mapping.get(v, v) for v in op.opview.offsets]
            i64 = ir.IntegerType.get_signless(64)
            wb.create("tile_store_indexed", self.adj_array(op, arr, mapping), indices, adj[out], offsets,
                      attributes={"axis": op.attributes["axis"], "atomic": ir.IntegerAttr.get(i64, 1)})

    def adjoint_tile_store_indexed(self, op, mapping, adj):
        arr, tile = op.opview.array, op.opview.tile
        if is_diff(tile.type):
            indices = mapping.get(op.opview.indices, op.opview.indices)
            offsets = [mapping.get(v, v) for v in op.opview.offsets]
            gathered = wb.create("tile_load_indexed", self.adj_array(op, arr, mapping), indices, offsets,
                                 results=[tile.type], attributes={"axis": op.attributes["axis"]}).result
            self.accumulate(adj, tile, gathered)

    def adjoint_tile_atomic_add(self, op, mapping, adj):
        arr, tile, offsets = op.opview.array, op.opview.tile, [mapping.get(v, v) for v in op.opview.offsets]
        if is_diff(tile.type):
            target = self.adj_array(op, arr, mapping)
            self.accumulate(adj, tile, wb.create("tile_load", target, offsets, results=[tile.type]).result)

    def adjoint_tile_full(self, op, mapping, adj):
        out, value = op.results[0], op.opview.value
        if out in adj and is_diff(value.type) and not is_constant(value):
            total = wb.tile_reduce(adj[out], "add", tile_type(value.type, (1,)))
            self.accumulate(adj, value, tile_element(total, 0))

    def adjoint_tile_arange(self, op, mapping, adj):
        pass  # start and step are constants (the frontend folds them)

    def adjoint_tile_sync(self, op, mapping, adj):
        """A barrier of Warp's CPU lanes (warp-cpu-block-lanes): the reverse sweep meets at it too, so the adjoints of
        what the lanes did after it are all in before any lane's adjoint of what came before (a lane reading the
        adjoint of a tile element every lane added to)."""
        wb.create("tile_sync")

    def adjoint_tile_extract(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile, indices = op.opview.tile, [mapping.get(v, v) for v in op.opview.indices]
            self.accumulate(adj, tile, wb.create("tile_insert", zero(tile.type), adj[out], indices,
                                                 results=[tile.type]).result)

    def adjoint_tile_insert(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile, value, indices = op.opview.tile, op.opview.value, [mapping.get(v, v) for v in op.opview.indices]
            added = accumulated(op)
            if added is not None:  # t[i] = t[i] + v (tile_scatter_add): t + v e_i, whose adjoint leaves t's alone
                self.accumulate(adj, tile, adj[out])
                self.accumulate(adj, added, wb.create("tile_extract", adj[out], indices,
                                                      results=[added.type]).result)
                return
            self.accumulate(adj, tile, wb.create("tile_insert", adj[out], zero(value.type), indices,
                                                 results=[tile.type]).result)
            self.accumulate(adj, value, wb.create("tile_extract", adj[out], indices, results=[value.type]).result)

    def adjoint_tile_reduce(self, op, mapping, adj):
        out = op.results[0]
        kind = ir.StringAttr(op.attributes["kind"]).value
        if out not in adj or kind in ("argmax", "argmin"):
            return
        tile = op.opview.tile
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        if kind in ("max", "min", "mul"):
            self.accumulate(adj, tile, reduction_adjoint(mapping.get(tile, tile), adj[out], kind, axis))
            return
        if kind != "add":
            raise PassError(f"{where(op)}: cannot differentiate a tile reduction by '{kind}' yet")
        if axis < 0:
            spread = wb.create("tile_broadcast", adj[out], results=[tile.type]).result
        else:
            spread = wb.create("tile_spread", adj[out], results=[tile.type],
                               attributes={"axis": op.attributes["axis"]}).result
        self.accumulate(adj, tile, spread)

    def adjoint_tile_matmul(self, op, mapping, adj):
        out = op.results[0]
        if out not in adj:
            return
        a, b, acc = op.operands
        ma, mb = mapping.get(a, a), mapping.get(b, b)
        g = adj[out]

        def product(x, y, like):
            return wb.create("tile_matmul", x, y, zero(like), results=[like]).result

        def transposed(t):
            dtype, (m, n) = tile_params(t.type)
            return wb.create("tile_transpose", t, results=[tile_type(dtype, (n, m))]).result

        if is_diff(a.type):
            self.accumulate(adj, a, product(g, transposed(mb), a.type))
        if is_diff(b.type):
            self.accumulate(adj, b, product(transposed(ma), g, b.type))
        self.accumulate(adj, acc, g)

    def adjoint_tile_dft(self, op, mapping, adj):
        """The adjoint of the unnormalised DFT is the DFT of the other sign (Warp: the inverse FFT of the incoming
        gradient, not divided by N)."""
        out = op.results[0]
        if out in adj:
            tile = op.opview.tile
            flipped = 1 - ir.IntegerAttr(op.attributes["inverse"]).value
            self.accumulate(adj, tile, wb.create("tile_dft", adj[out], results=[tile.type], attributes={
                "inverse": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), flipped)}).result)

    def adjoint_tile_solve(self, op, mapping, adj):
        """x = M^-1 y (M or its transpose triangular): adj_y = M^-T adj_x (the solve of the transposed form), and
        adj_M = -(adj_y x^T) (transposed forms: -(x adj_y^T)) on the triangle the solve reads."""
        out = op.results[0]
        if out not in adj:
            return
        m, y = op.operands
        form = ir.StringAttr(op.attributes["form"]).value
        flipped = {"lower": "lower_t", "lower_t": "lower", "upper": "upper_t", "upper_t": "upper"}[form]
        mm, x = mapping.get(m, m), mapping[out]
        adj_y = wb.create("tile_solve", mm, adj[out], results=[y.type],
                          attributes={"form": ir.StringAttr.get(flipped)}).result
        self.accumulate(adj, y, adj_y)
        if not is_diff(m.type):
            return
        dtype, (n, _) = tile_params(m.type)

        def as_matrix(t):  # (n,) -> (n, 1); (n, k) as it is
            shape = tile_params(t.type)[1]
            return t if len(shape) == 2 else wb.create("tile_reshape", t, results=[tile_type(dtype, (n, 1))]).result

        def transposed(t):
            _, (r, c) = tile_params(t.type)
            return wb.create("tile_transpose", t, results=[tile_type(dtype, (c, r))]).result

        a, b = (as_matrix(adj_y), as_matrix(x)) if form in ("lower", "upper") else (as_matrix(x), as_matrix(adj_y))
        outer = wb.create("tile_matmul", a, transposed(b), zero(m.type), results=[m.type]).result
        kept = triangle(outer, upper=form.startswith("upper"))
        self.accumulate(adj, m, wb.builtin("neg", [kept], m.type))

    def adjoint_tile_triangle(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            self.accumulate(adj, op.opview.tile, wb.create("tile_triangle", adj[out], results=[out.type],
                                                           attributes=dict(op.attributes)).result)

    def adjoint_tile_cholesky(self, op, mapping, adj):
        """Murray's rule for A = L L^T read from A's lower triangle: S = L^-T Phi(L^T adj_L) L^-1, and the
        lower triangle's adjoint Phi(S + S^T) (Phi: the lower triangle, its diagonal halved); the upper fill
        is the same on the transposes."""
        out = op.results[0]
        if out not in adj:
            return
        a = op.opview.a
        upper = ir.StringAttr(op.attributes["fill"]).value == "upper"

        def t(v):
            return wb.create("tile_transpose", v, results=[v.type]).result

        factor, g = mapping[out], adj[out]
        if upper:
            factor, g = t(factor), t(g)
        phi = triangle(wb.create("tile_matmul", t(factor), g, zero(a.type), results=[a.type]).result, half=True)

        def solve_lower_t(rhs):  # L^-T rhs
            return wb.create("tile_solve", factor, rhs, results=[a.type],
                             attributes={"form": ir.StringAttr.get("lower_t")}).result

        x = solve_lower_t(phi)  # L^-T Phi
        s = t(solve_lower_t(t(x)))  # (L^-T X^T)^T = X L^-1
        grad = triangle(wb.builtin("add", [s, t(s)], a.type), half=True)
        self.accumulate(adj, a, t(grad) if upper else grad)

    def adjoint_tile_view(self, op, mapping, adj):
        """The view's adjoint lands in its region of the tile's (zero elsewhere)."""
        out = op.results[0]
        if out in adj:
            tile, offsets = op.opview.tile, [mapping.get(v, v) for v in op.opview.offsets]
            steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))
            self.accumulate(adj, tile, wb.tile_insert_view(zero(tile.type), adj[out], offsets, steps))

    def adjoint_tile_insert_view(self, op, mapping, adj):
        """The tile's adjoint is the result's outside the replaced region, the part's is the region's."""
        out = op.results[0]
        if out in adj:
            tile, part = op.opview.tile, op.opview.part
            offsets = [mapping.get(v, v) for v in op.opview.offsets]
            steps = list(ir.DenseI64ArrayAttr(op.attributes["steps"]))
            self.accumulate(adj, tile, wb.tile_insert_view(adj[out], zero(part.type), offsets, steps))
            self.accumulate(adj, part, wb.tile_view(adj[out], offsets, part.type, steps))

    def adjoint_tile_gather(self, op, mapping, adj):
        """Each gathered element's adjoint goes back to the element it was read from (a repeated index adds)."""
        out = op.results[0]
        if out in adj:
            tile, indices = op.opview.tile, mapping.get(op.opview.indices, op.opview.indices)
            self.accumulate(adj, tile, wb.create("tile_gather_add", zero(tile.type), adj[out], indices,
                                                 results=[tile.type], attributes={"axis": op.attributes["axis"]}).result)

    def adjoint_tile_gather_add(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile, part, indices = op.opview.tile, op.opview.part, mapping.get(op.opview.indices, op.opview.indices)
            self.accumulate(adj, tile, adj[out])
            self.accumulate(adj, part, wb.create("tile_gather", adj[out], indices, results=[part.type],
                                                 attributes={"axis": op.attributes["axis"]}).result)

    def adjoint_tile_sort(self, op, mapping, adj):
        pass  # not differentiable (Warp's tile_sort: is_differentiable=False)

    def adjoint_tile_random(self, op, mapping, adj):
        pass  # random numbers: no derivative (Warp's tile_randf has no adjoint either)

    def adjoint_tile_reshape(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.opview.tile
            self.accumulate(adj, tile, wb.create("tile_reshape", adj[out], results=[tile.type]).result)

    def adjoint_tile_transpose(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.opview.tile
            self.accumulate(adj, tile, wb.create("tile_transpose", adj[out], results=[tile.type]).result)

    def adjoint_tile_broadcast(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.opview.tile
            self.accumulate(adj, tile, wb.create("tile_sum_to", adj[out], results=[tile.type]).result)

    def adjoint_tile_sum_to(self, op, mapping, adj):
        out = op.results[0]
        if out in adj:
            tile = op.opview.tile
            self.accumulate(adj, tile, wb.create("tile_broadcast", adj[out], results=[tile.type]).result)


def accumulated(insert) -> ir.Value | None:
    """`v` where the tile_insert writes `t[i] + v` back to `t[i]` (tile_scatter_add's update, the sum read nowhere
    else), else None. Its adjoint is then `t`'s unchanged (and `v`'s the element's): as a read of t[i] and a write
    over it, the adjoint would clear the element and add it back through the read, which Warp's CPU lanes, each
    adding to one element in turn, cannot thread from lane to lane."""
    tile, value = insert.operands[0], insert.operands[1]
    indices = list(insert.operands)[2:]
    add = value.owner
    if isinstance(add, ir.Block) or add.name != "warp.add" or len(list(value.uses)) != 1:
        return None
    old, v = add.operands
    read = old.owner
    if isinstance(read, ir.Block) or read.name != "warp.tile_extract" or read.operands[0] != tile or \
            list(read.operands)[1:] != indices or len(list(old.uses)) != 1:
        return None
    return v


def reduction_adjoint(tile: ir.Value, adjoint: ir.Value, kind: str, axis: int) -> ir.Value:
    """warp.tile_reduce_adjoint of a max, min or product: along `axis`, or (axis < 0) over every element, the
    tile seen as 1-d in row-major order."""
    dtype, shape = tile_params(tile.type)
    i64 = ir.IntegerType.get_signless(64)
    attrs = {"kind": ir.StringAttr.get(kind), "axis": ir.IntegerAttr.get(i64, max(axis, 0))}
    if axis >= 0:
        return wb.create("tile_reduce_adjoint", tile, adjoint, results=[tile.type], attributes=attrs).result
    n = 1
    for d in shape:
        n *= d
    flat_t = tile_type(dtype, (n,))
    flat = wb.create("tile_reshape", tile, results=[flat_t]).result if len(shape) > 1 else tile
    grad = wb.create("tile_reduce_adjoint", flat, adjoint, results=[flat_t], attributes=attrs).result
    return wb.create("tile_reshape", grad, results=[tile.type]).result if len(shape) > 1 else grad

def triangle(tile: ir.Value, upper: bool = False, half: bool = False) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    return wb.create("tile_triangle", tile, results=[tile.type], attributes={
        "upper": ir.IntegerAttr.get(i64, int(upper)), "half_diagonal": ir.IntegerAttr.get(i64, int(half))}).result

def tile_element(tile: ir.Value, index: int) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    return wb.create("tile_extract", tile, [arith.ConstantOp(i32, index).result],
                     results=[tile_params(tile.type)[0]]).result

def tile_map(inputs: list, result_types: list, body) -> list:
    """A warp.tile_map over `inputs` at the insertion point; `body(element arguments)` returns the yielded values."""
    if len(inputs) > MAP_ARITY:
        raise PassError(f"cannot differentiate a tile_map of more than {MAP_ARITY - 1} tiles")
    op = wb.tile_map(inputs, result_types)
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        yielded = body(list(block.arguments))
        ir.Operation.create("gpu.yield", operands=list(yielded))
    return list(op.results)
