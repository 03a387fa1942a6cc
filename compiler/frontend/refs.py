"""`wp.ref[T]` parameters and `wp.address_of`.

A `@wp.func` parameter annotated `wp.ref[T]` is passed by copy-in/copy-out: the call passes the argument's
value, the function's specialization returns the final value of each reference parameter its body changes
(after its declared results), and the caller assigns each back to the argument expression through the path an
assignment to it takes (`x = ...`, `a[i] = ...`, `s.f = ...`, `v.y = ...`). Every call is inlined (warp-inline),
so this is the same as writing through a pointer, and the adjoint passes see ordinary loads, stores and
member writes. The argument must be addressable: a chain of subscripts and attributes ending in a local name
(a local, a parameter of the caller, an array argument); literals, temporaries and call results are rejected
with Warp's message. A `wp.ref` of an array is an array parameter (arrays are references already).

`wp.address_of(a[i])` (also `a[i].field`, `a[i].v.y`, `a[i][j]` with constant component indices) is the
uint64 address of an array element's storage; locals have no address (they are SSA values), so
`wp.address_of(local)` is a CompileError that says so.
"""

from __future__ import annotations

import ast
import ctypes

from mlir import ir
from mlir.dialects import arith

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError
from mlwarp.core.refs import Reference, copies_back, strip_reference
from mlwarp.core.vector import quaternion, vector

from ..dialects import llvm
from ..dialects.warp import builders as wb
from . import starred
from . import types as ft
from .composite import missing_field
from .syntax import int_literal, walk
from .values import Var


def by_reference(annotation) -> bool:
    """Whether a parameter annotated `annotation` is copied back to its argument (a `wp.ref` of a value)."""
    return copies_back(annotation)


def _not_addressable(purpose: str) -> str:
    return (f"{purpose} requires an addressable expression "
            f"(local variable, array element, struct field, or wp.ref[T] parameter)")


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def is_temporary(node) -> bool:
    """Whether `node` is a value with no storage of its own (a call's result, a literal, an operator's value):
    no chain of subscripts and attributes ending in a name of the kernel's scope."""
    return isinstance(node, ast.AST) and not (isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))
                                              and isinstance(_root(node), ast.Name))


def temporaries_allowed(function) -> bool:
    """Whether `function` (a @wp.func standing for one of Warp's builtins, marked by `takes_temporaries`)
    takes a temporary for a wp.ref[T] parameter, as Warp's builtins do (their C++ reference binds to it):
    the argument is evaluated and the function's final value of it dropped."""
    return getattr(function, "_wp_takes_temporaries_", False)


def check_addressable(em, node, purpose: str) -> None:
    """Raises Warp's CompileError unless `node` denotes storage: subscripts and attributes ending in a local."""
    if not isinstance(node, ast.AST):  # a default value
        raise em.error(em.src.tree, _not_addressable(purpose), CompileError)
    root = _root(node)
    # a component of a starred argument is a copy (as in Warp, where it is no addressable expression either)
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) or not isinstance(root, ast.Name) or \
            not isinstance(em.env.get(root.id), Var) or starred.is_component_root(root.id):
        raise em.error(node, _not_addressable(purpose), CompileError)
    local = em.env[root.id]
    if node is root and local.literal is not None:
        t = local.type
        ctor = f"wp.{wt.type_repr(t)}" if wt.is_scalar(t) else wt.type_repr(t)
        raise em.error(node, f"Error taking a mutable reference to constant local '{root.id}', use the following "
                             f"syntax: {root.id} = {ctor}({local.literal!r}) to declare a dynamic variable",
                       CompileError)


def ref_purpose(annotation: Reference) -> str:
    return f"wp.ref[{wt.type_repr(annotation.value_type)}] parameter"


def pin(em, node):
    """`node` with each index expression that calls something (`a[wp.atomic_add(n, 0, 1)]`) evaluated now
    and replaced by a hidden local, so that the copy-in read and the copy-out write address the same element
    and the call runs once. The AST is shared by every specialization: a changed node is a new node."""
    if isinstance(node, ast.Attribute):
        value = pin(em, node.value)
        return node if value is node.value else \
            ast.copy_location(ast.Attribute(value=value, attr=node.attr, ctx=node.ctx), node)
    if not isinstance(node, ast.Subscript):
        return node
    value = pin(em, node.value)
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    pinned = []
    for e in elts:
        if any(isinstance(n, ast.Call) for n in walk(e)):
            em.ref_pins = getattr(em, "ref_pins", 0) + 1
            name = f"$ref_index{em.ref_pins}"
            em.env[name] = em.expr(e)
            e = ast.copy_location(ast.Name(id=name, ctx=ast.Load()), e)
        pinned.append(e)
    if value is node.value and all(a is b for a, b in zip(pinned, elts)):
        return node
    index = ast.copy_location(ast.Tuple(elts=pinned, ctx=ast.Load()), node.slice) \
        if isinstance(node.slice, ast.Tuple) else pinned[0]
    return ast.copy_location(ast.Subscript(value=value, slice=index, ctx=node.ctx), node)


def updated_by_reference(em, stmts, resolve) -> list:
    """The locals a @wp.func call in `stmts` may change through a wp.ref[T] parameter (the root names of its
    arguments there), for the loops that must carry them; `resolve(node)` is the object a call's func
    denotes. Any overload's reference parameter counts (more carried names cost nothing)."""
    found = []
    for s in stmts:
        for n in walk(s):
            if not isinstance(n, ast.Call):
                continue
            try:
                obj = resolve(n.func)
            except Exception:  # noqa: BLE001  (a wp.static(...) callee that fails is reported where it is emitted)
                continue
            if getattr(obj, "_wp_native_", False) is True:  # a @wp.func_native: its one signature
                overloads = [obj]
            elif getattr(obj, "_wp_function_", False):
                overloads = obj.overloads
            else:
                continue
            for o in overloads:
                names = [p.name for p in o.params]
                refs = {p for p, a in zip(names, o.annotations) if by_reference(a)}
                if not refs:
                    continue
                args = [a for k, a in enumerate(n.args) if k < len(names) and names[k] in refs]
                args += [kw.value for kw in n.keywords if kw.arg in refs]
                for a in args:
                    root = _root(a)
                    if isinstance(root, ast.Name) and isinstance(em.env.get(root.id), Var) and \
                            not isinstance(em.env[root.id].type, ft.ArrayT):
                        found.append(root.id)
    return found


# -- wp.address_of ---------------------------------------------------------------------------------
def _byte_offset(em, node, t, member) -> tuple:
    """(offset in bytes, type) of `member` (an ast.Attribute or constant ast.Subscript) inside a value of
    type t stored in an array."""
    kind = wt.composite_kind(t)
    if isinstance(member, ast.Attribute):
        if kind == "struct":
            ctype = t._ctype_ if hasattr(t, "_ctype_") else None
            for fname, ftype in t._wp_fields_:
                if fname == member.attr:
                    if ctype is None or wt.is_array(ftype):
                        break
                    return getattr(ctype, fname).offset, ftype
            else:
                raise missing_field(em, member, t, member.attr)
        elif kind == "transform" and member.attr in ("p", "q"):
            s = wt.scalar_type_of(t)
            return (0, vector(3, s)) if member.attr == "p" else (3 * ctypes.sizeof(s._ctype_), quaternion(s))
        elif kind in ("vec", "quat") and member.attr in "xyzw" and len(member.attr) == 1:
            k = "xyzw".index(member.attr)
            s = wt.scalar_type_of(t)
            if k < t._shape_[0]:
                return k * ctypes.sizeof(s._ctype_), s
    elif isinstance(member, ast.Subscript) and kind in ("vec", "quat", "mat", "transform"):
        idx = member.slice.elts if isinstance(member.slice, ast.Tuple) else [member.slice]
        consts = [int_literal(i) for i in idx]
        shape = wt.inner_shape(t)
        s = wt.scalar_type_of(t)
        if None not in consts and len(consts) <= len(shape):
            consts = [c + n if c < 0 else c for c, n in zip(consts, shape)]
            if all(0 <= c < n for c, n in zip(consts, shape)):
                size = ctypes.sizeof(s._ctype_)
                if len(shape) == 2 and len(consts) == 1:
                    return consts[0] * shape[1] * size, vector(shape[1], s)
                flat = consts[0] * shape[1] + consts[1] if len(consts) == 2 else consts[0]
                return flat * size, s
    raise em.error(member, "wp.address_of() takes an array element or a field or constant-index component of "
                           "one", CompileError)


def address_of(em, node: ast.Call) -> Var:
    if len(node.args) != 1 or node.keywords:
        raise em.error(node, "wp.address_of() takes exactly one positional argument", CompileError)
    arg = node.args[0]
    check_addressable(em, arg, "wp.address_of()")
    members = []
    n = arg
    while isinstance(n, (ast.Attribute, ast.Subscript)):
        if isinstance(n, ast.Subscript) and isinstance(em.expr(n.value).type, ft.ArrayT):
            break
        members.append(n)
        n = n.value
    if not isinstance(n, ast.Subscript):
        raise em.error(arg, "wp.address_of() of a local value: mlwarp keeps kernel locals in registers (SSA "
                            "values), which have no address; only array elements (and their fields and "
                            "components) have one. Pass the value to a wp.ref[T] parameter instead",
                       CompileError)
    arr, indices = em.array_access(n)
    t, offset = arr.type.dtype, 0
    for m in reversed(members):
        off, t = _byte_offset(em, m, t, m)
        offset += off
    with em.loc(arg):
        i64 = ir.IntegerType.get_signless(64)
        addr = llvm.ptrtoint(i64, wb.address(arr.value, indices))
        if offset:
            addr = arith.AddIOp(addr, arith.ConstantOp(i64, ir.IntegerAttr.get(i64, offset)).result).result
    return Var(wb.cast(addr, ft.to_mlir(wt.uint64)), wt.uint64)


__all__ = ["by_reference", "is_temporary", "temporaries_allowed", "check_addressable", "ref_purpose", "pin",
           "updated_by_reference", "address_of", "strip_reference"]
