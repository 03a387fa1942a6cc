"""A CPU library of several large entries is compiled in parts, an entry each, in forked processes side by side,
and linked into one library: from its LLVM-dialect stage on (compiler/targets/cpu/entry_parts.py), or only LLVM's
optimisation and code generation (object_code.py write_object). Every entry (the atomic one, `_private`, `_serial`)
computes what numpy does; a part that LLVM fails on is compiled again whole, one whose passes fail is reported."""

import os

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cpu import entry_parts, object_code


@wp.struct
class Peaks:
    top: wp.array(dtype=float)


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    """Each test compiles its kernel (the same source would load the last test's library from the cache)."""
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))


@pytest.fixture
def llvm_parts_only(monkeypatch):
    """Parts made by LLVM's step alone (object_code.py), at any size: the LLVM-dialect stage runs whole."""
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 10**9)  # (the compile process forked from here sees it)
    monkeypatch.setattr(object_code, "SPLIT_MIN_BLOCKS", 0)


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


def _spread_against_numpy(n: int, bins: int, seed: int, spacing: int = 1, abs_tol: float = 1e-4) -> int:
    """Launches a fresh `spread` on n random values into `bins` (index * spacing), checks f and the peak against
    numpy, and returns how many object parts its library was compiled in."""
    kernel = _kernel()
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    index = rng.integers(0, -(-bins // spacing), n).astype(np.int32) * spacing
    f, peaks = wp.zeros(bins, dtype=float), Peaks()
    peaks.top = wp.array([-1e9], dtype=float)
    wp.launch(kernel, n, inputs=[wp.array(x), wp.array(index), f, peaks])
    expected_f, expected_top = _numpy(x, index, bins)
    assert f.numpy() == pytest.approx(expected_f, rel=1e-4, abs=abs_tol)
    assert peaks.top.numpy()[0] == pytest.approx(expected_top, rel=1e-5)
    return kernel.compiled(wp.get_device("cpu")).meta["object_parts"]


@pytest.mark.parametrize("n", [5, 100_000])  # one thread (`_serial`) and all cores (`_private`)
def test_every_entry_of_a_library_compiled_in_parts_computes_numpy_s_result(llvm_parts_only, n):
    assert _spread_against_numpy(n, 17, seed=7) == 3  # the entry, its `_private` and `_serial` copies


def test_an_atomic_launch_without_private_copies_runs_the_entry_compiled_in_its_own_part(llvm_parts_only):
    # f of 8 MB: too large for private copies (runtime/cpu.py), so the parallel launch runs the atomic entry
    assert _spread_against_numpy(200_000, 2_000_000, seed=11, spacing=50_000, abs_tol=1e-3) == 3  # 40 bins, far apart


def test_a_part_that_fails_is_compiled_again_whole(monkeypatch, llvm_parts_only):
    real = object_code._LLVMModule.keep_only

    def failing(self, entries, first):
        if not first:  # every forked part fails
            raise RuntimeError("a part's compile failed")
        return real(self, entries, first)

    monkeypatch.setattr(object_code._LLVMModule, "keep_only", failing)
    assert _spread_against_numpy(100_000, 5, seed=3) == 1


def test_a_compile_process_that_cannot_fork_compiles_the_library_whole(monkeypatch, llvm_parts_only):
    class NoFork:  # object_code's `os`, whose fork fails as at a process limit
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fork():
            raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(object_code, "os", NoFork())
    assert _spread_against_numpy(100_000, 9, seed=5) == 1


def test_a_small_library_is_one_part(monkeypatch):
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 10**9)  # (LLVM's parts alone: too few blocks)
    kernel = _kernel()
    f, peaks = wp.zeros(2, dtype=float), Peaks()
    peaks.top = wp.array([0.0], dtype=float)
    wp.launch(kernel, 4, inputs=[wp.array(np.ones(4, np.float32)), wp.array(np.zeros(4, np.int32)), f, peaks])
    assert kernel.compiled(wp.get_device("cpu")).meta["object_parts"] == 1


@pytest.mark.parametrize("n", [5, 100_000])  # one thread (`_serial`) and all cores (`_private`)
def test_every_entry_of_a_library_lowered_in_parts_computes_numpy_s_result(monkeypatch, n):
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 0)  # (the compile process forked from here sees it)
    assert _spread_against_numpy(n, 17, seed=13) == 3


def test_an_atomic_launch_without_private_copies_runs_the_entry_lowered_in_its_own_part(monkeypatch):
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 0)
    assert _spread_against_numpy(200_000, 2_000_000, seed=17, spacing=50_000, abs_tol=1e-3) == 3


def test_the_parts_of_an_entry_and_its_copies_each_hold_one_entry(monkeypatch):
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 0)
    real = entry_parts.keep_part

    def keep_part(module, part, entries, first):
        real(module, part, entries, first)
        names = [op.operation.attributes["sym_name"] for op in module.body.operations
                 if op.operation.name == "func.func" and op.operation.regions[0].blocks]
        with open(os.path.join(wp.config.kernel_cache_dir, f"part-{os.getpid()}"), "w") as f:
            f.write(" ".join(str(n).strip('"') for n in names) + f" first={first}")

    monkeypatch.setattr(entry_parts, "keep_part", keep_part)
    assert _spread_against_numpy(100, 7, seed=19) == 3
    kept = sorted(open(os.path.join(wp.config.kernel_cache_dir, n)).read()
                  for n in os.listdir(wp.config.kernel_cache_dir) if n.startswith("part-"))
    assert sorted(k.split()[0] for k in kept) == ["spread_cpu", "spread_cpu_private", "spread_cpu_serial"]
    assert sorted(k.split()[1] for k in kept) == ["first=False", "first=False", "first=True"]


def test_a_part_whose_passes_fail_fails_the_compile_with_the_kernel_named(monkeypatch, capfd):
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 0)

    def failing(build, path):
        raise RuntimeError("a part's passes failed")

    monkeypatch.setattr(entry_parts, "_compile_part", failing)
    with pytest.raises(wp.errors.CompileError, match="a part of the library of kernel 'spread' failed to compile"):
        _spread_against_numpy(100, 5, seed=3)
    assert "RuntimeError: a part's passes failed" in capfd.readouterr().err  # (the part's traceback, replayed)


def test_a_compile_process_that_cannot_fork_lowers_the_library_whole(monkeypatch):
    class NoFork:  # entry_parts' `os`, whose fork fails as at a process limit
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fork():
            raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 0)
    monkeypatch.setattr(entry_parts, "os", NoFork())
    assert _spread_against_numpy(100_000, 9, seed=5) == 1


def test_a_library_of_one_entry_is_one_part(monkeypatch):
    monkeypatch.setattr(entry_parts, "ENTRY_PARTS_MIN_OPS", 0)
    monkeypatch.setattr(object_code, "SPLIT_MIN_BLOCKS", 0)

    @wp.kernel
    def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * x[i]

    x, y = wp.array(np.arange(5, dtype=np.float32)), wp.zeros(5, dtype=float)
    wp.launch(square, 5, inputs=[x, y])
    assert y.numpy().tolist() == [0.0, 1.0, 4.0, 9.0, 16.0]
    assert square.compiled(wp.get_device("cpu")).meta["object_parts"] == 1


def test_a_small_library_of_several_entries_is_lowered_in_parts_by_default():
    assert _spread_against_numpy(1000, 11, seed=23) == 3  # the entry, its `_private` and `_serial` copies
