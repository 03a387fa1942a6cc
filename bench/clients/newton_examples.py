"""Newton (PyPI `newton` 1.8.0, a physics engine on Warp) runs its examples' first frames on Warp or on mlwarp,
unchanged: under `mlwarp`, `import warp` is made to be mlwarp (bench/clients/warp_alias.py) before Newton is
imported. A client check, not a test (it needs newton, and warp-lang for the comparison):

    .venv/bin/pip download --no-deps -d /tmp/clients/dl newton==1.8.0
    (cd /tmp/clients && mkdir -p site && cd site && unzip -qo ../dl/newton-*.whl)
    PYTHONPATH=/tmp/clients/site .venv/bin/python bench/clients/newton_examples.py mlwarp basic_pendulum 5 \
        --save /tmp/pendulum_mlwarp.npz
    PYTHONPATH=/tmp/clients/site /path/to/warp-venv/bin/python bench/clients/newton_examples.py warp \
        basic_pendulum 5 --save /tmp/pendulum_warp.npz
    python bench/clients/newton_examples.py compare /tmp/pendulum_warp.npz /tmp/pendulum_mlwarp.npz

An example is a module of newton.examples (`basic_pendulum` is newton/examples/basic/example_basic_pendulum.py),
built with a null viewer on the CPU and stepped `frames` frames (each of its substeps); `--arg name=value`
sets one of its command-line options (`--arg solver=xpbd`); `--no-graph` steps it without the graph it
captured (launch by launch). The state's arrays (body_q, body_qd, particle_q,
particle_qd, joint_q, joint_qd: those the model has) are printed as norms and saved for `compare`, which
prints the largest difference of each, also relative to the largest value and as a norm ratio. The wall times are the example's construction (kernels compiled on
its first launches; run twice for warm-cache times) and its frames.

Measured 2026-12-06 (AMD EPYC, 2 cores, heavily loaded: load average 10-15, so times are rough; warp-lang 1.19.0
CPU; "cold" = kernels compiled during the run). `compare` prints max |warp - mlwarp|, that over max |warp|, and
the norm of the difference over the norm of Warp's state:
- basic_pendulum (SolverXPBD, collision pipeline, CPU graph capture), 5 frames of 10 substeps: body_q and
  body_qd equal to Warp's bit for bit; construction 243 s under mlwarp (cold), 319 s under Warp (cold).
- basic_mimic_joint (SolverXPBD, a mimic joint), 5 frames: body_q, body_qd equal to Warp's bit for bit;
  mlwarp construction 136 s + 5 frames 696 s, Warp 16 s + 321 s (both compiling kernels during the run).
- diffsim_spring_cage (SolverSemiImplicit, wp.Tape backward under ScopedCapture), 5 training iterations:
  particle_q, particle_qd, the trained spring_rest_length and the loss equal to Warp's bit for bit; mlwarp
  construction 62 s + 5 iterations 100 s, Warp 199 s + 4 s (both compiling kernels during the run).
- cloth_hanging (SolverVBD, 64x32 cloth), 2 frames: particle_q |d|/|q| = 7.0e-08 (max |d| 3.6e-06 of 6.4),
  particle_qd |d|/|qd| = 1.9e-04 (max |d| 4.3e-04 of 0.365): float32 rounding, 40% of the positions differ in
  their last bits and the velocity divides that by the substep; mlwarp construction 308 s + 2 frames 420 s,
  Warp 868 s + 19 s (both cold).
- basic_joints (SolverXPBD, the GJK/MPR narrow phase), 2 frames: body_q |d|/|q| = 1.3e-08, joint_q 3.2e-08, body_qd
  3.0e-04 (max |d| 7.9e-05 of 0.196); mlwarp construction 66 s + 2 frames 867 s (the narrow phase compiled on the
  first step), Warp 13 s + 0.0 s (kernels cached).
- basic_shapes: not compared yet (Warp's own run stopped twice, most likely as another process cleared the shared kernel
  cache, "LLVM ERROR: IO failure on output stream"; body_q norm 12.0467014 measured before). On a shared machine
  give each run its own cache: MLWARP_CACHE_DIR=... for mlwarp.
"""

import argparse
import importlib
import os
import pathlib
import sys
import time

import numpy as np

STATE_ARRAYS = ("body_q", "body_qd", "particle_q", "particle_qd", "joint_q", "joint_qd")
TRAINED_ARRAYS = ("spring_rest_length",)  # model parameters a diffsim example optimizes (each frame a step)


def _compare(path_a: str, path_b: str) -> None:
    a, b = np.load(path_a), np.load(path_b)
    for name in a.files:
        if name not in b.files:
            print(f"{name}: only in {path_a}")
            continue
        x, y = a[name], b[name]
        if x.shape != y.shape:
            print(f"{name}: shapes {x.shape} and {y.shape}")
            continue
        scale = float(np.max(np.abs(x))) if x.size else 0.0
        diff = float(np.max(np.abs(x - y))) if x.size else 0.0
        relative = diff / scale if scale else diff
        norm = float(np.linalg.norm(x.astype(np.float64)))
        norm_relative = float(np.linalg.norm(x.astype(np.float64) - y)) / norm if norm else diff
        print(f"{name}: max |a - b| = {diff:.3g} (max |a| = {scale:.3g}, relative {relative:.3g}); "
              f"|a - b| / |a| = {norm_relative:.3g}")


def _find_example(name: str):
    import newton.examples

    root = pathlib.Path(newton.examples.__file__).parent
    for path in sorted(root.glob("*/example_*.py")):
        if path.stem == f"example_{name}":
            return importlib.import_module(f"newton.examples.{path.parent.name}.{path.stem}")
    raise SystemExit(f"no Newton example named {name!r} under {root}")


def main() -> None:
    if sys.argv[1:2] == ["compare"]:
        return _compare(*sys.argv[2:4])
    parser = argparse.ArgumentParser()
    parser.add_argument("impl", choices=("warp", "mlwarp"))
    parser.add_argument("example")
    parser.add_argument("frames", type=int, nargs="?", default=5)
    parser.add_argument("--arg", action="append", default=[], help="an option of the example: name=value")
    parser.add_argument("--save", help="an .npz file for the final state")
    parser.add_argument("--no-graph", action="store_true", help="step without the graph the example captured")
    options = parser.parse_args()
    if options.impl == "mlwarp":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import warp_alias

        warp_alias.install()

    import warp as wp

    wp.config.quiet = True
    import newton.examples
    import newton.viewer

    module = _find_example(options.example)
    example_parser = newton.examples.create_parser()
    for owner in (module, module.Example):  # a module function, or (most examples) a static method of Example
        if hasattr(owner, "create_parser"):
            example_parser = owner.create_parser()
            break
    argv = ["--viewer", "null", "--device", "cpu", "--num-frames", str(options.frames)]
    for item in options.arg:
        key, _, value = item.partition("=")
        argv += [f"--{key}", value] if value else [f"--{key}"]
    args, _ = example_parser.parse_known_args(argv)
    wp.set_device("cpu")
    start = time.perf_counter()
    example = module.Example(newton.viewer.ViewerNull(num_frames=options.frames), args)
    built = time.perf_counter()
    if options.no_graph and getattr(example, "graph", None) is not None:
        example.graph = None
    for _ in range(options.frames):
        example.step()
    done = time.perf_counter()
    # the simulated state: state_0 (most examples) or the last of a trajectory's states (the diffsim examples)
    state = example.state_0 if hasattr(example, "state_0") else example.states[-1]
    saved = {}
    arrays = [(name, getattr(state, name, None)) for name in STATE_ARRAYS]
    arrays += [(name, getattr(example.model, name, None)) for name in TRAINED_ARRAYS]
    arrays.append(("loss", getattr(example, "loss", None)))
    for name, array in arrays:
        if array is not None and array.size:
            saved[name] = array.numpy()
            print(f"{name}: shape {saved[name].shape}, norm {np.linalg.norm(saved[name]):.9g}")
    print(f"construction {built - start:.2f} s, {options.frames} frames {done - built:.2f} s")
    if options.save:
        np.savez(options.save, **saved)


if __name__ == "__main__":
    main()
