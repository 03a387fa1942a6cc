"""Where `ptxas` (PTX -> cubin, the one CUDA tool the compiler runs) is. No MLIR here: lit.cfg.py and the
tests ask the same lookup as the compiler. (libdevice needs no lookup: the MLIR wheel embeds it.)

In this order: $MLWARP_PTXAS, then the binary of NVIDIA's nvcc wheel (`nvidia-cuda-nvcc`: mlwarp's `ptxas`
extra, part of `test`), then PATH, then a CUDA toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda)."""

from __future__ import annotations

import importlib.util
import os
import shutil

# where the wheel puts it under site-packages/nvidia/: CUDA 13's layout, then CUDA 12's
_WHEEL_PTXAS = ("cu13/bin/ptxas", "cuda_nvcc/bin/ptxas")
WHERE = "$MLWARP_PTXAS, the nvidia-cuda-nvcc wheel (pip install 'mlwarp[ptxas]'), PATH, $CUDA_HOME, /usr/local/cuda"


def ptxas_path() -> str | None:
    """The ptxas to run, or None where there is none."""
    given = os.environ.get("MLWARP_PTXAS")
    if given:
        return given
    found = _in_nvcc_wheel() or shutil.which("ptxas")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "bin", "ptxas")):
            return os.path.join(root, "bin", "ptxas")
    return None


def _in_nvcc_wheel() -> str | None:
    spec = importlib.util.find_spec("nvidia")  # a namespace package: finding it runs nothing
    for folder in (spec.submodule_search_locations if spec else ()):
        for rel in _WHEEL_PTXAS:
            path = os.path.join(folder, rel)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None
