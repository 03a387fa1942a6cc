"""One-line error messages from MLIR diagnostics: `<file>:<line>:<col>: <message>`.

Text parsed with `ir.Module.parse` carries the buffer name "-"; the tool
replaces it with the real input name, and shifts line numbers by the chunk's
first line when `--split-input-file` cut the file into pieces.
"""

from __future__ import annotations

import re

from mlir import ir

from mlwarp.compiler.dialects.warp.explain import explain, parse_generic

PARSER_BUFFER = "-"


def file_location(loc: ir.Location):
    """The first file:line:col location inside `loc` (name, call site and fused locations are looked through)."""
    if loc.is_a_file():
        return loc
    if loc.is_a_name():
        return file_location(loc.child_loc)
    if loc.is_a_callsite():
        return file_location(loc.callee)
    if loc.is_a_fused():
        for inner in loc.locations:
            found = file_location(inner)
            if found is not None:
                return found
    return None


def format_location(loc: ir.Location, input_name: str) -> str | None:
    f = file_location(loc)
    if f is None:
        return None
    name = input_name if f.filename == PARSER_BUFFER else f.filename
    return f"{name}:{f.start_line}:{f.start_col}"


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


CURRENT_OP_NOTE = "see current operation: "


def op_message(diag) -> str:
    """The diagnostic's first line. IRDL's constraint failures name neither the op nor the operand
    ("expected 'i32' but got 'f64'"): for a warp op, the op table names both, read off the op the
    verifier's note prints."""
    message = first_line(diag.message)
    if re.match(r"'[\w.$-]+' op ", message):  # already names its op
        return message
    for note in diag.notes:
        if note.message.startswith(CURRENT_OP_NOTE):
            parsed = parse_generic(first_line(note.message[len(CURRENT_OP_NOTE):]))
            if parsed is not None:  # (IRDL's operand-count messages start with a bare "op ")
                return f"'{parsed[0]}' op {explain(*parsed) or message.removeprefix('op ')}"
    return message


def all_errors(error: Exception, input_name: str) -> list:
    """[(file:line:col or None, one-line message)] of every error diagnostic of an MLIRError."""
    return [(format_location(d.location, input_name), op_message(d))
            for d in getattr(error, "error_diagnostics", None) or []]


def describe(error: Exception, input_name: str) -> str:
    """The first error diagnostic of an MLIRError (or the error's own text), on one line."""
    for diag in getattr(error, "error_diagnostics", None) or []:
        where = format_location(diag.location, input_name)
        message = op_message(diag)
        return f"{where}: {message}" if where else message
    text = getattr(error, "message", None) or str(error)
    return first_line(text)
