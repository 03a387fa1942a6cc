"""wp.launch on a CUDA device: the checks and packing of launch_args.py (a CUDA array's storage view holds the
device address), then one cuLaunchKernel with the launch struct as the kernel's by-value parameter.

In debug mode the debug build is launched with a device error record (python/mlwarp/launching/debug.py), read back after
the launch on its stream: KernelBoundsError as on the CPU."""

from __future__ import annotations

from mlwarp.launching import debug as _debug
from mlwarp.arrays.array import array
from mlwarp.config import config
from mlwarp.core.errors import LaunchError
from mlwarp.arrays.cuda_array import from_cuda_array_interface
from mlwarp.launching.launch_args import pack_args


def as_device_array(value, device):
    """Objects that expose `__cuda_array_interface__` (CuPy arrays, torch CUDA tensors) become CudaArray
    views of the same memory; anything else is returned as is for launch.py's checks."""
    if isinstance(value, array) or not hasattr(value, "__cuda_array_interface__"):
        return value
    return from_cuda_array_interface(value)


def check_launch_config(kernel, device, stream, block_dim) -> None:
    if not isinstance(block_dim, int) or not 1 <= block_dim <= 1024:
        raise LaunchError(f"Error launching kernel '{kernel.key}': block_dim must be an int in [1, 1024], "
                          f"got {block_dim!r}")
    if stream is not None and stream.device is not device:
        raise LaunchError(f"Error launching kernel '{kernel.key}': the stream belongs to device '{stream.device}' "
                          f"but the launch is on '{device}'")


def launch_cuda(kernel, dims: tuple, args: list, device, stream=None, block_dim: int = 256, max_blocks: int = 0):
    """The checked launch (launch_plan.py takes plain launches): debug builds, verify_fp, kernels without a plan."""
    check_launch_config(kernel, device, stream, block_dim)
    args = [as_device_array(a, device) for a in args]
    built = _debug.for_launch(kernel)  # the debug build when debug mode is on (python/mlwarp/launching/debug.py)
    packed, keep_alive = pack_args(built, args, device)
    total = 1
    for d in range(4):
        packed.dims[d] = dims[d] if d < len(dims) else 1
        total *= packed.dims[d]
    compiled = built.compiled(device)  # compile/load errors surface even for an empty launch
    stream = stream or device.stream
    record = _debug.attach_record(built, packed, device=device, stream=stream) if total else None
    compiled.launch(packed, total, block_dim, max_blocks, stream)
    _debug.raise_recorded(built, compiled, record)  # debug: copies the record back and synchronises the stream
    if config.verify_fp and total:
        stream.synchronize()  # the arrays are read back on the device's stream: the launch's must be done
        _debug.check_finite(built, args)
    del keep_alive  # the driver copied the parameters; device memory is freed stream-ordered
