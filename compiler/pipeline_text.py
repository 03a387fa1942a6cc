"""Pass pipeline text, as mlir-opt writes it: `builtin.module(a, b{x=1 y="p q"}, func.func(c))`. The one parser
and printer of passes: the stage tables (compiler/targets/), inserted passes (compiler/insert.py) and mlwarp-opt
(`--pass-pipeline`, `--<pass>=<options>`, `--list-passes`) all go through it.

`parse_pipeline` splits text into elements (name, `{options}`, `(nested pipeline)`). `resolve` turns each
element into what a stage table holds: an mlwarp pass object (passes/registry.py: its options parsed and typed now)
or, for any other name, the element's upstream pipeline text, which MLIR parses when it runs (its option syntax
is exactly MLIR's). `format_pipeline` prints such entries back; `resolve(format_pipeline(entries)) == entries`.
Imports no MLIR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .passes.registry import Pass, PassError, declared

_OPEN = {"(": ")", "{": "}", "[": "]"}
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


class PipelineSyntaxError(PassError):
    """Pipeline text that does not parse; the message says where."""


@dataclass
class Element:
    name: str
    options: str | None  # the text between `{` and `}`, or None
    nested: str | None   # the text between `(` and `)` for op-anchored pipelines, or None
    text: str            # the element as written


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Splits on `sep` outside brackets and quotes; raises on unbalanced brackets."""
    parts, stack, quote, start = [], [], None, 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in ")}]":
            if not stack or stack.pop() != ch:
                raise PipelineSyntaxError(f"unbalanced '{ch}' in pass pipeline '{text}'")
        elif ch == sep and not stack:
            parts.append(text[start:i])
            start = i + 1
    if stack or quote:
        raise PipelineSyntaxError(f"unterminated {'quote' if quote else repr(stack[-1])} in pass pipeline '{text}'")
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_element(text: str) -> Element:
    m = _NAME.match(text)
    if not m:
        raise PipelineSyntaxError(f"expected a pass name in pass pipeline at '{text}'")
    rest = text[m.end():].strip()
    options = nested = None
    if rest.startswith("{"):
        end = _closing(rest, 0)
        options, rest = rest[1:end], rest[end + 1:].strip()
    if rest.startswith("("):
        end = _closing(rest, 0)
        nested, rest = rest[1:end], rest[end + 1:].strip()
    if rest:
        raise PipelineSyntaxError(f"unexpected '{rest}' after '{m.group(0)}' in pass pipeline")
    return Element(m.group(0), options, nested, text)


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (text is already known to be balanced)."""
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth == 0:
                return i
    raise PipelineSyntaxError(f"unbalanced brackets in '{text}'")


def parse_pipeline(text: str, anchored: bool = True) -> list[Element]:
    """`builtin.module(a,b{x=1})` or a bare `a,b{x=1}` -> elements run on the top-level module. `anchored`: as
    mlir-opt's --pass-pipeline, a lone nested pipeline must be `builtin.module(...)`; else `func.func(cse)` is
    one element, an op-anchored pipeline (as a stage table or an inserted pass writes it)."""
    text = text.strip()
    if not text:
        return []
    top = split_top_level(text)
    if len(top) == 1:
        el = parse_element(top[0])
        if el.nested is not None and (anchored or el.name == "builtin.module"):
            if el.name != "builtin.module":
                raise PipelineSyntaxError(f"the pass pipeline must be anchored on 'builtin.module', "
                                          f"not '{el.name}': write 'builtin.module({el.name}(...))'")
            if el.options is not None:
                raise PipelineSyntaxError("'builtin.module' takes no options")
            return [parse_element(t) for t in split_top_level(el.nested) if t]
    return [parse_element(t) for t in top if t]


def parse_options(text: str) -> dict[str, str]:
    """`a=1 b="x y"` -> {"a": "1", "b": "x y"} (the quotes of a quoted value are removed)."""
    out = {}
    for item in split_top_level(text, sep=" "):
        if not item:
            continue
        if "=" not in item:
            raise PipelineSyntaxError(f"pass option '{item}' must be written key=value")
        key, value = item.split("=", 1)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key] = value
    return out


def resolve(text: str, anchored: bool = False) -> list:
    """Pipeline text -> its entries: a pass object per mlwarp pass, the element's text per upstream one
    (`anchored`: see parse_pipeline)."""
    entries = []
    for el in parse_pipeline(text, anchored):
        cls = declared(el.name)
        if cls is None:
            entries.append(el.text)
        elif el.nested is not None:
            raise PipelineSyntaxError(f"pass '{el.name}' runs on the whole module; it cannot take a nested pipeline")
        else:
            entries.append(cls.parse(parse_options(el.options or "")))
    return entries


def format_pipeline(entries, anchor: bool = True) -> str:
    """Entries (pass objects, upstream text) as pipeline text, inside `builtin.module(...)` unless not `anchor`."""
    for e in entries:
        if not isinstance(e, (Pass, str)):
            raise TypeError(f"a pipeline entry is a pass object or upstream pipeline text, not {e!r}")
    text = ",".join(str(e) for e in entries)
    return f"builtin.module({text})" if anchor else text
