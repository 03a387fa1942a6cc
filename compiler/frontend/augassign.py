"""Augmented assignment to an indexed target: `a[f(i)] += x`, `data[f(i)].value += x`.

The target is read and then written; its indices must be evaluated once, before the right-hand side, as Python
and Warp do (an index with a side effect, e.g. a @wp.func that bumps a counter, would otherwise run twice).
Indices containing a call are evaluated into hidden locals and the target is rewritten to use them."""

from __future__ import annotations

import ast

from .syntax import walk

_PREFIX = "_wp_augassign_index_"


def _has_call(node) -> bool:
    return any(isinstance(n, ast.Call) for n in walk(node))


def hoist_indices(em, target):
    """(target with its call-bearing indices replaced by hidden locals, the names bound); evaluation order is
    Python's: the innermost subscript first, each index left to right."""
    chain, node = [], target
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        chain.append(node)
        node = node.value
    if not any(isinstance(n, ast.Subscript) and _has_call(n.slice) for n in chain):
        return target, []
    bound = []

    def hoist(expr):
        if isinstance(expr, ast.Slice) or not _has_call(expr):
            return expr
        name = f"{_PREFIX}{len(bound)}"
        em.env[name] = em.expr(expr)
        bound.append(name)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), expr)

    rebuilt = node
    for n in reversed(chain):
        if isinstance(n, ast.Attribute):
            rebuilt = ast.copy_location(ast.Attribute(value=rebuilt, attr=n.attr, ctx=n.ctx), n)
        else:
            s = n.slice
            s = ast.copy_location(ast.Tuple(elts=[hoist(e) for e in s.elts], ctx=ast.Load()), s) \
                if isinstance(s, ast.Tuple) else hoist(s)
            rebuilt = ast.copy_location(ast.Subscript(value=rebuilt, slice=s, ctx=n.ctx), n)
    return rebuilt, bound
