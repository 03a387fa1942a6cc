"""Expressions: constants, names and captured globals, attributes, operators (binary, unary, boolean,
comparisons), conditional expressions, tuples, subscripts of arrays (array_access) and the values wp.static()
sees of the locals.

Part of the kernel emitter (codegen.KernelEmitter mixes these methods in); calls are calls.py's."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileKeyError, CompileTypeError, UnsupportedSyntaxError

from ..dialects.warp import builders as wb
from . import composite, composite_constructors, fabric, indexed, operators, ptr_arrays, slicing, slots, tiles, tuples
from . import starred  # f(*v), wp.vec4(*v3, 1.0): starred arguments become their components
from . import tile_views  # t[i], t[a:b, :], t[indices, :], wp.tile_view: views alias their tile
from . import types as ft
from .resolve import MISSING, StaticError, dotted_name, is_static_call, resolve_path, static_value
from .syntax import int_literal, unsupported_message, walk
from .values import FunctionVar, TupleVar, Unbound, Var


BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "bit_and", ast.BitOr: "bit_or", ast.BitXor: "bit_xor",
    ast.LShift: "lshift", ast.RShift: "rshift", ast.MatMult: "matmul",
}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_CMP_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class ExpressionEmitter:
    """What the emitter does with each expression kind (`expr_<ast class>`)."""

    def expr(self, node, allow_none=False, allow_tuple=False) -> Var:
        handler = getattr(self, "expr_" + type(node).__name__, None)
        if handler is None:
            raise self.error(node, unsupported_message(node),
                             UnsupportedSyntaxError)
        with self.loc(node):
            try:
                v = handler(node)
            except StaticError as e:  # a wp.static() expression Python could not evaluate
                raise self.error(node, str(e), CompileError) from None
        if v is None and not allow_none:
            raise self.error(node, "this expression has no value", CompileError)
        if isinstance(v, list):  # several results of a @wp.func: a tuple
            v = TupleVar(v)
        if isinstance(v, TupleVar) and not allow_tuple:
            raise tuples.misuse(self, node, v)
        return v

    def tuple_values(self, node, count) -> list:
        if starred.has_starred(node):  # a, b = f(*v): the tuple paths below read the call's arguments themselves
            with starred.expanded(self, node) as call:
                return self.tuple_values(call, count)
        if isinstance(node, ast.Tuple):
            if len(node.elts) != count:
                raise self.error(node, f"cannot unpack {len(node.elts)} values into {count} names")
            return [self.expr(e, allow_tuple=True) for e in node.elts]
        parts = composite_constructors.tuple_call(self, node, count) if isinstance(node, ast.Call) else None
        if parts is not None:  # axis, angle = wp.quat_to_axis_angle(q)
            return parts
        parts = self.program.tuple_call(self, node, count)
        if parts is not None:  # a, b = f(x) with a @wp.func returning a tuple
            return parts
        if isinstance(node, ast.Call) and self.intrinsic(node.func) == "tid":
            with self.loc(node):
                return self.call_tid(node, count)
        v = self.expr(node, allow_tuple=True)
        if isinstance(v, TupleVar):  # a, b = t
            return tuples.unpack(self, node, v, count)
        raise self.error(node, f"cannot unpack a {ft.name(v.type)} into {count} names", CompileTypeError)

    def constant_locals(self) -> dict:
        """The locals wp.static() sees as Python values: those holding a literal (`n = 4`), as Warp's constant
        variables, and composites as stand-ins of their type's length (`wp.static(len(v))`, as Warp's len())."""
        out = {}
        for name, v in self.env.items():
            if type(v) is not Var:
                continue
            if v.literal is not None:
                out[name] = v.literal
            elif wt.is_composite(v.type) and not wt.is_struct(v.type):
                out[name] = _SizedStandIn(ft.name(v.type), wt.inner_shape(v.type)[0])
        return out

    def static_int(self, node):
        """A range() bound known at compile time: an int literal or `wp.static(...)` of an int or bool (Warp
        keeps a static bool's literal kind: range(wp.static(True)) is range(1)); else None."""
        found = int_literal(node)
        if found is None and is_static_call(self.src.func, node):
            value = static_value(self.src.func, node, self.static_scope())
            if isinstance(value, (bool, int)) and not isinstance(value, wt.scalar_base):
                found = int(value)
        return found

    def static_scope(self) -> dict:
        """The locals a wp.static() expression evaluated now sees."""
        return {**self.constant_locals(), **tiles.static_locals(self), **tuples.static_locals(self),
                **self.static_loop_values}

    def const(self, value, t) -> Var:
        mt = ft.to_mlir(t)
        if wt.is_float(t):
            return Var(arith.ConstantOp(mt, ir.FloatAttr.get(mt, float(value))).result, t)
        return Var(wb.int_constant(mt, int(bool(value)) if ir.IntegerType(mt).width == 1 else int(value)), t)

    def expr_Constant(self, node):
        v = node.value
        if isinstance(v, (bool, int, float)):  # marked as a literal: a wp.ref[T] argument cannot be one (refs.py)
            t = wt.bool_ if isinstance(v, bool) else wt.float32 if isinstance(v, float) else \
                wt.int32 if -(2 ** 31) <= v < 2 ** 31 else wt.int64
            c = self.const(v, t)
            c.literal = v
            return c
        raise self.error(node, f"unsupported constant {v!r} ({type(v).__name__})", UnsupportedSyntaxError)

    def expr_Name(self, node):
        v = self.env.get(node.id)
        if isinstance(v, (Var, TupleVar)):
            return v
        if isinstance(v, tile_views.TileViewRef):
            return tile_views.read_ref(self, node, v)
        for pending in reversed(self.loop_pending):  # a loop's first emission (emit_loop): any value will do
            if node.id in pending:
                if pending[node.id] is None:
                    raise self.error(node, f"'{node.id}' is read before any assignment to it in the loop; define "
                                           f"it before the loop", CompileError)
                zero = self.unassigned_value(pending[node.id])
                if zero is not None:
                    return zero
                break
        if isinstance(v, Unbound):
            raise self.error(node, v.reason, CompileError)
        return self.global_value(node, resolve_path(self.src.func, node))

    def expr_Attribute(self, node):
        rank = slicing.ndim_attribute(self, node) or ptr_arrays.ptr_attribute(self, node)  # a.ndim, a.ptr
        if rank is not None:
            return rank
        member = composite.attribute(self, node)  # v.x, t.p, p.pos
        if member is not None:
            return member
        if isinstance(node.value, ast.Name) and isinstance(self.env.get(node.value.id), Var):
            raise composite.not_an_attribute(self, node, self.env[node.value.id].type, node.attr)
        return self.global_value(node, resolve_path(self.src.func, node))

    def global_value(self, node, obj):
        """A captured Python value becomes a compile-time constant, as in Warp."""
        if obj is MISSING and isinstance(node, ast.Name):  # Warp's KeyError
            raise self.error(node, f"Referencing undefined symbol: {node.id}", CompileKeyError)
        if obj is MISSING:
            raise self.error(node, f"undefined name '{dotted_name(node)}'", CompileError)
        if isinstance(obj, (bool, int, float)):  # typed as the literal would be, and marked as one (wp.PI)
            return self.expr_Constant(ast.Constant(obj))
        if isinstance(obj, wt.scalar_base):
            return self.const(obj.value, type(obj))
        if wt.is_composite(type(obj)):
            return composite.constant(self, node, obj)
        if isinstance(obj, tuple):
            return tuples.from_global(self, node, obj)
        if self.program.is_function(obj) and not isinstance(obj, type) or getattr(obj, "_wp_builtin_", None) \
                or getattr(obj, "_wp_intrinsic_", None):  # a function as a value: g in f(g, x) (functions.py)
            return FunctionVar(obj)
        raise self.error(node, f"'{dotted_name(node)}' refers to a Python {type(obj).__name__}, which kernels "
                               f"cannot use", CompileError)

    def binop(self, node, opname, a: Var, b: Var) -> Var:
        if isinstance(a.type, ft.ArrayT) or isinstance(b.type, ft.ArrayT):
            raise self.error(node, f"operator '{opname}' is not defined for arrays", CompileTypeError)
        user = operators.user_overload(self, node, opname, [a, b])  # a @wp.func named `add`: operators.py
        return user if user is not None else self.call_builtin(node, opname, [a, b])

    def expr_BinOp(self, node):
        opname = BINOPS.get(type(node.op))
        if opname is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}", UnsupportedSyntaxError)
        return self.binop(node, opname, self.expr(node.left), self.expr(node.right))

    def expr_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return self.call_builtin(node, "bool_not", [self.to_bool(self.expr(node.operand))])
        v = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub) and isinstance(v, Var) and type(v.literal) in (int, float):
            # -3, -wp.pi, -y (y = 0.1): a constant still, as Warp folds them, so wp.float64(-wp.pi) stays exact
            return self.expr_Constant(ast.Constant(-v.literal))
        return self.call_builtin(node, "neg" if isinstance(node.op, ast.USub) else "invert", [v])

    def expr_BoolOp(self, node):
        """`and`/`or` short-circuit, as in Python and Warp: an operand that calls or indexes (it may have
        effects or read out of bounds: `i < n and a[i] > 0`) runs under an scf.if; plain operands are
        combined without a branch."""
        is_and = isinstance(node.op, ast.And)
        name = "bool_and" if is_and else "bool_or"
        result = self.to_bool(self.expr(node.values[0]))
        for v in node.values[1:]:
            if not any(isinstance(n, (ast.Call, ast.Subscript)) for n in walk(v)):
                result = self.call_builtin(node, name, [result, self.to_bool(self.expr(v))])
                continue
            evaluate = lambda v=v: self.to_bool(self.expr(v))  # noqa: E731
            decided = lambda: self.const(not is_and, wt.bool_)  # noqa: E731
            result = self.emit_branches(result.value, *((evaluate, decided) if is_and else (decided, evaluate)), node,
                                        what=f"the '{'and' if is_and else 'or'}'")
        return result

    def expr_Compare(self, node):
        result, left = None, self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op))
            if name is None:
                raise self.error(node, f"unsupported comparison {type(op).__name__}", UnsupportedSyntaxError)
            right = self.expr(comp)
            if result is not None and left.type != right.type:  # as Warp, which chains only one type's operands
                raise self.error(node, f"Cannot chain comparisons of unequal types: {ft.name(left.type)} "
                                       f"{_CMP_SYMBOLS[type(op)]} {ft.name(right.type)}.", CompileTypeError)
            c = self.call_builtin(node, name, [left, right])
            result = c if result is None else self.call_builtin(node, "bool_and", [result, c])
            left = right
        return result

    def expr_IfExp(self, node):
        return self.emit_branches(self.condition(node.test), lambda: self.expr(node.body), lambda: self.expr(node.orelse),
                                  node, what="the conditional expression")

    def expr_Tuple(self, node):
        return tuples.build(self, node)  # (a, b): a tuple value (tuples.py)

    def expr_Subscript(self, node):
        base = node.value
        part = tuples.subscript(self, node)  # t[0], f(x)[1]
        if part is not None:
            return part
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            arr = self.expr(base.value)
            if indexed.is_indexed(arr.type) and int_literal(node.slice) in range(arr.type._wp_indexed_[1]):
                return indexed.dim(arr, int_literal(node.slice))  # wp.indexedarray: indexed.py
            if isinstance(arr.type, ft.ArrayT):
                dim = int_literal(node.slice)
                if dim is not None and arr.type.ndim <= dim < 4:  # as Warp: the unused dimensions are 0
                    return self.const(0, wt.int32)
                if dim is None or not 0 <= dim < arr.type.ndim:
                    raise self.error(node, f"shape index must be a constant in 0..{arr.type.ndim - 1}")
                return Var(wb.array_dim(arr.value, dim), wt.int32)
        part = tile_views.subscript(self, node)  # t[i, j], t[i], t[a:b, :], t[indices, :], wp.tile_sum(t)[0]
        if part is not None:
            return part
        element = composite.subscript(self, node)  # v[0], m[i, j], m[i]
        if element is not None:
            return element
        if slicing.is_slicing(node):  # a[1:3], a[i, ::-1]: a strided view (slicing.py)
            arr = self.expr(node.value)
            if isinstance(arr.type, ft.ArrayT):
                return slicing.build(self, node, arr)
        arr, indices = self.array_access(node, allow_view=True)
        if indices is None:  # a[i] of a 2-d indexed array: its 1-d indexed row
            return arr
        if len(indices) < arr.type.ndim:  # a[i] of a 2-d array: its row, a 1-d array (as in Warp)
            return Var(wb.view(arr.value, indices), ft.ArrayT(arr.type.dtype, arr.type.ndim - len(indices)))
        return Var(wb.load(arr.value, indices), arr.type.dtype)

    def array_access(self, node: ast.Subscript, allow_view=False):
        """The array and i32 indices of `a[i, j]`; with `allow_view`, fewer indices than dimensions
        (the leading ones of a sub-array view)."""
        slot_element = slots.indexed_array(self, node)
        arr = self.expr(node.value)
        if indexed.is_indexed(arr.type):
            ndim = arr.type._wp_indexed_[1]
        elif fabric.is_fabric(arr.type):
            ndim = fabric.rank(self, node, arr.type)
        elif isinstance(arr.type, ft.ArrayT):
            ndim = arr.type.ndim
        else:
            raise self.error(node, f"cannot index a value of type {ft.name(arr.type)}", CompileTypeError)
        idx_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, ast.Slice) for i in idx_nodes):
            raise self.error(node, "unsupported: slicing an array inside a kernel", UnsupportedSyntaxError)
        if len(idx_nodes) > ndim:  # also `a2d[0][1, 2]`: the view a2d[0] is 1-d (Warp's text)
            raise self.error(node, slicing.too_many_indices(len(idx_nodes), ndim), CompileError)
        if len(idx_nodes) < ndim and not allow_view:
            raise self.error(node, f"a {ndim}-d array needs {ndim} indices, got "
                                   f"{len(idx_nodes)}", CompileError)
        indices = []
        for i in idx_nodes:
            v = self.expr(i)
            if not wt.is_int(v.type):
                raise self.error(i, slots.SLOT_INDICES if slot_element else
                                 f"array indices must be integers, got {ft.name(v.type)}", CompileTypeError)
            indices.append(wb.cast(v.value, ft.to_mlir(wt.int32)))
        if indexed.is_indexed(arr.type):  # data[i0[i] + i * u0, ...] (indexed.py)
            return indexed.access(self, node, arr, indices, allow_view)
        if fabric.is_fabric(arr.type):  # the element's bucket's memory (fabric.py)
            return fabric.access(self, node, arr, indices, allow_view)
        return arr, indices


class _SizedStandIn:
    """What wp.static() sees of a vector, matrix, quaternion or transform local: its type's length."""

    def __init__(self, type_name, length):
        self.type_name, self.length = type_name, length

    def __len__(self):
        return self.length

    def __repr__(self):
        return f"<runtime {self.type_name}>"
