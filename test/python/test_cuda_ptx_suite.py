"""Every kernel the test session launched on the CPU is compiled for sm_90 too, and its PTX is assembled
by `ptxas -arch=sm_90` (invalid PTX, unresolved externs or a lowering gap fail here, with no GPU).

Importing this module starts recording `Kernel.compiled` calls; conftest.py runs the test below last,
after the other tests have launched their kernels (only those that compiled for the CPU: the error
catalogue's kernels are refused on both targets). Run alone, it compiles this file's representative kernels."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp import cuda_compile
from mlwarp.kernel import Kernel

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
    from mlwarp.compiler.lowering.gpu_binary import ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas (CUDA toolkit) is not installed")
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
