"""The kernels of the FSAI preconditioner (fsai.py), made per matrix block type, scalar type and factor row
width: a row's support, local Cholesky factor and solution live in per-thread vectors and matrices of that width,
so their loops and types are fixed at compile time (Warp 1.19's warp/_src/optim/fsai.py, kernel for kernel).

- `block_kernels`: a scalar entry of a BSR matrix read in place from its blocks, and the diagonal scaling
  1/sqrt(a_ii) (an invalid diagonal counted in a status array).
- `build_kernels`: the adaptive support selection of one factor row per thread (the frontier entries of largest
  residual join the support, bordering the local Cholesky factor, until the row is full or the local energy
  improvement falls below the tolerance).
- `pack_kernels`: rows of selected supports sorted by column and packed into BSR storage, keeping each entry's
  growth rank (the order the support grew in, which the refits factor in).
- `deferred_kernels`: the device-side publication of supports selected during a first update (defer_pattern).
- `refit_kernels`: new values on fixed supports (reuse_pattern), committed only when the update is accepted.
- `matvec_kernel`: z = alpha G x + beta y for a scalar CSR factor, accumulating in the matrix scalar type.
"""

import types
from functools import lru_cache

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.sparse.funcs import bsr_block_index, bsr_row_end
from mlwarp.kernels.static import static
from mlwarp.types import float32, int32, matrix, vector

@lru_cache(None)
def block_kernels(block_type, dtype):
    """Create scalar-entry access and diagonal scaling that read BSR blocks in place."""
    block_size = 1 if block_type == dtype else block_type._shape_[0]

    if block_type == dtype:

        @func
        def entry(
            offsets: array(dtype=int),
            row_counts: array(dtype=int),
            columns: array(dtype=int),
            values: array(dtype=block_type),
            r: int,
            c: int,
        ):
            slot = bsr_block_index(r, c, offsets, columns, row_counts)
            result = dtype(0)
            if slot >= 0:
                result = values[slot]
            return result

    else:

        @func
        def entry(
            offsets: array(dtype=int),
            row_counts: array(dtype=int),
            columns: array(dtype=int),
            values: array(dtype=block_type),
            r: int,
            c: int,
        ):
            slot = bsr_block_index(
                r // static(block_size), c // static(block_size), offsets, columns, row_counts
            )
            result = dtype(0)
            if slot >= 0:
                result = dtype(values[slot][r % static(block_size), c % static(block_size)])
            return result

    @kernel(enable_backward=False, module="unique")
    def diagonal(
        offsets: array(dtype=int),
        row_counts: array(dtype=int),
        columns: array(dtype=int),
        values: array(dtype=block_type),
        scale: array(dtype=dtype),
        status: array(dtype=int),
        counter: int,
    ):
        i = wp.tid()
        d = entry(offsets, row_counts, columns, values, i, i)
        if d > dtype(0) and wp.isfinite(d):
            scale[i] = dtype(1) / wp.sqrt(d)
        else:
            scale[i] = dtype(0)
            wp.atomic_add(status, counter, 1)

    return block_size, entry, diagonal


@lru_cache(None)
def build_kernels(block_type, dtype, width, step_size=1):
    block_size, entry, _ = block_kernels(block_type, dtype)
    best_indices = vector(length=step_size, dtype=int32)
    best_scores = vector(length=step_size, dtype=dtype)
    indices = vector(length=width, dtype=int32)
    row_vector = vector(length=width, dtype=dtype)
    row_matrix = matrix(shape=(width, width), dtype=dtype)

    @kernel(enable_backward=False, module="unique")
    def build(
        offsets: array(dtype=int),
        row_counts: array(dtype=int),
        columns: array(dtype=int),
        values: array(dtype=block_type),
        scale: array(dtype=dtype),
        tolerance: dtype,
        pivot_floor: dtype,
        cols_out: array(dtype=int),
        vals_out: array(dtype=dtype),
        status: array(dtype=int),
        ready: array(dtype=int),
    ):
        i = wp.tid()
        if ready[0] != 0:
            return
        pattern = indices(-1)
        chol = row_matrix(dtype(0))
        z = row_vector(dtype(0))
        v = row_vector(dtype(0))
        pattern[0] = i
        chol[0, 0] = dtype(1)
        z[0] = dtype(1)
        v[0] = dtype(1)
        size = int(1)
        # Search the frontier of the current support. Duplicates are harmless:
        # candidate scores are evaluated exactly, without a truncated hash table.
        while size < static(width):
            candidates = best_indices(-1)
            scores = best_scores(dtype(0))
            for p in range(size):
                row = pattern[p]
                block_row = row // static(block_size)
                for e in range(offsets[block_row], bsr_row_end(offsets, row_counts, block_row)):
                    for k in range(static(block_size)):
                        c = columns[e] * static(block_size) + k
                        selected = bool(c >= i)
                        for q in range(size):
                            if pattern[q] == c:
                                selected = True
                        for q in range(static(step_size)):
                            if candidates[q] == c:
                                selected = True
                        if not selected:
                            residual = dtype(0)
                            for q in range(size):
                                j = pattern[q]
                                residual += (
                                    entry(offsets, row_counts, columns, values, c, j) * scale[c] * scale[j] * z[q]
                                )
                            score = wp.abs(residual)
                            for rank in range(static(step_size)):
                                if score > scores[rank] or (score == scores[rank] and c < candidates[rank]):
                                    for rev in range(static(step_size - 1)):
                                        dest = static(step_size - 1) - rev
                                        if dest > rank:
                                            candidates[dest] = candidates[dest - 1]
                                            scores[dest] = scores[dest - 1]
                                    candidates[rank] = c
                                    scores[rank] = score
                                    break
            if candidates[0] < 0:
                break
            old_z0 = z[0]
            stopped = bool(False)
            for rank in range(static(step_size)):
                best = candidates[rank]
                if best < 0 or size == static(width):
                    break
                # Border the Cholesky factor of the selected principal submatrix.
                w = row_vector(dtype(0))
                pivot = dtype(1)
                for p in range(size):
                    a = entry(offsets, row_counts, columns, values, best, pattern[p]) * scale[best] * scale[pattern[p]]
                    for q in range(p):
                        a -= chol[p, q] * w[q]
                    w[p] = a / chol[p, p]
                    pivot -= w[p] * w[p]
                if pivot <= pivot_floor or not wp.isfinite(pivot):
                    wp.atomic_add(status, 1, 1)
                    stopped = True
                    break
                pattern[size] = best
                for p in range(size):
                    chol[size, p] = w[p]
                chol[size, size] = wp.sqrt(pivot)
                # Existing forward-solve entries are unchanged by bordering L.
                rhs = dtype(0)
                for p in range(size):
                    rhs -= w[p] * v[p]
                v[size] = rhs / chol[size, size]
                size += 1
            # A[S,S] z = e_0; no global factorization or triangular dependency.
            for rev in range(size):
                p = size - 1 - rev
                a = v[p]
                for q in range(p + 1, size):
                    a -= chol[q, p] * z[q]
                z[p] = a / chol[p, p]
            # psi=1/z[0]. Relative reduction is 1-old_z0/new_z0.
            if stopped or (tolerance > dtype(0) and dtype(1) - old_z0 / z[0] <= tolerance):
                break
        norm = wp.sqrt(z[0])
        valid = bool(True)
        for p in range(static(width)):
            e = i * static(width) + p
            cols_out[e] = -1
            vals_out[e] = dtype(0)
            if p < size:
                cols_out[e] = pattern[p]
                vals_out[e] = z[p] / norm * scale[pattern[p]]
                if not wp.isfinite(vals_out[e]):
                    valid = False
                if p == 0 and vals_out[e] <= dtype(0):
                    valid = False
        if not valid:
            wp.atomic_add(status, 2, 1)

    return build


@kernel(enable_backward=False, module="unique")
def validate_float32_factor(
    offsets: array(dtype=int),
    columns: array(dtype=int),
    values: array(dtype=float32),
    status: array(dtype=int),
):
    row = wp.tid()
    invalid = bool(False)
    for e in range(offsets[row], offsets[row + 1]):
        if not wp.isfinite(values[e]):
            invalid = True
        if columns[e] == row and values[e] <= float32(0):
            invalid = True
    if invalid:
        wp.atomic_add(status, 0, 1)

@lru_cache(None)
def pack_kernels(dtype, width):
    ivec = vector(length=width, dtype=int)
    vec = vector(length=width, dtype=dtype)

    @kernel(enable_backward=False, module="unique")
    def sort_rows(
        columns: array(dtype=int),
        values: array(dtype=dtype),
        ranks: array(dtype=int),
        counts: array(dtype=int),
        ready: array(dtype=int),
    ):
        i = wp.tid()
        if ready[0] != 0:
            return
        cols = ivec(-1)
        vals = vec(dtype(0))
        order = ivec(-1)
        size = int(0)
        for p in range(static(width)):
            c = columns[i * static(width) + p]
            if c >= 0:
                v = values[i * static(width) + p]
                q = size
                while q > 0:
                    if cols[q - 1] <= c:
                        break
                    cols[q] = cols[q - 1]
                    vals[q] = vals[q - 1]
                    order[q] = order[q - 1]
                    q -= 1
                cols[q] = c
                vals[q] = v
                order[q] = p
                size += 1
        counts[i + 1] = size
        for p in range(size):
            columns[i * static(width) + p] = cols[p]
            values[i * static(width) + p] = vals[p]
            ranks[i * static(width) + p] = order[p]

    @kernel(enable_backward=False, module="unique")
    def pack(
        offsets: array(dtype=int),
        columns: array(dtype=int),
        values: array(dtype=dtype),
        ranks: array(dtype=int),
        outcols: array(dtype=int),
        outvals: array(dtype=dtype),
        outranks: array(dtype=int),
    ):
        i = wp.tid()
        for e in range(offsets[i], offsets[i + 1]):
            p = i * static(width) + e - offsets[i]
            outcols[e] = columns[p]
            outvals[e] = values[p]
            outranks[e] = ranks[p]

    return sort_rows, pack


@kernel(enable_backward=False, module="unique")
def compare_topology(a: array(dtype=int), b: array(dtype=int), bad: array(dtype=int)):
    i = wp.tid()
    if a[i] != b[i]:
        wp.atomic_add(bad, 0, 1)


@kernel(enable_backward=False, module="unique")
def transpose_map(
    offsets: array(dtype=int),
    columns: array(dtype=int),
    toff: array(dtype=int),
    tcol: array(dtype=int),
    mapping: array(dtype=int),
):
    i = wp.tid()
    for e in range(offsets[i], offsets[i + 1]):
        mapping[e] = bsr_block_index(columns[e], i, toff, tcol)


@lru_cache(None)
def deferred_kernels(dtype, storage, width, regularize):
    """Create the kernels that select supports and build the transposed index on the device."""

    @func
    def pending(ready: array(dtype=int), status: array(dtype=int)):
        # The pattern is built only once, and only if the update was accepted.
        ok = ready[0] == 0 and status[0] == 0
        if not static(regularize):
            ok = ok and status[1] == 0 and status[2] == 0
        return ok

    @func
    def accepted(status: array(dtype=int)):
        ok = status[0] == 0
        if not static(regularize):
            ok = ok and status[1] == 0 and status[2] == 0
        return ok

    @kernel(enable_backward=False, module="unique")
    def zero(values: array(dtype=int), ready: array(dtype=int)):
        e = wp.tid()
        if ready[0] == 0:
            values[e] = 0

    @kernel(enable_backward=False, module="unique")
    def publish(
        support_columns: array(dtype=int),
        support_counts: array(dtype=int),
        stride: int,
        counts: array(dtype=int),
        ready: array(dtype=int),
        status: array(dtype=int),
        columns: array(dtype=int),
        row_counts: array(dtype=int),
    ):
        # Copy the selected supports into the factor and count the entries of every column.
        row = wp.tid()
        if pending(ready, status):
            size = support_counts[row + 1]
            row_counts[row] = size
            for p in range(size):
                column = support_columns[row * stride + p]
                columns[row * stride + p] = column
                wp.atomic_add(counts, column + 1, 1)

    @kernel(enable_backward=False, module="unique")
    def scan(counts: array(dtype=int), offsets: array(dtype=int), ready: array(dtype=int), status: array(dtype=int)):
        # One thread, once: the pattern is built a single time.
        if pending(ready, status):
            total = int(0)
            for c in range(offsets.shape[0]):
                total += counts[c]
                offsets[c] = total

    @kernel(enable_backward=False, module="unique")
    def fill(
        columns: array(dtype=int),
        row_counts: array(dtype=int),
        stride: int,
        offsets: array(dtype=int),
        cursor: array(dtype=int),
        entries: array(dtype=int),
        ready: array(dtype=int),
        status: array(dtype=int),
    ):
        row = wp.tid()
        if pending(ready, status):
            for p in range(row_counts[row]):
                column = columns[row * stride + p]
                entries[offsets[column] + wp.atomic_add(cursor, column, 1)] = row * stride + p

    @kernel(enable_backward=False, module="unique")
    def sort_columns(
        offsets: array(dtype=int),
        entries: array(dtype=int),
        stride: int,
        columns: array(dtype=int),
        ready: array(dtype=int),
        status: array(dtype=int),
    ):
        # Sorting each column by factor entry makes the transposed sums independent of
        # the order in which the scatter ran. The sorted entries give the transposed rows.
        column = wp.tid()
        if pending(ready, status):
            begin = offsets[column]
            end = offsets[column + 1]
            for e in range(begin + 1, end):
                key = entries[e]
                q = e - 1
                while q >= begin and entries[q] > key:
                    entries[q + 1] = entries[q]
                    q -= 1
                entries[q + 1] = key
            for e in range(begin, end):
                columns[e] = entries[e] // stride

    @kernel(enable_backward=False, module="unique")
    def mark_ready(ready: array(dtype=int), status: array(dtype=int)):
        if pending(ready, status):
            ready[0] = 1

    @kernel(enable_backward=False, module="unique")
    def commit(
        candidate: array(dtype=storage),
        status: array(dtype=int),
        entries: array(dtype=int),
        offsets: array(dtype=int),
        values: array(dtype=storage),
        transposed: array(dtype=storage),
        n: int,
    ):
        e = wp.tid()
        if accepted(status):
            values[e] = candidate[e]
            if e < offsets[n]:
                transposed[e] = candidate[entries[e]]

    return types.SimpleNamespace(
        zero=zero,
        publish=publish,
        scan=scan,
        fill=fill,
        sort_columns=sort_columns,
        mark_ready=mark_ready,
        commit=commit,
    )


@lru_cache(None)
def refit_kernels(block_type, dtype, storage, width, regularize):
    _, entry, diagonal = block_kernels(block_type, dtype)
    vec = vector(length=width, dtype=dtype)
    mat = matrix(shape=(width, width), dtype=dtype)
    ivec = vector(length=width, dtype=int)

    @kernel(enable_backward=False, module="unique")
    def refit(
        offsets: array(dtype=int),
        row_counts: array(dtype=int),
        columns: array(dtype=int),
        values: array(dtype=block_type),
        goff: array(dtype=int),
        gcol: array(dtype=int),
        gcount: array(dtype=int),
        growth_rank: array(dtype=int),
        scale: array(dtype=dtype),
        floor: dtype,
        out: array(dtype=storage),
        status: array(dtype=int),
    ):
        i = wp.tid()
        start = goff[i]
        size = goff[i + 1] - start
        if gcount:
            size = gcount[i]
        # Factor in the order the support was grown, so pivots (and the floor test)
        # match construction; sorted storage order can give very different pivots.
        # The local system is padded with identity rows to the static width, which leaves
        # the solution on the support unchanged and keeps every loop bound constant.
        member = ivec(0)
        for p in range(size):
            member[growth_rank[start + p]] = p
        local = ivec(-1)
        for k in range(size):
            local[k] = gcol[start + member[k]]
        chol = mat(dtype(0))
        valid = bool(True)
        regularized = bool(False)
        for k in range(static(width)):
            r = local[k]
            for m in range(k + 1):
                c = local[m]
                a = dtype(0)
                if k < size:
                    if r == c:
                        # Equilibrated diagonals are exactly one, as in construction.
                        a = dtype(1)
                    else:
                        a = entry(offsets, row_counts, columns, values, r, c) * scale[r] * scale[c]
                elif k == m:
                    a = dtype(1)
                for t in range(m):
                    a -= chol[k, t] * chol[m, t]
                if k == m:
                    if not wp.isfinite(a):
                        valid = False
                        a = dtype(1)
                    elif a <= floor:
                        if static(regularize):
                            # Raise the pivot to the floor and report the row.
                            regularized = True
                            a = floor
                        else:
                            valid = False
                            a = dtype(1)
                    chol[k, m] = wp.sqrt(a)
                else:
                    chol[k, m] = a / chol[m, m]
        # Growth position 0 is the row's own index.
        z = vec(dtype(0))
        for k in range(static(width)):
            a = dtype(0)
            if k == 0:
                a = dtype(1)
            for t in range(k):
                a -= chol[k, t] * z[t]
            z[k] = a / chol[k, k]
        for rev in range(static(width)):
            k = static(width) - 1 - rev
            a = z[k]
            for t in range(k + 1, static(width)):
                a -= chol[t, k] * z[t]
            z[k] = a / chol[k, k]
        norm = wp.sqrt(z[0])
        for p in range(size):
            value = storage(z[growth_rank[start + p]] / norm * scale[gcol[start + p]])
            out[start + p] = value
            if not wp.isfinite(value):
                valid = False
            # Canonical lower-triangular support: the diagonal is last.
            if p == size - 1 and value <= storage(0):
                valid = False
        if static(regularize):
            # A failed row falls back to its own scaled diagonal (Jacobi), which stays
            # finite and positive, so one bad row never blocks the others.
            if not valid:
                fallback = storage(scale[i])
                if not (scale[i] > dtype(0) and wp.isfinite(fallback) and fallback > storage(0)):
                    fallback = storage(1)
                for p in range(size):
                    out[start + p] = storage(0)
                out[start + size - 1] = fallback
        if not valid:
            wp.atomic_add(status, 2, 1)
        elif regularized:
            wp.atomic_add(status, 3, 1)

    @kernel(enable_backward=False, module="unique")
    def commit(
        candidate: array(dtype=storage),
        status: array(dtype=int),
        mapping: array(dtype=int),
        values: array(dtype=storage),
        transposed: array(dtype=storage),
    ):
        # Publish the refit factor only if validation passed; otherwise the previous
        # factor stays in place. With regularization only a topology mismatch blocks.
        e = wp.tid()
        accepted = status[0] == 0
        if not static(regularize):
            accepted = accepted and status[1] == 0 and status[2] == 0
        if accepted:
            values[e] = candidate[e]
            transposed[mapping[e]] = candidate[e]

    return diagonal, refit, commit


@lru_cache(None)
def matvec_kernel(storage_type, dtype):
    @kernel(enable_backward=False, module="unique")
    def mv(
        offsets: array(dtype=int),
        row_counts: array(dtype=int),
        columns: array(dtype=int),
        values: array(dtype=storage_type),
        x: array(dtype=dtype),
        y: array(dtype=dtype),
        z: array(dtype=dtype),
        alpha: dtype,
        beta: dtype,
    ):
        row = wp.tid()
        result = dtype(0)
        if alpha != dtype(0):
            end = offsets[row + 1]
            if row_counts:
                end = offsets[row] + row_counts[row]
            for e in range(offsets[row], end):
                result += dtype(values[e]) * x[columns[e]]
            result *= alpha
        if beta != dtype(0):
            result += beta * y[row]
        z[row] = result

    return mv


