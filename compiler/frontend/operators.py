"""User overloads of operators: a @wp.func named like the operator's builtin (`add`, `sub`, `mul`, ...) in the
kernel's globals or closure, with an overload taking the operands' types, is what `a + b` and `a += b` call
(as in Warp, where such a function overloads the builtin)."""

from __future__ import annotations

import ast

from .resolve import closure_vars
from .syntax import walk

_ARG = "_wp_operator_arg_"


def user_overload(em, node, opname: str, args: list):
    """The user function's result for `opname(*args)`, or None when no user overload takes these types."""
    fn = closure_vars(em.src.func).get(opname) if em.src.func.__closure__ else None
    fn = fn if fn is not None else em.src.func.__globals__.get(opname)
    if getattr(fn, "_wp_function_", False) is not True or any(o.func is em.src.func for o in fn.overloads):  # not inside its own body
        return None
    types = [a.type for a in args]
    if not any(o.accepts_types(types, {}) for o in fn.overloads):
        return None
    names = [f"{_ARG}{k}" for k in range(len(args))]
    for n, a in zip(names, args):
        em.env[n] = a
    where = node if node is not None and hasattr(node, "lineno") else em.src.tree
    call = ast.Call(func=ast.Name(id=opname, ctx=ast.Load()), args=[ast.Name(id=n, ctx=ast.Load()) for n in names],
                    keywords=[])
    for n in walk(call):
        ast.copy_location(n, where)
    try:
        return em.program.call(em, call, fn)
    finally:
        for n in names:
            em.env.pop(n, None)
