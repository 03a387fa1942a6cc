"""A dynamic loop carrying state: `for s in range(n): v = v + a * wp.sin(v)`, v a float, n a kernel
argument, 4096 threads, n = 1000 and n = 100: forward time, backward time (wp.Tape around the
launch, loss = sum of the outputs by wp.atomic_add, `tape.zero(); tape.backward(loss)`) and their
ratio, for mlwarp and Warp; numpy runs the forward (float32, vectorised over the threads).

Checks: mlwarp's outputs against numpy's forward, and mlwarp's gradient dloss/dx at a few elements
against central finite differences of a float64 numpy forward (the script fails if they differ by
more than the tolerance). Warp's gradient is printed against the same finite differences but not
checked: Warp's adjoint of a dynamic loop does not replay the iterations' states (its loop
gradients are not exact), so its backward is cheap and its gradient wrong.

A single timed run that takes more than BUDGET_S seconds is not repeated (mlwarp's backward
at n = 1000 took about 25 s before the loop adjoint stored per-iteration states).

    python bench/dynamic_loop.py [n ...]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

THREADS = 4096
A = 0.002
TRIPS = [1000, 100]
ARGS = [a for a in sys.argv[1:] if a != "--warp"]
if ARGS:
    TRIPS = [int(a) for a in ARGS]
CHECK_ELEMENTS = [0, 1, 1000, 2047, 4095]
FD_STEP = 1e-6
GRAD_RTOL = 2e-3  # float32 forward (n roundings) against a float64 finite difference
OUT_ATOL = 1e-3
BUDGET_S = 3.0


def timed(fn, repeat=5):
    """Best of `repeat` runs after a warm-up; a run longer than BUDGET_S is taken once."""
    t = time.perf_counter()
    fn()
    best = time.perf_counter() - t
    if best > BUDGET_S:
        return best
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def start():
    import numpy as np

    return np.random.default_rng(0).uniform(-3.0, 3.0, THREADS).astype(np.float32)


def numpy_forward(x, n, dtype):
    import numpy as np

    v = np.array(x, dtype=dtype)
    a = dtype(A)
    for _ in range(n):
        v = v + a * np.sin(v)
    return v


def finite_difference(x0, n):
    """Central differences of the float64 forward at CHECK_ELEMENTS (each output depends on its input only)."""
    import numpy as np

    x = x0[CHECK_ELEMENTS].astype(np.float64)
    h = FD_STEP * np.maximum(1.0, np.abs(x))
    return (numpy_forward(x + h, n, np.float64) - numpy_forward(x - h, n, np.float64)) / (2 * h)


def measure(wp, device_kw):
    import numpy as np

    @wp.kernel
    def dynamic_loop(x: wp.array(dtype=float), a: float, n: int, y: wp.array(dtype=float),
                     loss: wp.array(dtype=float)):
        tid = wp.tid()
        v = x[tid]
        for s in range(n):
            v = v + a * wp.sin(v)
        y[tid] = v
        wp.atomic_add(loss, 0, v)

    x0 = start()

    def setup(n):
        """(forward, backward, x, y) for trip count n: backward replays the taped forward's adjoint."""
        x = wp.array(x0, dtype=float, requires_grad=True, **device_kw)
        y = wp.zeros(THREADS, dtype=float, requires_grad=True, **device_kw)
        loss = wp.zeros(1, dtype=float, requires_grad=True, **device_kw)

        def forward():
            loss.zero_()
            wp.launch(dynamic_loop, THREADS, inputs=[x, A, n], outputs=[y, loss], **device_kw)

        tape = wp.Tape()
        with tape:
            forward()

        def backward():
            tape.zero()
            tape.backward(loss)

        return forward, backward, x, y

    _, backward, _, _ = setup(1)  # compiles the forward and the adjoint (n is an argument): not timed
    backward()
    out = {}
    for n in TRIPS:
        forward, backward, x, y = setup(n)
        t_fwd = timed(forward)
        t_bwd = timed(backward)
        grad = x.grad.numpy()[CHECK_ELEMENTS]
        out[str(n)] = {"forward_ms": t_fwd * 1e3, "backward_ms": t_bwd * 1e3, "grad": [float(g) for g in grad],
                       "out_diff": float(np.abs(y.numpy() - numpy_forward(x0, n, np.float32)).max())}
    return out


def main():
    import numpy as np

    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    w = run_warp(__file__, *ARGS) or {}
    x0 = start()
    rows, notes, failed = [], [], []
    for n in TRIPS:
        mn, wn = m[str(n)], w.get(str(n), {})
        fd = finite_difference(x0, n)
        err = float(np.max(np.abs(np.array(mn["grad"]) - fd) / np.abs(fd)))
        line = (f"n = {n}: mlwarp's gradient at elements {CHECK_ELEMENTS} vs float64 central differences: max "
                f"relative error {err:.3g} (tolerance {GRAD_RTOL:g}); outputs vs numpy: max abs difference "
                f"{mn['out_diff']:.3g}")
        if wn:
            werr = float(np.max(np.abs(np.array(wn["grad"]) - fd) / np.abs(fd)))
            line += f"; Warp's gradient (not checked): max relative error {werr:.3g}"
        print(line)
        print(f"  finite differences {np.array2string(fd, precision=5)}, mlwarp {np.array2string(np.array(mn['grad']), precision=5)}"
              + (f", Warp {np.array2string(np.array(wn['grad']), precision=5)}" if wn else ""))
        notes.append(line)
        if not (err <= GRAD_RTOL and mn["out_diff"] <= OUT_ATOL):
            failed.append(n)
        t_np = timed(lambda: numpy_forward(x0, n, np.float32), repeat=3) * 1e3
        wf, wb = wn.get("forward_ms"), wn.get("backward_ms")
        rows += [
            (f"n = {n}: forward", mn["forward_ms"], t_np, wf),
            (f"n = {n}: backward (Tape.backward; Warp's loop gradient is not exact)", mn["backward_ms"], None, wb),
            (f"n = {n}: backward / forward (ratio)", mn["backward_ms"] / mn["forward_ms"], None,
             wb / wf if wf and wb else None),
        ]
    lines = print_table(f"Dynamic loop `v = v + a * wp.sin(v)`, {THREADS} threads", "ms; ratio for backward / forward",
                        rows, higher_is_better=False)
    lines += [""] + [f"- {note}" for note in notes]
    save_json("dynamic_loop", {"table": lines, "data": {"mlwarp": m, "warp": w or None}})
    if failed:
        raise SystemExit(f"FAILED: mlwarp's dynamic-loop gradient or outputs differ from numpy's at n = {failed}")


if __name__ == "__main__":
    main()
