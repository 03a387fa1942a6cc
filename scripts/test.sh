#!/usr/bin/env bash
# The whole test suite: lit (FileCheck) tests, then pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup-env.sh
export PATH="$PWD/.venv/bin:$PATH"
export MLWARP_CACHE_DIR="${MLWARP_CACHE_DIR:-$PWD/.venv/mlwarp-test-cache}"
status=0
if [ -d test/lit ] && ls test/lit/*/ >/dev/null 2>&1; then
  lit -sv test/lit || status=$?
fi
python -m pytest -q -rs "$@" || status=$?  # -rs: each skip with its reason
exit $status
