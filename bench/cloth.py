"""Warp's cloth benchmark (warp/examples/benchmarks/benchmark_cloth.py, `warp_cpu` mode) without USD: a dim x dim
cloth (stretch, bend and shear springs, two fixed corners) stepped by Warp's own kernels (benchmark_cloth_warp.py:
`eval_springs` with vec3 atomics, `integrate_particles` that clears the forces), 16 substeps a frame, two launches
each. At 32 x 32 (1024 particles, 5,890 springs) a substep is tens of microseconds, so the cost of a launch and of
waking the other cores decides it: launches (`wp.launch` each substep), a frame captured once with
`wp.ScopedCapture` and replayed with `wp.capture_launch` (mlwarp only: Warp 1.19 captures graphs on CUDA devices
only), all cores and one thread (`wp.config.cpu_threads = 1`; Warp's CPU launches always run on one). In
microseconds per substep; both states after CHECK_FRAMES frames are compared with numpy's (the script fails if
they differ by more than the tolerance).

    python bench/cloth.py [dim ...]     (default: 32 and 128)
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from cloth_setup import Cloth  # noqa: E402
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402
from impl_warp import cloth_kernels  # noqa: E402

DIMS = [int(a) for a in sys.argv[1:] if a != "--warp"] or [32, 128]
SUBSTEPS = 16
DT = 1.0 / 60.0
FRAMES = 10  # per timed batch (Warp's benchmark times 60 one at a time)
ROUNDS = 7  # batches of each case, the cases taking turns
CHECK_FRAMES = 10
POS_TOLERANCE = 1e-3  # absolute; the cloth is 3.2 m (32 x 0.1) wide and falls ~1.4 m in CHECK_FRAMES frames


def cloth(dim):
    """benchmark_cloth.py's Cloth(lower=0, dx=dy=dim, radius=0.1, stiffness 1000, mass 0.1, fix_corners=True), as
    bench/peers/cloth_setup.py builds it: (positions, inverse masses, spring index pairs (flat), rest lengths,
    stiffnesses, dampings), in its order."""
    c = Cloth(dim)
    return (c.positions, c.inv_masses, c.spring_indices, c.spring_lengths, c.spring_stiffness, c.spring_damping)


def numpy_reference(dim, frames):
    """benchmark_cloth_numpy.py's integrator: the same steps on (N, 3) arrays, np.add.at for the scatter."""
    import numpy as np

    pos, w, pairs, rest, ke, kd = cloth(dim)
    i, j = pairs[0::2], pairs[1::2]
    vel = np.zeros_like(pos)
    g = np.where(w[:, None] > 0, np.array([0.0, -9.81, 0.0], np.float32), 0).astype(np.float32)
    h = np.float32(DT / SUBSTEPS)
    for _ in range(frames * SUBSTEPS):
        xij, vij = pos[i] - pos[j], vel[i] - vel[j]
        length = np.sqrt((xij * xij).sum(axis=1))
        direction = xij / length[:, None]
        fs = direction * (ke * (length - rest) + kd * (direction * vij).sum(axis=1))[:, None]
        f = np.zeros_like(pos)
        np.add.at(f, i, -fs)
        np.add.at(f, j, fs)
        vel = vel + (f * w[:, None] + g) * h
        pos = pos + vel * h
    return pos


def measure(wp, dims, can_capture):
    import numpy as np

    eval_springs, integrate_particles = cloth_kernels(wp)  # benchmark_cloth_warp.py's kernels

    def system(dim):
        pos, w, pairs, rest, ke, kd = cloth(dim)
        x = wp.array(pos, dtype=wp.vec3, device="cpu")
        v = wp.zeros(len(pos), dtype=wp.vec3, device="cpu")
        f = wp.zeros(len(pos), dtype=wp.vec3, device="cpu")
        arrays = [wp.array(a, dtype=t, device="cpu") for a, t in ((pairs, int), (rest, float), (ke, float),
                                                                   (kd, float))]
        inv_mass = wp.array(w, dtype=float, device="cpu")
        springs = len(rest)

        def frame():
            for _ in range(SUBSTEPS):
                wp.launch(eval_springs, springs, inputs=[x, v, *arrays, f], device="cpu")
                wp.launch(integrate_particles, len(pos), inputs=[x, v, f, inv_mass, DT / SUBSTEPS], device="cpu")

        return frame, x, springs

    def timed_cases(dim):
        """{case: seconds per substep}, the cases' batches taking turns (the shared machine's load then weighs on
        each alike): each case steps a cloth of its own."""
        cases = {}
        for threads in ("all", "one") if hasattr(wp.config, "cpu_threads") else ("all",):
            with thread_count(threads):
                frame, _, _ = system(dim)
                frame()  # compiles, and lets the launches learn their kernels' costs
                cases[f"{dim}_{threads}_launch"] = (threads, frame)
                if can_capture:
                    frame, _, _ = system(dim)
                    frame()
                    with wp.ScopedCapture(device="cpu") as capture:
                        frame()
                    cases[f"{dim}_{threads}_graph"] = (threads, lambda graph=capture.graph: wp.capture_launch(graph))
        best = dict.fromkeys(cases, float("inf"))
        cpu = dict.fromkeys(cases, float("inf"))
        for _ in range(ROUNDS):
            for key, (threads, run) in cases.items():
                with thread_count(threads):
                    started = time.process_time()
                    best[key] = min(best[key], best_of(lambda: [run() for _ in range(FRAMES)], repeat=1))
                    cpu[key] = min(cpu[key], time.process_time() - started)
        per_substep = lambda t: t / (FRAMES * SUBSTEPS) * 1e6  # noqa: E731
        return {**{key: per_substep(t) for key, t in best.items()},
                **{f"{key}_cpu": per_substep(t) for key, t in cpu.items()}}

    class thread_count:
        """All cores (the runtime's choice per launch), or one thread (wp.config.cpu_threads = 1)."""

        def __init__(self, threads):
            self.threads = threads

        def __enter__(self):
            if self.threads == "one":
                self.saved, wp.config.cpu_threads = wp.config.cpu_threads, 1

        def __exit__(self, *exc):
            if self.threads == "one":
                wp.config.cpu_threads = self.saved

    result = {}
    for dim in dims:
        result.update(timed_cases(dim))
        frame, x, springs = system(dim)  # the check: a fresh cloth, CHECK_FRAMES frames
        for _ in range(CHECK_FRAMES):
            frame()
        result[f"{dim}_pos_diff"] = float(np.abs(x.numpy() - numpy_reference(dim, CHECK_FRAMES)).max())
        result[f"{dim}_springs"] = springs
    return result


def check(name, result):
    for dim in DIMS:
        d = result[f"{dim}_pos_diff"]
        print(f"check: {name}, {dim}x{dim} cloth after {CHECK_FRAMES} frames vs numpy: max abs position difference "
              f"{d:.3g} (tolerance {POS_TOLERANCE:g})")
        if not d <= POS_TOLERANCE:
            raise SystemExit(f"FAILED: {name}'s cloth differs from numpy's")


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, DIMS, can_capture=False))
    import mlwarp as wp

    m = measure(wp, DIMS, can_capture=True)
    check("mlwarp", m)
    w = run_warp(__file__, *map(str, DIMS)) or {}
    if w:
        check("Warp", w)
    rows = []
    for dim in DIMS:
        what = f"{dim}x{dim} ({dim * dim} particles, {m[f'{dim}_springs']} springs)"
        warp_one = w.get(f"{dim}_all_launch")  # Warp's CPU launches run on one thread
        rows += [(f"{what}: launches, all cores", m[f"{dim}_all_launch"], None, warp_one),
                 (f"{what}: captured frame replayed (wp.capture_launch), all cores", m[f"{dim}_all_graph"], None,
                  warp_one),
                 (f"{what}: launches, one thread", m[f"{dim}_one_launch"], None, warp_one),
                 (f"{what}: captured frame replayed, one thread", m[f"{dim}_one_graph"], None, warp_one)]
    lines = print_table(f"Warp's cloth benchmark, {SUBSTEPS} substeps a frame, 2 launches a substep", "us per substep",
                        rows, higher_is_better=False)
    lines += ["", "CPU time per substep (all threads of the process; the machine's load left out), launches on one "
              "thread: " + ", ".join(f"{dim}: mlwarp {m[f'{dim}_one_launch_cpu']:.3g} us" +
                                     (f", Warp {w[f'{dim}_all_launch_cpu']:.3g} us" if w else "") for dim in DIMS)]
    lines += ["", "Warp's column: its launches (Warp 1.19 runs CPU launches on one thread and captures graphs on CUDA "
              "only). Positions after " + f"{CHECK_FRAMES} frames vs numpy (max abs difference): " +
              ", ".join(f"{dim}: mlwarp {m[f'{dim}_pos_diff']:.3g}" +
                        (f", Warp {w[f'{dim}_pos_diff']:.3g}" if w else "") for dim in DIMS)]
    save_json("cloth", {"table": lines, "data": {"mlwarp": m, "warp": w or None}})


if __name__ == "__main__":
    main()
