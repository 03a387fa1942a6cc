"""Arrays: `wp.array` on the CPU and CUDA devices, indexed and Fabric arrays, textures, memory kinds and allocators,
and the checks of array access under a recording Tape."""
