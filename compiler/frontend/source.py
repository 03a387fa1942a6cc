"""A Python function's source as an AST, with the user's file and line numbers."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass


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
    try:
        lines, first = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or "<unknown>"
    except (OSError, TypeError) as e:
        raise RuntimeError(f"Cannot read the source of '{getattr(func, '__name__', func)}': {e}") from None
    text = textwrap.dedent("".join(lines))
    tree = ast.parse(text).body[0]
    return Source(func, func.__name__, filename, first, text.splitlines(), tree)
