"""Keyword arguments in builtin calls inside kernels (`wp.pow(y=4.0, x=2.0)`, `wp.transform_compose(position=p,
rotation=q, scale=s)`): bound to positions by the builtin's parameter names (builtins/params.py, Warp's names),
with a signature's defaults filled in, before the call is typed as a positional one."""

from __future__ import annotations

import ast

from mlwarp.core.errors import CompileTypeError

from ..builtins.params import Unbound, bind


def positional(em, node: ast.Call, name: str) -> ast.Call:
    """`node` with its keyword arguments moved to their positions."""
    if any(k.arg is None for k in node.keywords):
        raise em.error(node, "unsupported: **kwargs in a builtin call")
    kwargs = {k.arg: k.value for k in node.keywords}
    try:
        args = bind(name, tuple(node.args), kwargs)
    except Unbound:
        raise em.error(node, f"'{name}' has no signature taking the keyword argument(s) "
                             f"{', '.join(repr(k) for k in kwargs)} after {len(node.args)} positional argument(s)",
                       CompileTypeError) from None
    args = [a if isinstance(a, ast.AST) else ast.copy_location(ast.Constant(a), node) for a in args]
    return ast.copy_location(ast.Call(func=node.func, args=args, keywords=[]), node)
