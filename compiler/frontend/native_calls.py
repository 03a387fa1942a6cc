"""Calls of @wp.func_native functions (python/mlwarp/kernels/native.py) in kernels and @wp.func functions.

A call is a `func.call` of a private function declaration (no body: warp-inline leaves it) marked `warp.native`:
  @<symbol>(args...) -> (return value?, the wp.ref[T] parameters' final values...)
with the attributes warp-autodiff and convert-warp-native-calls read:
  warp.native_kinds    one letter per parameter: "v" a value, "r" a wp.ref[T] (copy-in/copy-out, as a @wp.func's
                       reference parameters: frontend/refs.py), "a" an array (passed as its descriptor), "p" the
                       uint64 address of a local (`wp.address_of(x)`: of a copy of x, read back after the call)
  warp.native_adjoint  @<symbol>_adj(args..., their adjoints..., adj_ret?) -> (the non-array parameters' adjoints
                       after the adjoint snippet): only with an adj_snippet
  warp.custom_replay   @<symbol>_replay, the replay snippet's declaration (what the adjoint's replay calls)
The function's C++ (its record: compiler/native/source.py) goes on the module as `warp.native_functions`, which
the build compiles and links (compiler/native/toolchain.py).
"""

from __future__ import annotations

import ast
import json

from mlir import ir
from mlir.dialects import func

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError
from mlwarp.core.refs import copies_back, strip_reference

from ..native.source import ADDRESS, ARRAY, REF, VALUE, WRITTEN, NativeSpec, array_ctype, value_ctype
from ..native.toolchain import RECORD_ATTR
from . import refs
from . import types as ft
from .values import Var

NATIVE_ATTR = "warp.native"
KINDS_ATTR = "warp.native_kinds"
ADJOINT_ATTR = "warp.native_adjoint"
READBACK_ATTR = "warp.native_readback"
REPLAY_ATTR = "warp.custom_replay"  # (autodiff_ir's REPLAYS: the replay's declaration takes the call's place)


def is_native(obj) -> bool:
    return getattr(obj, "_wp_native_", False) is True


def _bind(em, node, native) -> list:
    """The call's argument nodes in parameter order (defaults as Python values)."""
    params = native.params
    if len(node.args) > len(params):
        raise em.error(node, f"'{native.key}' takes {len(params)} argument(s), got {len(node.args)}", CompileTypeError)
    nodes = list(node.args) + [None] * (len(params) - len(node.args))
    for kw in node.keywords:
        k = next((i for i, p in enumerate(params) if p.name == kw.arg), None)
        if k is None or nodes[k] is not None:
            raise em.error(node, f"'{native.key}' got an unexpected or repeated argument '{kw.arg}'", CompileTypeError)
        nodes[k] = kw.value
    for k, (n, p) in enumerate(zip(nodes, params)):
        if n is None:
            if p.default is p.empty:
                raise em.error(node, f"'{native.key}' is missing argument '{p.name}'", CompileTypeError)
            nodes[k] = p.default
    return nodes


def _type_name(t) -> str:
    return t.__name__ if wt.is_struct(t) else wt.type_repr(t)


def _param(em, node, native, name, annotation) -> tuple:
    """(Warp type, C++ type, kind, ndim) of a parameter."""
    t = ft.from_annotation(strip_reference(annotation))
    if isinstance(t, ft.ArrayT):
        ctype = array_ctype(wt.canonical_type(t.dtype))
        kind, ndim = ARRAY, t.ndim
    else:
        ctype = value_ctype(t) if t is not None else None
        kind, ndim = (REF if copies_back(annotation) else VALUE), 0
    if ctype is None:
        raise em.error(node, f"parameter '{name}' of the native function '{native.key}' has type "
                             f"{_type_name(strip_reference(annotation))}, which mlwarp cannot pass to C++ (scalars, "
                             f"vectors, matrices, quaternions, transforms and arrays of them can)", CompileTypeError)
    return t, ctype, kind, ndim


def _return(em, node, native):
    a = native.return_annotation
    if a is None:
        return None, None
    t = ft.from_annotation(a)
    if isinstance(t, ft.ArrayT):
        ctype, kind, ndim = array_ctype(wt.canonical_type(t.dtype)), ARRAY, t.ndim
    else:
        ctype, kind, ndim = (value_ctype(t) if t is not None else None), VALUE, 0
    if ctype is None:
        raise em.error(node, f"the native function '{native.key}' has an unsupported return type "
                             f"{_type_name(a)} (mlwarp returns scalars, vectors, matrices, quaternions, "
                             f"transforms and arrays of them from C++)", CompileTypeError)
    return t, (ctype, kind, ndim)


def _local_storage(em, n):
    """X of an argument `wp.address_of(X)` whose storage is a local's (a local, a field or component of one, not an
    array element's: refs.address_of gives that address), else None. Such a local has no address in mlwarp (an SSA
    value): the call passes the address of a copy and reads the copy back after it, as for a wp.ref[T]."""
    if not (isinstance(n, ast.Call) and em.intrinsic(n.func) == "address_of" and len(n.args) == 1 and not n.keywords):
        return None
    x = m = n.args[0]
    while isinstance(m, (ast.Attribute, ast.Subscript)):
        if isinstance(m, ast.Subscript) and isinstance(em.expr(m.value).type, ft.ArrayT):
            return None
        m = m.value
    return x if isinstance(m, ast.Name) else None


def _argument(em, node, n, t, native, name) -> Var:
    v = em.global_value(node, n) if not isinstance(n, ast.AST) else em.expr(n)
    if v.type == t:
        return v
    if v.literal is not None and wt.is_scalar(v.type) and wt.is_scalar(t):  # `square(1.0)`: the literal as a T
        return em.convert(v, t, n if isinstance(n, ast.AST) else node)
    raise em.error(node, f"argument '{name}' of '{native.key}' must be {ft.name(t)}, got {ft.name(v.type)}",
                   CompileTypeError)


def _declare(em, symbol, inputs, results, attributes) -> None:
    module = em.program.kernel_op.parent
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == symbol:
            return
    with ir.InsertionPoint(em.program.kernel_op), ir.Location.unknown():
        f = func.FuncOp(symbol, (inputs, results), visibility="private")
    for k, v in attributes.items():
        f.attributes[k] = v


def _record(em, spec: NativeSpec) -> None:
    module = em.program.kernel_op.parent
    attrs = module.attributes
    records = json.loads(ir.StringAttr(attrs[RECORD_ATTR]).value) if RECORD_ATTR in attrs else {}
    records[spec.symbol] = spec.record()
    attrs[RECORD_ATTR] = ir.StringAttr.get(json.dumps(records))


def _declare_all(em, spec: NativeSpec, types: list, ret_type) -> None:
    kinds = "".join(p[2] for p in spec.params)
    inputs = [ft.to_mlir(t) for t in types]
    refs_out = [ft.to_mlir(t) for t, p in zip(types, spec.params) if p[2] in WRITTEN]
    results = ([ft.to_mlir(ret_type)] if ret_type is not None else []) + refs_out
    # the slots read back as results (convert-warp-native-calls): the return value's (-1), the references'
    readback = ([-1] if ret_type is not None else []) + [k for k, p in enumerate(spec.params) if p[2] in WRITTEN]

    def marks(read):
        return {NATIVE_ATTR: ir.UnitAttr.get(), KINDS_ATTR: ir.StringAttr.get(kinds),
                READBACK_ATTR: ir.DenseI64ArrayAttr.get(read)}

    attrs = marks(readback)
    if spec.has_adjoint:  # (args, their adjoints, adj_ret) -> the non-array parameters' adjoints, read back
        n = len(spec.params)
        adjoints = [k for k, p in enumerate(spec.params) if p[2] != ARRAY]
        _declare(em, spec.adjoint_symbol, inputs + inputs + ([ft.to_mlir(ret_type)] if ret_type is not None else []),
                 [inputs[k] for k in adjoints], marks([n + k for k in adjoints]))
        attrs[ADJOINT_ATTR] = ir.FlatSymbolRefAttr.get(spec.adjoint_symbol)
    if spec.has_replay:
        _declare(em, spec.replay_symbol, inputs, results, marks(readback))
        attrs[REPLAY_ATTR] = ir.FlatSymbolRefAttr.get(spec.replay_symbol)
    _declare(em, spec.symbol, inputs, results, attrs)
    _record(em, spec)


def call(em, node, native):
    """Emits the call: a Var (the return value) or None; wp.ref[T] arguments get the snippet's final values."""
    nodes = _bind(em, node, native)
    params = []
    for p, a in zip(native.params, native.annotations):
        params.append(_param(em, node, native, p.name, a))
    ret_type, ret = _return(em, node, native)
    args = []
    by_ref = {}
    for k, (p, n, (t, ctype, kind, ndim)) in enumerate(zip(native.params, nodes, params)):
        storage = _local_storage(em, n) if t is wt.uint64 and kind == VALUE else None
        if storage is not None:  # wp.address_of(local): the address of its copy, read back after the call
            storage = refs.pin(em, storage)
            refs.check_addressable(em, storage, "wp.address_of()")
            by_ref[p.name] = storage
            params[k] = (t, ctype, ADDRESS, ndim)
            args.append(em.expr(storage))
            continue
        if kind == REF:
            if not isinstance(n, ast.AST):
                raise em.error(node, refs._not_addressable(f"wp.ref[{wt.type_repr(t)}] parameter"), CompileError)
            n = refs.pin(em, n)
            refs.check_addressable(em, n, f"wp.ref[{wt.type_repr(t)}] parameter")
            by_ref[p.name] = n
        args.append(_argument(em, node, n, t, native, p.name))
    if any(kind == REF for _, _, kind, _ in params) and native.adj_native_snippet is None:
        # Warp refuses this when the kernel has a backward pass: the reference's adjoint would be lost
        em.program.backward_refusals.append(em.error(
            node, f"the native function '{native.key}' takes a wp.ref[T] parameter and has no adj_snippet: its "
                  f"adjoint is undefined; give it an adj_snippet or build the kernel with enable_backward=False"))
    spec = NativeSpec(native.key, [(p.name, ctype, kind, ndim) for p, (_, ctype, kind, ndim) in zip(native.params,
                                                                                                  params)],
                      ret, native.native_snippet, native.adj_native_snippet, native.replay_snippet,
                      native.filename, native.first_line, native.snippet_lines())
    types = [a.type for a in args]  # (a wp.address_of(local)'s: the local's)
    with em.loc(node):
        _declare_all(em, spec, types, ret_type)
        outs = [ft.to_mlir(ret_type)] if ret_type is not None else []
        outs += [ft.to_mlir(t) for t, (_, _, kind, _) in zip(types, params) if kind in WRITTEN]
        op = func.CallOp(outs, ir.FlatSymbolRefAttr.get(spec.symbol), [a.value for a in args])
    results = list(op.results)
    value = Var(results.pop(0), ret_type) if ret_type is not None else None
    for p, t, (_, _, kind, _) in zip(native.params, types, params):
        if kind in WRITTEN:
            with em.loc(node):  # copy-out: the snippet's final value goes back where the argument came from
                em.assign(by_ref[p.name], Var(results.pop(0), t))
    return value
