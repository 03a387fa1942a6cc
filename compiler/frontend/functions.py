"""@wp.func calls: overload selection, one private `func.func` per (overload, argument types), `func.call`.

A function body is emitted by `FunctionEmitter`, the kernel emitter with
`return value` support: the returned values live in locals `$retval0..n`
(initialised to zero), set together with the `$return` flag, so early returns
from branches and loops stay structured like a kernel's `return`. The result
types come from the return annotation, else from a first emission of the body
that only records what its `return` statements give.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import func

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError
from mlwarp.core import generics

from ..dialects.warp import composite as wc
from . import custom_grad, fixed, geometry, grad_call, refs, returns, starred, tiles, tuples
from . import types as ft
from .codegen import KernelEmitter
from .resolve import resolve_path
from .source import get_source
from .syntax import contains_return, walk
from .values import RETURN, RETVAL, TupleVar, Var


@dataclass
class Specialization:
    symbol: str
    result_types: list  # the declared results
    tid_dims: int
    ref_outputs: list = field(default_factory=list)  # the wp.ref[T] parameters it changes: results after those
    ref_types: list = field(default_factory=list)


@dataclass
class Program:
    """What the emitters of one kernel share: where functions go and those already emitted. The kernel emitter
    (codegen.py, which this module builds on) hands its @wp.func calls to its program: the methods below."""

    kernel_op: ir.Operation | None = None  # functions are inserted before it (set as the kernel's op is made)
    specializations: dict = field(default_factory=dict)  # (id(py function), arg types) -> Specialization
    stack: list = field(default_factory=list)  # (key, name) of the functions being emitted: recursion errors
    symbols: set = field(default_factory=set)
    # compile errors that hold only when the kernel gets an adjoint (Warp refuses them at the kernel's build
    # when its backward pass is enabled): the driver raises the first if it builds one
    backward_refusals: list = field(default_factory=list)
    # Warp's CPU lanes per block (wp.config.enable_cpu_blocks with block_dim > 1): wp.tile, wp.untile, stacks and
    # scatters are then per-lane operations (frontend/tiles.py) that warp-cpu-block-lanes runs over the lanes; 1:
    # one lane per block, as Warp's CPU default
    lanes: int = 1
    # what the kernel's launches bring up to date first: the `launch_needs` of the functions it calls
    # (runtime/launch_needs.py)
    launch_needs: set = field(default_factory=set)
    # wp.grad(f) (grad_call.py): f's symbol -> its gradient function's, (builtin, name, types) -> f's wrapper, and
    # Warp's warnings for the build to give when the kernel has a backward pass
    grad_functions: dict = field(default_factory=dict)
    grad_targets: dict = field(default_factory=dict)
    grad_warnings: list = field(default_factory=list)

    def fresh_symbol(self, name: str) -> str:
        n = 0
        while f"{name}_{n}" in self.symbols:
            n += 1
        self.symbols.add(f"{name}_{n}")
        return f"{name}_{n}"

    def is_function(self, obj) -> bool:
        return is_function(obj)

    def call(self, em, node, function):
        return call(em, node, function)

    def grad_target(self, em, node, function):
        """wp.grad(f) of a @wp.func: f specialized for the arguments (grad_call.py asks, without importing this
        module)."""
        return grad_target(em, node, function)

    def call_stateful(self, em, node, obj):
        return call_stateful(em, node, obj)

    def tuple_call(self, em, node, count):
        return tuple_call(em, node, count)


def is_function(obj) -> bool:
    return getattr(obj, "_wp_function_", False) is True


def _type_name(t) -> str:
    return ft.name(t)


def is_function_annotation(annotation) -> bool:
    """`wp.Function` (the class of @wp.func objects) as a parameter annotation: the argument is a function."""
    return isinstance(annotation, type) and getattr(annotation, "_wp_function_", False) is True


def _matches(arg_type, annotation) -> bool:
    if isinstance(arg_type, ft.FunctionT) or is_function_annotation(annotation):  # g: wp.Function
        return isinstance(arg_type, ft.FunctionT) and (is_function_annotation(annotation) or annotation is Any)
    if getattr(annotation, "_wp_tile_stack_annotation_", False):  # wp.tile_stack(capacity, dtype): (slots, count)
        return tiles.is_stack_type(arg_type, annotation.capacity, wt.canonical_type(annotation.dtype))
    if isinstance(arg_type, ft.TupleT) or tuples.is_tuple_annotation(annotation):  # tuple[A, B], tuple[T, ...]
        return annotation is Any or tuples.matches(arg_type, annotation, _matches)
    annotation = refs.strip_reference(annotation)  # wp.ref[T] takes a T (its addressability is checked later)
    if generics.is_generic(annotation):  # Any, wp.array(dtype=Any), vector(length=Any, ...): a template
        return generics.matches_template(arg_type, annotation)
    expected = ft.from_annotation(annotation)
    return expected is not None and expected == arg_type


def bind_arguments(em: KernelEmitter, node: ast.Call, overload) -> list | None:
    """The call's arguments in the overload's parameter order (defaults filled in), or None if the call
    cannot bind to it (count or names)."""
    params = overload.params
    if len(node.args) > len(params):
        return None
    nodes: list = list(node.args) + [None] * (len(params) - len(node.args))
    for kw in node.keywords:
        if kw.arg is None:
            raise em.error(node, "unsupported: **kwargs in a call", CompileError)
        idx = next((i for i, p in enumerate(params) if p.name == kw.arg), None)
        if idx is None or nodes[idx] is not None:
            return None
        nodes[idx] = kw.value
    defaults = getattr(overload, "defaults", None)
    if defaults is None:
        defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    for i, (n, p) in enumerate(zip(nodes, params)):
        if n is None:
            if p.name not in defaults:
                return None
            nodes[i] = defaults[p.name]  # a Python value, made a constant below
    return nodes


def call_stateful(em: KernelEmitter, node: ast.Call, obj) -> Var:
    """`wp.randf(state, ...)`: Warp passes the state by reference; here the implementing @wp.func returns
    (new state, value) and the new state is assigned back to the caller's variable."""
    impl = obj._wp_stateful_.get(len(node.args))
    if impl is None or node.keywords:
        counts = " or ".join(str(n) for n in sorted(obj._wp_stateful_))
        raise em.error(node, f"wp.{obj.__name__}() takes {counts} positional argument(s)", CompileTypeError)
    state = node.args[0]
    new_state, value = call(em, node, impl)
    if isinstance(state, ast.Name):
        em.assign(state, new_state)
    # else, as Warp (whose state is a C++ reference to a temporary there): an expression such as
    # `wp.rand_init(seed, tid)` or `states[i]` is a copy, whose advanced state is dropped
    return value


def call(em: KernelEmitter, node: ast.Call, function) -> Var | list | None:
    """Emits a call of a @wp.func: a Var, a list of Vars (tuple result) or None (no result)."""
    evaluated: dict = {}

    def value_of(n):
        if id(n) not in evaluated:
            evaluated[id(n)] = em.global_value(node, n) if not isinstance(n, ast.AST) else em.expr(n, allow_tuple=True)
        return evaluated[id(n)]

    candidates = []
    for o in function.overloads:
        nodes = bind_arguments(em, node, o)
        if nodes is not None:
            candidates.append((o, nodes))
    # as Warp: overloads with concrete annotations first, generic ones (Any, TypeVars) after
    candidates.sort(key=lambda c: any(generics.is_generic(a) for a in c[0].annotations))
    pinned = {}  # wp.ref[T] arguments: read and written back at the same element (refs.pin)
    for o, nodes in candidates:
        for k, (n, ann) in enumerate(zip(nodes, o.annotations)):
            if refs.by_reference(ann) and isinstance(n, ast.AST):
                if id(n) not in pinned:
                    pinned[id(n)] = refs.pin(em, n)
                nodes[k] = pinned[id(n)]
    for o, nodes in candidates:
        args = [value_of(n) for n in nodes]
        args = [_erased_query_argument(a, ann) for a, ann in zip(args, o.annotations)]
        if all(_matches(a.type, ann) for a, ann in zip(args, o.annotations)):
            by_ref = {p.name: n for p, n, ann in zip(o.params, nodes, o.annotations) if refs.by_reference(ann)}
            if refs.temporaries_allowed(function):  # (Warp's builtins: a temporary's final value is dropped)
                dropped = {name for name, n in by_ref.items() if refs.is_temporary(n)}
                by_ref = {name: n for name, n in by_ref.items() if name not in dropped}
            for p, ann in zip(o.params, o.annotations):
                if p.name in by_ref:
                    refs.check_addressable(em, by_ref[p.name], refs.ref_purpose(ann))
            for p, a in zip(o.params, args):
                target = a.type.target if isinstance(a.type, ft.FunctionT) else None
                if target is not None and not (is_function(target) or getattr(target, "_wp_builtin_", None)):
                    what = getattr(target, "_wp_intrinsic_", None) or getattr(target, "__name__", str(target))
                    raise em.error(node, f"wp.Function parameters support user-defined Warp functions and simple "
                                         f"built-in Warp functions such as wp.sin() and wp.min(), but parameter "
                                         f"'{p.name}' of '{function.key}' received unsupported built-in function "
                                         f"'{what}'.", CompileError)
            if any(isinstance(a.type, ft.FunctionT) for a in args) and (
                    getattr(function, "custom_grad", None) is not None
                    or getattr(function, "custom_replay", None) is not None):
                raise em.error(node, f"wp.Function parameters are not supported on functions with custom gradients "
                                     f"or replay functions: '{function.key}'", CompileError)
            # tiles are passed by reference, as Warp's: a tile parameter the callee only updates in place
            # (t += x, t[i] = x, wp.tile_matmul(a, b, t), ...) is copied back into the caller's variable
            tile_refs = {p.name: n for p, n in tiles_by_reference(o, args, nodes).items() if p.name not in by_ref}
            spec = specialize(em, node, function, o, [a.type for a in args], list(by_ref) + list(tile_refs))
            with em.loc(node):
                op = func.CallOp([ft.to_mlir(t) for t in spec.result_types] + tuples.flat_types(spec.ref_types),
                                 ir.FlatSymbolRefAttr.get(spec.symbol), tuples.flat_values(args))
            em.tid_dims = max(em.tid_dims, spec.tid_dims)
            outs = list(op.results)
            results = [Var(r, t) for r, t in zip(outs, spec.result_types)]
            finals = tuples.rebuild(spec.ref_types, outs[len(spec.result_types):])  # (a stack: its parts regrouped)
            for name, final in zip(spec.ref_outputs, finals):
                target = by_ref.get(name, tile_refs.get(name))
                if name in tile_refs and not isinstance(target, ast.Name):
                    continue  # a tile made in the call's argument: nobody sees it after the call
                with em.loc(node):  # copy-out: the callee's final value goes back where the argument came from
                    em.assign(target, final)
            if not results:
                return None
            return results[0] if len(results) == 1 and not _returns_tuple(spec) else results
    if not candidates:
        raise em.error(node, f"'{function.key}' takes arguments "
                             f"{' or '.join(str(o.signature) for o in function.overloads)}", CompileTypeError)
    names = ", ".join(_type_name(value_of(n).type) for n in candidates[0][1])
    raise em.error(node, f"Couldn't find function overload for '{function.key}' that matched inputs with types: "
                         f"[{names}]", CompileTypeError)


def _erased_query_argument(arg, annotation):
    """A BVH query of one kind passed to a parameter annotated with the erased wp.BvhQuery: converted, as Warp
    converts to the parent type (geometry.py); any other argument as it is."""
    erased = geometry.erased_query(arg.type) if isinstance(arg, Var) else None
    if erased is None or refs.strip_reference(annotation) is not erased:
        return arg
    return geometry.erase_query(arg, erased)


def _returns_tuple(spec) -> bool:
    return len(spec.result_types) > 1


def tuple_call(em: KernelEmitter, node, count) -> list | None:
    """`a, b = f(x)` for a @wp.func returning a tuple; None when `node` is not a @wp.func call."""
    if not (isinstance(node, ast.Call) and is_function(resolve_path(em.src.func, node.func))):
        return None
    with em.loc(node):
        values = call(em, node, resolve_path(em.src.func, node.func))
    n = len(values) if isinstance(values, list) else (0 if values is None else 1)
    if n != count:
        raise em.error(node, f"cannot unpack {n} value(s) returned by '{dotted(node.func)}' into {count} names")
    return values


def dotted(node) -> str:
    return node.id if isinstance(node, ast.Name) else f"{dotted(node.value)}.{node.attr}" \
        if isinstance(node, ast.Attribute) else "?"


def _rebound_names(tree) -> set:
    """The names a function body binds anew (=, annotated =, for targets, with ... as, :=), not those it only
    updates in place (+= and the like, t[i] = x, in-place builtins)."""
    found = set()

    def targets(t):
        if isinstance(t, ast.Name):
            found.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    for n in walk(tree):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                targets(t)
        elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)):
            targets(n.target)
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            targets(n.target)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            targets(n.optional_vars)
    return found


def tiles_by_reference(overload, args, nodes) -> dict:
    """{parameter: argument node} for the tile parameters of `overload` passed by reference: those its body never
    rebinds (a body that assigns the name a new tile works on that tile, leaving the caller's alone)."""
    tile_params = [(p, n) for p, a, n in zip(overload.params, args, nodes)
                   if tiles.is_tile(a) or tiles.is_stack_type(getattr(a, "type", None))]
    if not tile_params:
        return {}
    rebound = _rebound_names(get_source(overload.func).tree)
    return {p: n for p, n in tile_params if p.name not in rebound}


def specialize(em: KernelEmitter, node, function, overload, arg_types, ref_params=()) -> Specialization:
    program: Program = em.program
    # (the reference parameters are part of it: a temporary passed to a builtin's is a plain value there)
    key = (id(overload.func), tuple(arg_types), tuple(ref_params))
    found = program.specializations.get(key)
    if found is not None:
        return found
    keys = [k for k, _ in program.stack]
    if key in keys:
        chain = " -> ".join([name for _, name in program.stack[keys.index(key):]] + [function.key])
        raise em.error(node, f"recursion is not supported: '{function.key}' calls itself ({chain})", CompileError)
    program.stack.append((key, function.key))
    try:
        source = get_source(overload.func)
        names = [p.name for p in overload.params]
        emitter = FunctionEmitter(source, dict(zip(names, arg_types)), program, overload.return_annotation,
                                  ref_params, generic=any(generics.is_generic(a) for a in overload.annotations))
        spec = emitter.emit_function(program.fresh_symbol(function.key))
    finally:
        program.stack.pop()
    program.specializations[key] = spec
    program.launch_needs.update(getattr(function, "launch_needs", ()))
    record_instance = getattr(function, "record_instance", None)  # a generic @wp.func lists its instances (Warp)
    if record_instance is not None:
        record_instance(overload, arg_types)
    grad = getattr(overload, "custom_grad", None)  # @wp.func_grad: per overload (python/mlwarp/kernels/func_grad.py)
    if grad is not None and spec.ref_outputs:
        raise em.error(node, f"'{function.key}' has a @wp.func_grad and writes its wp.ref[T] parameter(s) "
                             f"{', '.join(spec.ref_outputs)}: a custom adjoint cannot take the adjoint of a reference "
                             f"parameter; return the value instead", CompileError)
    if grad is not None:  # @wp.func_grad: emit the adjoint for this specialization and link the two
        g = grad.overloads[-1]
        arrays = [t for t in arg_types if isinstance(t, ft.ArrayT)]  # then the adjoint array of each array argument
        if len(g.params) != len(arg_types) + len(spec.result_types) + len(arrays):
            code = g.func.__code__
            raise CompileError(f"a @wp.func_grad function for '{function.key}' takes its {len(arg_types)} "
                               f"argument(s) and the adjoint of each of its {len(spec.result_types)} result(s), got "
                               f"{len(g.params)} argument(s)", code.co_filename, code.co_firstlineno, None,
                               g.func.__name__)
        gspec = specialize(em, node, grad, g, list(arg_types) + list(spec.result_types) + arrays)
        custom_grad.link(program.kernel_op, spec.symbol, gspec.symbol)
    replay = getattr(function, "custom_replay", None)
    if replay is not None:  # @wp.func_replay: emitted with the same argument types, linked for warp-autodiff
        rspec = specialize(em, node, replay, replay.overloads[-1], list(arg_types))
        if rspec.result_types != spec.result_types:
            raise em.error(node, f"the @wp.func_replay of '{function.key}' returns "
                                 f"[{', '.join(map(_type_name, rspec.result_types))}], '{function.key}' returns "
                                 f"[{', '.join(map(_type_name, spec.result_types))}]", CompileTypeError)
        custom_grad.link_replay(program.kernel_op, spec.symbol, rspec.symbol)
    return spec


_RETURNED_LAST = object()  # FunctionEmitter.result_types until the return ending the body gives them


def _returns_last_only(body) -> bool:
    """Whether the only `return` of a function body is its last statement (or it has none)."""
    return not contains_return(body[:-1]) and (isinstance(body[-1], ast.Return) or not contains_return(body[-1:]))


class FunctionEmitter(KernelEmitter):
    def __init__(self, source, arg_types, program, return_annotation, ref_params=(), generic=False):
        super().__init__(source, arg_types, program)
        self.return_annotation = return_annotation
        self.generic = generic  # a parameter annotated typing.Any: `-> Any` means "what the body returns"
        self.ref_params = list(ref_params)  # wp.ref[T] parameters: their final values are returned too
        self.result_types = None  # None while inferring: `return` records types in self.seen_returns
        self.seen_returns = []

    def declared_result_types(self):
        a = self.return_annotation
        if a is inspect.Parameter.empty:
            return None
        if a is None or a is type(None):
            return []
        parts = a.__args__ if getattr(a, "__origin__", None) is tuple else (a,)
        if any(x is Any for x in parts):  # Warp: the types the body returns, which only a generic may leave open
            found = self._infer_result_types()
            if not self.generic:
                shown = ", ".join(map(_type_name, found))
                raise self.error(self.src.tree, f"The function `{self.src.name}` has its return type annotated as "
                                                f"`Any` but the code returns a value of type `{shown}`.",
                                 CompileTypeError)
            return found
        if any(generics.is_generic(x) for x in parts):  # `-> wp.tile[float]`: the shape the body gives the tile
            found = self._infer_result_types()
            if len(found) == len(parts) and all(not generics.is_generic(x) or generics.matches_template(t, x)
                                                for t, x in zip(found, parts)):
                return found
            raise self.error(self.src.tree, returns.mismatch_message(self.src.name, a, found), CompileTypeError)
        return [self._annotation_type(x) for x in parts]

    def _annotation_type(self, a):
        t = ft.from_annotation(a)
        if t is None:
            raise self.error(self.src.tree, f"unknown return type annotation {a!r}", CompileTypeError)
        return t

    def emit_function(self, symbol: str) -> Specialization:
        tree = self.src.tree
        declared = self.declared_result_types()
        once = declared is None and _returns_last_only(tree.body)
        if declared is None and not once:
            declared = self._infer_result_types()
        # (a body whose one `return` ends it is emitted once: that return gives the result types, and no branch
        # carries a result before it; one that returns elsewhere is emitted twice, first to see what it returns)
        self.result_types = _RETURNED_LAST if once else declared
        names = [a.arg for a in tree.args.args]
        inputs = tuples.flat_types([self.arg_types[n] for n in names])  # a tuple parameter: its parts
        with ir.InsertionPoint(self.program.kernel_op), self.loc(tree):
            f = func.FuncOp(symbol, (inputs, [] if once else [ft.to_mlir(t) for t in declared]), visibility="private")
            entry = f.add_entry_block()
        self._emit_body(entry, names)
        if once:
            declared = self.result_types = [] if self.result_types is _RETURNED_LAST else self.result_types
            results = [ft.to_mlir(t) for t in declared]
            f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
        # copy-out: the reference parameters the body changed (an unchanged one is still its block argument); a
        # stack (a tuple of its slots and count) as its parts
        changed = [n for n in self.ref_params if tuples.flat_values([self.env[n]]) != self.param_values[n]]
        ref_types = [self.arg_types[n] for n in changed]
        if changed:
            f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                inputs, [ft.to_mlir(t) for t in declared] + tuples.flat_types(ref_types)))
        with ir.InsertionPoint(entry), self.loc(tree):
            func.ReturnOp([self.env[f"{RETVAL}{k}"].value for k in range(len(declared))] +
                          tuples.flat_values([self.env[n] for n in changed]))
        return Specialization(symbol, declared, self.tid_dims, changed, ref_types)

    def _emit_body(self, entry, names):
        self.env = {}
        with ir.InsertionPoint(entry):
            params = tuples.rebuild([self.arg_types[n] for n in names], list(entry.arguments))
            self.env.update(zip(names, params))
            self.param_values = {n: tuples.flat_values([v]) if isinstance(v, (Var, TupleVar)) else None
                                 for n, v in zip(names, params)}
            # (no flag where the one return ends the body: nothing after it asks whether it ran)
            if contains_return(self.src.tree.body) and self.result_types is not _RETURNED_LAST:
                self.env[RETURN] = self.const(False, wt.bool_)
            for k, t in enumerate(self.result_types if isinstance(self.result_types, list) else []):
                self.env[f"{RETVAL}{k}"] = self.zero(t)
            self.emit_block(self.src.tree.body)

    def zero(self, t) -> Var:
        """The value a result holds before a `return` sets it: zero, or a zero composite (T())."""
        if wt.is_scalar(t):
            return self.const(0, t)
        if wt.is_composite(t):
            return Var(wc.construct(ft.to_mlir(t), []), t)
        if isinstance(t, wt.ArrayT):  # an array (a fixed-size one the function made: fixed.py)
            return fixed.placeholder(t)
        if isinstance(t, ft.TileT):  # a tile (tiles.py): a zero tile
            return tiles.zeros(t)
        raise self.error(self.src.tree, f"a @wp.func cannot return {ft.name(t)}", CompileTypeError)

    def _infer_result_types(self) -> list:
        """Emits the body once into a scratch function to see what its `return` statements give."""
        names = [a.arg for a in self.src.tree.args.args]
        inputs = tuples.flat_types([self.arg_types[n] for n in names])
        with ir.InsertionPoint(self.program.kernel_op), self.loc(self.src.tree):
            scratch = func.FuncOp("$infer", (inputs, []), visibility="private")
            entry = scratch.add_entry_block()
        try:
            self._emit_body(entry, names)
        finally:
            scratch.operation.erase()
        self.tid_dims = 0
        return self.seen_returns[0] if self.seen_returns else []

    def stmt_Return(self, node):
        values = [] if node.value is None else self.return_values(node.value)
        types = [v.type for v in values]
        last = self.result_types is _RETURNED_LAST
        if last:  # the body's last statement, its only return
            self.result_types = types
        if self.result_types is None:  # inferring
            if self.seen_returns and self.seen_returns[0] != types:
                raise self.error(node, f"function returned different types, previous: "
                                       f"[{', '.join(map(_type_name, self.seen_returns[0]))}], new "
                                       f"[{', '.join(map(_type_name, types))}]", CompileTypeError)
            self.seen_returns.append(types)
        elif types != self.result_types:
            raise self.error(node, returns.mismatch_message(self.src.name, self.return_annotation, types),
                             CompileTypeError)  # Warp's texts, the annotation spelled as written (returns.py)
        elif len(values) == 1 and returns.is_stack_array(values[0]) and returns.says_array(self.return_annotation):
            raise self.error(node, returns.stack_array_message(self.src.name, types[0]), CompileError)
        else:
            for k, v in enumerate(values):
                self.env[f"{RETVAL}{k}"] = v
        if not last:
            self.env[RETURN] = self.const(True, wt.bool_)

    def return_values(self, value_node) -> list:
        if starred.has_starred(value_node):  # return f(*v): the @wp.func path below reads the arguments itself
            with starred.expanded(self, value_node) as expanded:
                return self.return_values(expanded)
        if isinstance(value_node, ast.Tuple):
            return [self.expr(e) for e in value_node.elts]
        if isinstance(value_node, ast.Call) and is_function(resolve_path(self.src.func, value_node.func)):
            with self.loc(value_node):
                r = call(self, value_node, resolve_path(self.src.func, value_node.func))
            return r if isinstance(r, list) else [] if r is None else [r]
        return tuples.return_parts(self, value_node, self.expr(value_node, allow_tuple=True))  # return t


def grad_target(em, node, function):
    """A @wp.func: its specialization for the arguments' types (overloads and generics as a call selects them)."""
    evaluated: dict = {}

    def value_of(n):
        if id(n) not in evaluated:
            evaluated[id(n)] = em.global_value(node, n) if not isinstance(n, ast.AST) else em.expr(n, allow_tuple=True)
        return evaluated[id(n)]

    candidates = [(o, nodes) for o in function.overloads if (nodes := bind_arguments(em, node, o)) is not None]
    candidates.sort(key=lambda c: any(generics.is_generic(a) for a in c[0].annotations))
    for o, nodes in candidates:
        args = [_erased_query_argument(value_of(n), ann) for n, ann in zip(nodes, o.annotations)]
        if not all(_matches(a.type, ann) for a, ann in zip(args, o.annotations)):
            continue
        if any(refs.by_reference(ann) for ann in o.annotations):
            raise em.error(node, f"mlwarp: wp.grad('{function.key}') of a function with wp.ref[T] parameters is "
                                 f"not supported", CompileError)
        grad_call.check_inputs(em, node, function.key, args)
        spec = specialize(em, node, function, o, [a.type for a in args])
        if not spec.result_types:
            raise em.error(node, f"Cannot compute gradient of void function '{function.key}'", CompileError)
        return function.key, spec.symbol, args
    if not candidates:
        raise em.error(node, f"'{function.key}' takes arguments "
                             f"{' or '.join(str(o.signature) for o in function.overloads)}", CompileTypeError)
    names = ", ".join(_type_name(value_of(n).type) for n in candidates[0][1])
    raise em.error(node, f"Couldn't find function overload for '{function.key}' that matched inputs with types: "
                         f"[{names}]", CompileTypeError)

