"""Tuple values in kernels and @wp.func bodies, as in Warp 1.19: `t = (1, 2.0, v)`, `t = f(x)` for a function
returning several values, `len(t)`, `t[0]`, `a, b = t`, tuples passed to @wp.func parameters annotated
`tuple[...]`, `tuple[T, ...]` or `Any`.

A tuple is a compile-time group of values (values.TupleVar, type types.TupleT): it never becomes one MLIR value.
Indexing with a constant picks a part; a runtime index (a loop variable: `for i in range(len(t))`) into a
tuple whose parts share one type is a chain of `where`s, which the loop unroller folds (Warp itself unrolls such
loops and requires a constant index). A @wp.func specialization taking a tuple receives its parts as separate
arguments and rebuilds it. A tuple local reassigned in a branch merges part by part, and one reassigned in a
loop is carried part by part."""

from __future__ import annotations

import ast
import sys
import typing

from mlir import ir

from mlwarp.core import generics
from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from . import composite, composite_constructors
from . import types as ft
from .resolve import MISSING, resolve_path
from .syntax import assigned_names, int_literal, member_write_roots
from .values import FunctionVar, TupleVar, Var

TupleT = ft.TupleT


def is_tuple(v) -> bool:
    return isinstance(v, TupleVar)


def build(em, node: ast.Tuple) -> TupleVar:
    """`(a, b, c)`: a tuple of the values of its elements (tuples nest)."""
    return TupleVar([em.expr(e, allow_tuple=True) for e in node.elts])


def misuse(em, node, v):
    """The error for a tuple where a single value is needed."""
    return em.error(node, f"a tuple ({ft.name(v.type)}) cannot be used here: index it (`t[0]`), unpack it "
                          f"(`a, b = t`), take its len(), or pass it to a @wp.func", CompileTypeError)


def from_global(em, node, obj: tuple) -> TupleVar:
    """A captured Python tuple (`wp.static(...)` or a module constant): a tuple of constants."""
    return TupleVar([from_global(em, node, o) if isinstance(o, tuple) else em.global_value(node, o) for o in obj])


# -- wp.static(len(t)) -------------------------------------------------------------------------
class _RuntimeValue:
    """What wp.static() sees of a tuple part that is not a compile-time constant."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<runtime {self.type_name}>"


def _stand_in(v):
    if isinstance(v, TupleVar):
        return tuple(_stand_in(p) for p in v.parts)
    return v.literal if v.literal is not None else _RuntimeValue(ft.name(v.type))


def static_locals(em) -> dict:
    """The tuple locals as wp.static() sees them: Python tuples of their constant parts (a runtime part is a
    placeholder), so `wp.static(len(t))` is the tuple's length."""
    return {n: _stand_in(v) for n, v in em.env.items() if isinstance(v, TupleVar)}


def constant_value(v):
    """The Python tuple (nested for nested tuples) of a tuple local's parts when all are compile-time numbers
    (`shape = (wp.static(M), 1)`), else None."""
    if isinstance(v, TupleVar):
        parts = [constant_value(p) for p in v.parts]
        return None if any(p is None for p in parts) else tuple(parts)
    found = _constant_int(v)
    return found if found is not None else (v.literal if isinstance(v.literal, float) else None)


# -- reads -------------------------------------------------------------------------------------
def _constant_int(v: Var):
    """The Python int an index value is known to be at compile time (a literal, a captured constant), else None."""
    if type(v.literal) is int:
        return v.literal
    op = getattr(getattr(v.value, "owner", None), "operation", None)
    if op is not None and op.name == "arith.constant" and wt.is_int(v.type) and v.type._kind_ == "int":
        return ir.IntegerAttr(op.attributes["value"]).value
    return None


def _tuple_base(em, node):
    """The tuple `node` denotes when that is known without emitting anything (a tuple local, a tuple literal, a
    captured tuple, a constant index into one of those), a value already evaluated for a call, else None."""
    if isinstance(node, ast.Name):
        v = em.env.get(node.id)
        if isinstance(v, TupleVar):
            return v
        if node.id not in em.env:
            obj = resolve_path(em.src.func, node)
            if isinstance(obj, tuple):
                return from_global(em, node, obj)
        return None
    if isinstance(node, ast.Tuple):
        return build(em, node)
    if isinstance(node, ast.Subscript) and _tuple_base(em, node.value) is not None:
        v = em.expr(node, allow_tuple=True)
        return v if isinstance(v, TupleVar) else None
    if isinstance(node, ast.Call) and (em.program.is_function(resolve_path(em.src.func, node.func))
                                       or _is_quat_to_axis_angle(em, node)):
        return em.expr(node, allow_tuple=True)  # evaluated once: subscript() indexes whatever it gives
    return None


def subscript(em, node: ast.Subscript):
    """`t[k]` for a tuple `t`; None when the base is not a tuple."""
    base = _tuple_base(em, node.value)
    if base is None:
        return None
    if not isinstance(base, TupleVar):  # f(x)[k] for a function returning one value: index that value
        if wt.is_composite(base.type):
            return composite.get_item(em, node, base, node.slice)
        raise em.error(node, f"cannot index a value of type {ft.name(base.type)}", CompileTypeError)
    return index(em, node, base, node.slice)


def index(em, node, t: TupleVar, slice_node):
    n = len(t.parts)
    if isinstance(slice_node, ast.Slice):
        raise em.error(node, "unsupported: slicing a tuple", CompileError)
    literal = int_literal(slice_node)
    idx = None if literal is not None else em.expr(slice_node)
    if idx is not None and not wt.is_int(idx.type):
        raise em.error(node, f"tuple indices must be integers, got {ft.name(idx.type)}", CompileTypeError)
    k = literal if literal is not None else _constant_int(idx)
    if k is not None:
        if not -n <= k < n:
            raise em.error(node, f"Tuple index out of bounds, {k} >= {n}" if k >= 0 else
                           f"Tuple index out of bounds, {k} < -{n}", CompileError)
        return t.parts[k + n if k < 0 else k]
    types = {p.type for p in t.parts}
    if n == 0:
        raise em.error(node, "cannot index an empty tuple", CompileError)
    if len(types) != 1 or any(isinstance(p, TupleVar) for p in t.parts):
        raise em.error(node, f"Tuple index must be a compile time expression: the elements of this "
                             f"{ft.name(t.type)} differ in type, so a runtime index cannot choose among them",
                       CompileError)
    return _select(em, node, t.parts, idx)


def _select(em, node, parts, idx: Var) -> Var:
    """parts[idx] for a runtime index, negative ones counting from the end: a chain of `where`s (the unroller
    folds it when idx becomes a constant). An index out of range reads the last part (no check at runtime)."""
    i32 = idx if idx.type is wt.int32 else em.cast(idx, wt.int32, node)
    n = len(parts)
    result = parts[-1]
    for k in range(n - 2, -1, -1):
        hit = em.call_builtin(node, "eq", [i32, em.const(k, wt.int32)])
        hit = em.call_builtin(node, "bool_or", [hit, em.call_builtin(node, "eq", [i32, em.const(k - n, wt.int32)])])
        result = em.call_builtin(node, "where", [hit, parts[k], result])
    return result


def length(v: TupleVar) -> int:
    return len(v.parts)


def unpack(em, node, v: TupleVar, count: int) -> list:
    if len(v.parts) != count:
        raise em.error(node, f"cannot unpack {len(v.parts)} values into {count} names", CompileError)
    return list(v.parts)


# -- assignment, branches, loops ----------------------------------------------------------------
def assign(em, target, value) -> bool:
    """Binds a tuple to a name, unpacks it into a tuple target, and refuses writes into a tuple; False when
    neither the value nor the target involves a tuple."""
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        root = target
        while isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        if isinstance(root, ast.Name) and isinstance(em.env.get(root.id), TupleVar):
            raise em.error(target, f"'{root.id}' is a tuple, which cannot be changed: assign a new tuple to "
                                   f"'{root.id}' instead", CompileError)
    if isinstance(target, ast.Tuple):  # (a, b), c = t
        if not isinstance(value, TupleVar):
            raise em.error(target, f"cannot unpack a {ft.name(value.type)} into {len(target.elts)} names",
                           CompileTypeError)
        for t, v in zip(target.elts, unpack(em, target, value, len(target.elts))):
            em.assign(t, v)
        return True
    if not isinstance(value, TupleVar):
        if isinstance(target, ast.Name) and isinstance(em.env.get(target.id), TupleVar):
            old = em.env[target.id]
            raise em.error(target, f"assigning to existing symbol {target.id} ({ft.name(old.type)}) with different "
                                   f"type ({ft.name(value.type)})", CompileTypeError)
        return False
    if not isinstance(target, ast.Name):
        raise em.error(target, "a tuple can only be assigned to a name (or unpacked: `a, b = t`)", CompileError)
    old = em.env.get(target.id)
    if isinstance(old, (Var, TupleVar)) and old.type != value.type:
        raise em.error(target, f"assigning to existing symbol {target.id} ({ft.name(old.type)}) with different "
                               f"type ({ft.name(value.type)})", CompileTypeError)
    em.env[target.id] = value
    return True


def _leaves(v) -> list:
    return [x for p in v.parts for x in _leaves(p)] if isinstance(v, TupleVar) else [v]


def _count(t) -> int:
    return sum(_count(p) for p in t.types) if isinstance(t, TupleT) else 1


def _regroup(t, it):
    return TupleVar([_regroup(p, it) for p in t.types]) if isinstance(t, TupleT) else next(it)


def flatten_changed(em, node, before, then_env, else_env, what):
    """Tuples a branch of an if reassigned, as their parts under `name#k` keys, so the branches merge part by
    part (an scf.if result each); returns the environments and {name: tuple type} for unflatten(). A tuple
    defined in one branch only stays unbound after the if, as any local."""
    shapes = {}
    for name in dict.fromkeys([*then_env, *else_env]):
        x, y = then_env.get(name), else_env.get(name)
        if x is y or not (isinstance(x, TupleVar) or isinstance(y, TupleVar)):
            continue
        if not (isinstance(x, (Var, TupleVar)) and isinstance(y, (Var, TupleVar))):
            continue  # not defined on every path: unbound after the if
        if x.type != y.type:
            raise em.error(node, f"variable '{name}' has type {ft.name(x.type)} in one branch and "
                                 f"{ft.name(y.type)} in the other", CompileTypeError)
        shapes[name] = x.type
    if not shapes:
        return before, then_env, else_env, shapes
    envs = []
    for env in (before, then_env, else_env):
        env = dict(env)
        for name in shapes:
            v = env.pop(name, None)
            if isinstance(v, TupleVar):
                env.update({f"{name}#{k}": leaf for k, leaf in enumerate(_leaves(v))})
        envs.append(env)
    return (*envs, shapes)


def unflatten(env, shapes):
    """The merged environment with each flattened tuple rebuilt from its parts."""
    for name, t in shapes.items():
        leaves = [env.pop(f"{name}#{k}") for k in range(_count(t))]
        bad = next((v for v in leaves if not isinstance(v, Var)), None)
        env[name] = bad if bad is not None else _regroup(t, iter(leaves))
    return env


def _flatten_into(env, name, v):
    del env[name]
    env.update({f"{name}#{k}": leaf for k, leaf in enumerate(_leaves(v))})


def flatten_loop(em, node, body, var_name) -> dict:
    """Tuple locals defined before a loop that its body reassigns: replaced in em.env by their parts (`name#k`),
    which the loop carries as single values; the body sees the tuple (unflatten), gives its parts back at the end
    (reflatten), and the tuple is rebuilt after the loop. Returns {name: tuple type}."""
    if isinstance(em.env.get(var_name), TupleVar):
        raise em.error(node, f"the loop variable '{var_name}' is a tuple defined before the loop; use another name",
                       CompileError)
    shapes = {}
    # (a tuple a call updates in place: a wp.tile_stack that wp.tile_stack_push advances, tiles.py)
    for n in dict.fromkeys(assigned_names(body) + member_write_roots(body) + em.updated_in_place(body)):
        v = em.env.get(n)
        if isinstance(v, TupleVar):
            shapes[n] = v.type
            _flatten_into(em.env, n, v)
    return shapes


def leaf_names(env, shapes) -> list:
    return [f"{n}#{k}" for n, t in shapes.items() for k in range(_count(t))]


def reflatten(em, node, shapes):
    """At the end of a loop body: each carried tuple back as its parts."""
    for n, t in shapes.items():
        v = em.env.get(n)
        if isinstance(v, TupleVar):
            if v.type != t:  # (assignments keep a tuple's type; this guards the carried layout)
                raise em.error(node, f"loop variable '{n}' changes type from {ft.name(t)} to {ft.name(v.type)} "
                                     f"inside the loop", CompileTypeError)
            _flatten_into(em.env, n, v)


# -- @wp.func parameters and results --------------------------------------------------------------
def flat_types(types) -> list:
    """The MLIR types of parameters, a tuple's parts in order in place of the tuple."""
    out = []
    for t in types:
        out.extend(flat_types(t.types) if isinstance(t, TupleT) else [ft.to_mlir(t)])
    return out


def flat_values(values) -> list:
    out = []
    for v in values:
        out.extend(flat_values(v.parts) if isinstance(v, TupleVar) else [v.value])
    return out


def rebuild(types, arguments) -> list:
    """The parameters' values from a function's flattened block arguments."""
    it = iter(arguments)

    def one(t):
        if isinstance(t, ft.FunctionT):  # a function value: its target (functions.py)
            return FunctionVar(t.target)
        return TupleVar([one(p) for p in t.types]) if isinstance(t, TupleT) else Var(next(it), t)

    return [one(t) for t in types]


def is_tuple_annotation(annotation) -> bool:
    return annotation is tuple or annotation is typing.Tuple or typing.get_origin(annotation) is tuple


def matches(arg_type, annotation, element_matches) -> bool:
    """Whether a tuple argument fits a `tuple`, `tuple[A, B]` or `tuple[T, ...]` annotation (`Any` is matched by
    the generic path); `element_matches(type, annotation)` checks one part."""
    if not isinstance(arg_type, TupleT) or not is_tuple_annotation(annotation):
        return False
    args = typing.get_args(annotation)
    if not args:  # bare `tuple`
        return True
    if len(args) == 2 and args[1] is Ellipsis:
        return all(_element(t, args[0], element_matches) for t in arg_type.types)
    if args == ((),):  # tuple[()]
        return not arg_type.types
    return len(args) == len(arg_type.types) and all(_element(t, a, element_matches)
                                                      for t, a in zip(arg_type.types, args))


def _element(t, annotation, element_matches) -> bool:
    if isinstance(t, TupleT) or is_tuple_annotation(annotation):
        return matches(t, annotation, element_matches)
    if generics.is_generic(annotation):
        return generics.matches_template(t, annotation)
    return element_matches(t, annotation)


def return_parts(em, node, v) -> list:
    """The values `return t` gives for a tuple: its parts (a tuple inside is refused)."""
    if not isinstance(v, TupleVar):
        return [v]
    for p in v.parts:
        if isinstance(p, TupleVar):
            raise em.error(node, "a @wp.func cannot return a tuple inside a tuple", CompileTypeError)
    return list(v.parts)


def _is_quat_to_axis_angle(em, node) -> bool:
    wv = sys.modules.get("mlwarp.core.vector")
    obj = resolve_path(em.src.func, node.func)
    return obj is not MISSING and wv is not None and obj is getattr(wv, "quat_to_axis_angle", None)


def builtin_call(em, node):
    """A builtin returning several values kept as a tuple (`t = wp.quat_to_axis_angle(q)`); None for others."""
    if not _is_quat_to_axis_angle(em, node):
        return None
    return TupleVar(composite_constructors.tuple_call(em, node, 2))
