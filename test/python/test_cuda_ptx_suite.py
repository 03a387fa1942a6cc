"""Every kernel the test session launched on the CPU is compiled for sm_90 too, and its PTX is assembled
by `ptxas -arch=sm_90` (invalid PTX, unresolved externs or a lowering gap fail here, with no GPU).

Importing this module starts recording `Kernel.compiled` calls; conftest.py runs the test below last,
after the other tests have launched their kernels (only those that compiled for the CPU: the error
catalogue's kernels are refused on both targets). Run alone, it compiles this file's representative kernels."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.kernels.kernel import Kernel

pytestmark = pytest.mark.mlwarp_last

_launched: dict = {}
_original_compiled = Kernel.compiled


def _recording_compiled(self, device):
    loaded = _original_compiled(self, device)
    _launched.setdefault(id(self), self)
    return loaded


Kernel.compiled = _recording_compiled


@wp.kernel
def _saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def _math_4d(x: wp.array(dtype=wp.float64, ndim=4), out: wp.array(dtype=wp.float32, ndim=4), n: wp.int64):
    i, j, k, l = wp.tid()
    v = x[i, j, k, l]
    one = wp.float64(1.0)
    s = wp.sin(v) + wp.cos(v) + wp.tan(v) + wp.exp(v) + wp.log(wp.abs(v) + one) + wp.sqrt(wp.abs(v)) + v ** wp.float64(2.5)
    out[i, j, k, l] = wp.float32(s + wp.float64(n)) + wp.floor(wp.float32(v)) + wp.ceil(wp.float32(v))


@wp.kernel
def _atomics(counts: wp.array(dtype=wp.int32), sums: wp.array(dtype=wp.float32), xs: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(counts, i % 4, 1)
    wp.atomic_add(sums, 0, 0.5)
    wp.atomic_sub(xs, 0, wp.float64(0.25))


REPRESENTATIVE = [_saxpy, _math_4d, _atomics]


def test_every_launched_kernel_assembles_for_sm_90():
    if cuda_compile.compiler_available() is False:
        pytest.skip("the MLIR compiler is not installed")
    from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas is not installed (the test extra installs it: scripts/setup-env.sh)")
    kernels = {id(k): k for k in [*REPRESENTATIVE, *_launched.values()]}
    failures = []
    for k in kernels.values():
        try:
            meta = cuda_compile.build(k, 90)
        except Exception as e:  # collect all, report all
            failures.append(f"{k.key} ({k.func.__code__.co_filename}:{k.func.__code__.co_firstlineno}): "
                            f"{type(e).__name__}: {str(e).strip()[:2000]}")
            continue
        assert meta["cubin"] == "kernel.cubin" and meta["arch"] == 90, meta
    assert not failures, f"{len(failures)} of {len(kernels)} kernels failed for sm_90:\n" + "\n".join(failures)


def test_representative_ptx_is_self_contained_and_uses_global_memory():
    text = cuda_compile.to_mlir(_atomics, "ptx", 90)
    assert ".extern" not in text
    assert ".visible .entry _atomics_cuda(" in text
    assert "atom.global.add.u32" in text or "red.global.add.u32" in text
    assert "atom.global.add.f32" in text or "red.global.add.f32" in text
    math = cuda_compile.to_mlir(_math_4d, "ptx", 90)
    assert ".extern" not in math and "__nv_" not in math.split(".entry")[0]


def test_launch_struct_is_the_one_kernel_parameter():
    # runtime/cuda/module.py passes one pointer to the ctypes launch struct: the sizes must agree
    import ctypes

    text = cuda_compile.to_mlir(_math_4d, "ptx", 90)
    size = ctypes.sizeof(_math_4d.launch_struct)
    assert f".param .align 8 .b8 _math_4d_cuda_param_0[{size}]" in text
    assert "_math_4d_cuda_param_1" not in text


@wp.kernel
def _oob_copy(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    b[i] = a[i + n] * 2.0


def _forward_entry(ptx: str, name: str) -> str:
    """The PTX of the forward entry `<name>_cuda` alone (the adjoint entry follows it in the module)."""
    start = ptx.index(f".visible .entry {name}_cuda(")
    end = ptx.find(".visible .entry", start + 1)
    return ptx[start:end if end >= 0 else len(ptx)]


def test_debug_build_ptx_checks_bounds_in_a_hidden_record_and_assembles(monkeypatch, tmp_path):
    import ctypes
    import inspect
    import os
    import re
    import subprocess

    from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path
    from mlwarp.launching.debug import for_launch

    monkeypatch.setattr(wp.config, "mode", "debug")
    debug = for_launch(_oob_copy)
    assert debug is not _oob_copy and cuda_compile.cache_key(debug, 90) != cuda_compile.cache_key(_oob_copy, 90)
    meta = cuda_compile.build(debug, 90)
    with open(os.path.join(meta["dir"], meta["ptx"])) as f:
        ptx = f.read()
    release = cuda_compile.to_mlir(_oob_copy, "ptx", 90)
    # the error record is the launch struct's last field: the one by-value parameter grows by its descriptor
    # (data pointer, shape, stride) after the user's parameters, as in runtime/abi.py
    debug_size, release_size = ctypes.sizeof(debug.launch_struct), ctypes.sizeof(_oob_copy.launch_struct)
    assert (release_size, debug_size) == (88, 112)
    assert f".param .align 8 .b8 _oob_copy_cuda_param_0[{debug_size}]" in ptx
    assert f".param .align 8 .b8 _oob_copy_cuda_param_0[{release_size}]" in release
    assert ptx == cuda_compile.to_mlir(debug, "ptx", 90)  # to_mlir shows the debug build of a debug kernel
    # one unsigned bounds compare and one device atomic on the record per checked access (a[i + n], b[i])
    fwd, fwd_release = _forward_entry(ptx, "_oob_copy"), _forward_entry(release, "_oob_copy")
    assert re.findall(r"setp\.\w+\.u32", fwd) == ["setp.ge.u32", "setp.ge.u32"]
    assert fwd.count("atom.global.add.u64") == 2
    assert "atom." not in fwd_release and not re.findall(r"setp\.\w+\.u32", fwd_release)
    # line directives into this file (not full debug info: `.target sm_90, debug` would refuse ptxas -O3)
    lines, first = inspect.getsourcelines(_oob_copy.func)
    load_line = first + next(k for k, line in enumerate(lines) if "a[i + n]" in line)
    assert f'.file\t1 "{inspect.getsourcefile(_oob_copy.func)}"' in ptx
    assert f".loc\t1 {load_line} 12" in fwd and f".loc\t1 {load_line} 5" in fwd
    assert re.findall(r"^\.target .*$", ptx, re.M) == [".target sm_90"] and ".debug_info" not in ptx
    assert ".loc" not in release
    # the site table is in the metadata, the forward kernel's sites first (the record's SITE indexes it)
    where = f"{inspect.getsourcefile(_oob_copy.func)}:{load_line}"
    assert meta["debug_sites"][:2] == [
        {"op": "load", "arg": 0, "fields": [], "location": f"{where}:12", "called_from": []},
        {"op": "store", "arg": 1, "fields": [], "location": f"{where}:5", "called_from": []}]
    assert cuda_compile.build(_oob_copy, 90)["debug_sites"] is None  # a release build has no site table
    if ptxas_path() is None:
        pytest.skip("ptxas is not installed (the test extra installs it: scripts/setup-env.sh)")
    assert meta["cubin"] == "kernel.cubin"  # the build assembled it with ptxas -arch=sm_90 -O3
    r = subprocess.run([ptxas_path(), "-arch=sm_90", "-O3", "-lineinfo", os.path.join(meta["dir"], meta["ptx"]),
                        "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "k.cubin", "rb") as f:
        assert b".debug_line" in f.read()
