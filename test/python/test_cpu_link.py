"""The CPU target links libm only into kernels whose object calls out (compiler/targets/cpu/table.py)."""

import shutil
import subprocess

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cpu.table import has_undefined_symbols


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to make the objects")
@pytest.mark.parametrize("source, calls_out", [("float g(float x) { return 2.0f * x; }", False),
                                              ("float f(float); float g(float x) { return f(x); }", True)])
def test_undefined_symbols_of_an_object(tmp_path, source, calls_out):
    (tmp_path / "u.c").write_text(source)
    subprocess.run(["cc", "-c", "-O2", str(tmp_path / "u.c"), "-o", str(tmp_path / "u.o")], check=True)
    assert has_undefined_symbols(str(tmp_path / "u.o")) is calls_out


def test_a_file_that_is_not_an_elf_object_is_assumed_to_call_out(tmp_path):
    (tmp_path / "x.o").write_bytes(b"not an object")
    assert has_undefined_symbols(str(tmp_path / "x.o"))


@wp.kernel
def _libm_calls(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.round(x[i]) + wp.cbrt(x[i]) + float(wp.mod(x[i], 0.75))


def test_a_kernel_calling_libm_loads_and_matches_numpy():
    x = np.linspace(0.1, 9.0, 37).astype(np.float32)
    y = wp.zeros(37, dtype=float)
    wp.launch(_libm_calls, 37, inputs=[wp.array(x), y])
    expected = np.where(x - np.floor(x) == 0.5, np.floor(x) + 1, np.round(x)) + np.cbrt(x) + np.fmod(x, 0.75)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
