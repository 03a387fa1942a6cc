"""A stand-in for `cuda.bindings.driver` that runs on the CPU, for testing the CUDA runtime without a GPU.

"Device memory" is host memory (ctypes buffers), so copies are memmoves and
a launch can run: cuLaunchKernel reads the launch struct through the
kernelParams pointer exactly as the GPU would receive it, and hands it to
the CPU build of the same kernel (the two share runtime/abi.py's struct),
registered by the test under the CUDA entry name. It also checks what a GPU
would: the grid covers the launch (or is capped by max_blocks), the image is
a cubin for the device's arch or PTX, and memory is freed on the stream.

This tests mlwarp's runtime (arrays, copies, packing, streams, AOT loading),
not the PTX: ptxas checks that (test_cuda_ptx_suite.py), a real GPU runs it
(test_cuda_exec.py)."""

from __future__ import annotations

import ctypes
import enum


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_NOT_READY = 600


class CUdevice_attribute(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115


class CUmemPool_attribute(enum.IntEnum):
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4


class CUstream_flags(enum.IntEnum):
    CU_STREAM_NON_BLOCKING = 1


class CUevent_flags(enum.IntEnum):
    CU_EVENT_DISABLE_TIMING = 2


class CUevent_record_flags(enum.IntEnum):
    CU_EVENT_RECORD_DEFAULT = 0
    CU_EVENT_RECORD_EXTERNAL = 1


class CUevent_wait_flags(enum.IntEnum):
    CU_EVENT_WAIT_DEFAULT = 0
    CU_EVENT_WAIT_EXTERNAL = 1


class CUstreamCaptureStatus(enum.IntEnum):
    CU_STREAM_CAPTURE_STATUS_NONE = 0
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1


class CUpointer_attribute(enum.IntEnum):
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9


class _Handle:
    def __init__(self, value: int):
        self.value = value

    def __int__(self):
        return self.value

    def __eq__(self, other):
        return int(self) == int(other)

    def __hash__(self):
        return hash(self.value)


class CUstream(_Handle):
    pass


def cuuint64_t(v):
    return v


OK = CUresult.CUDA_SUCCESS


class FakeDriver:
    CUresult = CUresult
    CUdevice_attribute = CUdevice_attribute
    CUmemPool_attribute = CUmemPool_attribute
    CUstream_flags = CUstream_flags
    CUevent_flags = CUevent_flags
    CUevent_record_flags = CUevent_record_flags
    CUevent_wait_flags = CUevent_wait_flags
    CUstreamCaptureStatus = CUstreamCaptureStatus
    CUpointer_attribute = CUpointer_attribute
    CUstream = CUstream
    cuuint64_t = staticmethod(cuuint64_t)

    def __init__(self, arches=(90,), mempool=True):
        self.arches = list(arches)
        self.mempool = mempool
        self.buffers = {}  # ptr -> (ctypes buffer, device ordinal)
        self.freed_on_stream = []
        self.calls = []
        self.launches = []
        self.loaded = []  # (kind, entry names)
        self.cpu_entries = {}  # CUDA entry name -> CpuKernel
        self.current = None
        self._next = 1000
        self.modules = {}
        self.functions = {}
        self.event_flags = {}  # event handle -> creation flags
        self.stream_info = {}  # stream handle -> (creation flags, priority)
        self.capturing_streams = set()

    def _handle(self, cls=_Handle):
        self._next += 1
        return cls(self._next)

    def __getattr__(self, name):  # an API the runtime uses but the fake lacks: fail loudly
        raise AttributeError(f"fake CUDA driver has no {name}")

    def _log(self, name, *args):
        self.calls.append((name, args))

    # -- init and devices ------------------------------------------------------
    def cuInit(self, flags):
        return (OK,)

    def cuGetErrorName(self, err):
        return (OK, CUresult(err).name.encode())

    def cuDeviceGetCount(self):
        return (OK, len(self.arches))

    def cuDeviceGet(self, ordinal):
        return (OK, ordinal)

    def cuDeviceGetAttribute(self, attr, dev):
        arch = self.arches[dev]
        values = {CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: arch // 10,
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: arch % 10,
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132,
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: int(self.mempool)}
        return (OK, values[attr])

    def cuDeviceGetName(self, length, dev):
        return (OK, f"Fake GPU {dev}".encode().ljust(length, b"\0"))

    def cuDeviceTotalMem(self, dev):
        return (OK, 1 << 30)

    def cuMemGetInfo(self):
        used = sum(len(buf) for buf, _ in self.buffers.values())
        return (OK, (1 << 30) - used, 1 << 30)

    def cuDevicePrimaryCtxRetain(self, dev):
        return (OK, ("ctx", dev))

    def cuCtxSetCurrent(self, ctx):
        self.current = ctx[1]
        return (OK,)

    def cuCtxGetCurrent(self):
        return (OK, ("ctx", self.current) if self.current is not None else None)

    def cuCtxSynchronize(self):
        self._log("cuCtxSynchronize", self.current)
        return (OK,)

    def cuDeviceGetDefaultMemPool(self, dev):
        return (OK, ("pool", dev))

    def cuMemPoolSetAttribute(self, pool, attr, value):
        self._log("cuMemPoolSetAttribute", pool, attr, value)
        return (OK,)

    def cuPointerGetAttribute(self, attr, ptr):
        for base, (buf, dev) in self.buffers.items():
            if base <= int(ptr) < base + ctypes.sizeof(buf):
                return (OK, dev)
        return (CUresult.CUDA_ERROR_INVALID_VALUE, None)

    # -- memory ------------------------------------------------------------------
    def _alloc(self, nbytes):
        buf = ctypes.create_string_buffer(b"\xcd" * nbytes, nbytes)  # not zero: zeros() must memset
        ptr = ctypes.addressof(buf)
        self.buffers[ptr] = (buf, self.current)
        return ptr

    def cuMemAllocAsync(self, nbytes, stream):
        self._log("cuMemAllocAsync", nbytes, int(stream))
        return (OK, self._alloc(nbytes))

    def cuMemAlloc(self, nbytes):
        self._log("cuMemAlloc", nbytes)
        return (OK, self._alloc(nbytes))

    def cuMemFreeAsync(self, ptr, stream):
        self.freed_on_stream.append((int(ptr), int(stream)))
        del self.buffers[int(ptr)]
        return (OK,)

    def cuMemFree(self, ptr):
        del self.buffers[int(ptr)]
        return (OK,)

    def _check_device(self, ptr, nbytes):
        for base, (buf, _) in self.buffers.items():
            if base <= ptr and ptr + nbytes <= base + ctypes.sizeof(buf):
                return
        raise AssertionError(f"device range [{ptr:#x}, +{nbytes}) is not inside an allocation")

    def cuMemcpyHtoDAsync(self, dst, src, nbytes, stream):
        self._check_device(int(dst), nbytes)
        self._log("cuMemcpyHtoDAsync", nbytes, int(stream))
        ctypes.memmove(int(dst), int(src), nbytes)
        return (OK,)

    def cuMemcpyDtoHAsync(self, dst, src, nbytes, stream):
        self._check_device(int(src), nbytes)
        self._log("cuMemcpyDtoHAsync", nbytes, int(stream))
        ctypes.memmove(int(dst), int(src), nbytes)
        return (OK,)

    def cuMemcpyAsync(self, dst, src, nbytes, stream):
        self._check_device(int(src), nbytes)
        self._check_device(int(dst), nbytes)
        self._log("cuMemcpyAsync", nbytes, int(stream))
        ctypes.memmove(int(dst), int(src), nbytes)
        return (OK,)

    def cuMemsetD8Async(self, dst, value, nbytes, stream):
        self._check_device(int(dst), nbytes)
        ctypes.memset(int(dst), value, nbytes)
        return (OK,)

    # -- streams and events ------------------------------------------------------
    def cuStreamCreateWithPriority(self, flags, priority):
        handle = self._handle(CUstream)
        self.stream_info[int(handle)] = (int(flags), priority)
        return (OK, handle)

    def cuStreamGetFlags(self, s):
        return (OK, self.stream_info.get(int(s), (0, 0))[0])  # (a foreign or NULL stream: blocking)

    def cuStreamGetPriority(self, s):
        return (OK, self.stream_info.get(int(s), (0, 0))[1])

    def cuStreamIsCapturing(self, s):
        capturing = int(s) in self.capturing_streams
        return (OK, CUstreamCaptureStatus(int(capturing)))

    def cuStreamDestroy(self, s):
        return (OK,)

    def cuStreamSynchronize(self, s):
        self._log("cuStreamSynchronize", int(s))
        return (OK,)

    def cuStreamQuery(self, s):
        return (OK,)

    def cuStreamWaitEvent(self, s, e, flags):
        self._log("cuStreamWaitEvent", int(s), int(e), *([int(flags)] if flags else []))
        return (OK,)

    def cuEventCreate(self, flags):
        handle = self._handle()
        self.event_flags[int(handle)] = int(flags)
        return (OK, handle)

    def cuEventRecord(self, e, s):
        self._log("cuEventRecord", int(e), int(s))
        return (OK,)

    def cuEventRecordWithFlags(self, e, s, flags):
        self._log("cuEventRecordWithFlags", int(e), int(s), int(flags))
        return (OK,)

    def cuEventSynchronize(self, e):
        self._log("cuEventSynchronize", int(e))
        return (OK,)

    def cuEventQuery(self, e):
        return (OK,)

    def cuEventElapsedTime(self, a, b):
        return (OK, 0.5)

    def cuEventDestroy(self, e):
        return (OK,)

    # -- modules and launches -------------------------------------------------------
    def cuModuleLoadData(self, image):
        image = bytes(image)
        if image.startswith(b"\x7fELF"):
            kind = "cubin"
        else:
            assert image.endswith(b"\0"), "PTX handed to the driver must be NUL-terminated"
            assert b".entry" in image, "not PTX"
            kind = "ptx"
        module = self._handle()
        self.modules[module] = kind
        self.loaded.append(kind)
        return (OK, module)

    def cuModuleUnload(self, module):
        return (OK,)

    def cuModuleGetFunction(self, module, name):
        assert module in self.modules
        f = self._handle()
        self.functions[f] = name.decode()
        return (OK, f)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        name = self.functions[f]
        struct_ptr = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))[0]
        dims = list((ctypes.c_int64 * 4).from_address(struct_ptr))
        total = dims[0] * dims[1] * dims[2] * dims[3]
        assert (gy, gz, by, bz) == (1, 1, 1, 1) and shared == 0 and extra == 0
        self.launches.append({"name": name, "grid": gx, "block": bx, "stream": int(stream), "dims": dims})
        self.cpu_entries[name].run(struct_ptr, total)  # the grid-stride loop covers every index
        return (OK,)


class CpuBackedDriver(FakeDriver):
    """The fake driver for a whole test session (`MLWARP_TEST_FAKE_GPU=1`, conftest.py): every CUDA kernel a
    test loads is compiled for the fake device's arch as for a real one, into the session's kernel cache, and
    each launch runs the kernel's CPU build on the same launch struct. That cache is what a GPU machine without
    MLIR needs to run the same tests (bench/gpu_tests.sh carries it there).

    A tiled launch's struct holds the CPU's launch dimensions too (`dim + [block_dim]` for a cooperative kernel,
    `dim + [1]` for one thread a block, which the CPU build runs as a block of one lane), so tile kernels run.
    Debug builds are compiled and not run (their error record is the CUDA struct's own field): their tests fail
    here on the values, which is expected, the point here being the cache."""

    def __init__(self, arches=(90,)):
        super().__init__(arches=arches)
        self.kernels = {}  # module handle -> Kernel (tests name many kernels alike: `k`, so names are no key)
        self.module_of = {}  # function handle -> module handle
        self.stand_ins = {}  # function handle -> the CPU build run for it
        self.not_run = []

    def loaded_kernel(self, kernel, loaded):
        if kernel.options.get("mode") != "debug":
            self.kernels[loaded.module] = kernel

    def cuModuleGetFunction(self, module, name):
        err, f = super().cuModuleGetFunction(module, name)
        self.module_of[f] = module
        return (err, f)

    def _stand_in(self, f):
        if f not in self.stand_ins:
            kernel = self.kernels.get(self.module_of[f])
            if kernel is None:
                return None
            from mlwarp.autodiff.adjoint import adjoint_kernel
            import mlwarp as wp

            cpu = wp.get_device("cpu")
            adjoint = self.functions[f].endswith("_adj_cuda")
            self.stand_ins[f] = adjoint_kernel(kernel, cpu) if adjoint else kernel.compiled(cpu)
        return self.stand_ins[f]

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        entry = self._stand_in(f)
        if entry is None:
            self.not_run.append(self.functions[f])
            return (OK,)
        self.cpu_entries[self.functions[f]] = entry
        return super().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, 0, stream, params, extra)


def install_cpu_backed_gpu(setattr=setattr, arch: int = 90) -> CpuBackedDriver:
    """Makes a CpuBackedDriver mlwarp's CUDA driver: `setattr` is pytest's monkeypatch.setattr for one test
    (undone after it), the builtin for a whole session (conftest.py, MLWARP_TEST_FAKE_GPU=1)."""
    from mlwarp.launching import cuda_compile
    from mlwarp.runtime import device as device_registry
    from mlwarp.runtime.cuda import devices as cuda_devices
    from mlwarp.runtime.cuda import driver

    fake = CpuBackedDriver(arches=(arch,))
    setattr(driver, "_driver", fake)
    setattr(driver, "_init_error", None)
    setattr(cuda_devices, "_devices", None)
    setattr(device_registry, "_default", None)
    real_load = cuda_compile.load

    def load(kernel, device):
        loaded = real_load(kernel, device)
        fake.loaded_kernel(kernel, loaded)
        return loaded

    setattr(cuda_compile, "load", load)
    return fake
