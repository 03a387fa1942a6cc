"""Warp's CPU lanes (`wp.config.enable_cpu_blocks`): a CPU launch with `block_dim` B in 2..1024 runs B lanes per
block, the lanes of a block meeting at its tile operations.

A launch that asks for them runs the kernel's lane build: a copy of the kernel with the option
`cpu_block_dim = B`, compiled once per B (as Warp compiles a module per block_dim). For a kernel with tiles the
frontend and warp-cpu-block-lanes (compiler/targets/cpu/block_lanes.py) make its body one block's work over its B
lanes, and its record says `cpu_lanes = B`: the launch then runs one entry iteration per block (the thread count
divided by B, rounded up: the last block of a launch that is not a multiple of B has fewer lanes), the launch
struct holding the thread grid unfolded. A kernel without tiles is the same code as without lanes (each thread
once, whatever the blocks).
"""

from __future__ import annotations

import threading

from mlwarp.config import config
from mlwarp.kernels.kernel import Kernel
from mlwarp.runtime.device import get_device

_lock = threading.Lock()
# what a kernel caches about its own build (its launch plan, its adjoint, debug and lane builds, its array
# accesses): a lane build makes its own
_DERIVED = ("_launch_plan", "_cpu_lane_builds", "_with_adjoint", "_debug_build", "_array_access")


def wants_lanes(block_dim) -> bool:
    """Whether a launch's block_dim may ask for CPU lanes (the device decides: lane_kernel)."""
    return type(block_dim) is int and block_dim > 1 and config.enable_cpu_blocks


def lane_kernel(kernel, device, block_dim: int):
    """The kernel to launch on `device` for a launch of `block_dim`: its lane build on the CPU (Warp's rule for
    block_dim there: resolve_block_dim), else the kernel itself."""
    device = get_device(device)
    if not device.is_cpu:
        return kernel
    lanes = resolve_block_dim(device, block_dim)
    if lanes == 1:
        return kernel
    variants = kernel.__dict__.get("_cpu_lane_builds")
    if variants is None:
        with _lock:
            variants = kernel.__dict__.setdefault("_cpu_lane_builds", {})
    found = variants.get(lanes)
    if found is None:
        with _lock:
            found = variants.get(lanes)
            if found is None:
                found = variants[lanes] = _variant(kernel, lanes)
    return found


def _variant(kernel, lanes: int):
    found = object.__new__(Kernel)
    found.__dict__.update({k: v for k, v in kernel.__dict__.items() if k not in _DERIVED})
    found.options = {**kernel.options, "cpu_block_dim": lanes}
    found._compiled, found._captured, found._struct = {}, None, None
    found._captured_generation = found._captured_definitions = -1
    found._lock = threading.Lock()
    found.overloads = {}
    return found


def block_count(meta, total: int) -> int:
    """The entry iterations of a CPU launch of `total` threads: one per block for a lane build, else `total`."""
    lanes = (meta or {}).get("cpu_lanes")
    return -(-total // lanes) if lanes else total


def resolve_block_dim(device, block_dim) -> int:
    """Warp's rule for a launch's block_dim on `device` (wp.launch_tiled's too)."""
    default = 1 if device.is_cpu else 256
    if block_dim is None or block_dim <= 0:
        return default
    if not device.is_cpu:
        return block_dim
    if block_dim > 1024:
        raise ValueError(f"block_dim must be at most 1024 on CPU, got {block_dim}")
    if block_dim == 1 or not getattr(config, "enable_cpu_blocks", False):
        return 1
    return block_dim
