"""One implementation of the cloth benchmark in its own interpreter, driven by cloth_peers.py over a pipe: one JSON
request a line on stdin, one JSON answer a line on the pipe that was stdout (stdout itself goes to stderr, so a
library's banner cannot break the protocol).

    python cloth_worker.py IMPLEMENTATION      (mlwarp, mlwarp-1thread, warp, numba, taichi, jax, torch, numpy;
                                               jax-as-shipped: JAX without its spring forces;
                                               torch-1thread)

Requests: {"cmd": "check", "dim": D, "frames": N, "out": PATH}: a fresh cloth, N frames, its positions saved to
PATH (.npy), the cloth kept for the timings; {"cmd": "time", "dim": D, "frames": N}: N more frames of that cloth,
wall and CPU (process) seconds; {"cmd": "quit"}. The first answer says what loaded (version, threads) or why not.
"""

import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cloth_setup import FRAME_DT, SUBSTEPS, Cloth  # noqa: E402


def load(name):
    """(make_integrator(cloth), description): the implementation's integrator class, its version and threads."""
    if name in ("mlwarp", "mlwarp-1thread", "warp"):
        if name == "warp":
            import warp as wp
        else:
            import mlwarp as wp
        wp.config.quiet = True
        wp.init()
        threads = "1 (Warp's CPU launches)" if name == "warp" else "all cores"
        if name == "mlwarp-1thread":
            wp.config.cpu_threads = 1
            threads = "1 (wp.config.cpu_threads = 1)"
        from impl_warp import integrator_class

        return integrator_class(wp), {"version": wp.__version__, "threads": threads}
    if name == "numba":
        import numba

        from impl_numba import NbIntegrator

        return NbIntegrator, {"version": numba.__version__, "threads": "1 (@njit, parallel=False)"}
    if name == "taichi":
        import taichi as ti

        import impl_taichi

        impl_taichi.init()
        return impl_taichi.TiIntegrator, {"version": ".".join(map(str, ti.__version__)),
                                          "threads": f"Taichi's default ({os.cpu_count()} cores)"}
    if name in ("jax", "jax-as-shipped"):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax

        from impl_jax import JxIntegrator, JxIntegratorAsShipped

        integrator = JxIntegrator if name == "jax" else JxIntegratorAsShipped
        return integrator, {"version": jax.__version__, "threads": f"XLA's default ({jax.devices()[0].platform})"}
    if name in ("torch", "torch-1thread"):
        import torch

        from impl_torch import TrIntegrator

        threads = f"{torch.get_num_threads()} (torch default)"
        if name == "torch-1thread":
            torch.set_num_threads(1)
            threads = "1 (torch.set_num_threads(1))"
        return TrIntegrator, {"version": torch.__version__, "threads": threads}
    if name == "numpy":
        import numpy

        from impl_numpy import NpIntegrator

        return NpIntegrator, {"version": numpy.__version__, "threads": "1"}
    raise SystemExit(f"unknown implementation {name!r}")


def main():
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def answer(payload):
        protocol.write(json.dumps(payload) + "\n")
        protocol.flush()

    try:
        make, info = load(sys.argv[1])
    except Exception as e:  # an implementation that does not import is reported, not fatal to the run
        answer({"unavailable": f"{type(e).__name__}: {e}"})
        return
    answer({"ready": info})
    import numpy as np

    integrators = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["cmd"] == "quit":
                break
            dim, frames = request["dim"], request["frames"]
            if request["cmd"] == "check":
                integrators[dim] = integrator = make(Cloth(dim))
                for _ in range(frames):
                    positions = integrator.simulate(FRAME_DT, SUBSTEPS)
                np.save(request["out"], np.asarray(positions, dtype=np.float32))
                answer({"ok": True})
            elif request["cmd"] == "time":
                integrator = integrators[dim]
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(frames):  # each frame returns the positions to the host, as benchmark_cloth.py's
                    integrator.simulate(FRAME_DT, SUBSTEPS)
                answer({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu})
        except Exception:
            answer({"error": traceback.format_exc()[-3000:]})


if __name__ == "__main__":
    main()
