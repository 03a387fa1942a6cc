"""Where warp-lang's examples are (bench scripts that run Warp's own examples read them from there, never copied)."""

import os

CANDIDATES = [os.environ.get("MLWARP_BENCH_WARP_EXAMPLES"),
              "/tmp/compatvenv/lib/python3.11/site-packages/warp", "/tmp/warpvenv/lib/python3.11/site-packages/warp"]


def find(relative: str) -> str:
    for root in CANDIDATES:
        if root and os.path.exists(os.path.join(root, relative)):
            return os.path.join(root, relative)
    raise SystemExit(f"warp-lang's {relative} was not found (set MLWARP_BENCH_WARP_EXAMPLES to warp's package folder)")
