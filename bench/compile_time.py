"""Compile time of a one-kernel module, each run in a fresh process: cold (empty kernel cache: the
first launch compiles, MLIR import included) and warm (cached: the first launch loads), plus the
whole process (interpreter start to exit) and `import` of the package. Best of several runs, mlwarp
and Warp taking turns (the shared machine's load then weighs on both alike).
"First launch" counts from just before the `@wp.kernel` definition: Warp parses the kernel's
source at definition, mlwarp at the first launch. The CPU-time rows add the first launch's CPU time in the
process and in the processes it waited for (mlwarp's forked compile, `ld`): on a loaded machine the wall
times above include the time other processes held the cores, the CPU times do not.
`MLWARP_BENCH_RUNS` sets the number of runs (5)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import clean_env, print_table, save_json, warp_python  # noqa: E402

RUNS = int(os.environ.get("MLWARP_BENCH_RUNS", "5"))

# The child: imports the package, times the kernel's definition + first launch (Warp parses the
# kernel's source when it is defined, mlwarp on the first launch), prints JSON.
CHILD = '''
import json, os, resource, sys, time


def cpu():  # this process's CPU time and that of its children waited for (mlwarp's forked compiles, `ld`)
    return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))


t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
if sys.argv[1] == "warp":
    import warp as wp
    wp.config.quiet = True
    wp.config.kernel_cache_dir = sys.argv[2]
    wp.init()
else:
    import os
    os.environ["MLWARP_CACHE_DIR"] = sys.argv[2]
    import mlwarp as wp
x = wp.array(np.ones(1024, np.float32), dtype=float, device="cpu")
y = wp.array(np.ones(1024, np.float32), dtype=float, device="cpu")
t2 = time.perf_counter()
c2 = cpu()

@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


wp.launch(saxpy, 1024, inputs=[x, y, 2.0], device="cpu")
t4 = time.perf_counter()
while True:  # a compile process that sent its result may still be exiting: its CPU time counts once it is reaped
    try:
        os.wait()
    except ChildProcessError:
        break
c4 = cpu()
assert float(y.numpy()[0]) == 3.0
print(json.dumps({"numpy_import": t1 - t0, "import": t2 - t1, "first_launch": t4 - t2, "first_launch_cpu": c4 - c2}))
'''


def run_child(py: str, which: str, cache: str, script: str) -> dict:
    t = time.perf_counter()
    env = clean_env()
    # A package's modules run from its byte-code cache, as they do installed (pip writes it): with
    # PYTHONDONTWRITEBYTECODE set (as here in development), every module edited since its .pyc was
    # written would be compiled from source in each child (~3 ms a module).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([py, script, which, cache], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"{which} child failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["process"] = wall
    return r


def measure(pythons: dict, folder: str) -> dict:
    """{which: {"cold": best child result, "warm": best child result}} (best of each figure). The
    implementations take turns, run by run, so that both see the shared machine's load alike."""
    scripts = {}
    for which in pythons:
        scripts[which] = os.path.join(folder, f"one_kernel_{which}.py")
        with open(scripts[which], "w") as f:
            f.write(CHILD)
    runs = {which: ([], []) for which in pythons}
    for i in range(RUNS):
        for which, py in pythons.items():
            cache = os.path.join(folder, f"cache-{which}-{i}")
            cold, warm = runs[which]
            cold.append(run_child(py, which, cache, scripts[which]))
            warm.append(run_child(py, which, cache, scripts[which]))
            shutil.rmtree(cache, ignore_errors=True)
    pick = lambda rs: {k: min(r[k] for r in rs) for k in rs[0]}  # noqa: E731  (best of each figure)
    return {which: {"cold": pick(cold), "warm": pick(warm)} for which, (cold, warm) in runs.items()}


def main():
    folder = tempfile.mkdtemp(prefix="mlwarp-bench-compile-")
    try:
        pythons = {"mlwarp": sys.executable}
        wpy = warp_python()
        if wpy:
            pythons["warp"] = wpy
        results = measure(pythons, folder)
        results.setdefault("warp", None)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    m, w = results["mlwarp"], results["warp"] or {}
    ms = lambda r, phase, key: r[phase][key] * 1e3 if r else None  # noqa: E731
    rows = [
        ("cold: kernel definition + first launch (compile, MLIR import included)", ms(m, "cold", "first_launch"), None,
         ms(w, "cold", "first_launch")),
        ("warm: kernel definition + first launch (kernel cache)", ms(m, "warm", "first_launch"), None, ms(w, "warm", "first_launch")),
        ("import of the package (+ wp.init for Warp)", ms(m, "warm", "import"), None, ms(w, "warm", "import")),
        ("whole process, cold", ms(m, "cold", "process"), None, ms(w, "cold", "process")),
        ("whole process, warm", ms(m, "warm", "process"), None, ms(w, "warm", "process")),
        # CPU time: what a loaded machine's scheduling adds to the wall times above is left out
        ("cold: first launch, CPU time (the process and its compile processes)", ms(m, "cold", "first_launch_cpu"),
         None, ms(w, "cold", "first_launch_cpu")),
        ("warm: first launch, CPU time", ms(m, "warm", "first_launch_cpu"), None, ms(w, "warm", "first_launch_cpu")),
    ]
    lines = print_table("Compile time, one-kernel module, fresh process", "ms", rows, higher_is_better=False)
    note = f"numpy import in the same processes: {m['warm']['numpy_import'] * 1e3:.0f} ms (in both columns)"
    print(note)
    save_json("compile_time", {"table": lines + ["", note], "data": results})


if __name__ == "__main__":
    main()
