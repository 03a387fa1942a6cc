"""The CUDA runtime: devices, contexts, stream-ordered memory, streams/events, modules and launches, on the
CUDA driver API through cuda-python (`cuda.bindings.driver`), which is imported on first use only."""
