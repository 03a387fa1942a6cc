"""The tile table: Warp's tile builtins and the warp dialect's tile ops, one record each, as the builtin table
(table.py) is for the scalar builtins.

A `TileBuiltin` is what a kernel calls (`wp.tile_load(a, shape=...)`): its parameters in Warp's order with their
defaults (the frontend binds a call's arguments by them), the function that emits it (its argument checks and
typing, Warp's messages), the arguments it updates in place (a loop carries them), and whether its lowering
assumes one lane per block. A `TileOp` is what the builtins emit (`warp.tile_load`): its operands, results,
attributes and verifier are its OpDef in dialects/warp/ops.py (`definition`, with named accessors:
`op.opview.array`); the record adds its lowering to linalg / tensor (convert-warp-tiles-to-linalg; a separate one
for tiles of vectors and matrices), its adjoint (warp-autodiff), and how a block's lanes run it (warp-gpu-
cooperative-tiles spreads it over them, warp-cpu-block-lanes runs it per lane).

Every reader goes through the records: frontend/tile_calls.py (the calls), lowering/tiles_to_linalg.py,
passes/autodiff.py (ReverseBuilder), targets/cpu/block_lanes.py and targets/cuda/cooperative_tiles.py. Adding a
tile builtin: docs/compiler.md, "Adding a tile builtin".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..dialects.warp.ops import BY_NAME, OpDef
from ..frontend import tile_algebra, tile_linalg, tile_make, tile_memory, tile_reductions, tile_shapes, tile_stacks, \
    tile_views
from ..frontend.tiles import REQUIRED
from ..lowering.tiles_algebra import AlgebraLowering as Algebra
from ..lowering.tiles_memory import MemoryLowering as Memory
from ..lowering.tiles_reductions import ReductionLowering as Reductions
from ..lowering.tiles_shapes import ShapeLowering as Shapes
from ..passes.autodiff_tiles import TileAdjoints as Adjoint


@dataclass(frozen=True)
class TileBuiltin:
    name: str
    # ((parameter, default), ...) in Warp's order, REQUIRED for none; None: `emit` reads the call itself (a variable
    # number of arguments, or forms told apart by their types)
    params: tuple | None
    emit: Callable  # (em, node, name, args: {parameter: ast node or default} | None) -> Var | None
    in_place: tuple = ()  # the positions of the arguments a call updates in place
    one_lane: bool = False  # its lowering assumes one lane per block (CUDA keeps such a module's blocks one thread)

    def keyword(self, position: int) -> str:
        """The keyword of the argument at `position` (an in-place one given by keyword)."""
        return self.params[position][0] if self.params is not None else "out"


@dataclass(frozen=True)
class TileOp:
    name: str
    lower: Callable | None  # TileLowering method (lowering, op) -> [values]: tiles of scalars
    lower_composite: Callable | None  # the same for tiles of vectors and matrices (None: refused)
    adjoint: Callable | None  # TileAdjoints method (reverse_builder, op, mapping, adj); None: refused
    spreads: bool = False  # its lowering is linalg ops, copies, tile-write nests, element reads: CUDA's block lanes
    per_lane: bool = False  # one element read or written: warp-cpu-block-lanes runs it in each lane's loop
    # spreads only while its results are unread (tile_atomic_add: the previous values it returns are a loop nest
    # carrying a tensor, which one lane runs)
    spreads_unread: bool = False

    @property
    def definition(self) -> OpDef:
        """Operands, results, attributes and verifier checks (dialects/warp/ops.py)."""
        return BY_NAME[self.name]


R = REQUIRED
SHAPED = (("shape", R), ("dtype", None), ("storage", "register"))
FILL_MODE = ("fill_mode", "lower")

BUILTINS = (
    # arrays
    TileBuiltin("tile_load", (("a", R), ("shape", R), ("offset", None), ("storage", "register"),
                              ("bounds_check", True), ("aligned", False)), tile_memory.load),
    TileBuiltin("tile_store", (("a", R), ("t", R), ("offset", None), ("bounds_check", True), ("aligned", False)),
                tile_memory.store),
    TileBuiltin("tile_atomic_add", (("a", R), ("t", R), ("offset", None), ("bounds_check", True)), tile_memory.store),
    TileBuiltin("tile_load_indexed", (("a", R), ("indices", R), ("shape", R), ("offset", None), ("axis", 0),
                                      ("storage", "register")), tile_memory.indexed),
    TileBuiltin("tile_store_indexed", (("a", R), ("indices", R), ("t", R), ("offset", None), ("axis", 0)),
                tile_memory.indexed),
    TileBuiltin("tile_atomic_add_indexed", (("a", R), ("indices", R), ("t", R), ("offset", None), ("axis", 0)),
                tile_memory.indexed),
    # tile_scatter_add(a, i, [j, k, l,] value, has_value, atomic=True): one index per dimension of `a`
    TileBuiltin("tile_scatter_add", None, tile_memory.scatter, in_place=(0,), one_lane=True),
    TileBuiltin("tile_scatter_masked", None, tile_memory.scatter, in_place=(0,), one_lane=True),
    # made
    TileBuiltin("tile_zeros", SHAPED, tile_make.full),
    TileBuiltin("tile_ones", SHAPED, tile_make.full),
    TileBuiltin("tile_empty", SHAPED, tile_make.full),
    TileBuiltin("tile_full", (("shape", R), ("value", R), ("dtype", None), ("storage", "register")), tile_make.full),
    TileBuiltin("tile_arange", None, tile_make.arange),  # (stop | start, stop[, step], dtype=float)
    TileBuiltin("tile_randi", (("shape", R), ("rng", R), ("min", None), ("max", None), ("storage", "register")),
                tile_make.random),
    TileBuiltin("tile_randf", (("shape", R), ("rng", R), ("min", None), ("max", None), ("storage", "register")),
                tile_make.random),
    TileBuiltin("tile_from_thread", (("shape", R), ("value", R), ("thread_idx", R), ("storage", "register")),
                tile_make.from_thread, one_lane=True),
    TileBuiltin("tile", None, tile_make.tile_untile, one_lane=True),  # (x, preserve_type=False)
    TileBuiltin("untile", None, tile_make.tile_untile, one_lane=True),
    TileBuiltin("block_dim", None, tile_make.block_dim, one_lane=True),
    # folds and maps
    TileBuiltin("tile_sum", (("a", R), ("axis", None)), tile_reductions.reduce),
    TileBuiltin("tile_max", (("a", R), ("axis", None)), tile_reductions.reduce),
    TileBuiltin("tile_min", (("a", R), ("axis", None)), tile_reductions.reduce),
    TileBuiltin("tile_argmax", (("a", R),), tile_reductions.reduce),
    TileBuiltin("tile_argmin", (("a", R),), tile_reductions.reduce),
    TileBuiltin("tile_reduce", (("op", R), ("a", R), ("axis", None)), tile_reductions.reduce),
    TileBuiltin("tile_scan_inclusive", (("a", R),), tile_reductions.scan),
    TileBuiltin("tile_scan_exclusive", (("a", R),), tile_reductions.scan),
    TileBuiltin("tile_scan_max_inclusive", (("a", R),), tile_reductions.scan),
    TileBuiltin("tile_scan_min_inclusive", (("a", R),), tile_reductions.scan),
    TileBuiltin("tile_map", None, tile_reductions.tile_map),  # (op, *tiles)
    # shapes, views, types
    TileBuiltin("tile_transpose", (("a", R),), tile_shapes.transpose),
    TileBuiltin("tile_broadcast", (("a", R), ("shape", R)), tile_shapes.broadcast),
    TileBuiltin("tile_reshape", (("t", R), ("shape", R)), tile_shapes.reshape),
    TileBuiltin("tile_squeeze", (("t", R), ("axis", None)), tile_shapes.reshape),
    TileBuiltin("tile_astype", (("t", R), ("dtype", R)), tile_shapes.astype),
    TileBuiltin("tile_assign", None, tile_shapes.assign_tile, in_place=(0,)),  # (dst, src, offset) / (dst, i.., src)
    TileBuiltin("tile_view", (("t", R), ("offset", R), ("shape", None)), tile_views.view),
    TileBuiltin("tile_extract", None, tile_views.extract),  # (t, i, [j, ...])
    TileBuiltin("tile_slice_indexed", (("t", R), ("indices", R)), tile_views.slice_indexed),  # t[indices, :]
    # linear algebra, transforms, sorting
    TileBuiltin("tile_matmul", (("a", R), ("b", R), ("out", None), ("alpha", 1.0), ("beta", 1.0),
                                ("precision", "default")), tile_linalg.matmul, in_place=(2,)),
    TileBuiltin("tile_fft", (("inout", R),), tile_linalg.fft, in_place=(0,)),
    TileBuiltin("tile_ifft", (("inout", R),), tile_linalg.fft, in_place=(0,)),
    TileBuiltin("tile_cholesky", (("A", R), FILL_MODE), tile_linalg.linear_algebra),
    TileBuiltin("tile_cholesky_inplace", (("A", R), FILL_MODE), tile_linalg.linear_algebra, in_place=(0,)),
    TileBuiltin("tile_cholesky_solve", (("L", R), ("y", R), FILL_MODE), tile_linalg.linear_algebra),
    TileBuiltin("tile_cholesky_solve_inplace", (("L", R), ("y", R), FILL_MODE), tile_linalg.linear_algebra,
                in_place=(1,)),
    TileBuiltin("tile_lower_solve", (("L", R), ("y", R)), tile_linalg.linear_algebra),
    TileBuiltin("tile_lower_solve_inplace", (("L", R), ("y", R)), tile_linalg.linear_algebra, in_place=(1,)),
    TileBuiltin("tile_upper_solve", (("U", R), ("z", R)), tile_linalg.linear_algebra),
    TileBuiltin("tile_upper_solve_inplace", (("U", R), ("z", R)), tile_linalg.linear_algebra, in_place=(1,)),
    TileBuiltin("tile_sort", (("keys", R), ("values", R)), tile_linalg.sort, in_place=(0, 1)),
    # compositions of the ops (tile_algebra.py)
    TileBuiltin("tile_dot", (("a", R), ("b", R)), tile_algebra.dot),
    TileBuiltin("tile_axpy", (("alpha", R), ("src", R), ("dest", R)), tile_algebra.axpy, in_place=(2,)),
    TileBuiltin("tile_diag_add", (("a", R), ("d", R)), tile_algebra.diag_add),
    # stacks: (slots, count) tuples
    TileBuiltin("tile_stack", (("capacity", R), ("dtype", R)), tile_stacks.stack, one_lane=True),
    TileBuiltin("tile_stack_push", (("s", R), ("value", R), ("has_value", R)), tile_stacks.stack, in_place=(0,),
                one_lane=True),
    TileBuiltin("tile_stack_pop", (("s", R),), tile_stacks.stack, in_place=(0,), one_lane=True),
    TileBuiltin("tile_stack_clear", (("s", R),), tile_stacks.stack, in_place=(0,), one_lane=True),
    TileBuiltin("tile_stack_count", (("s", R),), tile_stacks.stack, one_lane=True),
)

OPS = (
    TileOp("tile_load", Memory.lower_tile_load, Memory.lower_tile_load_composite, Adjoint.adjoint_tile_load,
           spreads=True),
    TileOp("tile_store", Memory.lower_tile_store, Memory.lower_tile_store_composite, Adjoint.adjoint_tile_store,
           spreads=True),
    TileOp("tile_atomic_add", Memory.lower_tile_atomic_add, Memory.lower_tile_atomic_add_composite,
           Adjoint.adjoint_tile_atomic_add, spreads=True, spreads_unread=True),
    TileOp("tile_load_indexed", Memory.lower_tile_load_indexed, Memory.lower_tile_load_indexed_composite,
           Adjoint.adjoint_tile_load_indexed),
    TileOp("tile_store_indexed", Memory.lower_tile_store_indexed, Memory.lower_tile_store_indexed_composite,
           Adjoint.adjoint_tile_store_indexed),
    TileOp("tile_full", Shapes.lower_tile_full, Shapes.lower_tile_full_composite, Adjoint.adjoint_tile_full,
           spreads=True),
    TileOp("tile_arange", Shapes.lower_tile_arange, None, Adjoint.adjoint_tile_arange, spreads=True),
    TileOp("tile_random", Shapes.lower_tile_random, None, Adjoint.adjoint_tile_random),
    TileOp("tile_extract", Shapes.lower_tile_extract, Shapes.lower_tile_extract_composite,
           Adjoint.adjoint_tile_extract, spreads=True, per_lane=True),
    TileOp("tile_insert", Shapes.lower_tile_insert, Shapes.lower_tile_insert_composite, Adjoint.adjoint_tile_insert,
           spreads=True, per_lane=True),
    TileOp("tile_map", Shapes.lower_tile_map, Shapes.lower_tile_map_composite, Adjoint.adjoint_tile_map,
           spreads=True),
    TileOp("tile_transpose", Shapes.lower_tile_transpose, Shapes.lower_tile_transpose_composite,
           Adjoint.adjoint_tile_transpose, spreads=True),
    TileOp("tile_broadcast", Shapes.lower_tile_broadcast, Shapes.lower_tile_broadcast_composite,
           Adjoint.adjoint_tile_broadcast, spreads=True),
    TileOp("tile_reshape", Shapes.lower_tile_reshape, Shapes.lower_tile_reshape_composite,
           Adjoint.adjoint_tile_reshape, spreads=True),
    TileOp("tile_view", Shapes.lower_tile_view, Shapes.lower_tile_view_composite, Adjoint.adjoint_tile_view,
           spreads=True),
    TileOp("tile_insert_view", Shapes.lower_tile_insert_view, Shapes.lower_tile_insert_view_composite,
           Adjoint.adjoint_tile_insert_view),
    TileOp("tile_gather", Shapes.lower_tile_gather, Shapes.lower_tile_gather_composite, Adjoint.adjoint_tile_gather),
    TileOp("tile_gather_add", Shapes.lower_tile_gather_add, Shapes.lower_tile_gather_add_composite,
           Adjoint.adjoint_tile_gather_add),
    TileOp("tile_reduce", Reductions.lower_tile_reduce, Reductions.lower_tile_reduce_composite,
           Adjoint.adjoint_tile_reduce, spreads=True),
    TileOp("tile_reduce_adjoint", Reductions.lower_tile_reduce_adjoint,
           Reductions.lower_tile_reduce_adjoint_composite, None, spreads=True),
    TileOp("tile_scan", Reductions.lower_tile_scan, None, None),
    TileOp("tile_sum_to", Reductions.lower_tile_sum_to, Reductions.lower_tile_sum_to_composite,
           Adjoint.adjoint_tile_sum_to, spreads=True),
    TileOp("tile_spread", Reductions.lower_tile_spread, Reductions.lower_tile_spread_composite, None),
    TileOp("tile_matmul", Algebra.lower_tile_matmul, None, Adjoint.adjoint_tile_matmul, spreads=True),
    TileOp("tile_cholesky", Algebra.lower_tile_cholesky, None, Adjoint.adjoint_tile_cholesky),
    TileOp("tile_solve", Algebra.lower_tile_solve, None, Adjoint.adjoint_tile_solve),
    TileOp("tile_triangle", Algebra.lower_tile_triangle, None, Adjoint.adjoint_tile_triangle),
    TileOp("tile_dft", None, Algebra.lower_tile_dft_composite, Adjoint.adjoint_tile_dft),
    TileOp("tile_sort", Algebra.lower_tile_sort, Algebra.lower_tile_sort_composite, Adjoint.adjoint_tile_sort),
    # a barrier of the block's lanes (no tiles: nothing to lower; warp-cpu-block-lanes erases it)
    TileOp("tile_sync", None, None, Adjoint.adjoint_tile_sync),
)

TILE_BUILTINS: dict[str, TileBuiltin] = {b.name: b for b in BUILTINS}
TILE_OPS: dict[str, TileOp] = {op.name: op for op in OPS}
