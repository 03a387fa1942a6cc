"""A CPU library of several large entries is compiled in parts, an entry each, in forked processes side by side
(compiler/targets/cpu/object_code.py write_object), and linked into one library: every entry (the atomic one,
`_private`, `_serial`) computes what numpy does; a part that fails is compiled again whole."""

import os

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cpu import object_code


@wp.struct
class Peaks:
    top: wp.array(dtype=float)


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    """Each test compiles its kernel (the same source would load the last test's library from the cache)."""
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))


def _kernel():
    # a fresh kernel each test (its own compile): scatter sums into f (privatized), a max into a struct field
    # (atomic in `_private`, plain in `_serial`): three entries
    @wp.kernel
    def spread(x: wp.array(dtype=float), index: wp.array(dtype=int), f: wp.array(dtype=float), peaks: Peaks):
        i = wp.tid()
        v = x[i]
        for k in range(3):
            v = wp.sin(v) * 1.5 + wp.cos(v * v) * 0.25
        wp.atomic_add(f, index[i], v)
        wp.atomic_max(peaks.top, 0, v)

    return spread


def _numpy(x, index, bins):
    v = x.astype(np.float64)
    for _ in range(3):
        v = np.sin(v) * 1.5 + np.cos(v * v) * 0.25
    f = np.zeros(bins)
    np.add.at(f, index, v)
    return f, v.max()


@pytest.mark.parametrize("n", [5, 100_000])  # one thread (`_serial`) and all cores (`_private`)
def test_every_entry_of_a_library_compiled_in_parts_computes_numpy_s_result(monkeypatch, n):
    monkeypatch.setattr(object_code, "SPLIT_MIN_BLOCKS", 0)  # (the compile process forked from here sees it)
    kernel = _kernel()
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    index = rng.integers(0, 17, n).astype(np.int32)
    f, peaks = wp.zeros(17, dtype=float), Peaks()
    peaks.top = wp.array([-1e9], dtype=float)
    wp.launch(kernel, n, inputs=[wp.array(x), wp.array(index), f, peaks])
    compiled = kernel.compiled(wp.get_device("cpu"))
    assert compiled.meta["object_parts"] == 3  # the entry, its `_private` and `_serial` copies
    expected_f, expected_top = _numpy(x, index, 17)
    assert f.numpy() == pytest.approx(expected_f, rel=1e-4, abs=1e-4)
    assert peaks.top.numpy()[0] == pytest.approx(expected_top, rel=1e-5)


def test_an_atomic_launch_without_private_copies_runs_the_entry_compiled_in_its_own_part(monkeypatch):
    # f of 8 MB: too large for private copies (runtime/cpu.py), so the parallel launch runs the atomic entry
    monkeypatch.setattr(object_code, "SPLIT_MIN_BLOCKS", 0)
    kernel = _kernel()
    n, bins = 200_000, 2_000_000
    rng = np.random.default_rng(11)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    index = rng.integers(0, 40, n).astype(np.int32) * 50_000  # 40 bins, far apart
    f, peaks = wp.zeros(bins, dtype=float), Peaks()
    peaks.top = wp.array([-1e9], dtype=float)
    wp.launch(kernel, n, inputs=[wp.array(x), wp.array(index), f, peaks])
    assert kernel.compiled(wp.get_device("cpu")).meta["object_parts"] == 3
    expected_f, expected_top = _numpy(x, index, bins)
    assert f.numpy() == pytest.approx(expected_f, rel=1e-4, abs=1e-3)
    assert peaks.top.numpy()[0] == pytest.approx(expected_top, rel=1e-5)


def test_a_part_that_fails_is_compiled_again_whole(monkeypatch):
    monkeypatch.setattr(object_code, "SPLIT_MIN_BLOCKS", 0)
    real = object_code._LLVMModule.keep_only

    def failing(self, entries, first):
        if not first:  # every forked part fails
            raise RuntimeError("a part's compile failed")
        return real(self, entries, first)

    monkeypatch.setattr(object_code._LLVMModule, "keep_only", failing)
    kernel = _kernel()
    n = 100_000
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    index = rng.integers(0, 5, n).astype(np.int32)
    f, peaks = wp.zeros(5, dtype=float), Peaks()
    peaks.top = wp.array([-1e9], dtype=float)
    wp.launch(kernel, n, inputs=[wp.array(x), wp.array(index), f, peaks])
    assert kernel.compiled(wp.get_device("cpu")).meta["object_parts"] == 1
    expected_f, expected_top = _numpy(x, index, 5)
    assert f.numpy() == pytest.approx(expected_f, rel=1e-4, abs=1e-4)
    assert peaks.top.numpy()[0] == pytest.approx(expected_top, rel=1e-5)


def test_a_compile_process_that_cannot_fork_compiles_the_library_whole(monkeypatch):
    class NoFork:  # object_code's `os`, whose fork fails as at a process limit
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fork():
            raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(object_code, "SPLIT_MIN_BLOCKS", 0)
    monkeypatch.setattr(object_code, "os", NoFork())
    kernel = _kernel()
    n = 100_000
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    index = rng.integers(0, 9, n).astype(np.int32)
    f, peaks = wp.zeros(9, dtype=float), Peaks()
    peaks.top = wp.array([-1e9], dtype=float)
    wp.launch(kernel, n, inputs=[wp.array(x), wp.array(index), f, peaks])
    assert kernel.compiled(wp.get_device("cpu")).meta["object_parts"] == 1
    expected_f, expected_top = _numpy(x, index, 9)
    assert f.numpy() == pytest.approx(expected_f, rel=1e-4, abs=1e-4)
    assert peaks.top.numpy()[0] == pytest.approx(expected_top, rel=1e-5)


def test_a_small_library_is_one_part():
    kernel = _kernel()
    f, peaks = wp.zeros(2, dtype=float), Peaks()
    peaks.top = wp.array([0.0], dtype=float)
    wp.launch(kernel, 4, inputs=[wp.array(np.ones(4, np.float32)), wp.array(np.zeros(4, np.int32)), f, peaks])
    assert kernel.compiled(wp.get_device("cpu")).meta["object_parts"] == 1
