"""Warp's own example programs (warp-lang's warp/examples/<group>/example_*.py, unchanged) run under Warp and
under mlwarp, and their final states compared. A client check, not a test (it needs warp-lang):

    PYTHONPATH=$PWD/python .venv/bin/python bench/warp_examples.py table --warp-python /tmp/compatvenv/bin/python \
        [core.example_wave optim.example_particle_repulsion ...]      (default: every example in OPTIONS)

Each example runs in its own process through its own command line (`runpy`, as `python -m` would), with
`--device cpu --headless --stage-path None` and the few options below that keep it short on a CPU; under
mlwarp, `import warp` is mlwarp (bench/clients/warp_alias.py) and `warp.examples` is warp-lang's examples
package (the asset paths: its data, not part of the language). After the run, every `wp.array` attribute of
the objects the script built at module level (its `example`, `reference_example`, ...) and every module-level
`wp.array` is saved; `table` compares the two runs array by array and prints one row per example: whether it
ran under mlwarp, whether its arrays match Warp's (largest |warp - mlwarp| relative to max |warp| of that
array, `yes` under 1e-4, `close` under 1e-2), the first error, and the seconds of the script (after `import warp`
and `wp.init()`) and of the whole process (Warp imports everything at `import warp`; mlwarp loads its geometry,
sparse, ... on first use, inside the script's clock). One run of an example by hand:

    ... bench/warp_examples.py run mlwarp core.example_wave --out /tmp/wave_mlwarp

Timing, compile included (issue 36): `timing` runs each example as a whole process with an empty kernel cache
(cold) and again with it (warm), Warp and mlwarp taking turns, one process at a time, and prints wall and CPU
seconds and the Warp/mlwarp ratios (`--rounds N` keeps the best of N):

    PYTHONPATH=$PWD/python .venv/bin/python bench/warp_examples.py timing --warp-python /tmp/compatvenv/bin/python

USD examples need pxr and the checkpoint ones Pillow in both interpreters: `--warp-pythonpath` names a folder
(of links to the mlwarp venv's pxr, PIL and pillow.libs: same Python 3.11) for the Warp runs.

Measured 2026-12-06 (2 loaded cores, warp-lang 1.19.0 CPU), the 19 core and optim examples above:
- bit for bit or within 1e-4: dem, fdtd_3d, fft_poisson_navier_stokes_2d (FFT rounding, rel 1.2e-5), fluid,
  graph_capture, mesh, mesh_intersect, nvdb, raycast, sample_mesh, sph, wave, particle_repulsion,
  navier_stokes_perturbation (timed out at 600 s before tile_fft became a radix-2 FFT; Warp: ~1 min).
- close (1e-4..1e-2), explained: fluid_checkpoint(_custom_backward) -- mlwarp's CPU launches run on several
  threads, so float atomics (the adjoints' scatter) add in another order; with `--serial` both are within 1e-4.
  raymarch, diffray -- transcendentals are glibc's libmvec (1-2 ulp from scalar libm, by design; see
  compiler/targets/cpu/cpu_vector_math.py) and these programs amplify ulps (a finite-difference normal with
  eps 1e-5; two optimiser steps).
- geometry (2026-12-06, later): isosurface bit for bit; sparse_marching_cubes: the same triangles (index arrays
  equal since mlwarp triangulates with the classic table, as Warp), vertices within 3.2e-4 of the largest (8 of
  135890 vertices: the winding-number distance field's last bits, magnified by the interpolation between corners
  of nearly equal values); swept_volume runs (it keeps no arrays to compare).
- interop (JAX): example_jax_kernel and example_jax_callable run under mlwarp on the CPU and print the values their
  comments give; the Warp side needs jax in its venv (`--warp-pythonpath` to a folder with jax).
- not CPU programs: work_queue, spin_lock (cuda hard-coded); cupy, torch, custom_allocator, alloc_tracker,
  render_opengl are left out of OPTIONS.

The tile examples Warp runs on the CPU (2026-12-06, 2 loaded cores, both runs at once, kernel caches warm; seconds
of the script after `import warp` and `wp.init()`): block_cholesky (rel 7.4e-8), cholesky (rel 2.5e-16), matmul
and mcgp (bit for bit) all match; block_cholesky, cholesky, matmul 0.1 s under Warp, 0.1-0.4 under mlwarp (before
the wp.init() above, which moved mlwarp's 0.3 s of API loading out of the clock). mcgp, each run alone (load ~8 on
the 2 cores): Warp 26.6 s, mlwarp 58-64 s, all of it in the sphere_walk launches (random walks of mesh queries in a
tile_map); the same walks in a plain wp.launch kernel are 96 s against 56 s, so the walk (mesh queries, sphere
sampling) is the slow part, not the tiles. tile_nbody exits on the CPU, the others are CUDA programs.
"""

import argparse
import concurrent.futures
import importlib.util
import json
import os
import pathlib
import resource
import runpy
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

COMMON_OPTIONS = ["--device", "cpu", "--headless", "--stage-path", "None"]

# the options that keep each CPU-capable example to a few frames (Warp's own warp/tests/test_examples.py sizes)
OPTIONS = {
    "core.example_dem": ["--num-frames", "2"],
    "core.example_fdtd_3d": ["--resolution", "48", "--num-steps", "20", "--steps-per-frame", "10"],
    "core.example_fft_poisson_navier_stokes_2d": ["--num-steps", "4", "--sim-substeps", "2"],
    "core.example_fluid": ["--num-frames", "5"],
    "core.example_graph_capture": ["--num-frames", "10"],
    "core.example_mesh": ["--num-frames", "10"],
    "core.example_mesh_intersect": [],
    "core.example_nvdb": ["--num-frames", "10"],
    "core.example_raycast": ["--width", "128", "--height", "128"],
    "core.example_raymarch": ["--width", "128", "--height", "64"],
    "core.example_sample_mesh": ["--num-frames", "1"],
    "core.example_sph": ["--num-frames", "1"],
    "core.example_wave": ["--num-frames", "10"],
    "core.example_work_queue": [],
    "geometry.example_isosurface": ["--num-frames", "3"],
    "geometry.example_sparse_marching_cubes": ["--num-frames", "3"],
    "geometry.example_swept_volume": ["--num-samples", "6"],
    "interop.example_jax_callable": [],
    "interop.example_jax_kernel": [],
    "optim.example_diffray": ["--train-iters", "2", "--height", "64"],
    "optim.example_fluid_checkpoint": ["--train-iters", "1", "--num-frames", "5", "--pressure-iterations", "3"],
    "optim.example_fluid_checkpoint_custom_backward": [
        "--train-iters", "2", "--num-frames", "5", "--pressure-iterations", "3", "--segment-size", "3",
    ],
    "optim.example_navier_stokes_perturbation": ["--train-iters", "2", "--lead-steps", "5", "--spin-up-steps", "10"],
    "optim.example_particle_repulsion": ["--num-frames", "5"],
    # the tile examples Warp runs on the CPU, at its test_examples.py sizes (convolution, fft, filtering, mlp and
    # stream_compaction are CUDA programs: no --device option; nbody exits on the CPU)
    "tile.example_tile_block_cholesky": ["-N", "2"],
    "tile.example_tile_cholesky": [],
    "tile.example_tile_matmul": [],
    "tile.example_tile_mcgp": ["--height", "128", "--slices", "2"],
}

MATCH_TOLERANCE = 1e-4
CLOSE_TOLERANCE = 1e-2


def _install_mlwarp_as_warp(examples_root: pathlib.Path) -> None:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "clients"))
    import warp_alias

    warp_alias.install()
    spec = importlib.util.spec_from_file_location("warp.examples", examples_root / "__init__.py",
                                                  submodule_search_locations=[str(examples_root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["warp.examples"] = module
    spec.loader.exec_module(module)
    sys.modules["warp"].examples = module


def _collect_arrays(namespace: dict, wp) -> dict:
    arrays = {}

    def add(name, value):
        if isinstance(value, wp.array):
            arrays[name] = value.numpy()
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                if isinstance(item, wp.array):
                    add(f"{name}[{index}]", item)

    for global_name, value in namespace.items():
        if global_name.startswith("__"):
            continue
        if isinstance(value, wp.array):
            add(global_name, value)
        elif type(value).__module__ == "__main__" and hasattr(value, "__dict__"):
            for attribute, item in vars(value).items():
                add(f"{global_name}.{attribute}", item)
    return arrays


def run_example(impl: str, example: str, out_dir: str, examples_root: pathlib.Path) -> None:
    """Runs one example in this process and writes out_dir/state.npz and out_dir/result.json."""
    os.makedirs(out_dir, exist_ok=True)
    result = {"impl": impl, "example": example, "ok": False, "error": None}
    path = examples_root / example.replace(".", "/")
    path = path.with_suffix(".py")
    namespace = {}
    try:
        if impl == "mlwarp":
            _install_mlwarp_as_warp(examples_root)
        import warp as wp

        sys.argv = [str(path), *COMMON_OPTIONS, *OPTIONS.get(example, [])]
        previous = os.getcwd()
        os.chdir(out_dir)  # anything the example writes (images, USD) lands in the scratch folder
        wp.init()  # (both loaded before the clock starts: mlwarp loads its API on first use, 0.2-0.3 s)
        start = time.perf_counter()
        try:
            namespace = runpy.run_path(str(path), run_name="__main__")
        finally:
            os.chdir(previous)
        wp.synchronize()
        result["seconds"] = time.perf_counter() - start  # the script's run, its kernels' builds (or cache) included
        result["ok"] = True
        np.savez(os.path.join(out_dir, "state.npz"), **_collect_arrays(namespace, wp))
    except BaseException as error:  # noqa: BLE001 -- the harness reports whatever the example raised
        frames = traceback.extract_tb(error.__traceback__)
        where = next((f"{pathlib.Path(f.filename).name}:{f.lineno}" for f in reversed(frames)
                      if "example_" in f.filename), "")
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        result["error"] = f"{type(error).__name__}: {message} [{where}]"
        result["traceback"] = traceback.format_exc()
    with open(os.path.join(out_dir, "result.json"), "w") as file:
        json.dump(result, file, indent=1)


def compare_states(warp_npz: str, mlwarp_npz: str) -> tuple[str, str]:
    """('yes' | 'close' | 'no' | 'n/a', a one-line summary of the worst array)."""
    reference, candidate = np.load(warp_npz), np.load(mlwarp_npz)
    if not reference.files:
        return "n/a", "no arrays"
    worst, worst_text = -1.0, ""
    for name in reference.files:
        if name not in candidate.files:
            return "no", f"{name}: missing under mlwarp"
        x, y = reference[name], candidate[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            return "no", f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        if x.size == 0:
            continue
        if x.dtype.kind in "fc":
            x64, y64 = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), y.astype(x.dtype).astype(
                np.complex128 if x.dtype.kind == "c" else np.float64)
            nan_mismatch = np.any(np.isnan(x64) != np.isnan(y64))
            finite = ~np.isnan(x64)
            diff = float(np.max(np.abs(x64[finite] - y64[finite]), initial=0.0))
            scale = float(np.max(np.abs(x64[finite]), initial=0.0))
            relative = np.inf if nan_mismatch else diff / scale if scale > 0 else diff
        else:
            diff = float(np.count_nonzero(x != y))
            scale = float(x.size)
            relative = diff / scale
        if relative > worst:
            worst = relative
            worst_text = f"{name}: max|d|={diff:.3g} (max|warp|={scale:.3g}, rel {relative:.2g})"
    verdict = "yes" if worst <= MATCH_TOLERANCE else "close" if worst <= CLOSE_TOLERANCE else "no"
    return verdict, worst_text


def _run_child(python: str, impl: str, example: str, out_dir: str, env: dict, timeout: float) -> dict:
    command = [python, os.path.abspath(__file__), "run", impl, example, "--out", out_dir]
    start = time.perf_counter()
    try:
        completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timeout after {timeout:.0f} s"}
    process_seconds = time.perf_counter() - start
    result_path = os.path.join(out_dir, "result.json")
    if not os.path.exists(result_path):
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or [""]
        return {"ok": False, "error": f"process exited {completed.returncode}: {tail[0]}"}
    with open(result_path) as file:
        result = json.load(file)
    result["process_seconds"] = process_seconds  # the whole process: imports (Warp's eager, mlwarp's lazy) too
    return result


def table(examples, warp_python: str, warp_pythonpath: str | None, timeout: float, keep: str | None,
          serial: bool = False) -> None:
    scratch = keep or tempfile.mkdtemp(prefix="warp_examples_")
    mlwarp_env = dict(os.environ)
    # mlwarp's modules run from their byte code, as installed (pip writes it; warp-lang's are): a development
    # environment's PYTHONDONTWRITEBYTECODE would have each run compile its edited modules from source
    mlwarp_env.pop("PYTHONDONTWRITEBYTECODE", None)
    if serial:
        mlwarp_env["MLWARP_NUM_THREADS"] = "1"
    warp_env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if warp_pythonpath:
        warp_env["PYTHONPATH"] = warp_pythonpath
    rows = []
    for example in examples:
        dirs = {impl: os.path.join(scratch, example, impl) for impl in ("warp", "mlwarp")}
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            warp_future = pool.submit(_run_child, warp_python, "warp", example, dirs["warp"], warp_env, timeout)
            mlwarp_future = pool.submit(_run_child, sys.executable, "mlwarp", example, dirs["mlwarp"], mlwarp_env,
                                        timeout)
            warp_result, mlwarp_result = warp_future.result(), mlwarp_future.result()
        if not warp_result["ok"]:
            row = (example, "-", "-", f"fails under Warp too: {warp_result['error']}")
        elif not mlwarp_result["ok"]:
            row = (example, "no", "-", mlwarp_result["error"])
        else:
            verdict, worst = compare_states(os.path.join(dirs["warp"], "state.npz"),
                                            os.path.join(dirs["mlwarp"], "state.npz"))
            row = (example, "yes", verdict, worst)
        row += (_seconds(warp_result), _seconds(mlwarp_result), _seconds(warp_result, "process_seconds"),
                _seconds(mlwarp_result, "process_seconds"))
        rows.append(row)
        print(" | ".join(row), flush=True)
    print(f"\n(states and tracebacks under {scratch})\n")
    print("| example | runs under mlwarp? | matches Warp? | first error / worst array | Warp s | mlwarp s "
          "| Warp process s | mlwarp process s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")


def timing(examples, warp_python: str, warp_pythonpath: str | None, timeout: float, rounds: int) -> None:
    """Whole-process seconds of each example under Warp and mlwarp, compile included: each runs with an empty
    kernel cache of its own (cold: every kernel compiled) and again with that cache (warm), one process at a time,
    the implementations taking turns; `rounds` times, the best kept. Wall seconds and CPU seconds (the process
    and the processes it waited for: mlwarp's compile processes and `ld`), which other jobs on a shared machine
    inflate less. cold - warm is what compiling cost."""
    scratch = tempfile.mkdtemp(prefix="warp_examples_timing_")
    envs = {"mlwarp": dict(os.environ), "warp": {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}}
    envs["mlwarp"].pop("PYTHONDONTWRITEBYTECODE", None)  # byte code, as installed (see table())
    if warp_pythonpath:
        envs["warp"]["PYTHONPATH"] = warp_pythonpath
    pythons = {"warp": warp_python, "mlwarp": sys.executable}
    cache_variable = {"warp": "WARP_CACHE_PATH", "mlwarp": "MLWARP_CACHE_DIR"}
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    header = ("| example | Warp cold s (CPU) | mlwarp cold s (CPU) | cold ratio (CPU) | Warp warm s | mlwarp warm s "
              "| warm ratio | compile s, Warp / mlwarp |")
    lines = []
    for example in examples:
        best = {}
        for round_ in range(rounds):
            for impl in ("warp", "mlwarp"):
                cache = os.path.join(scratch, "caches", f"{example}-{impl}-{round_}")
                env = dict(envs[impl], **{cache_variable[impl]: cache})
                for phase in ("cold", "warm"):
                    out = os.path.join(scratch, example, impl, f"{phase}{round_}")
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    result = _run_child(pythons[impl], impl, example, out, env, timeout)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    if not result.get("ok"):
                        best[(impl, phase)] = None
                        print(f"{example} {impl} {phase}: {result.get('error')}", flush=True)
                        continue
                    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                    wall = result["process_seconds"]
                    known = best.get((impl, phase), (float("inf"), float("inf")))
                    if known is not None:
                        best[(impl, phase)] = (min(known[0], wall), min(known[1], cpu))

        def cell(impl, phase, with_cpu=True):
            value = best.get((impl, phase))
            return "-" if value is None else f"{value[0]:.2f} ({value[1]:.2f})" if with_cpu else f"{value[0]:.2f}"

        def ratio(phase, with_cpu=True):
            w, m = best.get(("warp", phase)), best.get(("mlwarp", phase))
            if w is None or m is None:
                return "-"
            return f"{w[0] / m[0]:.2f}x ({w[1] / m[1]:.2f}x)" if with_cpu else f"{w[0] / m[0]:.2f}x"

        def compile_seconds(impl):
            cold, warm = best.get((impl, "cold")), best.get((impl, "warm"))
            return "-" if cold is None or warm is None else f"{max(cold[0] - warm[0], 0.0):.2f}"

        line = (f"| {example} | {cell('warp', 'cold')} | {cell('mlwarp', 'cold')} | {ratio('cold')} | "
                f"{cell('warp', 'warm', False)} | {cell('mlwarp', 'warm', False)} | {ratio('warm', False)} | "
                f"{compile_seconds('warp')} / {compile_seconds('mlwarp')} |")
        lines.append(line)
        print(line, flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}; runs under {scratch}\n")
    print(header)
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))


def _seconds(result: dict, key: str = "seconds") -> str:
    return f"{result[key]:.1f}" if result.get(key) is not None else "-"


def _default_examples_root(warp_python: str) -> pathlib.Path:
    output = subprocess.run([warp_python, "-c", "import warp.examples, os; print(os.path.dirname(warp.examples.__file__))"],
                            capture_output=True, text=True, check=True).stdout
    return pathlib.Path(output.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run one example in this process")
    run_parser.add_argument("impl", choices=("warp", "mlwarp"))
    run_parser.add_argument("example", help="group.example_name, e.g. core.example_wave")
    run_parser.add_argument("--out", required=True)
    run_parser.add_argument("--examples-root", help="warp-lang's warp/examples folder")
    table_parser = commands.add_parser("table", help="run examples under both and compare")
    table_parser.add_argument("examples", nargs="*")
    table_parser.add_argument("--warp-python", default="/tmp/compatvenv/bin/python")
    table_parser.add_argument("--warp-pythonpath", help="PYTHONPATH for the Warp runs (e.g. a folder holding pxr)")
    table_parser.add_argument("--serial", action="store_true",
                              help="mlwarp launches on one CPU thread (float atomics in Warp's CPU order)")
    table_parser.add_argument("--timeout", type=float, default=1200.0)
    table_parser.add_argument("--keep", help="folder for the runs' states (default: a new temporary folder)")
    timing_parser = commands.add_parser("timing", help="whole-process seconds, cold and warm kernel caches")
    timing_parser.add_argument("examples", nargs="*")
    timing_parser.add_argument("--warp-python", default="/tmp/compatvenv/bin/python")
    timing_parser.add_argument("--warp-pythonpath", help="PYTHONPATH for the Warp runs (e.g. a folder holding pxr)")
    timing_parser.add_argument("--timeout", type=float, default=1200.0)
    timing_parser.add_argument("--rounds", type=int, default=1, help="runs of each case (the best is kept)")
    options = parser.parse_args()
    if options.command == "timing":
        os.environ["WARP_EXAMPLES_ROOT"] = str(_default_examples_root(options.warp_python))
        timing(options.examples or list(OPTIONS), options.warp_python, options.warp_pythonpath, options.timeout,
               options.rounds)
    elif options.command == "run":
        root = pathlib.Path(options.examples_root) if options.examples_root else None
        if root is None:
            if options.impl == "warp":
                import warp.examples

                root = pathlib.Path(warp.examples.__file__).parent
            else:
                root = pathlib.Path(os.environ.get("WARP_EXAMPLES_ROOT", ""))
        run_example(options.impl, options.example, options.out, root)
    else:
        root = _default_examples_root(options.warp_python)
        os.environ["WARP_EXAMPLES_ROOT"] = str(root)
        table(options.examples or list(OPTIONS), options.warp_python, options.warp_pythonpath, options.timeout, options.keep,
              options.serial)


if __name__ == "__main__":
    main()
