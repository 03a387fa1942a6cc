"""A builtin's overloads as Warp's Python shows them: `wp.sin.overloads`, `wp.quat_identity.key`.

Warp's builtins are `Function` objects grouping one overload per signature. Each overload names its
parameters and their types (`input_types`: concrete types, or generics such as `wp.Float` where the
builtin is written once for a family) and its result type (`value_type`; None where the arguments
decide it). For the builtins Python can call, Warp lists a concrete overload per scalar type before the
generic one; mlwarp does the same (python/mlwarp/library/builtin_signatures.py reads the builtin table).
"""

from __future__ import annotations

from . import types as wt


class BuiltinSignature:
    """One overload of a builtin (Warp's `Function` for one signature)."""

    namespace = "wp::"

    def __init__(self, key: str, input_types: dict, value_type=None, doc: str = "", export: bool = True):
        self.key = key
        self.input_types = dict(input_types)
        self.value_type = value_type
        self.doc = doc
        self.export = export  # callable from Python scope

    @property
    def overloads(self) -> list:
        return [self]

    def is_builtin(self) -> bool:
        return True

    def __repr__(self):
        params = ", ".join(f"{name}: {_shown(t)}" for name, t in self.input_types.items())
        return f"<Function {self.key}({params})>"


def _shown(t) -> str:
    return wt.type_name(t) if isinstance(t, type) else repr(t)


def declare_builtin(fn, signatures: list) -> None:
    """Gives a type function written in Python (`wp.quat_identity`) the attributes of Warp's builtin `Function`:
    its key, its overloads, and the first overload's parameter and result types."""
    fn.key = fn.__name__
    fn.overloads = signatures
    fn.input_types = signatures[0].input_types
    fn.value_type = signatures[0].value_type
    fn.namespace = BuiltinSignature.namespace
    fn.export = True
    fn.is_builtin = lambda: True
