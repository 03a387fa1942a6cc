#!/usr/bin/env bash
# Sets up .venv (if needed) and runs the quick-start example end to end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup-env.sh
MLWARP_TIMINGS=${MLWARP_TIMINGS:-1} exec .venv/bin/python examples/particles.py "$@"
