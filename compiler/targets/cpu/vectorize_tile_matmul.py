"""warp-cpu-vectorize-tile-matmul: a float tile_matmul (the `warp.tile_matmul` linalg.generic of
convert-warp-tiles-to-linalg, on buffers) becomes a register-blocked outer-product kernel, by upstream
transforms driven from a transform-dialect script:

  transform.structured.interchange [0, 2, 1]      (m, k, n) -> (m, n, k)
  transform.structured.tile_using_for [R, W, Kt]   R rows x W columns of acc per tile, k in steps of Kt
  transform.structured.vectorize                   -> vector.contract of RxKt by KtxW into RxW
  lower_contraction "outerproduct", lower_outerproduct, lower_transfer
                                                   -> per k: one row of b (W lanes), R broadcasts of a,
                                                      R vector.fma into the accumulators

The accumulators (R x W) stay in registers across the tile's k; each acc[m, n] still adds its products in
increasing k, each product fused with its addition (vector.fma), as Warp's CPU build (clang, fuse_fp) does.

W is two vector registers of the element type when n divides by that, else one; R is the largest of
8, 4, 2, 1 dividing m with R * W / lanes accumulators within half the registers (16 of AVX-512's 32,
8 of AVX2's 16); Kt is k itself up to 64, else the largest of 64, 32, 16, 8 dividing it. A matmul whose n
divides by no register's lanes is left alone: convert-linalg-to-loops makes it loops (n innermost,
vectorised by LLVM).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects.transform import interpreter

from mlwarp.core.host import cpu_flags

from ...lowering.tile_lowering import MATMUL_ATTR
from ...passes import registry
from ...passes.registry import PassError
from ...passes.ir_walk import ops_named

_ROWS = (8, 4, 2, 1)
_K_STEPS = (64, 32, 16, 8)
_SELECTED = "warp.vectorize_now"  # the one generic the script's match finds

_SCRIPT = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %mm = transform.structured.match attributes {{{selected}}} in %root : (!transform.any_op) -> !transform.any_op
    %mnk = transform.structured.interchange %mm iterator_interchange = [0, 2, 1]
      : (!transform.any_op) -> !transform.any_op
    %tile, %loops:{loops} = transform.structured.tile_using_for %mnk tile_sizes [{rows}, {cols}, {k_step}]
      : (!transform.any_op) -> (!transform.any_op{loop_types})
    transform.structured.vectorize %tile : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    }} : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
    }} : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
    }} : !transform.any_op
    transform.apply_patterns to %loops#0 {{
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.canonicalization
    }} : !transform.any_op
    transform.yield
  }}
}}
"""


def host_vector_bits() -> int:
    return 512 if "avx512f" in cpu_flags() else 256


def tile_sizes(m: int, n: int, k: int, element_bits: int, vector_bits: int):
    """(R, W, Kt) for an m x k by k x n matmul, or None: n divides by no register's lanes."""
    lanes = vector_bits // element_bits
    cols = next((w for w in (2 * lanes, lanes) if n % w == 0), None)
    if cols is None:
        return None
    budget = (32 if vector_bits >= 512 else 16) // 2
    rows = next(r for r in _ROWS if m % r == 0 and r * (cols // lanes) <= budget)
    k_step = k if k <= _K_STEPS[0] else next((s for s in _K_STEPS if k % s == 0), None)
    if k_step is None:
        return None
    return rows, cols, k_step


def script(rows: int, cols: int, k_step: int) -> str:
    loops = 3 if k_step else 2
    return _SCRIPT.format(selected=_SELECTED, rows=rows, cols=cols, k_step=k_step, loops=loops,
                          loop_types=", !transform.any_op" * loops)


class VectorizeTileMatmul(registry.VectorizeTileMatmul):
    def run(self, module):
        bits = self.vector_bits or host_vector_bits()
        if bits not in (128, 256, 512):
            raise PassError(f"warp-cpu-vectorize-tile-matmul: vector-bits={bits}; expected 128, 256 or 512")
        for op in ops_named(module, {"linalg.generic"}):
            if MATMUL_ATTR not in op.attributes:
                continue
            a, b, acc = (ir.MemRefType(v.type) if isinstance(v.type, ir.MemRefType) else None for v in op.operands)
            if a is None or b is None or acc is None or not (a.has_static_shape and b.has_static_shape):
                continue  # (tensors: before bufferization, which this pass follows)
            (m, k), n = a.shape, b.shape[1]
            sizes = tile_sizes(m, n, k, a.element_type.width, bits)
            if sizes is None:
                continue
            rows, cols, k_step = sizes
            op.attributes[_SELECTED] = ir.UnitAttr.get()
            with op.location:
                transform = ir.Module.parse(script(rows, cols, 0 if k_step == k else k_step))
                interpreter.apply_named_sequence(module, transform.body.operations[0], transform)
