"""Kernels and functions: `@wp.kernel`, `@wp.func` (with custom gradients, native snippets, overloads), `@wp.struct`,
compile-time values (`wp.constant`, `wp.static`), Warp modules and what a kernel captures for its cache key."""
