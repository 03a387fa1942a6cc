"""Builtins' parameter names, for keyword arguments in Python scope (`wp.max(a=v)`, `wp.atan2(y=1.0, x=2.0)`).

The names are those of Warp's builtin reference. A name with several
signatures lists each (`transform_point(mat, point)` and `(xform, point)`);
a call binds to the first whose names take its keywords, positional
arguments first, then the types pick the overload as for a positional call.
Builtins not listed take `x` (one scalar argument) or `a, b, ...`.
"""

from __future__ import annotations

_UNARY_X = {"abs", "acos", "asin", "atan", "bit_count", "cbrt", "ceil", "cos", "cosh", "degrees", "erf", "erfc", "erfcinv", "erfinv",
            "exp", "floor", "frac", "log", "log10", "log2", "neg", "nonzero", "pos", "radians", "rint", "round",
            "sign", "sin", "sinh", "sqrt", "step", "tan", "tanh", "trunc"}

# name -> signatures, each a tuple of parameter names; a name ending in "=" has the default given after it.
PARAMS: dict[str, list[tuple]] = {
    "atan2": [("y", "x")],
    "pow": [("x", "y")],
    "copysign": [("x", "y")],
    "clamp": [("x", "low", "high")],
    "smoothstep": [("a", "b", "x")],
    "lerp": [("a", "b", "t")],
    "quat_slerp": [("a", "b", "t")],
    "min": [("a",), ("a", "b")],
    "max": [("a",), ("a", "b")],
    "where": [("cond", "value_if_true", "value_if_false")],
    "diag": [("vec",)],
    "skew": [("vec",)],
    "get_diag": [("mat",)],
    "quat_from_matrix": [("mat",)],
    "quat_from_axis_angle": [("axis", "angle")],
    "quat_inverse": [("quat",)],
    "quat_to_matrix": [("quat",)],
    "quat_to_axis": [("quat",)],
    "quat_to_angle": [("quat",)],
    "quat_rotate": [("quat", "vec")],
    "quat_rotate_inv": [("quat", "vec")],
    "quat_rpy": [("roll", "pitch", "yaw")],
    "spatial_top": [("svec",)],
    "spatial_bottom": [("svec",)],
    "transform_get_rotation": [("xform",)],
    "transform_get_translation": [("xform",)],
    "transform_inverse": [("xform",)],
    "transform_point": [("mat", "point"), ("xform", "point")],
    "transform_vector": [("mat", "vec"), ("xform", "vec")],
    "expect_eq": [("a", "b")],
    "expect_neq": [("a", "b")],
    "expect_near": [("a", "b", ("tolerance", 1e-6))],
}


def signatures(name: str, nargs: int) -> list[tuple]:
    if name in PARAMS:
        return PARAMS[name]
    if name in _UNARY_X:
        return [("x",)]
    return [tuple("abcdefgh"[:max(nargs, 1)])]


class Unbound(TypeError):
    """No signature of the builtin takes these keyword arguments."""


def bind(name: str, args: tuple, kwargs: dict) -> list:
    """The call's arguments in positional order, by the first signature of `name` that takes them."""
    for sig in signatures(name, len(args) + len(kwargs)):
        params = [p if isinstance(p, tuple) else (p,) for p in sig]
        if len(args) > len(params):
            continue
        rest = params[len(args):]
        names = [p[0] for p in rest]
        if set(kwargs) - set(names) or any(p[0] not in kwargs and len(p) == 1 for p in rest):
            continue
        return list(args) + [kwargs[p[0]] if p[0] in kwargs else p[1] for p in rest]
    raise Unbound(name)
