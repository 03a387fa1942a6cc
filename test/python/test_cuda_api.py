"""The CUDA API on a machine without a GPU (this one, CI): exact answers and errors, and AOT compilation,
which needs no GPU and no driver; the AOT entries are then found by a Python that cannot import MLIR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.runtime.cuda import driver as drv

no_gpu = pytest.mark.skipif(wp.is_cuda_available(), reason="checks the behaviour of a machine without a GPU")


@no_gpu
def test_no_gpu_answers():
    assert wp.is_cuda_available() is False
    assert wp.get_cuda_device_count() == 0
    assert wp.get_cuda_devices() == []
    assert str(wp.get_preferred_device()) == "cpu"
    assert str(wp.get_device()) == "cpu"
    assert [str(d) for d in wp.get_devices()] == ["cpu"]
    wp.synchronize()  # nothing to wait for
    wp.synchronize_device("cpu")


@no_gpu
def test_no_gpu_errors():
    reason = drv.unavailable_reason()
    assert reason
    for name in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(ValueError, match=rf"^Device '{name}' is not available: "):
            wp.get_device(name)
    with pytest.raises(ValueError, match=r"^Device 'cuda:0' is not available: "):
        wp.zeros(3, device="cuda:0")
    with pytest.raises(ValueError, match=r"^Invalid device identifier: 'cuda:x'$"):
        wp.get_device("cuda:x")
    with pytest.raises(RuntimeError, match=r"^Device 'cpu' is not a CUDA device: streams and events exist on CUDA "
                                           r"devices only$"):
        wp.Stream("cpu")
    with pytest.raises(RuntimeError, match=r"^load_aot_module loads CUDA kernels; device 'cpu' is not a CUDA "
                                           r"device$"):
        wp.load_aot_module([], device="cpu")


def test_scoped_device_restores_the_default():
    before = wp.get_device()
    with wp.ScopedDevice("cpu") as d:
        assert str(d) == "cpu" and str(wp.get_device()) == "cpu"
    assert wp.get_device() is before


@wp.kernel
def scale(a: wp.array(dtype=wp.float32), s: wp.float32):
    i = wp.tid()
    a[i] = a[i] * s


@wp.kernel
def add_2d(a: wp.array(dtype=wp.float64, ndim=2), b: wp.array(dtype=wp.float64, ndim=2)):
    i, j = wp.tid()
    b[i, j] = b[i, j] + wp.sqrt(a[i, j])


def test_compile_aot_module_needs_no_gpu(tmp_path):
    folders = wp.compile_aot_module([scale, add_2d], arch=[80, 90], module_dir=str(tmp_path))
    assert len(folders) == 4 and len(set(folders)) == 4
    for folder in folders:
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        assert meta["arch"] in (80, 90) and meta["entry"] in ("scale_cuda", "add_2d_cuda")
        assert sorted(meta["files"]) == ["kernel.cubin", "kernel.ptx"]
        with open(os.path.join(folder, "kernel.cubin"), "rb") as f:
            assert f.read(4) == b"\x7fELF"
        with open(os.path.join(folder, "kernel.ptx")) as f:
            assert f".target sm_{meta['arch']}" in f.read()
    # the same call again finds the entries instead of compiling
    assert wp.compile_aot_module([scale, add_2d], arch=[80, 90], module_dir=str(tmp_path)) == folders


def test_compile_aot_module_of_a_python_module(tmp_path):
    folders = wp.compile_aot_module(sys.modules[__name__], arch=90, module_dir=str(tmp_path))
    names = sorted(json.load(open(os.path.join(f, "meta.json")))["kernel"] for f in folders)
    assert names == ["add_2d", "scale"]
    with pytest.raises(TypeError, match=r"^expected a module, a module name, a kernel or a list of them, got int$"):
        wp.compile_aot_module(3, module_dir=str(tmp_path))


def test_cuda_cache_key_ignores_the_host_but_not_the_arch():
    assert scale.cache_key("sm_90") != scale.cache_key("sm_80")
    assert scale.cache_key("sm_90") != scale.cache_key("cpu")
    kernel_module = sys.modules["mlwarp.kernels.kernel"]  # (`mlwarp.kernels.kernel` is the decorator)
    original = kernel_module._host_fingerprint
    try:
        kernel_module._host_fingerprint = lambda: "another CPU"
        assert scale.cache_key("sm_90") == cuda_compile.cache_key(scale, 90)
        key_elsewhere = scale.cache_key("sm_90")
        cpu_elsewhere = scale.cache_key("cpu")
    finally:
        kernel_module._host_fingerprint = original
    assert key_elsewhere == scale.cache_key("sm_90")
    assert cpu_elsewhere != scale.cache_key("cpu")


_NO_MLIR_SCRIPT = textwrap.dedent("""
    import importlib.abc, sys

    class NoMLIR(importlib.abc.MetaPathFinder):  # this Python "has no MLIR wheels"
        def find_spec(self, name, path=None, target=None):
            if name == "mlir" or name.startswith("mlir."):
                raise ImportError("No module named 'mlir' (blocked)")

    sys.meta_path.insert(0, NoMLIR())
    sys.path.insert(0, sys.argv[2])
    import test_cuda_api as t
    from mlwarp.launching import cuda_compile
    cuda_compile.compiler_available = lambda: False
    cuda_compile.add_aot_dir(sys.argv[1])
    for k in (t.scale, t.add_2d):
        meta = cuda_compile.find(k, 90)
        print(k.key, meta["arch"], meta["dir"].startswith(sys.argv[1]), meta["cubin"])
    print("sm_100 falls back to", cuda_compile.find(t.scale, 100)["arch"])
    try:
        cuda_compile.find(t.scale, 75)
    except cuda_compile.KernelNotCompiledError as e:
        print("sm_75:", str(e).split(" in ")[0])
    print("mlir imported:", any(m == "mlir" or m.startswith("mlir.") for m in sys.modules))
""")


def test_aot_entries_are_found_by_a_python_without_mlir(tmp_path):
    wp.compile_aot_module([scale, add_2d], arch=90, module_dir=str(tmp_path / "aot"))
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "empty-cache"))
    out = subprocess.run([sys.executable, "-c", _NO_MLIR_SCRIPT, str(tmp_path / "aot"), os.path.dirname(__file__)],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "scale 90 True kernel.cubin",
        "add_2d 90 True kernel.cubin",
        "sm_100 falls back to 90",
        "sm_75: kernel 'scale' has no compiled CUDA code for sm_75 or older",
        "mlir imported: False",
    ]
