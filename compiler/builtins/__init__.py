"""Builtins: the table (`table.BUILTINS`) and the modules that fill it."""

from . import scalar  # noqa: F401  (fills the table)
from . import vector, matrix, quat  # noqa: F401  (composite overloads)
from .table import BUILTINS, Builtin, resolve
# Last: the derivative rules of the entries above (scalar rules, then the composite and quaternion ones that
# build on them).
from . import derivatives, derivatives_composite, derivatives_quat  # noqa: E402,F401

__all__ = ["BUILTINS", "Builtin", "resolve"]
