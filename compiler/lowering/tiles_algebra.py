"""convert-warp-tiles-to-linalg's lowerings of linear algebra and sorting: tile_matmul, tile_cholesky, tile_solve, tile_triangle, tile_dft, tile_sort (methods of
TileLowering; the tile table, compiler/tiles/table.py, names each op's)."""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith

from ..dialects.warp import builders as wb
from .tile_lowering import (MATMUL_ATTR, TileLowering, affine_map, constant_of, element_of, for_loop, index_const,
                            iterator_kinds, ravel_index, tensor_type, unravel_index, zero_of)


class AlgebraLowering(TileLowering):
    # -- linear algebra: sequential loops over the tensors (one lane does the whole factorisation) ---------------
    def lower_tile_cholesky(self, op):
        """Cholesky-Banachiewicz, column by column: L[j, j] = sqrt(A[j, j] - sum_k<j L[j, k]^2), then
        L[i, j] = (A[i, j] - sum_k<j L[i, k] L[j, k]) / L[j, j] below it. The upper factor is the same
        computation on A's upper triangle (A[j, i]), its results stored transposed."""
        a = op.a
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
            return for_loop(index_const(0), j, [start], lambda k, acc: [wb.builtin(
                "sub", [acc[0], wb.builtin("mul", [read_l(fac, i, k), read_l(fac, j, k)], dtype)], dtype)])[0]

        def column(j, state):
            fac = state[0]
            d = wb.builtin("sqrt", [dot_down(fac, j, j, read_a(j, j))], dtype)
            fac = write(fac, d, j, j)
            below = arith.AddIOp(j, index_const(1)).result

            def row(i, inner):
                v = wb.builtin("div", [dot_down(inner[0], i, j, read_a(i, j)), d], dtype)
                return [write(inner[0], v, i, j)]

            return for_loop(below, index_const(n), [fac], row)

        zero = self.tensor.SplatOp(t, zero_of(dtype), []).result
        return for_loop(index_const(0), index_const(n), [zero], column)

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
                i = r if forward else arith.SubIOp(index_const(n - 1), r).result
                lo, hi = (index_const(0), i) if forward else (arith.AddIOp(i, index_const(1)).result, index_const(n))
                s = for_loop(lo, hi, [ex(y, at(i)).result], lambda k, acc: [wb.builtin(
                    "sub", [acc[0], wb.builtin("mul", [read_m(i, k), ex(x, at(k)).result], dtype)], dtype)])[0]
                return [self.tensor.InsertOp(wb.builtin("div", [s, read_m(i, i)], dtype), x, at(i)).result]

            return for_loop(index_const(0), index_const(n), state, row)

        zero = self.tensor.SplatOp(yt, zero_of(dtype), []).result
        if columns is None:
            return solve_column(None, [zero])
        return for_loop(index_const(0), index_const(columns), [zero], lambda c, state: solve_column(c, state))

    def lower_tile_dft_composite(self, op):
        """tile_fft / tile_ifft along the last dimension (N): a radix-2 FFT when N is a power of two (O(N log N)),
        else the DFT as its sum (O(N^2)). Unnormalised both ways, as Warp's."""
        shape = element_of(self.operand_types[0])[0]
        n = shape[-1]
        if n >= 2 and n & (n - 1) == 0:
            return [self._radix2_fft(op, n)]
        return [self._dft_sum(op, n)]

    def _radix2_fft(self, op, n):
        """Iterative Cooley-Tukey: the rows permuted into bit-reversed order, then log2 N passes of N/2 butterflies
        each (half-span m = 1, 2, ..., N/2): a = x[p] + w x[p + m], b = x[p] - w x[p + m], w = exp(-+2 pi i r/2m),
        r = p mod m. The twiddles are a constant table of exp(-+2 pi i k/N), k < N/2 (cos/sin in double, then
        rounded once to the tile's float type), so no pass calls a transcendental; each pass is one scf.for over the
        tile's butterflies (the leading dimensions' rows times N/2) carrying the tensor, updated in place."""
        tile, tile_t = op.tile, self.operand_types[0]
        shape, _, c = element_of(tile_t)
        dtype = c.dtype
        inverse = bool(ir.IntegerAttr(op.attributes["inverse"]).value)
        lead = list(shape[:-1])
        rows = 1
        for d in lead:
            rows *= d
        ex = self.tensor.ExtractOp
        bits = n.bit_length() - 1
        reversed_index = [int(format(k, f"0{bits}b")[::-1], 2) for k in range(n)]
        i32 = ir.IntegerType.get_signless(32)
        table_t = ir.RankedTensorType.get([n], i32)
        permutation = arith.ConstantOp(table_t, ir.DenseElementsAttr.get(
            [ir.IntegerAttr.get(i32, r) for r in reversed_index], type=table_t)).result
        sign = 1.0 if inverse else -1.0
        twiddle_t = ir.RankedTensorType.get([n // 2, 2], dtype)
        twiddle_values = []
        for k in range(n // 2):
            angle = sign * 2.0 * math.pi * k / n
            twiddle_values += [math.cos(angle), math.sin(angle)]
        twiddles = arith.ConstantOp(twiddle_t, ir.DenseElementsAttr.get(
            [ir.FloatAttr.get(dtype, v) for v in twiddle_values], type=twiddle_t)).result

        def permuted(ivs):  # ivs: the tile index, then the component
            source = arith.IndexCastOp(ir.IndexType.get(), ex(permutation, [ivs[len(shape) - 1]]).result).result
            return ex(tile, ivs[:len(shape) - 1] + [source, ivs[len(shape)]]).result

        data = self.generate(tensor_type(self.result_types[0]), permuted)
        zero, one = index_const(0), index_const(1)
        mul = lambda a, b: arith.MulFOp(a, b).result  # noqa: E731
        add = lambda a, b: arith.AddFOp(a, b).result  # noqa: E731
        sub = lambda a, b: arith.SubFOp(a, b).result  # noqa: E731
        half = 1
        while half < n:
            stride = n // (2 * half)  # the twiddle table's step at this half-span

            def butterfly(b, carried, half=half, stride=stride):
                x = carried[0]
                row = arith.DivUIOp(b, index_const(n // 2)).result
                j = arith.RemUIOp(b, index_const(n // 2)).result
                r = arith.RemUIOp(j, index_const(half)).result
                p = arith.AddIOp(arith.MulIOp(arith.DivUIOp(j, index_const(half)).result,
                                              index_const(2 * half)).result, r).result
                q = arith.AddIOp(p, index_const(half)).result
                at = unravel_index(row, lead) if lead else []
                k = arith.MulIOp(r, index_const(stride)).result
                wr, wi = ex(twiddles, [k, zero]).result, ex(twiddles, [k, one]).result
                pr, pi = ex(x, at + [p, zero]).result, ex(x, at + [p, one]).result
                qr, qi = ex(x, at + [q, zero]).result, ex(x, at + [q, one]).result
                tr, ti = sub(mul(wr, qr), mul(wi, qi)), add(mul(wr, qi), mul(wi, qr))
                for value, where in ((add(pr, tr), [p, zero]), (add(pi, ti), [p, one]),
                                     (sub(pr, tr), [q, zero]), (sub(pi, ti), [q, one])):
                    x = self.tensor.InsertOp(value, x, at + where).result
                return [x]

            data = for_loop(zero, index_const(rows * (n // 2)), [data], butterfly)[0]
            half *= 2
        return data

    def _dft_sum(self, op, n):
        """X[..., k] = sum_j x[..., j] (cos a + i sin a), a = -+2 pi ((k j) mod N) / N: the DFT as its sum, j in
        increasing order, the twiddle's angle reduced mod N first (no loss for large k j)."""
        tile, tile_t = op.tile, self.operand_types[0]
        shape, _, c = element_of(tile_t)
        dtype = c.dtype
        sign = 1.0 if ir.IntegerAttr(op.attributes["inverse"]).value else -1.0
        ex = self.tensor.ExtractOp
        scale = constant_of(dtype, sign * 2.0 * math.pi / n)

        def element(ivs):  # ivs: the tile index, then the component (0: real, 1: imaginary)
            lead, k, comp = list(ivs[:len(shape) - 1]), ivs[len(shape) - 1], ivs[len(shape)]

            def term(j, acc):
                kj = arith.RemUIOp(arith.MulIOp(k, j).result, index_const(n)).result
                angle = wb.builtin("mul", [scale, arith.SIToFPOp(dtype, arith.IndexCastOp(
                    ir.IntegerType.get_signless(64), kj).result).result], dtype)
                cs, sn = wb.builtin("cos", [angle], dtype), wb.builtin("sin", [angle], dtype)
                re, im = ex(tile, lead + [j, index_const(0)]).result, ex(tile, lead + [j, index_const(1)]).result
                mul = lambda a, b: wb.builtin("mul", [a, b], dtype)  # noqa: E731
                add = lambda a, b: wb.builtin("add", [a, b], dtype)  # noqa: E731
                sub = lambda a, b: wb.builtin("sub", [a, b], dtype)  # noqa: E731
                return [add(acc[0], sub(mul(re, cs), mul(im, sn))), add(acc[1], add(mul(re, sn), mul(im, cs)))]

            re, im = for_loop(index_const(0), index_const(n), [zero_of(dtype), zero_of(dtype)], term)
            first = arith.CmpIOp(arith.CmpIPredicate.eq, comp, index_const(0)).result
            return arith.SelectOp(first, re, im).result

        return self.generate(tensor_type(self.result_types[0]), element)

    def lower_tile_triangle(self, op):
        tile = op.tile
        upper = ir.IntegerAttr(op.attributes["upper"]).value
        half = ir.IntegerAttr(op.attributes["half_diagonal"]).value
        dtype = ir.RankedTensorType(tile.type).element_type

        def element(ivs):
            i, j = ivs
            keep = arith.CmpIOp(arith.CmpIPredicate.uge if upper else arith.CmpIPredicate.ule, j, i).result
            v = self.tensor.ExtractOp(tile, [i, j]).result
            if half:
                diagonal = arith.CmpIOp(arith.CmpIPredicate.eq, i, j).result
                v = arith.SelectOp(diagonal, wb.builtin("mul", [v, constant_of(dtype, 0.5)], dtype), v).result
            return arith.SelectOp(keep, v, zero_of(dtype)).result

        return [self.generate(ir.RankedTensorType(tile.type), element)]

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
            return unravel_index(flat, shape)

        def ravel(ivs):
            return ravel_index(ivs, shape)

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
        last = index_const(n - 1)

        def minimum(a, b):
            return arith.MinUIOp(a, b).result

        def step(k, carried):
            out_keys, out_pos, i, j = carried
            lo = arith.MulIOp(arith.DivUIOp(k, index_const(2 * width)).result, index_const(2 * width)).result
            mid = minimum(arith.AddIOp(lo, index_const(width)).result, index_const(n))
            hi = minimum(arith.AddIOp(lo, index_const(2 * width)).result, index_const(n))
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
            step_i = arith.SelectOp(take_left, index_const(1), index_const(0)).result
            step_j = arith.SelectOp(take_left, index_const(0), index_const(1)).result
            return [self.tensor.InsertOp(key, out_keys, [k]).result, self.tensor.InsertOp(pos, out_pos, [k]).result,
                    arith.AddIOp(i, step_i).result, arith.AddIOp(j, step_j).result]

        inits = [self.tensor.EmptyOp([n], dtype).result, self.tensor.EmptyOp([n], ir.IndexType.get()).result,
                 index_const(0), index_const(0)]
        out_keys, out_pos, _, _ = for_loop(index_const(0), index_const(n), inits, step)
        return out_keys, out_pos

    def lower_tile_matmul(self, op):
        a, b, acc = op.operands
        dtype = ir.RankedTensorType(acc.type).element_type
        # dimensions (m, k, n): n innermost, contiguous in b and acc, so the loop over it vectorises; each
        # acc[m, n] still adds its products in increasing k
        maps = [affine_map(3, [0, 1]), affine_map(3, [1, 2]), affine_map(3, [0, 2])]

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

        op2 = self.generic(None, [a, b], maps, iterator_kinds(["parallel", "reduction", "parallel"]), init=acc, body=body)
        if floats:  # for warp-cpu-vectorize-tile-matmul
            op2.operation.attributes[MATMUL_ATTR] = ir.UnitAttr.get()
        return [op2.results[0]]
