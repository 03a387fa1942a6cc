"""A Python function's source as an AST, with the user's file and line numbers."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from mlwarp.core.source import function_source


@dataclass
class Source:
    func: object
    name: str
    filename: str
    first_line: int  # file line of the source's first line (a decorator or the `def`)
    lines: list  # dedented source lines
    tree: ast.FunctionDef

    def file_line(self, node) -> int:
        return self.first_line + getattr(node, "lineno", 1) - 1

    def text(self, node) -> str:
        i = getattr(node, "lineno", 1) - 1
        return self.lines[i] if 0 <= i < len(self.lines) else ""


def get_source(func) -> Source:
    """The text the kernel cache key hashed (core/source.py), parsed afresh: the frontend may annotate
    its tree, and a function is compiled more than once (forward, adjoint, each overload's types)."""
    try:
        found = function_source(func)
    except (OSError, TypeError) as e:
        raise RuntimeError(f"Cannot read the source of '{getattr(func, '__name__', func)}': {e}") from None
    return Source(func, func.__name__, found.filename, found.first_line, found.text.splitlines(),
                  found.fresh_tree().body[0])
