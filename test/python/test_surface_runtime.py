"""Warp 1.19's host-side runtime surface: wp.config, the logger, allocation tracking, memory pools / peer access
/ allocators / IPC without CUDA, activity timing, runtime queries and Warp's error names.

Expected values and message texts were recorded by running warp-lang 1.19.0 on a CPU-only machine
(device="cpu"); the tests do not import warp-lang."""

import ctypes
import io
import sys
import warnings

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.arrays import memory


@wp.kernel
def _fill_one(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


# -- wp.config ------------------------------------------------------------------------------------------------------
# warp-lang 1.19.0: {k: getattr(warp.config, k)} for the public settings
WARP_CONFIG_DEFAULTS = {
    "cache_kernels": True, "compile_time_trace": False, "cuda_arch_suffix": None, "cuda_output": None,
    "default_grid_stride": True, "deterministic_debug": False, "deterministic_max_records": 0,
    "enable_backward": True, "enable_cpu_blocks": False, "enable_graph_capture_module_load_by_default": True,
    "enable_mathdx_fft": True, "enable_mathdx_gemm": True, "enable_mathdx_solver": True,
    "enable_tiles_in_stack_memory": True, "enable_vector_component_overwrites": False, "kernel_cache_dir": None,
    "legacy_cpu_linker": False, "legacy_scalar_return_types": False, "line_directives": True, "lineinfo": False,
    "llvm_cuda": False, "load_module_max_workers": 0, "log_level": 20, "max_unroll": 16, "mode": "release",
    "optimization_level": None, "print_launches": False, "ptx_target_arch": None, "track_memory": False,
    "use_precompiled_headers": True, "verbose_warnings": False, "verify_autograd_array_access": False,
    "verify_cuda": False, "verify_fp": False, "version": "1.19.0",
    "cpu_compiler_flags": "-march=native -mllvm=-inline-threshold=9000 -mllvm=-inline-cold-callsite-threshold=3000"
                          " -mllvm=-slp-recursion-max-depth=4",
}


def test_config_has_every_warp_setting_with_warps_default():
    for name, value in WARP_CONFIG_DEFAULTS.items():
        assert getattr(wp.config, name) == value, name
    assert wp.config.deterministic is wp.config.DeterministicMode.NOT_GUARANTEED
    assert wp.config.launch_array_access_mode is wp.config.LaunchArrayAccessMode.RELAXED
    assert [(m.name, m.value) for m in wp.config.LaunchArrayAccessMode] == [("RELAXED", 0), ("CHECKED", 1),
                                                                          ("STRICT", 2)]


def test_config_deterministic_rejects_a_plain_int():
    with pytest.raises(ValueError) as e:
        wp.config.deterministic = 1
    assert str(e.value) == "warp.config.deterministic must be a warp.DeterministicMode value, got 1"
    assert wp.config.deterministic is wp.DeterministicMode.NOT_GUARANTEED


def test_config_launch_array_access_mode_rejects_a_plain_int():
    with pytest.raises(ValueError) as e:
        wp.config.launch_array_access_mode = 1
    assert str(e.value) == ("warp.config.launch_array_access_mode must be a warp.config.LaunchArrayAccessMode "
                            "value, got 1")
    wp.config.launch_array_access_mode = wp.config.LaunchArrayAccessMode.STRICT  # an enum value is kept
    try:
        assert wp.config.launch_array_access_mode == 2
    finally:
        wp.config.launch_array_access_mode = wp.config.LaunchArrayAccessMode.RELAXED


# -- logger -----------------------------------------------------------------------------------------------------------
class _Capture:
    def __init__(self):
        self.msgs = []

    def debug(self, m):
        self.msgs.append(("d", m))

    def info(self, m):
        self.msgs.append(("i", m))

    def warning(self, m, category=None, stacklevel=1):
        self.msgs.append(("w", m))

    def error(self, m):
        self.msgs.append(("e", m))


def test_print_launches_goes_to_the_active_logger():
    log = _Capture()
    assert isinstance(log, wp.Logger)
    a = wp.zeros(4, device="cpu")
    with wp.ScopedLogger(log):
        wp.config.print_launches = True
        try:
            wp.launch(_fill_one, 4, inputs=[a], device="cpu")
        finally:
            wp.config.print_launches = False
    # warp-lang 1.19.0 logs f"kernel: {key} dim: {dim} inputs: {inputs} outputs: {outputs} device: {device}"
    assert log.msgs == [("i", f"kernel: _fill_one dim: 4 inputs: [{a!r}] outputs: [] device: cpu")]
    assert not isinstance(wp.get_logger(), _Capture)  # restored


def test_set_logger_rejects_an_object_without_the_methods():
    with pytest.raises(TypeError) as e:
        wp.set_logger(3)
    assert str(e.value) == ("logger must implement the Logger protocol (debug(message), info(message), "
                            "warning(message, category, stacklevel), error(message)), got <class 'int'>")


def test_set_logger_none_restores_the_default():
    wp.set_logger(_Capture())
    wp.set_logger(None)
    assert type(wp.get_logger()).__name__ == "LoggerBasic"


def test_scoped_log_level():
    with wp.ScopedLogLevel(wp.LOG_ERROR):
        assert wp.config.log_level == 40
    assert wp.config.log_level == wp.LOG_INFO


# -- allocation tracking --------------------------------------------------------------------------------------------
def test_memory_tracker_report_is_warps():
    out = []
    with wp.ScopedMemoryTracker("outer", report_func=out.append):
        x = wp.zeros(100, dtype=float, device="cpu")
        with wp.ScopedMemoryTracker("inner", print=False):
            y = wp.zeros((10, 10), dtype=wp.vec3, device="cpu")  # noqa: F841
            line = sys._getframe().f_lineno - 1  # (the line of y's allocation, in its tag)
        del x
    # warp-lang 1.19.0's report for the same allocations (only the file:line of the tag differs)
    expected = (
        "Allocation Tracking Report\n"
        "  Total allocations:\n"
        "    cpu              2 (1.56 KB)\n"
        "  Peak usage:\n"
        "    cpu              1.56 KB\n"
        "  Live allocations:\n"
        "    cpu              1 (1.17 KB)\n"
        "\n"
        "  Scope breakdown:\n"
        "    outer:\n"
        "      cpu: 1 allocs, 400 B\n"
        "    outer/inner:\n"
        "      cpu: 1 allocs, 1.17 KB\n"
        "\n"
        "  Live cpu allocations by size (largest first) (up to 10):\n"
        f"    1.17 KB : cpu : array[vec3f, (10, 10)] : test_surface_runtime.py:{line} : "
        "test_memory_tracker_report_is_warps()\n")
    assert out == [expected]


def test_print_memory_report_without_tracking():
    with pytest.raises(RuntimeError) as e:
        wp.print_memory_report()
    assert str(e.value) == ("Allocation tracking is not active. Set wp.config.track_memory = True before calling "
                            "wp.init(), or use wp.ScopedMemoryTracker as a context manager.")


def test_print_memory_report_bad_sort():
    with pytest.raises(ValueError) as e:
        wp.print_memory_report(sort="x")
    assert str(e.value) == "Invalid sort order 'x'; expected 'size' or 'chronological'"


def test_print_memory_report_inside_a_tracker():
    buf = io.StringIO()
    with wp.ScopedMemoryTracker(print=False) as t:
        t.clear()
        a = wp.zeros(8, dtype=wp.int32, device="cpu")  # noqa: F841
        wp.print_memory_report(file=buf, sort="chronological")
    text = buf.getvalue()
    assert "    cpu              1 (32 B)\n" in text
    assert "  Live cpu allocations chronological (up to 10):\n    32 B : cpu : array[int32, 8] : " in text


# -- memory pools, peer access, allocators, IPC on the CPU (warp-lang 1.19.0's errors) -----------------------------
@pytest.mark.parametrize("call, exc, message", [
    (lambda: wp.set_mempool_enabled("cpu", True), ValueError, "Memory pools are only supported on CUDA devices"),
    (lambda: wp.get_mempool_release_threshold("cpu"), ValueError, "Memory pools are only supported on CUDA devices"),
    (lambda: wp.set_mempool_release_threshold("cpu", 0), ValueError,
     "Memory pools are only supported on CUDA devices"),
    (lambda: wp.get_mempool_used_mem_current("cpu"), ValueError, "Memory pools are only supported on CUDA devices"),
    (lambda: wp.get_mempool_used_mem_high("cpu"), ValueError, "Memory pools are only supported on CUDA devices"),
    (lambda: wp.ScopedMempool("cpu", True).__enter__(), ValueError, "Memory pools are only supported on CUDA devices"),
    (lambda: wp.set_mempool_access_enabled("cpu", "cpu", True), ValueError,
     "Memory pool access is only supported between CUDA devices"),
    (lambda: wp.ScopedMempoolAccess("cpu", "cpu", True).__enter__(), ValueError,
     "Memory pool access is only supported between CUDA devices"),
    (lambda: wp.set_peer_access_enabled("cpu", "cpu", True), ValueError,
     "Peer access is only supported between CUDA devices"),
    (lambda: wp.ScopedPeerAccess("cpu", "cpu", True).__enter__(), ValueError,
     "Peer access is only supported between CUDA devices"),
    (lambda: wp.set_device_allocator("cpu", None), RuntimeError, "Custom allocators are only supported on CUDA devices"),
    (lambda: wp.ScopedAllocator("cpu", None), RuntimeError, "Custom allocators are only supported on CUDA devices"),
    (lambda: wp.from_ipc_handle(b"0" * 64, wp.float32, (1,), device="cpu"), RuntimeError,
     "IPC is not supported on device cpu."),
    (lambda: wp.event_from_ipc_handle(b"0" * 64, device="cpu"), RuntimeError, "IPC is not supported on device cpu."),
    (lambda: wp.can_access("cpu", 3), TypeError, "wp.can_access() only supports concrete Warp arrays in this release"),
    (lambda: wp.get_suggested_block_size(3, "cpu"), TypeError,
     "get_suggested_block_size() expected a wp.Kernel, got <class 'int'>"),
    (lambda: wp.get_cuda_kernel_properties(_fill_one, "cpu"), RuntimeError,
     "get_cuda_kernel_properties() requires a CUDA device, got 'cpu'"),
    (lambda: wp.get_cuda_kernel_properties(3, "cpu"), TypeError,
     "get_cuda_kernel_properties() expected a wp.Kernel, got <class 'int'>"),
])
def test_cpu_errors_are_warps(call, exc, message):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == message


def test_set_cuda_allocator_without_cuda():
    if wp.is_cuda_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError) as e:
        wp.set_cuda_allocator(None)
    assert str(e.value) == "set_cuda_allocator: no CUDA devices available"


def test_set_device_allocator_validates_the_allocator():
    with pytest.raises(TypeError) as e:
        memory._validate_allocator(3)
    assert str(e.value) == ("allocator must implement the Allocator protocol (allocate(size_in_bytes) -> int, "
                            "deallocate(ptr, size_in_bytes) -> None), got <class 'int'>")


def test_disabling_on_the_cpu_is_a_no_op():
    # warp-lang 1.19.0: disabling mempools / access on the CPU returns None
    assert wp.set_mempool_enabled("cpu", False) is None
    assert wp.set_mempool_access_enabled("cpu", "cpu", False) is None
    assert wp.set_peer_access_enabled("cpu", "cpu", False) is None


def test_cpu_allocator_and_memory_kind():
    alloc = wp.get_device_allocator("cpu")
    assert alloc.memory_kind is wp.MemoryKind.HOST
    ptr = alloc.allocate(64)
    assert ptr % 64 == 0
    ctypes.memset(ptr, 7, 64)
    alloc.deallocate(ptr, 64)
    assert [(m.name, m.value) for m in wp.MemoryKind] == [("UNKNOWN", 0), ("HOST", 1), ("PINNED", 2),
                                                          ("CUDA_DEVICE", 3), ("CUDA_MEMPOOL", 4), ("CUDA_MANAGED", 5)]


def test_can_access():
    a = wp.zeros(3, device="cpu")
    assert wp.can_access("cpu", a) is True


def test_managed_allocator_says_what_is_missing():
    with pytest.raises(NotImplementedError) as e:
        wp.CudaManagedAllocator().allocate(16)
    assert str(e.value) == ("CudaManagedAllocator: mlwarp's CUDA runtime allocates device memory only "
                            "(cuMemAlloc/cuMemAllocAsync); managed memory (cuMemAllocManaged) is not implemented")


def test_profiler_on_the_cpu_is_a_no_op():
    assert wp.cuda_profiler_start("cpu") is None
    assert wp.cuda_profiler_stop("cpu") is None
    with wp.ScopedCudaProfiler("cpu"):
        pass


# -- timing ---------------------------------------------------------------------------------------------------------
def test_timing_records_no_cpu_activity():
    a = wp.zeros(4, device="cpu")
    wp.timing_begin()
    wp.launch(_fill_one, 4, inputs=[a], device="cpu")
    wp.clone(a)
    assert wp.timing_end() == []  # warp-lang 1.19.0: [] (it times CUDA activity only)
    assert (wp.TIMING_ALL, wp.TIMING_GRAPH, wp.TIMING_KERNEL, wp.TIMING_KERNEL_BUILTIN, wp.TIMING_MEMCPY,
            wp.TIMING_MEMSET) == (4294967295, 16, 1, 2, 4, 8)


def test_timing_print_is_warps(capsys):
    wp.timing_print([])
    cpu = wp.get_device("cpu")
    wp.timing_print([wp.TimingResult(cpu, "forward kernel k", wp.TIMING_KERNEL, 1.5),
                     wp.TimingResult(cpu, "memcpy HtoH", wp.TIMING_MEMCPY, 0.25)], indent="  ")
    # warp-lang 1.19.0's output for the same calls
    assert capsys.readouterr().out == """No activity
  CUDA timeline:
  ----------------+---------+-----------------
  Time            | Device  | Activity
  ----------------+---------+-----------------
      1.500000 ms | cpu     | forward kernel k
      0.250000 ms | cpu     | memcpy HtoH

  CUDA activity summary:
  ----------------+---------+-----------------
  Total time      | Count   | Activity
  ----------------+---------+-----------------
      1.500000 ms |       1 | forward kernel k
      0.250000 ms |       1 | memcpy HtoH

  CUDA device summary:
  ----------------+---------+-----------------
  Total time      | Count   | Device
  ----------------+---------+-----------------
      1.750000 ms |       2 | cpu
"""


# -- runtime queries ------------------------------------------------------------------------------------------------
def test_cpu_queries():
    assert wp.get_suggested_block_size(_fill_one, "cpu") == (1, 1)  # warp-lang 1.19.0
    assert wp.get_cuda_max_cluster_dim(_fill_one, "cpu") == 1  # warp-lang 1.19.0
    assert wp.get_cuda_toolkit_version() is None
    if not wp.is_cuda_available():
        assert wp.get_cuda_driver_version() is None  # warp-lang 1.19.0 without a driver
    key = wp.get_cpu_kernel_cache_key()
    version, system, machine, digest = key.split("-")
    assert version == "1.19.0" and len(digest) == 8
    assert wp.get_cpu_kernel_cache_key(cpu_compiler_flags="") == key
    assert wp.clear_lto_cache() is None


def test_print_diagnostics_returns_what_it_prints(capsys):
    info = wp.print_diagnostics()
    out = capsys.readouterr().out
    assert info["warp_python"] == "1.19.0" and info["devices"][0] == {"alias": "cpu", "name": "CPU"}
    assert out.startswith("Software\n  Warp (API):       1.19.0\n")


def test_module_build_options_defaults():
    # warp-lang 1.19.0: ModuleBuildOptions().__dict__
    assert vars(wp.ModuleBuildOptions()) == {"extra_cuda_include_dirs": [], "extra_cpu_include_dirs": [],
                                             "extra_cuda_preamble": "", "extra_cpu_preamble": "",
                                             "extra_build_dependencies": []}


def test_map_cuda_device_says_what_is_missing():
    with pytest.raises(NotImplementedError) as e:
        wp.map_cuda_device("foo")
    assert str(e.value) == ("map_cuda_device('foo'): mlwarp's CUDA runtime uses each device's primary context and "
                            "cannot adopt another CUDA context")


def test_from_ptr_wraps_the_address_stored_at_ptr():
    src = wp.array(np.arange(6, dtype=np.float32), device="cpu")
    holder = ctypes.c_size_t(src.ptr)
    with pytest.warns(DeprecationWarning, match="This version of wp.from_ptr\\(\\) is deprecated"):
        a = wp.from_ptr(ctypes.addressof(holder), 6, wp.float32, shape=(2, 3), device="cpu")
    assert a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy().ravel(), np.arange(6))


def test_device_like_alias():
    assert wp.DeviceLike == (wp.Device | str | None)


# -- Warp's error names and internal builtins --------------------------------------------------------------------------
def test_error_classes():
    assert issubclass(wp.WarpCodegenIndexError, IndexError)  # as Warp's
    assert issubclass(wp.WarpDeterminismError, RuntimeError)  # as Warp's


def test_constant_component_index_out_of_range_is_a_codegen_index_error():
    @wp.kernel(module="unique")
    def bad(a: wp.array(dtype=float)):
        v = wp.vec3()
        a[0] = v[5]

    with pytest.raises(wp.WarpCodegenIndexError) as e:
        wp.launch(bad, 1, inputs=[wp.zeros(1, device="cpu")], device="cpu")
    assert str(e.value).endswith("in 'bad': index 5 out of range for 3 components")


def test_internal_builtin_says_what_to_write():
    with pytest.raises(RuntimeError) as e:
        wp.view(None, 0)
    assert str(e.value) == ("wp.view() is an internal builtin of Warp's code generator: a subarray (Warp's code "
                            "generator emits it for arr[i] with fewer indices than dimensions); write arr[i]. mlwarp "
                            "does not expose it")


def test_dense_builtin_says_what_replaces_it():
    with pytest.raises(RuntimeError) as e:
        wp.dense_gemm(1, 1, 1, 0, 0, None, None, None)
    assert str(e.value) == ("wp.dense_gemm() is one of Warp's hidden, undocumented dense linear algebra builtins "
                            "(marked WIP); mlwarp does not implement them: use wp.tile_matmul, wp.tile_cholesky "
                            "and wp.tile_cholesky_solve")


def test_cache_kernels_false_compiles_again(tmp_path, monkeypatch):
    from mlwarp.runtime import cache

    monkeypatch.setattr(wp.config, "cache_kernels", False)
    assert cache.lookup("anything") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.lookup("anything", root=str(tmp_path)) is None  # (an AOT folder is still read)


# -- array and Device members (warp-lang 1.19.0's values for CPU arrays and the CPU device) -------------------------
def test_array_memory_kind_and_is_transposed():
    a = wp.zeros((2, 3), device="cpu")
    assert a.memory_kind is wp.MemoryKind.HOST
    assert a.is_transposed is False
    assert a.transpose().is_transposed is True
    assert a.transpose().transpose().is_transposed is False


def test_array_ipc_handle_on_the_cpu():
    with pytest.raises(RuntimeError) as e:
        wp.zeros(3, device="cpu").ipc_handle()
    assert str(e.value) == "IPC requires a CUDA device"


def test_cpu_device_members():
    d = wp.get_device("cpu")
    assert d.can_access("cpu") is True
    assert d.get_allocator() is wp.get_device_allocator("cpu")
    assert d.get_cuda_compile_arch() is None and d.get_cuda_output_format() is None
    assert (d.is_primary, d.is_uva, d.is_ipc_supported, d.is_managed_memory_supported, d.is_cubin_supported,
            d.uuid, d.pci_bus_id) == (False, False, False, False, False, None, None)
