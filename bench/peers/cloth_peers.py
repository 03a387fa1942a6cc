"""Warp's cross-framework cloth benchmark (warp/examples/benchmarks/benchmark_cloth.py and its
benchmark_cloth_<framework>.py integrators) on the CPU: mlwarp, Warp 1.19, Numba (a CPU port of Warp's kernels),
Taichi, JAX, PyTorch and NumPy step the same cloth (cloth_setup.py) with the same physics, 16 substeps a frame, at
32x32, 64x64 and 128x128; ms per frame, each frame returning the positions to the host as benchmark_cloth.py's
`simulate` does.

Each implementation runs in its own interpreter (cloth_worker.py), all of them started at once and kept alive, so
that their timed batches take turns in one run (the order rotating each round; the shared machine's load then weighs
on each alike); the best batch of the rounds is reported, with the load average before and after. Before the
timings each one steps a fresh cloth for benchmark_cloth.py's 60 frames (which also compiles and warms it up) and
its positions are compared with Warp's: the max abs difference is printed, and a peer beyond --tolerance is flagged
DISAGREES (not dropped). An implementation that does not load prints '-'.

    python bench/peers/cloth_peers.py [--impls mlwarp,warp,...] [--dims 32,64,128] [--rounds 5]
        [--mlwarp-python PY] [--warp-python PY] [--peers-python PY]

Interpreters: mlwarp: --mlwarp-python / $MLWARP_BENCH_MLWARP_PYTHON, else this one, with PYTHONPATH=<repo>/python;
Warp: --warp-python / $MLWARP_BENCH_WARP_PYTHON, else /tmp/warpvenv/bin/python; the peers (numba, taichi, jax,
torch, numpy): --peers-python / $MLWARP_BENCH_PEERS_PYTHON, else /tmp/peersvenv/bin/python (bench/README.md says
how it was made). Not run in CI and imported by no test; writes bench/results/cloth_peers.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
from common import clean_env, save_json, warp_python  # noqa: E402

# the default run; jax-as-shipped (benchmark_cloth_jax.py's dropped forces) shows that the position check flags a
# cloth that is wrong
IMPLEMENTATIONS = ["mlwarp", "mlwarp-1thread", "warp", "numba", "taichi", "jax", "jax-as-shipped", "torch",
                   "torch-1thread", "numpy"]
LABELS = {"mlwarp": "mlwarp", "mlwarp-1thread": "mlwarp, one thread", "warp": "Warp", "numba": "Numba (CPU port)",
          "taichi": "Taichi", "jax": "JAX", "jax-as-shipped": "JAX as shipped (no spring forces)",
          "torch": "PyTorch", "torch-1thread": "PyTorch, one thread", "numpy": "NumPy"}
REFERENCE = "warp"
CHECK_FRAMES = 60  # benchmark_cloth.py's sim_frames
PAUSE_S = 0.5  # between turns: lets a finished turn's spinning worker threads (OpenMP, XLA, OpenBLAS) go to sleep


def frames_per_batch(dim):
    """About the same work per timed batch at each size: 20 frames at 32x32, 10 at 64x64, 5 at 128x128."""
    return max(2, 20 * 32 // dim)


class Worker:
    """One implementation's cloth_worker.py process; `request` sends a JSON line and reads the answer."""

    def __init__(self, name, python, env):
        self.name = name
        self.process = subprocess.Popen([python, os.path.join(HERE, "cloth_worker.py"), name], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.info, self.error = None, None

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            return {"error": f"exited ({self.process.returncode}): {self.process.stderr.read()[-2000:]}"}
        return json.loads(line)

    def request(self, **payload):
        self.process.stdin.write(json.dumps(payload) + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.process.stdin.close()
            except OSError:
                pass
            self.process.wait(timeout=60)


def interpreters(args):
    mlwarp_env = {**clean_env(), "PYTHONPATH": os.pathsep.join(
        [os.path.join(REPO, "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    peers = (args.peers_python, clean_env())
    return {"mlwarp": (args.mlwarp_python, mlwarp_env), "mlwarp-1thread": (args.mlwarp_python, mlwarp_env),
            "warp": (args.warp_python, clean_env()), **{name: peers for name in
                                                          ("numba", "taichi", "jax", "jax-as-shipped", "torch",
                                                           "torch-1thread", "numpy")}}


def start(names, args):
    table = interpreters(args)
    workers = {}
    for name in names:
        python, env = table[name]
        workers[name] = worker = Worker(name, python, env) if python and os.path.exists(python) else None
        if worker is None:
            print(f"{name}: no interpreter ({python or 'none given'})", file=sys.stderr)
    for name, worker in workers.items():  # they load in parallel
        if worker is not None:
            first = worker.read()
            worker.info = first.get("ready")
            if worker.info is None:
                worker.error = first.get("unavailable") or first.get("error")
                print(f"{name}: unavailable: {worker.error}", file=sys.stderr)
    return {name: w for name, w in workers.items() if w is not None and w.info is not None}, workers


def check_positions(workers, dims, scratch):
    """{name: {dim: max abs difference from Warp's positions after CHECK_FRAMES frames, or None}}, and whether
    each final state is finite."""
    import numpy as np

    positions, finite = {}, {}
    for dim in dims:
        for name, worker in workers.items():
            out = os.path.join(scratch, f"{name}_{dim}.npy")
            answer = worker.request(cmd="check", dim=dim, frames=CHECK_FRAMES, out=out)
            if "error" in answer:
                print(f"{name} {dim}x{dim}: check failed:\n{answer['error']}", file=sys.stderr)
                continue
            positions[name, dim] = np.load(out)
            finite[name, dim] = bool(np.isfinite(positions[name, dim]).all())
            print(f"  {name} {dim}x{dim}: {CHECK_FRAMES} frames done", flush=True)
    differences = {}
    for name in workers:
        differences[name] = {}
        for dim in dims:
            mine, reference = positions.get((name, dim)), positions.get((REFERENCE, dim))
            differences[name][dim] = (None if mine is None or reference is None
                                      else float(np.abs(mine - reference).max()))
    return differences, finite


def time_rounds(workers, dims, rounds):
    """{name: {dim: (best wall s/frame, best CPU s/frame)}} over `rounds` rounds, the implementations taking turns
    in an order that rotates each round, and the load average after each round."""
    best = {name: {dim: [float("inf"), float("inf")] for dim in dims} for name in workers}
    names, loads = list(workers), []
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for dim in dims:
            frames = frames_per_batch(dim)
            for name in order:
                time.sleep(PAUSE_S)
                answer = workers[name].request(cmd="time", dim=dim, frames=frames)
                if "error" in answer:
                    print(f"{name} {dim}x{dim}: timing failed:\n{answer['error']}", file=sys.stderr)
                    continue
                best[name][dim][0] = min(best[name][dim][0], answer["wall"] / frames)
                best[name][dim][1] = min(best[name][dim][1], answer["cpu"] / frames)
        loads.append(os.getloadavg()[0])
        print(f"  round {r + 1}/{rounds} done (load average {loads[-1]:.2f})", flush=True)
    return {name: {dim: tuple(v if v != float("inf") else None for v in best[name][dim]) for dim in dims}
            for name in workers}, loads


def fmt_ms(seconds):
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def tables(names, loaded, all_workers, dims, timings, differences, finite, tolerance):
    sizes = " | ".join(f"{d}x{d}" for d in dims)
    lines = [f"| implementation | version | threads | {sizes} | max abs diff vs Warp ({', '.join(map(str, dims))}) "
             f"| agrees |", "| --- | --- | --- |" + " ---: |" * len(dims) + " --- | --- |"]
    cpu_lines = [f"| implementation | {sizes} |", "| --- |" + " ---: |" * len(dims)]
    flagged = []
    for name in names:
        label = LABELS.get(name, name)
        if name not in loaded:
            worker = all_workers.get(name)
            why = worker.error.splitlines()[-1] if worker is not None and worker.error else "no interpreter"
            lines.append(f"| {label} | - | - |" + " - |" * len(dims) + f" - | - ({why[:80]}) |")
            cpu_lines.append(f"| {label} |" + " - |" * len(dims))
            continue
        info = loaded[name].info
        wall = " | ".join(fmt_ms(timings[name][d][0]) for d in dims)
        cpu = " | ".join(fmt_ms(timings[name][d][1]) for d in dims)
        diffs = [differences[name][d] for d in dims]
        if name == REFERENCE:
            diff_text, agrees = "reference", "-"
        else:
            diff_text = " / ".join("-" if d is None else f"{d:.2g}" for d in diffs)
            bad = [d for d, x in zip(dims, diffs) if x is not None and not (x <= tolerance and finite[name, d])]
            if any(x is None for x in diffs):
                agrees = "not checked"
            elif bad:
                agrees = "**DISAGREES** at " + ", ".join(f"{d}x{d}" for d in bad)
                flagged.append(name)
            else:
                agrees = "yes"
        lines.append(f"| {label} | {info['version']} | {info['threads']} | {wall} | {diff_text} | {agrees} |")
        cpu_lines.append(f"| {label} | {cpu} |")
    return lines, cpu_lines, flagged


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impls", default=",".join(IMPLEMENTATIONS),
                        help="comma-separated, of " + ", ".join(LABELS))
    parser.add_argument("--dims", default="32,64,128")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=1e-3,
                        help="max abs position difference from Warp's after 60 frames, in metres (default 1e-3)")
    parser.add_argument("--mlwarp-python", default=os.environ.get("MLWARP_BENCH_MLWARP_PYTHON", sys.executable))
    parser.add_argument("--warp-python", default=os.environ.get("MLWARP_BENCH_WARP_PYTHON") or warp_python())
    parser.add_argument("--peers-python",
                        default=os.environ.get("MLWARP_BENCH_PEERS_PYTHON", "/tmp/peersvenv/bin/python"))
    parser.add_argument("--json", default="cloth_peers", help="bench/results/<name>.json")
    args = parser.parse_args()
    names = args.impls.split(",")
    unknown = [n for n in names if n not in LABELS]
    if unknown:
        parser.error(f"unknown implementation(s) {', '.join(unknown)}; known: {', '.join(LABELS)}")
    dims = [int(d) for d in args.dims.split(",")]
    if REFERENCE not in names:
        names.append(REFERENCE)  # the positions are checked against Warp's
    load_before = os.getloadavg()
    loaded, all_workers = start(names, args)
    try:
        with tempfile.TemporaryDirectory(prefix="cloth-peers-") as scratch:
            print(f"checking positions after {CHECK_FRAMES} frames (also the warm-up)", flush=True)
            differences, finite = check_positions(loaded, dims, scratch)
        print(f"timing: {args.rounds} rounds, frames per batch " +
              ", ".join(f"{d}x{d}: {frames_per_batch(d)}" for d in dims), flush=True)
        timings, round_loads = time_rounds(loaded, dims, args.rounds)
    finally:
        for worker in loaded.values():
            worker.close()
    load_after = os.getloadavg()
    sys.path.insert(0, BENCH)
    from run_all import cpu_description

    lines, cpu_lines, flagged = tables(names, loaded, all_workers, dims, timings, differences, finite,
                                       args.tolerance)
    header = [f"### Warp's cloth benchmark across frameworks (ms per frame of 16 substeps, best of {args.rounds} "
              f"interleaved rounds, lower is better)", "",
              f"{cpu_description()}, {os.cpu_count()} cores; load average (1 min) {load_before[0]:.2f} before, "
              f"{load_after[0]:.2f} after (rounds: {', '.join(f'{x:.2f}' for x in round_loads)}). Positions after "
              f"{CHECK_FRAMES} frames vs Warp's, tolerance {args.tolerance:g} m.", ""]
    footer = ["", "CPU time per frame (ms, the process's threads together; the machine's load left out):", "",
              *cpu_lines]
    print("\n".join(header + lines + footer))
    if flagged:
        print("\nflagged (positions differ from Warp's): " + ", ".join(flagged))
    save_json(args.json, {"table": header + lines + footer,
                          "data": {"load_before": load_before, "load_after": load_after, "round_loads": round_loads,
                                   "dims": dims, "check_frames": CHECK_FRAMES, "tolerance": args.tolerance,
                                   "flagged": flagged,
                                   "implementations": {name: {
                                       "info": loaded[name].info if name in loaded else None,
                                       "unavailable": None if name in loaded else getattr(
                                           all_workers.get(name), "error", "no interpreter"),
                                       "ms_per_frame": {d: fmt_ms(timings[name][d][0]) for d in dims}
                                       if name in loaded else None,
                                       "wall_s_per_frame": timings.get(name), "max_abs_diff_vs_warp":
                                       differences.get(name)} for name in names}}})


if __name__ == "__main__":
    main()
