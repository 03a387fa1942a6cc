"""The kernel-language library: Warp builtins written in the kernel language itself as `@wp.func` (random numbers,
noise, rigid transforms, intersections, norms, small decompositions, texture sampling, `wp.lower_bound`), Warp's
math constants, the Python-scope handles of builtins (`wp.sin`, ...) and the tile API seen from Python."""
