"""Every composite overload of the table (vectors, matrices, quaternions, transforms) against central
finite differences in float64, in reverse and forward mode — generated: an overload is tested as soon as
it is added. Its float64 argument types are found by trying sample types for each constraint; the
output is contracted with a random weight w (loss = <w, y>), so every component of every argument's
gradient is checked. Those differences are of mlwarp's own one-builtin kernel (each derivative rule against
its lowering); NUMPY_REFERENCE also checks the simple overloads' values against numpy and their adjoints
against differences of numpy, independently of the compiler."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core import types as wt  # the type-taking predicates (mlwarp.types' take values, as Warp's)
from mlwarp.core import vector as wv
from mlwarp.compiler.builtins.derivatives import NOT_DIFFERENTIABLE
from mlwarp.compiler.builtins.table import CONSTRAINTS, OVERLOADS

from grad_util import kernel_from_source

N = 3
f64 = wt.float64
SAMPLES = {  # candidate float64 types per constraint, tried in order
    "Scalar": [f64], "Float": [f64],
    "Vector": [wv.vector(3, f64), wv.vector(2, f64), wv.vector(4, f64), wv.vector(6, f64)],
    "Matrix": [wv.matrix((3, 3), f64), wv.matrix((2, 2), f64), wv.matrix((4, 4), f64), wv.matrix((2, 3), f64)],
    "Quaternion": [wv.quaternion(f64)], "Transformation": [wv.transformation(f64)],
    "VectorLike": [wv.vector(3, f64), wv.matrix((3, 3), f64), wv.quaternion(f64), wv.transformation(f64)],
}


def is_float64(t) -> bool:
    return t is f64 or (wt.is_composite(t) and wt.scalar_type_of(t) is f64)


def signature(b):
    """(argument types, result type) in float64 for an overload, or None when it has no float result."""
    pools = [SAMPLES.get(c, []) for c in b.args]
    for types in itertools.islice(itertools.product(*pools), 200):
        if not all(CONSTRAINTS[c](t) for c, t in zip(b.args, types)):
            continue
        try:
            rt = b.result(list(types))
        except TypeError:
            continue
        return (list(types), rt) if is_float64(rt) else None
    return None


CASES = [(name, k) for name, entries in OVERLOADS.items() for k, b in enumerate(entries)
         if b.grad is not NOT_DIFFERENTIABLE and signature(b) is not None]


def shape_of(t):
    return tuple(wt.inner_shape(t)) if wt.is_composite(t) else ()


def type_expr(t) -> str:
    if t is f64:
        return "wp.float64"
    kind = wt.composite_kind(t)
    shape = shape_of(t)
    return {"vec": f"wp.types.vector({shape[0]}, wp.float64)", "mat": f"wp.types.matrix({shape}, wp.float64)",
            "quat": "wp.types.quaternion(wp.float64)", "transform": "wp.types.transformation(wp.float64)"}[kind]


def make_kernel(tmp_path, name, types, rt):
    params = ", ".join(f"x{k}: wp.array(dtype=T{k})" for k in range(len(types)))
    decls = "".join(f"T{k} = {type_expr(t)}\n" for k, t in enumerate(types)) + f"R = {type_expr(rt)}\n"
    call = ", ".join(f"x{k}[i]" for k in range(len(types)))
    src = (f"import mlwarp as wp\nimport mlwarp.core.vector\n{decls}\n@wp.kernel\ndef k({params}, y: wp.array(dtype=R)):\n"
           f"    i = wp.tid()\n    y[i] = wp.{name}({call})\n")
    return kernel_from_source(tmp_path, src.replace("wp.types.", "mlwarp.core.vector."))


def arr(v, t):
    return wp.array(v, dtype=t)


def sample(t, rng):
    v = rng.uniform(0.4, 1.6, size=(N,) + shape_of(t)) * np.where(rng.uniform(size=(N,) + shape_of(t)) < 0.3, -1, 1)
    if wt.composite_kind(t) == "quat":  # unit quaternions, as the quaternion builtins assume
        v /= np.linalg.norm(v, axis=-1, keepdims=True)
    if wt.composite_kind(t) == "transform":
        v[:, 3:] /= np.linalg.norm(v[:, 3:], axis=-1, keepdims=True)
    return v


def forward(kernel, types, rt, xs):
    y = wp.zeros(N, dtype=rt)
    wp.launch(kernel, dim=N, inputs=[arr(x, t) for x, t in zip(xs, types)], outputs=[y])
    return np.asarray(y.numpy(), dtype=np.float64).reshape((N,) + shape_of(rt))


@pytest.mark.parametrize("name,k", CASES, ids=[f"{n}{OVERLOADS[n][k].args}" for n, k in CASES])
def test_overload_gradient_matches_finite_differences(tmp_path, name, k):
    types, rt = signature(OVERLOADS[name][k])
    kernel = make_kernel(tmp_path, name, types, rt)
    rng = np.random.default_rng(sum(map(ord, name)) + k)
    xs = [sample(t, rng) for t in types]
    w = rng.uniform(-1, 1, size=(N,) + shape_of(rt))
    y0 = forward(kernel, types, rt, xs)
    assert np.all(np.isfinite(y0)), f"{name}: sample outside the domain"
    h = 1e-6
    loss = lambda vals: np.sum(w * forward(kernel, types, rt, vals))  # noqa: E731
    # reverse mode: adj_y = w
    adj = [wp.zeros(N, dtype=t) for t in types]
    wp.launch(kernel, dim=N, inputs=[arr(x, t) for x, t in zip(xs, types)], outputs=[wp.zeros(N, dtype=rt)],
              adjoint=True, adj_inputs=adj, adj_outputs=[arr(w, rt)])
    for j, x in enumerate(xs):
        fd = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            p, m = [v.copy() for v in xs], [v.copy() for v in xs]
            p[j][idx] += h
            m[j][idx] -= h
            fd[idx] = (loss(p) - loss(m)) / (2 * h)
        got = np.asarray(adj[j].numpy(), dtype=np.float64).reshape(x.shape)
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6, err_msg=f"d <w, {name}> / d arg{j}")
    # forward mode along random directions
    dirs = [rng.uniform(-1, 1, size=x.shape) for x in xs]
    dy = wp.zeros(N, dtype=rt)
    wp.jvp(kernel, N, inputs=[arr(x, t) for x, t in zip(xs, types)], outputs=[wp.zeros(N, dtype=rt)],
           tan_inputs=[arr(d, t) for d, t in zip(dirs, types)], tan_outputs=[dy])
    fd = (forward(kernel, types, rt, [x + h * d for x, d in zip(xs, dirs)])
          - forward(kernel, types, rt, [x - h * d for x, d in zip(xs, dirs)])) / (2 * h)
    np.testing.assert_allclose(np.asarray(dy.numpy(), dtype=np.float64).reshape(fd.shape), fd, rtol=1e-5,
                               atol=1e-6, err_msg=f"jvp of {name}")


# -- the simple overloads against numpy: Warp's definitions written independently of the compiler ------------
def kind_key(t) -> str:
    """'s', 'v3', 'm33', 'q', 't': a type's short name for the NUMPY_REFERENCE keys."""
    if t is f64:
        return "s"
    kind = wt.composite_kind(t)
    if kind in ("quat", "transform"):
        return kind[0]
    return {"vec": "v", "mat": "m"}[kind] + "".join(map(str, shape_of(t)))


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _quat_mul(a, b):
    return np.concatenate([a[3] * b[:3] + b[3] * a[:3] + _cross(a[:3], b[:3]), [a[3] * b[3] - np.dot(a[:3], b[:3])]])


def _quat_rotate(q, v):  # Warp's formula, also off the unit sphere
    return v * (2 * q[3] * q[3] - 1) + q[:3] * (2 * np.dot(q[:3], v)) + _cross(q[:3], v) * (2 * q[3])


NUMPY_REFERENCE = {  # (name, argument kinds) -> per-thread numpy function
    ("add", ("v3", "v3")): np.add, ("sub", ("v3", "v3")): np.subtract,
    ("mul", ("v3", "s")): np.multiply, ("mul", ("s", "v3")): np.multiply,
    ("mul", ("m33", "v3")): lambda m, v: m @ v, ("mul", ("v3", "m33")): lambda v, m: v @ m,
    ("mul", ("m33", "m33")): lambda a, b: a @ b, ("mul", ("q", "q")): _quat_mul,
    ("matmul", ("m33", "v3")): lambda m, v: m @ v, ("matmul", ("v3", "m33")): lambda v, m: v @ m,
    ("matmul", ("m33", "m33")): lambda a, b: a @ b,
    ("div", ("v3", "s")): np.divide, ("div", ("s", "v3")): np.divide,
    ("neg", ("v3",)): np.negative, ("pos", ("v3",)): lambda v: v,
    ("dot", ("v3", "v3")): np.dot, ("cross", ("v3", "v3")): _cross,
    ("length_sq", ("v3",)): lambda v: np.dot(v, v), ("length", ("v3",)): np.linalg.norm,
    ("normalize", ("v3",)): lambda v: v / np.linalg.norm(v), ("normalize", ("q",)): lambda q: q / np.linalg.norm(q),
    ("cw_mul", ("v3", "v3")): np.multiply, ("cw_div", ("v3", "v3")): np.divide,
    ("min", ("v3", "v3")): np.minimum, ("max", ("v3", "v3")): np.maximum,
    ("min", ("v3",)): np.min, ("max", ("v3",)): np.max, ("abs", ("v3",)): np.abs,
    ("sign", ("v3",)): lambda v: np.where(v < 0, -1.0, 1.0), ("mod", ("v3", "v3")): np.fmod,
    ("outer", ("v3", "v3")): np.outer, ("lerp", ("v3", "v3", "s")): lambda a, b, t: a * (1 - t) + b * t,
    ("transpose", ("m33",)): np.transpose, ("get_diag", ("m33",)): np.diag, ("diag", ("v3",)): np.diag,
    ("trace", ("m33",)): np.trace, ("ddot", ("m33", "m33")): lambda a, b: np.sum(a * b),
    ("skew", ("v3",)): lambda v: np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]]),
    ("determinant", ("m33",)): np.linalg.det, ("inverse", ("m33",)): np.linalg.inv,
    ("matrix_from_rows", ("v3", "v3")): lambda *r: np.array(r),
    ("matrix_from_rows", ("v3", "v3", "v3")): lambda *r: np.array(r),
    ("matrix_from_cols", ("v3", "v3")): lambda *c: np.array(c).T,
    ("matrix_from_cols", ("v3", "v3", "v3")): lambda *c: np.array(c).T,
    ("quat_inverse", ("q",)): lambda q: np.concatenate([-q[:3], q[3:]]), ("quat_rotate", ("q", "v3")): _quat_rotate,
    ("quat_rotate_inv", ("q", "v3")): lambda q, v: _quat_rotate(np.concatenate([-q[:3], q[3:]]), v),
    ("quat_to_matrix", ("q",)): lambda q: np.stack([_quat_rotate(q, e) for e in np.eye(3)], axis=1),
    ("transform_get_translation", ("t",)): lambda t: t[:3], ("transform_get_rotation", ("t",)): lambda t: t[3:],
    ("transform_point", ("t", "v3")): lambda t, v: t[:3] + _quat_rotate(t[3:], v),
    ("transform_vector", ("t", "v3")): lambda t, v: _quat_rotate(t[3:], v),
    ("transform_point", ("m44", "v3")): lambda m, v: (m @ np.append(v, 1.0))[:3],
    ("transform_vector", ("m44", "v3")): lambda m, v: m[:3, :3] @ v,
    ("spatial_top", ("v6",)): lambda v: v[:3], ("spatial_bottom", ("v6",)): lambda v: v[3:],
    ("spatial_dot", ("v6", "v6")): np.dot,
}


def reference_cases():
    keyed = {(name, tuple(kind_key(t) for t in signature(OVERLOADS[name][k])[0])): (name, k) for name, k in CASES}
    return keyed


def test_numpy_references_name_generated_cases():
    assert sorted(set(NUMPY_REFERENCE) - set(reference_cases())) == []


@pytest.mark.parametrize("key", sorted(NUMPY_REFERENCE), ids=[f"{n}{a}" for n, a in sorted(NUMPY_REFERENCE)])
def test_overload_value_and_gradient_match_numpy(tmp_path, key):
    name, k = reference_cases()[key]
    types, rt = signature(OVERLOADS[name][k])
    kernel = make_kernel(tmp_path, name, types, rt)
    rng = np.random.default_rng(sum(map(ord, name)) + k + 1)
    xs = [sample(t, rng) for t in types]
    fn = NUMPY_REFERENCE[key]

    def reference(values):
        return np.array([fn(*row) for row in zip(*values)], dtype=np.float64).reshape((N,) + shape_of(rt))

    np.testing.assert_allclose(forward(kernel, types, rt, xs), reference(xs), rtol=1e-12, atol=1e-14,
                               err_msg=f"{name} against numpy")
    w = rng.uniform(-1, 1, size=(N,) + shape_of(rt))
    adj = [wp.zeros(N, dtype=t) for t in types]
    wp.launch(kernel, dim=N, inputs=[arr(x, t) for x, t in zip(xs, types)], outputs=[wp.zeros(N, dtype=rt)],
              adjoint=True, adj_inputs=adj, adj_outputs=[arr(w, rt)])
    h = 1e-6
    for j, x in enumerate(xs):
        fd = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            p, m = [v.copy() for v in xs], [v.copy() for v in xs]
            p[j][idx] += h
            m[j][idx] -= h
            fd[idx] = np.sum(w * (reference(p) - reference(m))) / (2 * h)
        got = np.asarray(adj[j].numpy(), dtype=np.float64).reshape(x.shape)
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6, err_msg=f"d <w, {name}> / d arg{j} against numpy")
