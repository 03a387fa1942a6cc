"""`@wp.func_grad`: a custom adjoint for a `@wp.func`, as in Warp.

    @wp.func
    def safe_sqrt(x: float):
        return wp.sqrt(x)

    @wp.func_grad(safe_sqrt)
    def adj_safe_sqrt(x: float, adj_ret: float):
        if x > 0.0:
            wp.adjoint[x] += adj_ret / (2.0 * wp.sqrt(x))

The adjoint function takes the function's arguments, then the adjoint of its
result, and adds to `wp.adjoint[arg]` what the result's adjoint gives each
argument. mlwarp turns it into an ordinary `@wp.func` returning the argument
adjoints (`wp.adjoint[x] += e` becomes `adj_x = adj_x + e` on a local that
starts at zero, and a final `return adj_x, ...`). The frontend emits it next to
the function and marks the function; `warp-autodiff` calls it in the reverse
sweep instead of differentiating the function's body. Forward mode (`wp.jvp`)
differentiates the body itself.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import linecache
import types

from mlwarp.core import types as wt
from mlwarp.errors import CompileError
from mlwarp.kernels.func import _annotation_key, _annotations, func as wp_func
from mlwarp.core.refs import strip_reference
from mlwarp.core.source import function_source

_counter = itertools.count()


class _Adjoint:
    """`wp.adjoint[x]`: only meaningful inside a @wp.func_grad function."""

    def __getitem__(self, key):
        raise RuntimeError("wp.adjoint[...] can only be used inside a @wp.func_grad function")


adjoint = _Adjoint()


def _is_adjoint(node, func) -> bool:
    """`wp.adjoint[...]` / `adjoint[...]`, whatever the module alias."""
    if not isinstance(node, ast.Subscript):
        return False
    base = node.value
    if isinstance(base, ast.Attribute) and base.attr == "adjoint":
        return True
    return isinstance(base, ast.Name) and func.__globals__.get(base.id) is adjoint


class _Rewrite(ast.NodeTransformer):
    def __init__(self, func, params, where, arrays=(), array_params=()):
        self.func, self.params, self.where, self.arrays = func, params, where, set(arrays)  # arrays: refused
        self.array_params = set(array_params)

    def visit_AugAssign(self, node):
        if not _is_adjoint(node.target, self.func):
            return self.generic_visit(node)
        key = node.target.slice
        if not isinstance(key, ast.Name):  # wp.adjoint[x.scalar] += e: a member of the adjoint (visit_Subscript)
            return self.generic_visit(node)
        if key.id not in self.params:
            raise self.where(node, "wp.adjoint[...] takes an argument of the function, e.g. wp.adjoint[x]")
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            raise self.where(node, "wp.adjoint[x] supports += and -= only")
        name = f"adj__{key.id}"
        value = ast.BinOp(ast.Name(name, ast.Load()), node.op, self.visit(node.value))
        return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node)

    def visit_Return(self, node):
        raise self.where(node, "a @wp.func_grad function cannot return; it adds to wp.adjoint[...]")

    def visit_Subscript(self, node):
        """`wp.adjoint[x.vec]` inside a longer target (`wp.adjoint[x.vec].y = e`, `wp.adjoint[x.vec][0] += e`,
        `wp.adjoint[x.scalar] += e`): the same path on the adjoint local of the argument `x`."""
        if not _is_adjoint(node, self.func):
            return self.generic_visit(node)
        key = node.slice
        root = key
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in self.params):
            raise self.where(node, "wp.adjoint[...] takes an argument of the function, e.g. wp.adjoint[x]")
        if root.id in self.arrays:
            raise self.where(node, f"wp.adjoint[{root.id}]: an array of values without a derivative (integers, "
                                   f"structs) has no adjoint array in mlwarp's @wp.func_grad")
        if key is root and isinstance(node.ctx, ast.Load) and root.id in self.array_params:
            return ast.copy_location(ast.Name(f"adj__{root.id}", ast.Load()), node)  # wp.adjoint[a][i] += e
        if key is root and not isinstance(getattr(node, "ctx", None), ast.Load):
            raise self.where(node, "wp.adjoint[x] can only be added to (wp.adjoint[x] += ...)")
        return self._on_adjoint(key, root.id, node.ctx)

    def _on_adjoint(self, key, name, ctx):
        if isinstance(key, ast.Name):
            return ast.copy_location(ast.Name(f"adj__{name}", ctx), key)
        if isinstance(key, ast.Attribute):
            return ast.copy_location(ast.Attribute(self._on_adjoint(key.value, name, ast.Load()), key.attr, ctx), key)
        return ast.copy_location(ast.Subscript(self._on_adjoint(key.value, name, ast.Load()),
                                               self.visit(key.slice), ctx), key)


def _differentiable(dtype) -> bool:
    return wt.is_float(dtype) or (wt.is_composite(dtype) and not wt.is_struct(dtype)
                                  and wt.is_float(dtype._wp_scalar_type_))


def _overload_for(primal, adj_func):
    """The overload of `primal` whose parameters' annotations the adjoint's first parameters repeat (as Warp picks
    the overload a @wp.func_grad belongs to); the latest definition when none does."""
    hints = _annotations(adj_func)
    names = list(adj_func.__code__.co_varnames[:adj_func.__code__.co_argcount])
    for o in reversed(primal.overloads):
        n = len(o.params)
        if n <= len(names) and all(names[k] in hints and _annotation_key(hints[names[k]]) == _annotation_key(a)
                                   for k, a in enumerate(o.annotations)):
            return o
    return primal.overloads[-1]


def _grad_function(primal, adj_func):
    """The @wp.func equivalent of `adj_func` (see the module doc)."""
    found = function_source(adj_func)
    first, filename = found.first_line, found.filename
    tree = ast.parse(found.text).body[0]

    def where(node, message):
        return CompileError(message, filename, first + getattr(node, "lineno", 1) - 1, None, adj_func.__name__)

    args = tree.args.args
    overload = _overload_for(primal, adj_func)
    n = len(overload.params)
    if len(args) < n:  # then one adjoint per result (none for a function without one): checked as it compiles
        raise where(tree, f"a @wp.func_grad function for '{primal.key}' takes its {n} argument(s) and the adjoint "
                          f"of each of its results, got {len(args)} argument(s)")
    params = [a.arg for a in args[:n]]
    zeros = []
    annotations = [strip_reference(a) for a in overload.annotations]  # a wp.ref[array] is the array
    arrays = [p for p, a in zip(params, annotations) if wt.is_array(a)]
    for p, a in zip(params, annotations):
        ann = ast.unparse(args[params.index(p)].annotation) if args[params.index(p)].annotation else None
        if ann is None:
            raise where(tree, f"argument '{p}' needs a type annotation")
        if p in arrays:  # an array's adjoint is its adjoint array, one more parameter (autodiff passes it)
            tree.args.args.append(ast.arg(f"adj__{p}", args[params.index(p)].annotation))
            continue
        call = f"{ann}()" if wt.is_composite(a) else f"{ann}(0.0)"
        zeros.append(ast.parse(f"adj__{p} = {call}").body[0])
    with_adjoint = [p for p, a in zip(params, annotations) if p in arrays and _differentiable(a.dtype)]
    body = [_Rewrite(adj_func, params, where, set(arrays) - set(with_adjoint), with_adjoint).visit(s)
            for s in tree.body]
    result = ", ".join(f"adj__{p}" for p in params if p not in arrays)
    tree.body = zeros + body + [ast.parse(f"return {result}").body[0]]
    tree.decorator_list = []
    tree.returns = None
    tree.name = f"{adj_func.__name__}__grad{next(_counter)}"
    ast.fix_missing_locations(tree)
    # names of the enclosing function's (a closure's cells), and the names of annotations only a factory's scope
    # knows (`uvw: V` with V a factory's parameter: no cell, as annotations are evaluated at definition), which
    # the zero adjoints above call
    cells = dict(zip(adj_func.__code__.co_freevars, adj_func.__closure__ or ()))
    hints = getattr(adj_func, "__annotations__", {})
    for a in args[:n]:
        name = a.annotation.id if isinstance(a.annotation, ast.Name) else None
        if name and name not in cells and name not in adj_func.__globals__ and not hasattr(builtins, name) and \
                not isinstance(hints.get(a.arg, ""), str):
            cells[name] = types.CellType(hints[a.arg])
    free = tuple(cells)
    if free:  # compiled inside a function of those names, then rebuilt over the adjoint function's own cells
        outer = ast.parse(f"def _mlwarp_closure({', '.join(free)}):\n    pass").body[0]
        outer.body = [tree, ast.Return(ast.Name(tree.name, ast.Load()))]
        ast.fix_missing_locations(outer)
        source = ast.unparse(outer) + "\n"
    else:
        source = ast.unparse(tree) + "\n"
    fake = f"<mlwarp func_grad {tree.name} from {filename}:{first}>"
    linecache.cache[fake] = (len(source), None, source.splitlines(True), fake)  # inspect reads it from here
    namespace = {}
    exec(compile(source, fake, "exec"), adj_func.__globals__, namespace)  # noqa: S102  (our own rewrite)
    if not free:
        namespace[tree.name]._wp_custom_adjoint_ = True  # a custom adjoint: its wp.grad calls warn not (grad_call.py)
        return wp_func(namespace[tree.name])
    made = namespace["_mlwarp_closure"](*(cells[n].cell_contents for n in free))  # (its annotations evaluated)
    rebuilt = types.FunctionType(made.__code__, adj_func.__globals__, tree.name, made.__defaults__,
                                 tuple(cells[n] for n in made.__code__.co_freevars))
    rebuilt.__annotations__ = made.__annotations__
    rebuilt._wp_custom_adjoint_ = True
    return wp_func(rebuilt)


def func_grad(forward_fn):
    """Decorator: `@wp.func_grad(f)` sets the custom adjoint of the @wp.func `f`."""
    primal = forward_fn  # (Warp's parameter name)
    if not getattr(primal, "_wp_function_", False):
        raise TypeError(f"wp.func_grad expects a @wp.func, got {primal!r}")

    def register(adj_func):
        grad = _grad_function(primal, adj_func)
        _overload_for(primal, adj_func).custom_grad = grad  # per overload (functions.specialize reads it)
        primal.custom_grad = grad
        grad.inline_hint = primal.inline_hint  # Warp's: the hooks carry the forward's @wp.func(inline=...)
        own = primal._wp_fingerprint_
        # kernels calling `primal` hash its fingerprint into their cache key: include the adjoint's source
        primal._wp_fingerprint_ = lambda seen: own(seen) + "|func_grad:" + grad._wp_fingerprint_(seen)
        return adj_func

    return register


def func_replay(forward_fn):
    """Decorator: `@wp.func_replay(f)` sets the replay of the @wp.func `f`, as in Warp: a function of the same
    parameters that the backward pass's forward replay calls instead of `f` (e.g. one that reads back what
    `f`'s atomics returned in the forward pass instead of repeating them). The reverse sweep then treats the
    call as having no derivative: `f` may return and take only values without one (integers, arrays of
    integers); warp-autodiff says so otherwise."""
    primal = forward_fn  # (Warp's parameter name)
    if not getattr(primal, "_wp_function_", False) or isinstance(primal, type):
        raise TypeError(f"wp.func_replay expects a @wp.func, got {primal!r}")

    def register(replay_func):
        found = function_source(replay_func)
        n, got = len(primal.overloads[-1].params), replay_func.__code__.co_argcount
        if got != n:
            raise CompileError(f"a @wp.func_replay function for '{primal.key}' takes its {n} argument(s), got {got}",
                               found.filename, found.first_line, None, replay_func.__name__)
        replay = wp_func(replay_func)
        primal.custom_replay = replay
        replay.inline_hint = primal.inline_hint
        own = primal._wp_fingerprint_
        primal._wp_fingerprint_ = lambda seen: own(seen) + "|func_replay:" + replay._wp_fingerprint_(seen)
        return replay_func

    return register
