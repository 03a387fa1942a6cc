"""Warp's texts for a @wp.func whose `return` disagrees with its return annotation."""

from __future__ import annotations

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
