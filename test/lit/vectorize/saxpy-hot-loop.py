# RUN: %PYTHON %s | FileCheck %s
#
# saxpy's compiled entry: the contiguous copy of the thread loop is vectorised (packed
# multiply and add), with the host's widest vectors (ymm on an AVX/AVX2 host, the
# ExecutionEngine targets the host CPU); the strided copy stays scalar.
import os
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
with open("/proc/cpuinfo") as f:
    host_avx = " avx " in f.read().replace("\n", " ")
print("host-wide-vectors-used:", ("ymm" in asm) == host_avx)
print("result:", y.numpy()[:3])

# CHECK-LABEL: <saxpy_cpu>:
# CHECK-DAG: {{v?}}mulps
# CHECK-DAG: {{v?}}addps
# CHECK-DAG: {{v?}}mulss
# CHECK: host-wide-vectors-used: True
# CHECK: result: [3. 3. 3.]
