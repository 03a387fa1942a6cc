"""Syntax facts the code generator needs before emitting a statement."""

from __future__ import annotations

import ast

# Construct names for "unsupported: ..." errors.
UNSUPPORTED = {
    ast.ListComp: "list comprehension", ast.SetComp: "set comprehension", ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression", ast.Lambda: "lambda", ast.Try: "try statement",
    ast.With: "with statement", ast.Dict: "dict literal", ast.Set: "set literal", ast.List: "list literal",
    ast.Global: "global statement", ast.Nonlocal: "nonlocal statement",
    ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await", ast.ClassDef: "class definition",
    ast.FunctionDef: "nested function definition", ast.AsyncFunctionDef: "async function",
    ast.Import: "import statement", ast.ImportFrom: "import statement", ast.Delete: "del statement",
    ast.Raise: "raise statement", ast.JoinedStr: "f-string",
    ast.NamedExpr: "assignment expression (:=)", ast.Slice: "slice", ast.Match: "match statement",
    ast.AsyncFor: "async for", ast.AsyncWith: "async with",
}
if hasattr(ast, "TryStar"):
    UNSUPPORTED[ast.TryStar] = "try statement"

# Warp's own texts for some constructs (as its codegen words them).
_WARP_TEXTS = {
    ast.List: "List constructs are not supported in kernels. Use vectors like `wp.vec3()` for small fixed-size "
              "collections, or `wp.zeros(shape=N, dtype=...)` for stack-allocated arrays.",
    ast.Dict: "Construct `ast.Dict` not supported in kernels.",
    ast.Starred: "Construct `ast.Starred` not supported in kernels.",  # outside call arguments (starred.py)
}


def unsupported_message(node) -> str:
    """The error text for a construct kernels do not support."""
    return _WARP_TEXTS.get(type(node)) or f"unsupported: {UNSUPPORTED.get(type(node), type(node).__name__)}"


_LOOPS = (ast.For, ast.While)


def walk(node) -> tuple:
    """The nodes `ast.walk(node)` yields, in its order, listed once a node: the code generator asks about the same
    subtrees again and again (a loop nest's bodies at each level of it, a branch's at each enclosing loop), and
    ast.walk's generator was ~40% of the frontend of a kernel with inlined mesh queries. The frontend never
    changes a tree it has read (it desugars into new nodes), so a listing stays right."""
    found = node.__dict__.get("_wp_walk")
    if found is None:
        found = tuple(ast.walk(node))
        node._wp_walk = found
    return found


def _walk_same_loop(node) -> tuple:
    """The nodes below `node`, without entering nested loops' bodies (their break/continue are theirs); listed
    once a node, as `walk`."""
    found = node.__dict__.get("_wp_walk_same_loop")
    if found is None:
        found = []
        for child in ast.iter_child_nodes(node):
            found.append(child)
            if not isinstance(child, _LOOPS):
                found += _walk_same_loop(child)
        found = tuple(found)
        node._wp_walk_same_loop = found
    return found


# Constructs that no kernel can contain: the whole body is checked for them first, so the error names the
# construct even where it sits inside a call that would fail for another reason.
NEVER_SUPPORTED = (
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.Try, ast.With, ast.Global,
    ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.Import, ast.ImportFrom, ast.Match, ast.AsyncFor, ast.AsyncWith, ast.NamedExpr,
) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def first_never_supported(func_def: ast.FunctionDef):
    """The first construct of NEVER_SUPPORTED in the function's body (not its signature), or None."""
    for stmt in func_def.body:
        for node in walk(stmt):
            if isinstance(node, NEVER_SUPPORTED):
                return node
    return None


def may_jump(node, only=(ast.Break, ast.Continue, ast.Return)) -> bool:
    """Whether executing `node` may leave the enclosing block early."""
    if isinstance(node, only):
        return True
    if ast.Return in only and contains_return([node] if not isinstance(node, ast.Module) else node.body):
        return True
    loop_jumps = tuple(t for t in only if t is not ast.Return)
    if isinstance(node, _LOOPS) or not loop_jumps:
        return False
    return any(isinstance(n, loop_jumps) for n in _walk_same_loop(node))


def contains_return(stmts) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in walk(s))


def assigned_names(stmts) -> list:
    """Names bound anywhere in `stmts` (assignment targets, loop variables), in order."""
    names = []
    for s in stmts:
        for n in walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.append(n.id)
    return names


def target_root(node):
    """The name at the root of an assignment target: `u` for `u`, `u[j]`, `s.v.z`, `m[r][c]`; None for a
    target rooted in an expression (`f(x).y`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def member_write_roots(stmts) -> list:
    """Names whose members `stmts` write (`u[j] = ...`, `v.y += ...`, `s.v.z = ...`), in order.

    A composite local is an SSA value, so such a write rebinds the whole local: loops must carry it like a
    plain assignment. Roots that name arrays are filtered out by the caller (those writes go to memory)."""
    roots = []
    for s in stmts:
        for n in walk(s):
            targets = n.targets if isinstance(n, ast.Assign) else \
                [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(e, (ast.Attribute, ast.Subscript)) and target_root(e) is not None:
                        roots.append(target_root(e))
    return roots


def number_literal(node):
    """The Python number a literal denotes, signs included (`3`, `-0.3`, `+2`, `-(-1e300)`); None otherwise.
    A signed literal is one constant, so `wp.float64(-0.3)` never passes through float32."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = number_literal(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    return None


def int_literal(node):
    """The int a literal denotes (`2`, `-1`); None for anything else, bools and floats included."""
    v = number_literal(node)
    return v if type(v) is int else None


def read_outside(tree: ast.AST, node: ast.AST, name: str) -> bool:
    """Whether `name` is read anywhere in `tree` outside `node` (a loop whose variable need not outlive it)."""
    inside = {id(n) for n in walk(node)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside
               for n in walk(tree))


def read_before_bound(stmts, bound) -> set:
    """Names that `stmts` may read on a path where they are not bound yet, `bound` being bound on entry.

    Run over a loop body, these are the names an iteration may read from the one before it (or, on the first
    iteration, before any assignment): the loop must carry them even though nothing defines them before it.
    Loops in `stmts` count once (their first iteration), and a loop binds nothing for what follows it (it may
    run no iteration)."""
    found = set()

    def reads(node, bound):
        found.update(n.id for n in walk(node)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound)

    def stores(node):
        return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def block(stmts, bound):
        bound = set(bound)
        for s in stmts:
            if isinstance(s, ast.If):
                reads(s.test, bound)
                bound = block(s.body, bound) & block(s.orelse, bound)
            elif isinstance(s, (ast.For, ast.While)):
                reads(s.iter if isinstance(s, ast.For) else s.test, bound)
                block(s.body, bound | (stores(s.target) if isinstance(s, ast.For) else set()))
            elif isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                if s.value is not None:
                    reads(s.value, bound)
                for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                    reads(t, bound)  # the indices and bases of `a[i].x = ...`
                    if isinstance(s, ast.AugAssign) and isinstance(t, ast.Name) and t.id not in bound:
                        found.add(t.id)  # y += 1 reads y
                    bound |= stores(t)
            else:
                reads(s, bound)
                bound |= stores(s)
        return bound

    block(stmts, bound)
    return found


def continuation(tree: ast.AST, node: ast.stmt) -> list:
    """The statements that run after `node` in `tree`, in order: the rest of its block, then the rest of each
    enclosing block outwards (an enclosing loop's next iteration is that loop's business: read_before_bound)."""
    def find(stmts):
        for k, s in enumerate(stmts):
            if s is node:
                return stmts[k + 1:]
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    rest = find(inner)
                    if rest is not None:
                        return rest + stmts[k + 1:]
        return None

    return find(tree.body) or []
