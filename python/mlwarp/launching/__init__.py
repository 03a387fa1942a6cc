"""Launching: `wp.launch` and its argument checks and packing, reusable launch descriptors, CPU lanes, CUDA devices,
streams, graph capture, debug and timing around launches, and the host-side runtime queries."""
