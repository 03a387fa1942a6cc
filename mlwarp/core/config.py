"""Global settings, as Warp's `wp.config`."""

import enum

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


class _Config:
    __module__ = "mlwarp.config"  # what users see: wp.config is an mlwarp.config._Config

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
        # kernel, before the store) read: the backward pass would replay with the new values (mlwarp/access.py)
        self.verify_autograd_array_access = False
        # Warp's threshold for its log messages; mlwarp prints no info or debug messages (`verbose` and
        # `print_timings` ask for those), and its warnings go through Python's `warnings` module
        self.log_level = LOG_INFO
        # Warp: warnings name the file and line they were raised for; Python's warnings always do
        self.verbose_warnings = False
        # what a module made from now on takes as its "deterministic" / "deterministic_max_records" options
        self.deterministic = DeterministicMode.NOT_GUARANTEED
        self.deterministic_max_records = 0
        # Warp: CPU launches get block_dim lanes (2..1024) per block only when True (mlwarp/cpu_lanes.py, the
        # kernel's lane build; docs/tiles.md "Warp's CPU lanes"); False: one lane per block
        self.enable_cpu_blocks = False


config = _Config()
