"""Python-scope work as programs' setup code writes it, in microseconds a call: composite builtins called outside a
kernel (`wp.normalize(v)`, `wp.quat_rotate(q, v)`, a transform product), composites made from numbers and numpy
arrays, and `wp.array` made from Python lists of vectors and transforms (Warp's mesh_intersect example makes 1,024
random transforms so; a scene loader builds its arrays from lists). numpy column: the same math on float64 arrays
of 3 or 4, for scale (none for the constructors).

Before each table row is timed, mlwarp's and Warp's results are compared with numpy's (the script fails if one
differs by more than float32 rounding).

    python bench/python_scope.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

TIMING = dict(repeat=5, number=2000)
LIST_TIMING = dict(repeat=5, number=10)
LIST_LENGTH = 10_000
TOLERANCE = 1e-6  # relative: results are float32


def cases(wp, np):
    """{name: (callable, its result as numbers, the numpy reference)} on the same inputs for Warp and mlwarp."""
    rng = np.random.default_rng(7)
    a3, b3 = rng.standard_normal(3), rng.standard_normal(3)
    v, w = wp.vec3(a3), wp.vec3(b3)
    axis = a3 / np.linalg.norm(a3)
    q = wp.quat_from_axis_angle(wp.vec3(axis), 0.7)
    qn = np.array(list(q), dtype=np.float64)
    t = wp.transform(w, q)
    vs = [wp.vec3(float(k), 2.0, 3.0) for k in range(LIST_LENGTH)]
    lists = [[float(k), 2.0, 3.0] for k in range(LIST_LENGTH)]
    ts = [wp.transform(wp.vec3(float(k), 0.0, 1.0), q) for k in range(LIST_LENGTH // 10)]
    a3f, b3f = a3.astype(np.float32).astype(np.float64), b3.astype(np.float32).astype(np.float64)

    def rotate(qv, x):  # q x q*, numpy
        u, s = qv[:3], qv[3]
        return x * (2 * s * s - 1) + u * (2 * (u @ x)) + np.cross(u, x) * (2 * s)

    return {
        "wp.vec3(numpy array of 3)": (lambda: wp.vec3(a3), None, a3.astype(np.float32)),
        "wp.normalize(v)": (lambda: wp.normalize(v), None, a3f / np.linalg.norm(a3f)),
        "wp.cross(v, w)": (lambda: wp.cross(v, w), None, np.cross(a3f, b3f)),
        "wp.dot(v, w)": (lambda: wp.dot(v, w), None, a3f @ b3f),
        "wp.quat_from_axis_angle(v, 0.7)": (lambda: wp.quat_from_axis_angle(v, 0.7), None,
                                            np.append(np.sin(0.35) * a3f, np.cos(0.35))),  # (axis as given)
        "wp.quat_rotate(q, v)": (lambda: wp.quat_rotate(q, v), None, rotate(qn, a3f)),
        "wp.transform(p, q)": (lambda: wp.transform(w, q), None, np.concatenate([b3f, qn])),
        "wp.transform_point(t, v)": (lambda: wp.transform_point(t, v), None, b3f + rotate(qn, a3f)),
        "v * 5.0": (lambda: v * 5.0, None, a3f * 5.0),
        f"wp.array of {LIST_LENGTH} wp.vec3": (lambda: wp.array(vs, dtype=wp.vec3), "list",
                                               np.array([[k, 2.0, 3.0] for k in range(LIST_LENGTH)])),
        f"wp.array of {LIST_LENGTH} [x, y, z] lists": (lambda: wp.array(lists, dtype=wp.vec3), "list",
                                                       np.array(lists)),
        f"wp.array of {LIST_LENGTH // 10} transforms": (
            lambda: wp.array(ts, dtype=wp.transform), "list",
            np.array([[k, 0.0, 1.0, *qn] for k in range(LIST_LENGTH // 10)])),
    }


def numpy_cases(np):
    """The numpy column: the same math on float64 arrays (None for the constructors)."""
    rng = np.random.default_rng(7)
    a3, b3 = rng.standard_normal(3), rng.standard_normal(3)
    return {"wp.normalize(v)": lambda: a3 / np.sqrt(a3 @ a3), "wp.cross(v, w)": lambda: np.cross(a3, b3),
            "wp.dot(v, w)": lambda: a3 @ b3, "v * 5.0": lambda: a3 * 5.0}


def measure(wp, np):
    out = {}
    for name, (fn, kind, reference) in cases(wp, np).items():
        got = fn()
        values = got.numpy() if kind == "list" else np.array(list(got) if np.ndim(got) else [got], dtype=np.float64)
        values = np.asarray(values, dtype=np.float64).reshape(np.shape(reference))
        scale = max(1.0, float(np.max(np.abs(reference))))
        if not np.allclose(values, reference, rtol=TOLERANCE, atol=TOLERANCE * scale):
            raise SystemExit(f"{name}: {values} differs from numpy's {reference}")
        timing = LIST_TIMING if kind == "list" else TIMING
        out[name] = best_of(fn, **timing) * 1e6
    return out


def main():
    import numpy as np

    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, np))
    import mlwarp as wp

    m = measure(wp, np)
    numpy_side = {name: best_of(fn, **TIMING) * 1e6 for name, fn in numpy_cases(np).items()}
    w = run_warp(__file__) or {}
    rows = [(name, m[name], numpy_side.get(name), w.get(name)) for name in m]
    lines = print_table("Python scope: composite builtins and arrays from lists", "us per call", rows,
                        higher_is_better=False)
    save_json("python_scope", {"table": lines, "data": {"mlwarp": m, "numpy": numpy_side, "warp": w}})


if __name__ == "__main__":
    main()
