"""Builtins on quaternions (x, y, z, w) and transforms (p, q): overloads in the builtin table."""
