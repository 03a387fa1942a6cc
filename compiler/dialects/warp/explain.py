"""Which operand or result of a warp op breaks the op table's constraints, in words.

IRDL's verifier says what it expected ("expected 'i32' but got 'f64'") but not where. Given an op's
name and its operand and result types as printed (the "see current operation" note of the verifier's
diagnostic), `explain` re-reads the table (ops.OPS) and names the first offending operand or result:

    operand 'indices' #1 must be i32, got f64
    result 'element' must be f32 (the element type of operand 'array'), got f64

Types are compared as MLIR prints them; this module imports no MLIR.
"""

from __future__ import annotations

import re

from .ops import BY_NAME, MAX_NDIM, AnyOf, AnyType, Array, AttrBase, Base, Is, Var, descriptor_spelling

_DESCRIPTORS = {descriptor_spelling(n) for n in range(1, MAX_NDIM + 1)}


_BRACKETS = "<>()[]{}"
_SCANNERS = {}  # separator -> the pattern of it and the brackets


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """`a, b<c, d>, (e, f)` -> ["a", "b<c, d>", "(e, f)"]. (The compiler splits long struct types' texts: only
    the brackets and separators are visited.)"""
    scanner = _SCANNERS.get(sep)
    if scanner is None:
        scanner = _SCANNERS[sep] = re.compile("[" + re.escape(_BRACKETS + sep) + "]")
    out, depth, start = [], 0, 0
    for m in scanner.finditer(text):
        ch = m.group()
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:m.start()].strip())
            start = m.end()
    last = text[start:].strip()
    if last:
        out.append(last)
    return out


def _array_dtype(t: str) -> str | None:
    if not (t.startswith("!warp.array<") and t.endswith(">")):
        return None
    params = split_top_level(t[len("!warp.array<"):-1])
    return params[0] if len(params) == 2 else None


def _warp_kind(c: Base) -> str:
    return c.name[len("warp."):]


def _describe(c, bound: dict) -> str:
    if isinstance(c, Var):
        if c.name in bound:
            t, origin = bound[c.name]
            return f"{t} ({origin})"
        return _describe(c.constraint, bound)
    if isinstance(c, AnyType):
        return "any type"
    if isinstance(c, Is):
        return c.type
    if isinstance(c, Base):
        return f"a !{c.name}" if c.name.startswith("warp.") else c.name
    if isinstance(c, Array):
        unbound = isinstance(c.dtype, Var) and c.dtype.name not in bound and isinstance(c.dtype.constraint, AnyType)
        of = "" if isinstance(c.dtype, AnyType) or unbound else f" of {_describe(c.dtype, bound)}"
        return f"a !warp.array{of}" + (" (or its LLVM descriptor)" if c.or_descriptor else "")
    if isinstance(c, AnyOf):
        if all(isinstance(o, Base) and o.name.startswith("warp.") for o in c.options):
            kinds = [_warp_kind(o) for o in c.options]
            return "a " + ", ".join(kinds[:-1]) + f" or {kinds[-1]}"
        return " or ".join(_describe(o, bound) for o in c.options)
    if isinstance(c, AttrBase):
        return c.name
    return repr(c)


def _satisfies(c, t: str, bound: dict, origin: str) -> bool:
    """Whether type spelling `t` satisfies `c`; binds Vars (in `bound`: name -> (type, origin))."""
    if isinstance(c, Var):
        if c.name in bound:
            return bound[c.name][0] == t
        if not _satisfies(c.constraint, t, bound, origin):
            return False
        bound[c.name] = (t, f"the type of {origin}")
        return True
    if isinstance(c, AnyType):
        return True
    if isinstance(c, Is):
        return c.type == t
    if isinstance(c, Base):
        return t.startswith(f"!{c.name}<")
    if isinstance(c, AnyOf):
        for option in c.options:
            trial = dict(bound)
            if _satisfies(option, t, trial, origin):
                bound.update(trial)
                return True
        return False
    if isinstance(c, Array):
        dtype = _array_dtype(t)
        if dtype is None:
            return c.or_descriptor and t in _DESCRIPTORS
        if isinstance(c.dtype, Var) and c.dtype.name not in bound:
            if not _satisfies(c.dtype.constraint, dtype, bound, origin):
                return False
            bound[c.dtype.name] = (dtype, f"the element type of {origin}")
            return True
        return _satisfies(c.dtype, dtype, bound, origin)
    raise TypeError(f"not a type constraint: {c!r}")


def _groups(items, count: int, segments=None):
    """(definition, position) for each of `count` values of a table op's operands or results; `segments`: the
    op's operandSegmentSizes, which an op with several variadic or optional groups needs."""
    if sum(1 for x in items if x.variadic or x.optional) > 1:
        if segments is None or len(segments) != len(items) or sum(segments) != count:
            return None
        return [x for x, n in zip(items, segments) for _ in range(n)]
    fixed = sum(1 for x in items if not x.variadic)
    if count < fixed or (count > fixed and not any(x.variadic for x in items)):
        return None
    out = []
    for x in items:
        out += [x] * ((count - fixed) if x.variadic else 1)
    return out


def explain(op_name: str, operand_types, result_types, operand_segments=None) -> str | None:
    """The first operand or result of `op_name` (e.g. "warp.load") whose type breaks the table, as
    "operand 'indices' #1 must be i32, got f64"; None when the table has no such op or all fit.
    `operand_segments`: the op's operandSegmentSizes, if it has them."""
    op = BY_NAME.get(op_name[len("warp."):]) if op_name.startswith("warp.") else None
    if op is None:
        return None
    operands = _groups(op.operands, len(operand_types), operand_segments)
    results = _groups(op.results, len(result_types))
    if operands is None:
        names = ", ".join(f"{x.name}{'...' if x.variadic else '?' if x.optional else ''}" for x in op.operands)
        if sum(1 for x in op.operands if x.variadic or x.optional) > 1:
            return (f"takes operands ({names}) with an operandSegmentSizes attribute giving each group's count, "
                    f"got {len(operand_types)} operands and segments {operand_segments}")
        return f"takes operands ({names}), got {len(operand_types)}"
    if results is None:
        return f"has {len(op.results)} result(s), got {len(result_types)}"
    bound: dict = {}
    for kind, defs, types in (("operand", operands, operand_types), ("result", results, result_types)):
        for k, (d, t) in enumerate(zip(defs, types)):
            where = f"{kind} '{d.name}'" + (f" #{k}" if d.variadic else "")
            expected = _describe(d.constraint, bound)
            if not _satisfies(d.constraint, t, bound, where):
                return f"{where} must be {expected}, got {t}"
    return None


def parse_generic(text: str):
    """(name, operand types, result types, operandSegmentSizes or None) of a generic op as the verifier's note
    prints it: `%0 = "warp.load"(%a, %i) {attrs} : (!warp.array<f32, 1 : i64>, i32) -> f64`; None if it is not."""
    start = text.find('"warp.')
    if start < 0:
        return None
    end = text.find('"', start + 1)
    name = text[start + 1:end]
    i, depth = end + 1, 0
    # the operand list, then an optional attribute dictionary, then " : " and the function type
    for j in range(i, len(text)):
        if text[j] in "([{<":
            depth += 1
        elif text[j] in ")]}>":
            depth -= 1
        elif text[j] == ":" and depth == 0:
            i = j + 1
            break
    else:
        return None
    signature = text[i:].strip()
    if not signature.startswith("("):
        return None
    inputs, _, output = signature.partition(") -> ")
    operand_types = split_top_level(inputs[1:])
    output = output.strip()
    if output.startswith("(") and output.endswith(")"):
        result_types = split_top_level(output[1:-1])
    else:
        result_types = [output] if output else []
    return name, operand_types, result_types, _segments(text[end:i])


def _segments(attrs: str):
    """The counts of `operandSegmentSizes = array<i32: 1, 2, 0>` in an op's printed attributes, or None."""
    key = "operandSegmentSizes = array<i32"
    at = attrs.find(key)
    if at < 0:
        return None
    body = attrs[at + len(key):attrs.find(">", at)].lstrip(":").strip()
    return [int(n) for n in body.split(",") if n.strip()]
