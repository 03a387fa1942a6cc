"""Array algorithms over kernels: graph colouring (`wp.utils.graph_coloring_*`) and `wp.map`. `wp.utils`'s scans, sorts
and reductions are in mlwarp.utils, the public module Warp names."""
