"""Calls of Warp's tile builtins in kernels (`wp.tile_load(a, shape=...)`, `wp.tile_matmul(a, b, out)`, ...): each
is looked up in the tile table (builtins/tile_table.py), its arguments bound by the record's parameters, and the
record's function emits it (frontend/tile_memory.py, tile_make.py, tile_reductions.py, tile_shapes.py,
tile_linalg.py, tile_stacks.py, tile_views.py, tile_algebra.py)."""

from __future__ import annotations

import ast

from mlir import ir

from mlwarp.core.errors import CompileError

from ..lazy import LazyModule

# read at call time: the table imports the frontend's emitters (whose package imports this one), every tile
# lowering and adjoint, ~15 ms of a cold first launch that a kernel without tiles does not pay
tile_table = LazyModule("mlwarp.compiler.builtins.tile_table")
from .tiles import bind, lanes, mark

# On the module: the first builtin whose lowering assumes one lane per block (a record's `one_lane`): the same
# attribute as lowering/tiles_to_linalg.py's ONE_LANE_ATTR, which warp-gpu-cooperative-tiles reads
ONE_LANE_ATTR = "warp.one_lane_tiles"


def prepare(em, name: str) -> None:
    """What every tile builtin's call does first: the module makes tiles; a builtin assuming one lane per block
    says so."""
    mark(em)
    record = tile_table.TILE_BUILTINS.get(name)
    if record is not None and record.one_lane and lanes(em) == 1:
        module = em.program.kernel_op.parent
        if ONE_LANE_ATTR not in module.attributes:
            module.attributes[ONE_LANE_ATTR] = ir.StringAttr.get(name)


def call(em, node: ast.Call, name: str):
    prepare(em, name)
    record = tile_table.TILE_BUILTINS.get(name)
    if record is None:
        raise em.error(node, f"wp.{name}() is not supported in mlwarp's kernels yet", CompileError)
    args = None if record.params is None else bind(em, node, name, record.params)
    return record.emit(em, node, name, args)


def updated_names(node: ast.Call, name: str) -> list:
    """The locals a call of tile builtin `name` assigns without naming them as a target (a loop carries them):
    `wp.tile_matmul(a, b, out)` updates `out`."""
    record = tile_table.TILE_BUILTINS.get(name)
    found = []
    for k in record.in_place if record is not None else ():
        target = node.args[k] if len(node.args) > k else \
            next((kw.value for kw in node.keywords if kw.arg == record.keyword(k)), None)
        found += [target.id] if isinstance(target, ast.Name) else []
    return found
