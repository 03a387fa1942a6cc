"""Loading a compiled kernel (cubin, else PTX for the driver to JIT) and launching it.

The kernel takes the launch struct of runtime/abi.py by value as its only
parameter (see compiler/targets/cuda/gpu_kernel.py), so a launch hands the driver
one pointer: to the packed ctypes struct."""

from __future__ import annotations

import ctypes
import os

from . import driver as drv

MAX_GRID_X = (1 << 31) - 1


def load_image(meta: dict, device) -> tuple[bytes, str]:
    """The bytes to load for `device` and what they are: the cubin when it was built for the device's
    architecture, else the PTX (JIT-compiled by the driver, which accepts PTX of an older arch)."""
    folder = meta["dir"]
    if meta.get("cubin") and meta.get("arch") == device.arch:
        with open(os.path.join(folder, meta["cubin"]), "rb") as f:
            return f.read(), "cubin"
    if meta.get("arch", 0) > device.arch:
        raise drv.CudaError(f"kernel '{meta.get('kernel')}' was compiled for sm_{meta['arch']}, newer than "
                            f"device {device} (sm_{device.arch})")
    with open(os.path.join(folder, meta["ptx"]), "rb") as f:
        return f.read() + b"\0", "ptx"


class CudaKernel:
    def __init__(self, meta: dict, device):
        self.device = device
        self.entry = meta["entry"]
        image, self.image_kind = load_image(meta, device)
        device.make_current()
        self.module = drv.call("cuModuleLoadData", image)
        self.function = drv.call("cuModuleGetFunction", self.module, self.entry.encode())

    def sibling(self, entry: str) -> "CudaKernel":
        """Another entry of the same loaded module (the adjoint kernel `<k>_adj_cuda`)."""
        other = object.__new__(CudaKernel)
        other.device, other.entry, other.image_kind, other.module = self.device, entry, self.image_kind, None
        other._owner = self  # keeps the module loaded
        self.device.make_current()
        other.function = drv.call("cuModuleGetFunction", self.module, entry.encode())
        return other

    def run(self, args_ptr: int, total: int) -> None:
        """CpuKernel's interface: launches on the device's current stream with the struct at `args_ptr`."""
        self.launch(None, total, args_ptr=args_ptr)

    def launch(self, packed, total: int, block_dim: int = 256, max_blocks: int = 0, stream=None,
               args_ptr: int | None = None) -> None:
        """Launches over `total` threads; `packed` is the ctypes launch struct (copied by the driver)."""
        if total <= 0:
            return
        blocks = min((total + block_dim - 1) // block_dim, MAX_GRID_X)
        if max_blocks > 0:
            blocks = min(blocks, max_blocks)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(packed) if args_ptr is None else args_ptr)
        stream = stream or self.device.stream
        self.device.make_current()
        drv.call("cuLaunchKernel", self.function, blocks, 1, 1, block_dim, 1, 1, 0, stream.handle,
                 ctypes.addressof(params), 0)

    def __del__(self):
        if drv._driver is not None and getattr(self, "module", None) is not None:
            try:
                drv._driver.cuModuleUnload(self.module)
            except Exception:
                pass
