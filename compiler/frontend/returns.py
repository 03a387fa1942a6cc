"""Warp's texts for a @wp.func whose `return` disagrees with its return annotation."""

from __future__ import annotations

from mlir import ir

from mlwarp.core import types as wt

from . import types as ft


def annotation_str(a) -> str:
    """The annotation as Warp's type_str spells it: `int` for Python's int, `tuple[int, int]`, `int16`."""
    if a in (int, float, bool):
        return a.__name__
    if getattr(a, "__origin__", None) is tuple:
        return f"tuple[{', '.join(annotation_str(x) for x in a.__args__)}]"
    t = ft.from_annotation(a)
    return ft.name(t) if t is not None else str(a)


def mismatch_message(name: str, annotation, types: list) -> str:
    head = f"The function `{name}` has its return type annotated as"
    got = [ft.name(t) for t in types]
    if getattr(annotation, "__origin__", None) is tuple:
        if len(annotation.__args__) != len(types):
            return f"{head} a tuple of {len(annotation.__args__)} elements but the code returns {len(types)} values."
        return f"{head} `{annotation_str(annotation)}` but the code returns a tuple with types `({', '.join(got)})`."
    if len(types) > 1:
        return f"{head} `{annotation_str(annotation)}` but the code returns {len(types)} values."
    return f"{head} `{annotation_str(annotation)}` but the code returns a value of type `{', '.join(got) or 'None'}`."


def is_stack_array(v) -> bool:
    """Whether the value is a wp.zeros array made in the function (warp.local_array: Warp's fixedarray)."""
    return isinstance(v.type, ft.ArrayT) and isinstance(v.value, ir.OpResult) and v.value.owner.name == "warp.local_array"


def says_array(annotation) -> bool:
    """Whether a return annotation names an array (`wp.array2d[int]`, `wp.array(ndim=2, ...)`), not a fixedarray."""
    return wt.is_array(annotation) and not getattr(annotation, "_wp_fixedarray_", False)


def stack_array_message(name: str, t) -> str:
    """Warp refuses to return its fixed-size (stack) array where the annotation says `wp.array`: in its C++ the
    storage dies with the function (mlwarp inlines the call, but keeps Warp's rule)."""
    return (f"The function `{name}` returns a fixed-size array whereas it has its return type annotated as "
            f"`Array[{wt.type_name(t.dtype)}]`.")
