# RUN: %PYTHON %s | FileCheck %s
#
# A thread loop calling sin and exp is vectorised through libmvec (warp-cpu-vector-math): on an
# AVX2 host the library calls the 8-lane variants (its undefined symbols name them). A loop that
# LLVM does not vectorise (each sin depends on the last) keeps the scalar call only.
import os
import subprocess
import sysconfig

import numpy as np

import mlwarp as wp
from mlwarp.compiler.lowering.cpu_vector_math import host_isas

NM = os.path.join(sysconfig.get_paths()["purelib"], "llvm", "bin", "llvm-nm")


@wp.kernel(enable_backward=False)
def wave(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * wp.exp(x[i])


@wp.kernel(enable_backward=False)
def iterate(x: wp.array(dtype=float), n: int):
    i = wp.tid()
    s = x[i]
    for _ in range(n):
        s = wp.sin(s)
    x[i] = s


def undefined(kernel) -> list:
    library = kernel.compiled(wp.get_device("cpu")).library._name
    out = subprocess.run([NM, "-D", "--undefined-only", library], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip())


x = wp.array(np.linspace(-1, 1, 64, dtype=np.float32))
y = wp.zeros(64, dtype=float)
wp.launch(wave, 64, inputs=[x, y])
wave_symbols = undefined(wave)
print("wave:", wave_symbols)
print("vector-calls-as-host-allows:", ("_ZGVdN8v_sinf" in wave_symbols) == ("avx2" in host_isas()))
ref = np.sin(x.numpy().astype(np.float64)) * np.exp(x.numpy().astype(np.float64))
print("close:", np.allclose(y.numpy(), ref, rtol=1e-6, atol=1e-7))

wp.launch(iterate, 64, inputs=[x, 3])
print("iterate:", undefined(iterate))

# CHECK: wave: [{{.*}}'expf', {{.*}}'sinf']
# CHECK: vector-calls-as-host-allows: True
# CHECK: close: True
# CHECK: iterate: ['sinf']
