"""Builtins on matrices (row-major, as in Warp): overloads in the builtin table."""
