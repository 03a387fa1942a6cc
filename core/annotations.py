"""A function's annotations as Warp reads them: under `from __future__ import annotations` each is a
string, evaluated in the function's globals with its closure cells as locals (Warp's
`get_full_arg_spec`), so a kernel built in a factory can annotate with the factory's parameters
(`def make(wp, dtype): @wp.kernel def k(a: wp.array(dtype=dtype)) ...`)."""

from __future__ import annotations

_UNRESOLVED = object()


def closure_cells(func) -> dict:
    cells = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # a cell not yet assigned (the enclosing function assigns it later)
            pass
    return cells


def resolve_annotation(func, annotation, default=_UNRESOLVED):
    """`annotation` itself unless it is a string; a string that does not evaluate gives `default`
    (the string back when no default is given)."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, func.__globals__, closure_cells(func))  # noqa: S307
    except Exception:
        return annotation if default is _UNRESOLVED else default


def resolved_annotations(func) -> dict:
    return {name: resolve_annotation(func, a) for name, a in getattr(func, "__annotations__", {}).items()}
