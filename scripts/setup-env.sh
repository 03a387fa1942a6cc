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
  .venv/bin/python -c "import mlwarp, mlir.ir, lit"
  touch "$stamp"
fi
