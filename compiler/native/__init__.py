"""@wp.func_native snippets: their C++ (source.py), the header they include (warp_snippet.h) and their compilers
(toolchain.py)."""
