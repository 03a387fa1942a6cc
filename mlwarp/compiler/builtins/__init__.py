"""Builtins: the table (`table.BUILTINS`) and the modules that fill it."""

from . import scalar  # noqa: F401  (fills the table)
from . import vector, matrix, quat  # noqa: F401  (composite overloads)
from .table import BUILTINS, Builtin, resolve
from . import derivatives  # noqa: E402,F401  (last: sets derivative rules on the entries above)

__all__ = ["BUILTINS", "Builtin", "resolve"]
