"""Shared helpers for the benchmarks: best-of timing, Warp run side by side, and the table.

Warp (warp-lang 1.19.0, CPU) runs in the same benchmark run: in this interpreter when `import
warp` works (`pip install mlwarp[bench]`), otherwise in a subprocess of the first interpreter
that has it: $MLWARP_BENCH_WARP_PYTHON, then /tmp/warpvenv/bin/python. Each script runs its own
Warp part when called with `--warp` and prints one JSON line.
"""


import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

WARP_PYTHONS = [os.environ.get("MLWARP_BENCH_WARP_PYTHON"), "/tmp/warpvenv/bin/python"]
# OpenBLAS tuning variables some machines set: they slow numpy's BLAS down, so benchmarks drop them
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def best_of(fn, repeat: int = 7, number: int = 1) -> float:
    """The fastest of `repeat` runs of `number` calls, in seconds per call (a shared machine is noisy)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t) / number)
    return best


def clean_env() -> dict:
    env = dict(os.environ)
    for k in BLAS_ENV:
        env.pop(k, None)
    return env


def c_stream(source_name: str):
    """`n -> best GB/s` of one of bench/'s C references (`<exe> N REPEAT` prints GB/s), built with
    `cc -O3 -march=native -fopenmp`, on one thread and on all cores; None without a C compiler."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        return None
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), source_name)
    exe = os.path.join(tempfile.mkdtemp(prefix="mlwarp-bench-"), os.path.splitext(source_name)[0])
    if subprocess.run([cc, "-O3", "-march=native", "-fopenmp", source, "-o", exe], capture_output=True).returncode:
        return None

    def best(n):
        rates = []
        for threads in sorted({1, os.cpu_count() or 1}):
            out = subprocess.run([exe, str(n), "20"], capture_output=True, text=True,
                                 env={**os.environ, "OMP_NUM_THREADS": str(threads)})
            rates.append(float(out.stdout) if out.returncode == 0 else 0.0)
        return max(rates)

    return best


def warp_python():
    if importlib.util.find_spec("warp") is not None:
        return sys.executable
    for py in WARP_PYTHONS:
        if py and os.path.exists(py):
            return py
    return None


def run_warp(script: str, *args: str):
    """The Warp part of `script` (its `--warp` mode) in a fresh process; None without warp-lang."""
    py = warp_python()
    if py is None:
        return None
    out = subprocess.run([py, script, "--warp", *args], capture_output=True, text=True, env=clean_env())
    if out.returncode != 0:
        print(f"warning: the Warp part of {os.path.basename(script)} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def warp_mode() -> bool:
    return "--warp" in sys.argv


def emit_warp(results: dict) -> None:
    print(json.dumps(results))


def ratio(a, b) -> str:
    if not (a and b):
        return "-"
    r = a / b
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"  # 0.0023x, not 0.00x


def print_table(title: str, unit: str, rows: list, higher_is_better: bool) -> list:
    """rows: (case, mlwarp, numpy, warp); prints them with 'mlwarp vs Warp' and returns table lines."""
    better = "higher" if higher_is_better else "lower"
    lines = [f"### {title} ({unit}, {better} is better)", "",
             "| case | mlwarp | numpy | Warp 1.19 | mlwarp vs Warp |", "| --- | ---: | ---: | ---: | ---: |"]
    for case, m, n, w in rows:
        speedup = ratio(m, w) if higher_is_better else ratio(w, m)
        lines.append(f"| {case} | {_fmt(m)} | {_fmt(n)} | {_fmt(w)} | {speedup} |")
    print("\n".join(lines) + "\n", flush=True)
    return lines


def _fmt(v) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def save_json(name: str, payload: dict) -> None:
    """Writes bench/results/<name>.json (run_all.py builds the README table from these)."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"{name}.json"), "w") as f:
        json.dump(payload, f, indent=1)
