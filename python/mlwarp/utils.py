"""`wp.utils` / `import warp.utils`: Warp's array algorithms (reductions, scans, casts, sorts, run-length
encoding) and `ScopedTimer`.

Warp runs these as native C++/CUDA routines. Here the array work is mlwarp kernels, so it runs on every CPU
core (and on a CUDA device through the same kernels):

- `array_sum` / `array_inner`: two passes of per-block partial sums. Each output element's reduction is cut into
  contiguous blocks (enough of them that the launch runs on every core), the first kernel writes one partial
  per block, the second adds the partials in order. The order of additions is fixed: the result does not
  depend on the thread count.
- `array_scan`: block sums, a scan of the block sums, then each block scanned from its offset.
- `runlength_encode`: run heads flagged by a kernel, their exclusive scan (`array_scan`), a scatter kernel, then
  one thread per run for the lengths.
- `array_cast`: one conversion kernel per (output type, input type, ndim).

`radix_sort_pairs` and `segmented_sort_pairs` sort on the host with numpy's stable sort (a radix sort's passes
are serial per block, and a kernel version would not beat numpy on the CPU); arrays on a CUDA device go through
a host copy.

Argument checks and their messages follow Warp's (warp/_src/utils.py). Where Warp reads past an array (a
`value_count`/`count` larger than the reduced extent, or a whole-array reduction of a non-contiguous array,
which Warp reads as if it were contiguous), mlwarp raises or reduces the elements the view holds.
"""

import numpy as np

from mlwarp.algorithms.coloring import (  # noqa: F401
    GraphColoringAlgorithm, graph_coloring_assign, graph_coloring_balance, graph_coloring_get_groups
)
from mlwarp.algorithms.reductions import array_inner, array_sum  # noqa: F401
from mlwarp.algorithms.scans import array_cast, array_scan, runlength_encode  # noqa: F401
from mlwarp.algorithms.sorting import radix_sort_pairs, segmented_sort_pairs  # noqa: F401
from mlwarp.core.vector import transform
from mlwarp.interop.rmm_allocator import AllocatorRmm  # noqa: F401  (wp.utils.AllocatorRmm)
from mlwarp.kernels.warp_function import create_warp_function  # noqa: F401  (wp.utils.create_warp_function)
from mlwarp.launching.timer import ScopedTimer  # noqa: F401  (wp.utils.ScopedTimer)

__all__ = ["array_cast", "array_inner", "array_scan", "array_sum", "radix_sort_pairs", "runlength_encode",
           "segmented_sort_pairs", "create_warp_function", "ScopedTimer", "transform_expand",
           "GraphColoringAlgorithm", "graph_coloring_assign", "graph_coloring_balance", "graph_coloring_get_groups",
           "AllocatorRmm"]


def transform_expand(t):
    """A flat 7-element sequence (position, then quaternion x, y, z, w) as a wp.transformf."""
    return transform(np.array(t[0:3]), np.array(t[3:7]))
