"""Global settings, as Warp's `wp.config`."""

import enum
import os

# Warp's log levels (`wp.LOG_INFO`, ...) for `wp.config.log_level`
LOG_DEBUG = 10
LOG_INFO = 20
LOG_WARNING = 30
LOG_ERROR = 40


class DeterministicMode(enum.IntEnum):
    """Warp's modes for atomics whose result depends on the order threads reach them (float sums). mlwarp's CPU
    launches of a kernel whose module asks for RUN_TO_RUN or GPU_TO_GPU run on the calling thread: the same
    order of additions every run, whatever wp.config.cpu_threads is (bit-identical results, as Warp's serial
    CPU device gives)."""

    NOT_GUARANTEED = 0
    RUN_TO_RUN = 1
    GPU_TO_GPU = 2


class LaunchArrayAccessMode(enum.IntEnum):
    """Warp's checks of the devices of a launch's array arguments. mlwarp launches check that every array is
    on the launch device (or reachable from it) whatever the mode: the setting is kept, and validated."""

    RELAXED = 0
    CHECKED = 1
    STRICT = 2


# Warp's CPU compile flags (Clang's). mlwarp compiles with MLIR and LLVM, not Clang: the value is kept and shown, and
# changes nothing (docs/surface.md)
_WARP_CPU_COMPILER_FLAGS = ("-march=native -mllvm=-inline-threshold=9000 -mllvm=-inline-cold-callsite-threshold=3000"
                            " -mllvm=-slp-recursion-max-depth=4")


class _Config:
    __module__ = "mlwarp.config"  # what users see: wp.config is an mlwarp.config._Config

    DeterministicMode = DeterministicMode  # as Warp's warp.config.DeterministicMode
    LaunchArrayAccessMode = LaunchArrayAccessMode

    def __setattr__(self, name, value):
        # Warp's checks (warp/config.py _ConfigModule), with its messages
        if name == "launch_array_access_mode" and not isinstance(value, LaunchArrayAccessMode):
            raise ValueError("warp.config.launch_array_access_mode must be a warp.config.LaunchArrayAccessMode "
                             f"value, got {value!r}")
        if name == "deterministic" and not isinstance(value, DeterministicMode):
            raise ValueError(f"warp.config.deterministic must be a warp.DeterministicMode value, got {value!r}")
        object.__setattr__(self, name, value)

    def __init__(self):
        self.mode = "release"  # "debug": bounds checks and line info
        self.verify_fp = False
        self.max_unroll = 16
        self.cpu_threads = 0  # 0: os.cpu_count() (or MLWARP_NUM_THREADS)
        self.kernel_cache_dir = None  # None: MLWARP_CACHE_DIR or ~/.cache/mlwarp
        self.print_timings = False  # also MLWARP_TIMINGS=1
        self.quiet = True
        self.verbose = False
        # Warp 1.19: indexing a vector or matrix of a type other than int32/float32/bool gives an instance of
        # the scalar type (`wp.vec3d(...)[0]` is `float64(...)`); True gives Python numbers, as before GH-905.
        self.legacy_scalar_return_types = False
        # warn when a kernel recorded on a Tape overwrites an array an earlier recorded kernel (or the same
        # kernel, before the store) read: the backward pass would replay with the new values (python/mlwarp/arrays/access.py)
        self.verify_autograd_array_access = False
        # Warp's threshold for its log messages; mlwarp prints no info or debug messages (`verbose` and
        # `print_timings` ask for those), and its warnings go through Python's `warnings` module
        self.log_level = LOG_INFO
        # Warp: warnings name the file and line they were raised for; Python's warnings always do
        self.verbose_warnings = False
        # what a module made from now on takes as its "deterministic" / "deterministic_max_records" options
        self.deterministic = DeterministicMode.NOT_GUARANTEED
        self.deterministic_max_records = 0
        # Warp: CPU launches get block_dim lanes (2..1024) per block only when True (python/mlwarp/launching/cpu_lanes.py, the
        # kernel's lane build; docs/tiles.md "Warp's CPU lanes"); False: one lane per block
        self.enable_cpu_blocks = False

        # The rest of Warp 1.19's settings, with its defaults. docs/surface.md says which of them change nothing
        # in mlwarp (CUDA-only knobs, Clang's flags) and why.
        self.version = "1.19.0"  # the Warp API version mlwarp implements (mlwarp's own is wp.__version__)
        self.verify_cuda = False  # CUDA only: mlwarp's CUDA launches check errors at each synchronize
        self.print_launches = False  # each wp.launch logs "kernel: ... dim: ... inputs: ..." (wp.get_logger())
        self.optimization_level = None  # no effect: mlwarp's CPU and CUDA pipelines have one level each
        self.enable_vector_component_overwrites = False  # no effect: mlwarp always allows component overwrites
        self.cache_kernels = True  # False: kernels are compiled again instead of loaded from the disk cache
        self.cuda_output = None  # CUDA only ("ptx" / "cubin"): mlwarp's CUDA target makes what runtime/cuda loads
        self.ptx_target_arch = None  # CUDA only
        self.cuda_arch_suffix = None  # CUDA only (NVRTC's "a"/"f" architecture suffixes)
        self.lineinfo = False  # read by the modules made afterwards (their "lineinfo" option)
        self.line_directives = True  # no effect: no C++ is generated
        self.compile_time_trace = False  # no effect: NVRTC's trace files
        self.enable_backward = True  # read by the modules made afterwards (their "enable_backward" option)
        self.default_grid_stride = True  # no effect on the CPU; CUDA launches of mlwarp are grid-strided
        self.enable_mathdx_gemm = True  # CUDA only (libmathdx)
        self.enable_mathdx_solver = True  # CUDA only (libmathdx)
        self.enable_mathdx_fft = True  # CUDA only (libmathdx)
        self.cpu_compiler_flags = _WARP_CPU_COMPILER_FLAGS  # no effect: Clang's flags; mlwarp does not use Clang
        self.llvm_cuda = False  # CUDA only: mlwarp's CUDA code always comes from LLVM (its NVPTX target)
        self.enable_graph_capture_module_load_by_default = True  # CUDA only (drivers below 12.3)
        self.enable_mempools_at_init = os.environ.get("WARP_ENABLE_MEMPOOLS_AT_INIT", "1").lower() not in (
            "0", "false", "no")  # CUDA only
        self.track_memory = False  # True: a wp.ScopedMemoryTracker runs from the first allocation (wp.init())
        self.enable_tiles_in_stack_memory = True  # no effect: mlwarp's tile storage is its own
        self.use_precompiled_headers = True  # no effect: no C++ headers
        self.legacy_cpu_linker = False  # no effect: mlwarp loads CPU code with its own loader
        self.load_module_max_workers = 0  # wp.load_module's default: 0 serial, n compile processes at a time
        self.launch_array_access_mode = LaunchArrayAccessMode.RELAXED
        self.deterministic_debug = False  # CUDA only (device-side diagnostics)


config = _Config()
