"""Builtins on matrices (row-major, as in Warp): overloads in the builtin table.

A lowered R x C matrix is `vector<R*C x T>` (its rows, concatenated); row i is
the slice [i*C, (i+1)*C). Sums run over k in ascending order, as Warp's loops.
"""

from __future__ import annotations

from mlwarp.core import types as wt

from ..lazy import arith, ir
from . import vecmath as vm
from .table import overload
from .vecmath import V
from .vector import _names, mat_type, same, vec_type


def shape(t):
    return wt.inner_shape(t)


def rows(m, t) -> list:
    r, c = shape(t)
    return [vm.slice_(m, i * c, c) for i in range(r)]


def concat_rows(rs) -> V:
    out = rs[0]
    for r in rs[1:]:
        out = vm.concat(out, r)
    return out


def _scalar(types):
    s = {wt.scalar_type_of(t) for t in types}
    if len(s) != 1:
        raise TypeError(f"Input types must have the same scalar type, got {_names(types)}")
    return s.pop()


# -- products ------------------------------------------------------------------------------------
def _mat_vec(types):
    (r, c), (n,) = shape(types[0]), shape(types[1])
    if c != n:
        raise TypeError(f"cannot multiply a {r}x{c} matrix by a {n}-vector")
    return vec_type(r, _scalar(types))


def _vec_mat(types):
    (n,), (r, c) = shape(types[0]), shape(types[1])
    if n != r:
        raise TypeError(f"cannot multiply a {n}-vector by a {r}x{c} matrix")
    return vec_type(c, _scalar(types))


def _mat_mat(types):
    (r, k), (k2, c) = shape(types[0]), shape(types[1])
    if k != k2:
        raise TypeError(f"cannot multiply a {r}x{k} matrix by a {k2}x{c} matrix")
    return mat_type(r, c, _scalar(types))


def _lower_mat_vec(args, types, rt):
    v = V(args[1])
    return vm.from_elements([vm.dot(row, v) for row in rows(args[0], types[0])]).value


def _lower_vec_mat(args, types, rt):
    v = V(args[0])
    acc = None
    for i, row in enumerate(rows(args[1], types[1])):
        term = row * v[i]
        acc = term if acc is None else acc + term
    return acc.value


def _lower_mat_mat(args, types, rt):
    b_rows = rows(args[1], types[1])
    out = []
    for a_row in rows(args[0], types[0]):
        acc = None
        for k, b_row in enumerate(b_rows):
            term = b_row * a_row[k]
            acc = term if acc is None else acc + term
        out.append(acc)
    return concat_rows(out).value


for _name in ("mul", "matmul"):
    overload(_name, ["Matrix", "Vector"], _mat_vec, doc="matrix times column vector")(_lower_mat_vec)
    overload(_name, ["Vector", "Matrix"], _vec_mat, doc="row vector times matrix")(_lower_vec_mat)
    overload(_name, ["Matrix", "Matrix"], _mat_mat, doc="matrix product")(_lower_mat_mat)


# -- structure -------------------------------------------------------------------------------------
def _transposed(types):
    r, c = shape(types[0])
    return mat_type(c, r, wt.scalar_type_of(types[0]))


@overload("transpose", ["Matrix"], _transposed, doc="the transpose")
def _transpose(args, types, rt):
    r, c = shape(types[0])
    m = V(args[0])
    return V(vm.vector.shuffle(m.value, m.value, [i * c + j for j in range(c) for i in range(r)]), m.kind).value


def _square(types):
    t = same(types)
    r, c = shape(t)
    if r != c:
        raise TypeError(f"expects a square matrix, got {_names(types)}")
    return t


@overload("get_diag", ["Matrix"], lambda ts: vec_type(shape(_square(ts))[0], wt.scalar_type_of(ts[0])),
          doc="the diagonal as a vector")
def _get_diag(args, types, rt):
    n = shape(types[0])[0]
    m = V(args[0])
    return vm.from_elements([m[i * n + i] for i in range(n)]).value


@overload("diag", ["Vector"], lambda ts: mat_type(shape(ts[0])[0], shape(ts[0])[0], wt.scalar_type_of(ts[0])),
          doc="the square matrix with v on its diagonal")
def _diag(args, types, rt):
    v = V(args[0])
    n = v.length
    zero = V(vm.constant(0, vm.elem_type(v.type)), v.kind)
    return vm.from_elements([v[i] if i == j else zero for i in range(n) for j in range(n)]).value


@overload("trace", ["Matrix"], lambda ts: wt.scalar_type_of(_square(ts)), doc="the sum of the diagonal")
def _trace(args, types, rt):
    n = shape(types[0])[0]
    m = V(args[0])
    total = m[0]
    for i in range(1, n):
        total = total + m[i * n + i]
    return total.value


@overload("ddot", ["Matrix", "Matrix"], lambda ts: wt.scalar_type_of(same(ts)), doc="sum of a[i, j] * b[i, j]")
def _ddot(args, types, rt):
    return vm.reduce_add(V(args[0]) * V(args[1])).value


def _vec3(types):
    if shape(types[0]) != (3,):
        raise TypeError(f"skew expects a 3-vector, got {_names(types)}")
    return mat_type(3, 3, wt.scalar_type_of(types[0]))


@overload("skew", ["Vector"], _vec3, doc="the cross-product matrix: skew(a) @ b == cross(a, b)")
def _skew(args, types, rt):
    a = V(args[0])
    zero = V(vm.constant(0, vm.elem_type(a.type)), a.kind)
    x, y, z = a[0], a[1], a[2]
    return vm.from_elements([zero, -z, y, z, zero, -x, -y, x, zero]).value


# -- determinant and inverse (Warp: 2x2, 3x3, 4x4) -------------------------------------------------------
def _det(e, idx_rows, idx_cols):
    """Laplace expansion along the first row of the sub-matrix (rows, cols) of element getter e."""
    if len(idx_rows) == 1:
        return e(idx_rows[0], idx_cols[0])
    if len(idx_rows) == 2:
        (r0, r1), (c0, c1) = idx_rows, idx_cols
        return e(r0, c0) * e(r1, c1) - e(r0, c1) * e(r1, c0)
    total = None
    for k, c in enumerate(idx_cols):
        minor = _det(e, idx_rows[1:], idx_cols[:k] + idx_cols[k + 1:])
        term = e(idx_rows[0], c) * minor
        total = term if total is None else (total + term if k % 2 == 0 else total - term)
    return total


def _getter(m, n):
    cache = {}

    def e(i, j):
        if (i, j) not in cache:
            cache[(i, j)] = m[i * n + j]
        return cache[(i, j)]

    return e


def _det_rule(types):
    t = _square(types)
    if shape(t)[0] not in (2, 3, 4) or not wt.is_float(wt.scalar_type_of(t)):
        raise TypeError(f"determinant/inverse take a 2x2, 3x3 or 4x4 float matrix, got {_names(types)}")
    return t


@overload("determinant", ["Matrix"], lambda ts: wt.scalar_type_of(_det_rule(ts)), doc="the determinant")
def _determinant(args, types, rt):
    n = shape(types[0])[0]
    m = V(args[0])
    if n == 3:  # Warp: dot(row0, cross(row1, row2))
        r0, r1, r2 = rows(m, types[0])
        c = [r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2], r1[0] * r2[1] - r1[1] * r2[0]]
        return (r0[0] * c[0] + r0[1] * c[1] + r0[2] * c[2]).value
    if n == 4:
        return _det4(_getter(m, n)).value
    return _det(_getter(m, n), list(range(n)), list(range(n))).value


def _det4(e):
    """Warp's 4x4 determinant, rounding step for step as its C++ does: the twelve 2x2 determinants of the
    column pairs in the matrix's type, kept as doubles, the four 3x3 cofactors in double then rounded back,
    the final sum in the matrix's type."""
    t = e(0, 0).type
    f64 = ir.F64Type.get()

    f32 = ir.F32Type.get()

    def wide(x):  # half goes through float (as Warp's half -> double; and no f16 <-> f64 libcalls)
        if t == f64:
            return x
        v = x.value if t == f32 else arith.extf(f32, x.value)
        return V(arith.extf(f64, v))

    def narrow(x):
        if t == f64:
            return x
        v = arith.truncf(f32, x.value)
        return V(v if t == f32 else arith.truncf(t, v))

    def pair_dets(c0, c1):
        y = {}
        for a, b in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)):
            y[(a, b)] = wide(e(a, c0) * e(b, c1) - e(b, c0) * e(a, c1))
        return y

    y = pair_dets(2, 3)
    x = {(i, j): wide(e(i, j)) for i in range(4) for j in (0, 1)}
    z30 = narrow(x[1, 1] * y[0, 2] - x[2, 1] * y[0, 1] - x[0, 1] * y[1, 2])
    z20 = narrow(x[0, 1] * y[1, 3] - x[1, 1] * y[0, 3] + x[3, 1] * y[0, 1])
    z10 = narrow(x[2, 1] * y[0, 3] - x[3, 1] * y[0, 2] - x[0, 1] * y[2, 3])
    z00 = narrow(x[1, 1] * y[2, 3] - x[2, 1] * y[1, 3] + x[3, 1] * y[1, 2])
    return e(3, 0) * z30 + e(2, 0) * z20 + e(1, 0) * z10 + e(0, 0) * z00


@overload("inverse", ["Matrix"], _det_rule, doc="the inverse; the zero matrix when the determinant is 0 (Warp)")
def _inverse(args, types, rt):
    n = shape(types[0])[0]
    m = V(args[0])
    e = _getter(m, n)
    idx = list(range(n))
    det = _det(e, idx, idx) if n != 3 else V(_determinant(args, types, rt), m.kind)
    adj = []
    for i in range(n):  # adj[i][j] = cofactor(j, i)
        for j in range(n):
            minor = _det(e, idx[:j] + idx[j + 1:], idx[:i] + idx[i + 1:])
            adj.append(minor if (i + j) % 2 == 0 else -minor)
    inv = vm.from_elements(adj) * (1.0 / det)
    zero = vm.constant(0, inv.type)
    return vm.select(det.cmp("ne", 0.0), inv.value, zero).value


# -- matrices from vectors ----------------------------------------------------------------------------------
def _from_vectors(transposed):
    def rule(types):
        t = same(types)
        if wt.composite_kind(t) != "vec":
            raise TypeError(f"expects vectors of one type, got {_names(types)}")
        n, c = len(types), shape(t)[0]
        return mat_type(c, n, wt.scalar_type_of(t)) if transposed else mat_type(n, c, wt.scalar_type_of(t))

    return rule


def _lower_from_rows(args, types, rt):
    return concat_rows([V(a) for a in args]).value


def _lower_from_cols(args, types, rt):
    n = len(args)
    c = shape(types[0])[0]
    cols = [V(a) for a in args]
    return vm.from_elements([cols[j][i] for i in range(c) for j in range(n)]).value


for _n in (1, 2, 3, 4):  # one vector: a 1-column / 1-row matrix, as Warp's
    overload("matrix_from_rows", ["Vector"] * _n, _from_vectors(False), doc="the matrix with these rows")(
        _lower_from_rows)
    overload("matrix_from_cols", ["Vector"] * _n, _from_vectors(True), doc="the matrix with these columns")(
        _lower_from_cols)
