# REQUIRES: x86-64
# RUN: %PYTHON %s | FileCheck %s --check-prefixes=CHECK,%host-simd
#
# saxpy's compiled entry: the contiguous copy of the thread loop is vectorised (packed
# multiply and add), with the host's wide vectors (the ExecutionEngine targets the host CPU):
# ymm where the widest are ymm; on an AVX-512 host ymm or zmm, as LLVM's tuning for the CPU
# prefers (many keep 256-bit loops); the strided copy stays scalar.
import os
import re
import subprocess
import sysconfig

import mlwarp as wp


@wp.kernel(enable_backward=False)
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


x, y = wp.ones(64, dtype=float), wp.ones(64, dtype=float)
wp.launch(saxpy, 64, inputs=[x, y, 2.0])
library = saxpy.compiled(wp.get_device("cpu")).library._name
objdump = os.path.join(sysconfig.get_paths()["purelib"], "llvm", "bin", "llvm-objdump")
asm = subprocess.run([objdump, "-d", "--no-show-raw-insn", "--disassemble-symbols=saxpy_cpu", library],
                     capture_output=True, text=True, check=True).stdout
print(asm)
registers = set(re.findall(r"%([xyz])mm\d+", asm))
print("widest vector registers:", max(registers, key="xyz".index) + "mm" if registers else "none")
print("result:", y.numpy()[:3])

# CHECK-LABEL: <saxpy_cpu>:
# CHECK-DAG: {{v?}}mulps
# CHECK-DAG: {{v?}}addps
# CHECK-DAG: {{v?}}mulss
# SIMD128: widest vector registers: xmm
# SIMD256: widest vector registers: ymm
# SIMD512: widest vector registers: {{[yz]mm}}
# CHECK: result: [3. 3. 3.]
