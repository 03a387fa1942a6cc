"""The bottom layer: scalar and composite types and their constructors, errors, config, source reading.

Imports nothing else of mlwarp (numpy, ctypes and the standard library only), so the compiler, the runtime
and the user API share one type identity without importing each other. `mlwarp.types`,
`mlwarp.errors` and `mlwarp.config` re-export these modules under Warp's names.
"""
