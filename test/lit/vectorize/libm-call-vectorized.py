# REQUIRES: libmvec
# RUN: %PYTHON %s | FileCheck %s --check-prefixes=CHECK,%host-libmvec
#
# A thread loop calling sin and exp is vectorised through libmvec (warp-cpu-vector-math): the library
# calls vector variants as wide as the host's widest libmvec ISA allows (its undefined symbols name them).
# Which variant is LLVM's choice: on an AVX-512 host its tuning may keep 256-bit loops (_ZGVdN8v_sinf) or
# go to 512 (_ZGVeN16v_sinf), so the checks read widths, not one ISA's names. A kernel's own loop of
# thread-invariant bounds (each sin depends on the last) vectorises across threads too
# (warp-cpu-interchange-loops); one whose trip count is read per thread keeps the scalar call only.
import os
import re
import subprocess
import sysconfig

import numpy as np

import mlwarp as wp

NM = os.path.join(sysconfig.get_paths()["purelib"], "llvm", "bin", "llvm-nm")
# the x86-64 vector function ABI's ISA letters and their register widths
ISA_BITS = {"b": 128, "c": 256, "d": 256, "e": 512}
VARIANT = re.compile(r"_ZGV([bcde])N(\d+)(v+)_(\w+)$")


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


@wp.kernel(enable_backward=False)
def iterate_per_thread(x: wp.array(dtype=float), counts: wp.array(dtype=int)):
    i = wp.tid()
    s = x[i]
    for _ in range(counts[i]):
        s = wp.sin(s)
    x[i] = s


def undefined(kernel) -> list:
    library = kernel.compiled(wp.get_device("cpu")).library._name
    out = subprocess.run([NM, "-D", "--undefined-only", library], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip())


def widest_vectors(symbols) -> dict:
    """scalar libm name -> the widest of its vector variants called, in bits (an epilogue loop may call a
    narrower one too); a name whose lanes do not fill its ISA's registers (`_ZGVdN4v_sinf`) shows as "bad"."""
    widths = {}
    for name in symbols:
        m = VARIANT.match(name)
        if m:
            isa, lanes, scalar = m.group(1), int(m.group(2)), m.group(4)
            bits = lanes * (32 if scalar.endswith("f") else 64)
            widths.setdefault(scalar, []).append(bits if bits == ISA_BITS[isa] else f"bad {name}")
    return {k: f"{max(v)}-bit" if all(isinstance(b, int) for b in v) else " ".join(map(str, v))
            for k, v in sorted(widths.items())}


x = wp.array(np.linspace(-1, 1, 64, dtype=np.float32))
y = wp.zeros(64, dtype=float)
wp.launch(wave, 64, inputs=[x, y])
wave_symbols = undefined(wave)
print("wave scalar:", [s for s in wave_symbols if not s.startswith("_ZGV")])
for scalar, widest in widest_vectors(wave_symbols).items():
    print(f"wave vector {scalar}: {widest}")
ref = np.sin(x.numpy().astype(np.float64)) * np.exp(x.numpy().astype(np.float64))
print("close:", np.allclose(y.numpy(), ref, rtol=1e-6, atol=1e-7))

wp.launch(iterate, 64, inputs=[x, 3])
for scalar, widest in widest_vectors(undefined(iterate)).items():
    print(f"iterate vector {scalar}: {widest}")
wp.launch(iterate_per_thread, 64, inputs=[x, wp.full(64, 3, dtype=int)])
print("iterate_per_thread:", undefined(iterate_per_thread))

# CHECK: wave scalar: [{{.*}}'expf', {{.*}}'sinf']
# LIBMVEC128: wave vector expf: 128-bit{{$}}
# LIBMVEC128: wave vector sinf: 128-bit{{$}}
# LIBMVEC256: wave vector expf: 256-bit{{$}}
# LIBMVEC256: wave vector sinf: 256-bit{{$}}
# LIBMVEC512: wave vector expf: {{(256|512)-bit$}}
# LIBMVEC512: wave vector sinf: {{(256|512)-bit$}}
# CHECK: close: True
# LIBMVEC128: iterate vector sinf: 128-bit{{$}}
# LIBMVEC256: iterate vector sinf: 256-bit{{$}}
# LIBMVEC512: iterate vector sinf: {{(256|512)-bit$}}
# CHECK: iterate_per_thread: ['sinf']
