"""`import mlwarp` loads neither MLIR nor the compiler driver nor torch: a machine with only numpy can
launch cached kernels, and torch is loaded only by the interop functions that need it."""

import subprocess
import sys


def _modules_after(code):
    r = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(sorted(sys.modules))"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return set(eval(r.stdout.strip().splitlines()[-1]))


def test_import_does_not_load_mlir_or_torch():
    mods = _modules_after("import mlwarp as wp\na = wp.zeros(3)\nwp.synchronize()")
    assert "mlwarp" in mods and "mlwarp.arrays.array" in mods
    assert "mlir" not in mods and not any(m.startswith("mlir.") for m in mods)
    assert "mlwarp.compiler.driver" not in mods
    assert "torch" not in mods and "jax" not in mods


def test_interop_without_torch_loaded():
    # numpy and DLPack interop never import torch
    mods = _modules_after("import numpy as np, mlwarp as wp\n"
                          "a = wp.from_dlpack(np.arange(3.0))\nb = np.from_dlpack(a)\nassert b[2] == 2.0")
    assert "torch" not in mods and "mlir" not in mods
