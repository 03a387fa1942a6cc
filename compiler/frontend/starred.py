"""Star-unpacking in call arguments, as Warp: `wp.vec4(*v3, 1.0)`, `wp.quat(*v)`, `wp.max(*v)`, `f(*v[1:3], x)`,
`wp.matrix_from_rows(*m[:2])`, `wp.vec3i(*arr[0:3])`. A starred vector, quaternion, transform or matrix (its
rows), whole or sliced with constant bounds, or a 1-d array sliced with constant non-negative bounds, becomes
its components as separate arguments; anything else is refused with Warp's message.

The call is rewritten rather than its evaluated arguments extended: builtins, constructors, @wp.func calls,
print, tiles and the rest each read their arguments from the AST, so a call whose starred arguments are
replaced by `tmp[i]` subscripts of a hidden local reaches every one of them unchanged. The starred value
itself is evaluated once, before the call's other arguments; its components are read in argument order."""

from __future__ import annotations

import ast
from contextlib import contextmanager

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError, CompileValueError

from . import indexed
from . import types as ft
from .syntax import walk
from .values import Var

_HIDDEN = "$starred"  # not a Python identifier: no user name can collide with it

_SLICED_KINDS = "arrays, vectors, quaternions, and matrices"
_KINDS = "arrays (with slice), vectors, quaternions, and matrices"


def is_component_root(name: str) -> bool:
    """Whether a local is the hidden one a starred argument's components are read from."""
    return name.startswith(_HIDDEN)


def has_starred(node) -> bool:
    return isinstance(node, ast.Call) and any(isinstance(a, ast.Starred) for a in node.args)


@contextmanager
def expanded(em, node: ast.Call):
    """`node` with each starred argument replaced by its components, bound to hidden locals for as long as the
    caller emits the call; `node` itself when it has none."""
    if not has_starred(node):
        yield node
        return
    names, args = [], []
    try:
        for a in node.args:
            if not isinstance(a, ast.Starred):
                args.append(a)
                continue
            target, positions = _target_and_positions(em, a)
            # numbered by the hidden locals live now, so nested calls (`f(*g(*v))`) and the starred arguments of
            # one call each get their own, and every compile of a kernel names them alike
            name = f"{_HIDDEN}{sum(1 for n in em.env if is_component_root(n))}"
            em.env[name] = target
            names.append(name)
            for i in positions:
                sub = ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Constant(i), ctx=ast.Load())
                for n in walk(sub):
                    ast.copy_location(n, a)
                args.append(sub)
        yield ast.copy_location(ast.Call(func=node.func, args=args, keywords=node.keywords), node)
    finally:
        for name in names:
            em.env.pop(name, None)


def _type_repr(t) -> str:
    """A type as Warp's messages name it (`int32`, `tuple(float32, float32)`)."""
    if isinstance(t, ft.TupleT):
        return f"tuple({', '.join(_type_repr(p) for p in t.types)})"
    return ft.name(t)


def _unpackable_composite(t) -> bool:
    return wt.composite_kind(t) in ("vec", "quat", "mat", "transform") and not indexed.is_indexed(t)


def _array_ndim(t):
    if isinstance(t, ft.ArrayT):
        return t.ndim
    return t._wp_indexed_[1] if indexed.is_indexed(t) else None


def _target_and_positions(em, star: ast.Starred):
    """The starred value (evaluated) and the constant indices of the components it unpacks to."""
    value = star.value
    sliced = isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice)
    target = em.expr(value.value if sliced else value, allow_tuple=True)
    t = target.type
    ndim = _array_ndim(t) if isinstance(target, Var) else None
    if isinstance(target, Var) and _unpackable_composite(t):
        length = wt.inner_shape(t)[0]
        positions = _composite_positions(em, value.slice, length) if sliced else list(range(length))
    elif ndim is not None and sliced:
        if ndim != 1:
            raise em.error(star, f"Starred expressions with slices are only supported for 1D arrays, got {ndim}D "
                                 f"array.", CompileValueError)
        positions = _array_positions(em, star, value.slice)
    elif ndim is not None:
        raise em.error(star, "Starred expressions apply to arrays only if they are sliced with bounds known at "
                             "compile-time.", CompileTypeError)
    else:
        kinds = _SLICED_KINDS if sliced else _KINDS
        which = "Starred expressions with slices are" if sliced else "Starred expressions are"
        raise em.error(star, f"{which} only supported for {kinds}. Got {_type_repr(t)}.", CompileTypeError)
    if not positions:
        raise em.error(star, "Starred expression results in empty sequence.", CompileError)
    return target, positions


def _constant(em, node) -> int:
    """A slice bound as Warp takes it: any compile-time integer (a literal, a captured constant, a local bound to
    a literal); Warp's messages for anything else."""
    v = em.expr(node, allow_tuple=True)
    literal = getattr(v, "literal", None)
    if literal is None:
        raise em.error(node, "Slice component must be a compile-time constant.", CompileValueError)
    if not isinstance(literal, int):  # Warp takes bools here (True is 1), as Python does
        raise em.error(node, "Slice component must be an integer.", CompileTypeError)
    return int(literal)


def _step(em, s: ast.Slice) -> int:
    step = 1 if s.step is None else _constant(em, s.step)
    if step == 0:
        raise em.error(s.step, "Slice step cannot be zero.", CompileValueError)
    return step


def _composite_positions(em, s: ast.Slice, length: int) -> list:
    """Python's slice rules against the known length: negative bounds count from the end, bounds clamp."""
    step = _step(em, s)
    lower = None if s.lower is None else _constant(em, s.lower)
    upper = None if s.upper is None else _constant(em, s.upper)
    return list(range(length)[lower:upper:step])


def _array_positions(em, star, s: ast.Slice) -> list:
    """An array's length is known only at run time, so the bounds must fix the elements on their own: an
    explicit stop, nothing counted from the end, no reversal (Warp's checks, in Warp's order)."""
    step = _step(em, s)
    if step < 0 and (s.lower is None or s.upper is None):
        raise em.error(star, "Reverse slices require explicit start and stop bounds when the sequence length is not "
                             "known at compile time (e.g. slicing an array).", CompileValueError)
    start = 0 if s.lower is None else _constant(em, s.lower)
    stop = None if s.upper is None else _constant(em, s.upper)
    if stop is None:
        raise em.error(star, "Starred expression on arrays requires explicit upper bound (e.g., *array[0:3], not "
                             "*array[0:]).", CompileValueError)
    if start < 0 or stop < 0:
        raise em.error(star, "Starred expression slice bounds cannot be negative for arrays.", CompileValueError)
    if step < 0:
        raise em.error(star, "Starred expression slice step cannot be negative for arrays.", CompileValueError)
    return list(range(start, stop, step))
