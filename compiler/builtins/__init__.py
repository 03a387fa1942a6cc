"""Builtins: the table (`table.BUILTINS`) and the modules that fill it."""

from . import scalar  # noqa: F401  (fills the table)
from .table import BUILTINS, Builtin, resolve

__all__ = ["BUILTINS", "Builtin", "resolve"]
