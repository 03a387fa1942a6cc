"""Calls in kernels and functions: expr_Call dispatches each callee (wp.static, wp.grad, constructors, @wp.func,
builtins from the table, intrinsics such as wp.tid and the atomics, tile functions, printing, native
snippets) to its emitter; builtins from the table are typed and emitted by call_builtin.

Part of the kernel emitter (codegen.KernelEmitter mixes these methods in)."""

from __future__ import annotations

import ast
import warnings

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileAttributeError, CompileError, CompileKeyError, CompileTypeError, UnsupportedSyntaxError

from ..builtins import resolve
from ..builtins.table import converted_arg_types
from ..dialects.warp import builders as wb
from . import (atomics, composite_constructors, fabric, fixed, indexed, keywords, printing, ptr_arrays, refs,
               tile_calls, tiles, tuples, type_exprs)
from . import dtype_dispatch
from . import grad_call  # wp.grad(f)(x)
from . import hints  # prefetch(a[i])
from . import bitcast  # wp.cast(a, dtype)
from . import starred  # f(*v), wp.vec4(*v3, 1.0): starred arguments become their components
from . import native_calls  # @wp.func_native calls
from . import geometry  # wp.hash_grid_query, wp.bvh_query_next, ...
from . import tile_views  # t[i], t[a:b, :], t[indices, :], wp.tile_view: views alias their tile
from . import types as ft
from .resolve import (MISSING, dotted_name, is_static_call, missing_function_message, python_function_builtin,
                      resolve_path, static_value)
from .values import FunctionVar, TupleVar, Var


_CASTS = {float: wt.float32, int: wt.int32, bool: wt.bool_}


class CallEmitter:
    """`f(...)` for every kind of callee."""

    def expr_Call(self, node):
        if starred.has_starred(node):
            with starred.expanded(self, node) as call:
                return self.expr_Call(call)
        if is_static_call(self.src.func, node):  # wp.static(expr): a compile-time value
            return self.global_value(node, static_value(self.src.func, node, self.static_scope()))
        if isinstance(node.func, ast.Call) and grad_call.is_grad(resolve_path(self.src.func, node.func.func)):
            called = self.expr(node.func, allow_tuple=True)  # wp.grad(f)(x): a call of the function value it gave
            return grad_call.call(self, node, called.target)
        if isinstance(node.func, ast.Name) and grad_call.is_wrapper(self.env.get(node.func.id)):
            return grad_call.call(self, node, self.env[node.func.id].target)  # g = wp.grad(f); g(x)
        if is_static_call(self.src.func, node.func):  # wp.static(funcs[i])(...): evaluated with the constant
            obj = static_value(self.src.func, node.func, self.static_scope())  # locals (an unrolled loop's i)
        else:
            obj = self.local_type(node.func)  # a local shadows a global of the same name
        if isinstance(node.func, ast.Name) and isinstance(self.env.get(node.func.id), FunctionVar):
            obj = self.env[node.func.id].target  # g(x) for a function value g: a call of its target
            if not (self.program.is_function(obj) or getattr(obj, "_wp_builtin_", None)):
                raise self.error(node, f"'{node.func.id}' holds '{getattr(obj, '__name__', obj)}', which cannot be "
                                       f"called through a function value", CompileError)
        if obj is MISSING:
            obj = resolve_path(self.src.func, node.func)
        if grad_call.is_grad(obj):  # wp.grad(f): a function value (grad_call.py)
            return grad_call.wrapper(self, node)
        if composite_constructors.is_constructor(obj):  # wp.vec3(...), Particle(), wp.identity(n=3, dtype=float)
            return composite_constructors.construct(self, node, obj)
        if self.program.is_function(obj):  # a @wp.func (keyword arguments and defaults allowed)
            return self.program.call(self, node, obj)
        if getattr(obj, "_wp_dtype_dispatch_", None):  # wp.volume_lookup(..., dtype=T): dtype_dispatch.py
            return dtype_dispatch.call(self, node, obj)
        if getattr(obj, "_wp_stateful_", None):  # wp.randf(state): advances the state variable (random.py)
            return self.program.call_stateful(self, node, obj)
        if obj is print or getattr(obj, "_wp_intrinsic_", None) in printing.STATEMENTS:  # printing.py
            return printing.call(self, node, "print" if obj is print else obj._wp_intrinsic_)
        if getattr(obj, "_wp_local_array_", False):  # wp.zeros(shape, dtype): a fixed-size array (fixed.py)
            return fixed.zeros(self, node)
        if ptr_arrays.is_array_class(obj):  # wp.array(ptr=..., shape=..., dtype=...): over existing memory
            return ptr_arrays.construct(self, node)
        if getattr(obj, "_wp_native_barrier_", False):  # @wp.func_native("WP_TILE_SYNC();"): native.py
            if node.args or node.keywords:
                raise self.error(node, f"'{obj.key}' (a barrier snippet) takes no arguments", CompileTypeError)
            tiles.mark_cooperative(self)  # the block's lanes meet at it (Warp's CPU lanes; CUDA's block)
            tiles.sync(self)
            return None
        if native_calls.is_native(obj):  # @wp.func_native: its C++ compiled with the kernel (native_calls.py)
            return native_calls.call(self, node, obj)
        if getattr(obj, "_wp_removed_", None):  # e.g. wp.select: Warp's message points to the replacement
            raise self.error(node, obj._wp_removed_, CompileError)
        tile = getattr(obj, "_wp_tile_", None)
        if tile is not None:  # wp.tile_load, wp.tile_matmul, ...: the tile table's records (tile_calls.py)
            return tile_calls.call(self, node, tile)
        if getattr(obj, "_wp_intrinsic_", None) == "cast":  # wp.cast(a, dtype): a's bits as a dtype (bitcast.py)
            return bitcast.call(self, node)
        if getattr(obj, "_wp_intrinsic_", None) == "breakpoint":  # wp.breakpoint(): see debug_break
            return self.debug_break(node)
        if obj is MISSING and node.keywords and self.intrinsic(node.func) is None:  # no such function: say so
            if isinstance(node.func, ast.Name):
                raise self.error(node, f"Referencing undefined symbol: {node.func.id}", CompileKeyError)
            raise self.error(node, missing_function_message(self.src.func, node.func), CompileAttributeError)
        if node.keywords:  # wp.pow(y=4.0, x=2.0): by Warp's parameter names (keywords.py)
            name = getattr(obj, "_wp_builtin_", None) or python_function_builtin(obj)
            if name is None:
                raise self.error(node, "unsupported: keyword arguments in a builtin call", UnsupportedSyntaxError)
            node = keywords.positional(self, node, name)
        if obj is len:
            return self.call_len(node)
        target = _CASTS.get(obj) if isinstance(obj, type) and obj in _CASTS else obj
        if wt.is_scalar(target):
            if not node.args:  # float32(): zero, as Warp's scalar constructors
                return self.const(0, target)
            if len(node.args) != 1:
                raise self.error(node, f"{ft.name(target)}() takes zero or one argument")
            # wp.float64(-0.3), wp.float64(wp.pi), wp.float64(y) with y = 0.1: one float64 constant, never a
            # float32 one widened; wp.int8(300) wraps to 44, as in Warp
            return self.convert(self.expr(node.args[0]), target, node)
        name = getattr(obj, "_wp_builtin_", None) or python_function_builtin(obj)
        if name is not None:
            return self.call_builtin(node, name, [self.expr(a) for a in node.args])
        intrinsic = self.intrinsic(node.func)
        if intrinsic == "tid":
            return self.call_tid(node, 1)[0]
        if intrinsic is not None and intrinsic.startswith("atomic_"):  # atomics.py: every wp.atomic_*
            return atomics.call(self, node, intrinsic[len("atomic_"):])
        if intrinsic in geometry.INTRINSICS:  # wp.hash_grid_query, wp.bvh_query_next, ... (geometry.py)
            return geometry.call(self, node, intrinsic, obj)
        if intrinsic == "unot":  # wp.unot(a): Warp's spelling of `not a`
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "unot(a) takes one argument", CompileTypeError)
            return self.call_builtin(node, "bool_not", [self.to_bool(self.expr(node.args[0]))])
        if intrinsic == "address_of":  # refs.py
            return refs.address_of(self, node)
        if intrinsic == "prefetch":  # hints.py
            return hints.prefetch(self, node)
        t = tuples.builtin_call(self, node)  # t = wp.quat_to_axis_angle(q)
        if t is not None:
            return t
        what = dotted_name(node.func)
        if obj is MISSING and isinstance(node.func, ast.Name):  # a name defined nowhere: Warp's KeyError
            raise self.error(node, f"Referencing undefined symbol: {node.func.id}", CompileKeyError)
        inner = node.func.func if isinstance(node.func, ast.Call) else None  # typez(i)(0): the inner name first
        if obj is MISSING and isinstance(inner, ast.Name) and inner.id not in self.env and \
                resolve_path(self.src.func, inner) is MISSING:
            raise self.error(node, f"Referencing undefined symbol: {inner.id}", CompileKeyError)
        if obj is MISSING:
            raise self.error(node, missing_function_message(self.src.func, node.func), CompileAttributeError)
        raise self.error(node, f"calling '{what}' ({type(obj).__name__}) is not supported in kernels: only "
                               f"Warp builtins and @wp.func functions can be called", CompileError)

    def local_type(self, node):
        """The type a type expression of local values denotes (`type(x)`, `a.dtype`: type_exprs.py), else
        MISSING."""
        return type_exprs.type_of(self, node)

    def call_len(self, node) -> Var:
        """`len(a)`: an array's first extent; `len(v)`: a vector's, quaternion's or matrix's first dimension (a
        constant), as in Warp."""
        if len(node.args) != 1:
            raise self.error(node, "len() takes exactly one argument")
        v = self.expr(node.args[0], allow_tuple=True)
        if isinstance(v, TupleVar):
            return self.const(tuples.length(v), wt.int32)
        if isinstance(v.type, ft.ArrayT):
            return Var(wb.array_dim(v.value, 0), wt.int32)
        if indexed.is_indexed(v.type):
            return indexed.dim(v, 0)
        if fabric.is_fabric(v.type):  # Warp's len() takes no Fabric array (its size: `a.size`)
            raise self.error(node, f"Couldn't find function overload for 'len' that matched inputs with types: "
                                   f"[{ft.name(v.type)}]", CompileTypeError)
        if wt.is_composite(v.type) and not wt.is_struct(v.type):
            return self.const(wt.inner_shape(v.type)[0], wt.int32)
        raise self.error(node, f"len() takes an array, a tuple, a vector, a quaternion or a matrix, not a "
                               f"{ft.name(v.type)}", CompileTypeError)

    def debug_break(self, node):
        """`wp.breakpoint()`: Warp's executes a trap instruction, which without an attached debugger ends the
        process (SIGTRAP). mlwarp compiles it to nothing and says so once per call site: a kernel a user launches
        never takes the process down (docs/surface.md lists it among the deliberate differences)."""
        if node.args or node.keywords:
            raise self.error(node, "wp.breakpoint() takes no arguments", CompileTypeError)
        warnings.warn_explicit("wp.breakpoint() does not stop in a debugger under mlwarp and is ignored (use "
                               "print() or wp.printf, or assert with wp.config.mode = 'debug')", UserWarning,
                               self.src.filename, self.src.file_line(node))
        return None

    def intrinsic(self, func_node):
        return getattr(resolve_path(self.src.func, func_node), "_wp_intrinsic_", None)

    def call_tid(self, node, count) -> list:
        if node.args:
            raise self.error(node, "wp.tid() takes no arguments")
        if not 1 <= count <= 4:
            raise self.error(node, f"wp.tid() gives 1 to 4 indices, not {count}")
        self.tid_dims = max(self.tid_dims, count)
        return [Var(v, wt.int32) for v in wb.tid(count)]

    def call_builtin(self, node, name, args) -> Var:
        if any(tiles.is_tile(a) for a in args):  # element-wise on tiles: a + b, t * 2.0, wp.sin(t) (tiles.py)
            return tiles.elementwise(self, node, name, args)
        if name == "where" and len(args) == 3 and isinstance(args[0].type, ft.ArrayT) and \
                not isinstance(args[0].type, getattr(ft, "IndexedArrayT", ())):
            # Warp's where(arr, a, b) (array.h): `a` unless the array's data pointer is null (None, empty)
            args = [Var(wb.cast(wb.array_data(args[0].value), ft.to_mlir(wt.uint64)), wt.uint64), *args[1:]]
        for a in args:
            if isinstance(a.type, ft.ArrayT):
                raise self.error(node, f"'{name}' does not take arrays", CompileTypeError)
        if name == "where" and len(args) == 3 and wt.is_struct(args[1].type):
            return self.where_struct(node, *args)
        targets = converted_arg_types(name, [a.type for a in args])
        args = [a if a.type == t else self.cast(a, t, node) for a, t in zip(args, targets)]
        try:
            rt = resolve(name, [a.type for a in args])
        except TypeError as e:
            raise self.error(node, kernel_scope_message(name, [a.type for a in args], str(e)),
                             CompileTypeError) from None
        return Var(wb.builtin(name, [a.value for a in args], ft.to_mlir(rt)), rt)


    def where_struct(self, node, cond: Var, if_true: Var, if_false: Var) -> Var:
        """`wp.where(c, a, b)` of two struct values (Warp's `where(bool, Any, Any)`): both already evaluated, the
        one the condition picks yielded by an scf.if (a struct is no arith.select operand the lowering splits)."""
        if not (cond.type is wt.bool_ or wt.is_int(cond.type)):
            raise self.error(node, f"where(cond, a, b): cond must be a bool or an integer, got "
                                   f"{ft.name(cond.type)}", CompileTypeError)
        if if_true.type is not if_false.type:
            raise self.error(node, f"where() true value type ({ft.name(if_true.type)}) must be of the same type as "
                                   f"the false type ({ft.name(if_false.type)})", CompileTypeError)
        return self.emit_branches(self.to_bool(cond).value, lambda: if_true, lambda: if_false, node,
                                  what="wp.where")


def kernel_scope_message(name: str, arg_types, message: str) -> str:
    """A builtin's resolution error as Warp words it in a kernel: no overload for the arguments' types is
    "Couldn't find function overload for 'name' that matched inputs with types: [...]" there (the table words it as
    Warp's Python scope does), a wrong number of arguments included; its other errors (types that must be the same,
    ...) read the same in both."""
    if not message.startswith(("Couldn't find a function ", f"'{name}' takes ")):
        return message
    return (f"Couldn't find function overload for '{name}' that matched inputs with types: "
            f"[{', '.join(wt.type_repr(t) for t in arg_types)}]")
