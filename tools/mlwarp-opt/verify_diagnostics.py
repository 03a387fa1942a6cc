"""`mlwarp-opt -verify-diagnostics`: the errors an input produces checked against its `expected-error` comments,
as mlir-opt does (MLIR's handler is not reachable from Python, and the warp verifier's errors are Python's).

    %0 = "warp.load"(%a, %i) : (!A, i32) -> f32  // expected-error {{index count}}
    // expected-error@+1 {{attribute value}}     (also @-N, @above, @below)

An expectation is met by an error on its line whose message contains the text between the braces. Every
expectation not met and every error not expected is one line; none: the input passes.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_EXPECTED = re.compile(r"//\s*expected-error(@[+-]\d+|@above|@below)?\s*\{\{(.*?)\}\}")


class Expected(NamedTuple):
    line: int  # the line the error must be reported on (1-based, in the whole file)
    text: str
    written_at: int  # the comment's own line


def expectations(text: str, line_offset: int = 0) -> list[Expected]:
    """The expected-error comments of a chunk whose first line is line `line_offset + 1` of the file."""
    found = []
    for k, line in enumerate(text.split("\n"), start=line_offset + 1):
        for m in _EXPECTED.finditer(line):
            where = m.group(1) or ""
            if where in ("@above", "@below"):
                target = k - 1 if where == "@above" else k + 1
            else:
                target = k + int(where[1:]) if where else k
            found.append(Expected(target, m.group(2), k))
    return found


def _line(where: str | None) -> int | None:
    """The line of `file:line:col` (the file name may hold colons)."""
    if not where:
        return None
    parts = where.rsplit(":", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def mismatches(expected: list[Expected], errors: list, input_name: str) -> list[str]:
    """One line per expectation not met and per error not expected; [] when they agree."""
    left = list(errors)
    out = []
    for e in expected:
        match = next((err for err in left if _line(err[0]) == e.line and e.text in err[1]), None)
        if match is None:
            out.append(f"{input_name}:{e.written_at}: expected error \"{e.text}\" on line {e.line} was not produced")
        else:
            left.remove(match)
    for where, message in left:
        out.append(f"{where}: unexpected error: {message}" if where else f"unexpected error: {message}")
    return out
