"""Shared pytest setup: a private kernel cache for the whole test session; with MLWARP_TEST_FAKE_GPU=1, a fake
GPU backed by the CPU for the whole session (bench/gpu_check.sh prepare)."""

import os
import tempfile

import pytest

# Set before any kernel compiles, so tests never touch (or trust) the user's cache.
os.environ.setdefault("MLWARP_CACHE_DIR", tempfile.mkdtemp(prefix="mlwarp-test-cache-"))
# and an empty library cache (runtime/cache.py library_dir): the installation's precompiled geometry kernels would
# stand in for the compiles that tests count
os.environ.setdefault("MLWARP_LIBRARY_CACHE_DIR", tempfile.mkdtemp(prefix="mlwarp-test-library-"))
# Every kernel a test compiles has its IR verified after each stage (compiler/verify.py): a pass that leaves
# ill-typed warp IR fails the test that compiled it.
os.environ.setdefault("MLWARP_VERIFY_IR", "1")


def pytest_configure(config):
    if os.environ.get("MLWARP_TEST_FAKE_GPU") == "1":
        _install_fake_gpu()
    config.addinivalue_line("markers", "mlwarp_last: run after every other test (test_cuda_ptx_suite.py compiles "
                                       "the kernels the session launched for sm_90)")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("mlwarp_last") is not None)  # stable: order kept otherwise


@pytest.fixture
def debug_mode():
    """wp.config.mode = "debug" for one test (debug builds: bounds checks, asserts)."""
    import mlwarp as wp

    wp.config.mode = "debug"
    try:
        yield
    finally:
        wp.config.mode = "release"


@pytest.fixture(autouse=True)
def _launches_as_each_kernel_chooses(monkeypatch):
    """Every test's launches go where each kernel chooses: runtime/process_threads.py's whole-process measurement
    (a window of launches on the calling thread now and then) would otherwise fall on tests that count pool runs
    at random. test_process_threads.py installs a schedule of its own."""
    from mlwarp.runtime import cpu, process_threads

    probe = process_threads.ProcessThreads()
    probe.countdown = 1 << 62
    monkeypatch.setattr(cpu, "PROCESS", probe)


@pytest.fixture
def one_thread():
    """Launches on the calling thread (wp.config.cpu_threads = 1): sums in thread order, Warp's CPU order."""
    from mlwarp.config import config

    saved = config.cpu_threads
    config.cpu_threads = 1
    yield
    config.cpu_threads = saved


@pytest.fixture
def automatic_two_cores(monkeypatch):
    """The automatic thread count on two cores and the native pool (runtime/cpu.py), whatever this machine has,
    every launch worth the pool by size."""
    from mlwarp.config import config
    from mlwarp.runtime import cpu

    monkeypatch.delenv("MLWARP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu, "_CPU_COUNT", 2)
    monkeypatch.setattr(cpu, "POOL_KIND", "native")
    monkeypatch.setattr(cpu, "SERIAL_BELOW_NS", 0)
    monkeypatch.setattr(config, "cpu_threads", 0)


def _install_fake_gpu():
    """One fake sm_90 GPU for the whole session, backed by the CPU (cuda_fake_driver.CpuBackedDriver): the CUDA
    tests compile their kernels into this session's cache as on a GPU, for bench/gpu_check.sh to carry to one."""
    from cuda_fake_driver import install_cpu_backed_gpu

    install_cpu_backed_gpu(arch=int(os.environ.get("MLWARP_TEST_FAKE_GPU_ARCH", "90")))
