"""2-D heat diffusion on a 256x256 plate, as a Warp user writes it.

Runs an explicit 5-point stencil for 500 steps with mlwarp, checks the result
against the same scheme in numpy, and prints what it computed with the
compile and run times.
"""

import time

import numpy as np

import mlwarp as wp

N = 256
STEPS = 500
ALPHA = 0.2  # diffusion number: stable for <= 0.25


@wp.kernel
def diffuse(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float), alpha: float):
    i, j = wp.tid()
    n = src.shape[0]
    m = src.shape[1]
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        dst[i, j] = src[i, j]  # fixed-temperature boundary
        return
    lap = src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1] - 4.0 * src[i, j]
    dst[i, j] = src[i, j] + alpha * lap


def initial_plate():
    t = np.zeros((N, N), dtype=np.float32)
    t[N // 4: N // 2, N // 4: N // 2] = 100.0  # a hot square
    t[:, 0] = 50.0  # a warm left edge
    return t


def numpy_reference(t):
    t = t.copy()
    for _ in range(STEPS):
        lap = t[:-2, 1:-1] + t[2:, 1:-1] + t[1:-1, :-2] + t[1:-1, 2:] - np.float32(4.0) * t[1:-1, 1:-1]
        nxt = t.copy()
        nxt[1:-1, 1:-1] = t[1:-1, 1:-1] + np.float32(ALPHA) * lap
        t = nxt
    return t


def main():
    wp.init()
    a = wp.array(initial_plate(), dtype=float)
    b = wp.zeros((N, N), dtype=float)

    t0 = time.perf_counter()
    wp.launch(diffuse, dim=(N, N), inputs=[a, b, ALPHA])  # first launch compiles (or loads the cache)
    first = time.perf_counter() - t0
    a, b = b, a

    t0 = time.perf_counter()
    for _ in range(STEPS - 1):
        wp.launch(diffuse, dim=(N, N), inputs=[a, b, ALPHA])
        a, b = b, a
    wp.synchronize()
    run = time.perf_counter() - t0

    result = a.numpy()
    t0 = time.perf_counter()
    expected = numpy_reference(initial_plate())
    numpy_time = time.perf_counter() - t0
    err = float(np.max(np.abs(result - expected)))

    print(f"heat diffusion, {N}x{N} plate, {STEPS} steps")
    print(f"  centre temperature   {result[N // 2, N // 2]:.4f}")
    hot = tuple(int(k) for k in np.unravel_index(result.argmax(), result.shape))
    print(f"  hottest point        {result.max():.4f} at {hot}")
    print(f"  mean temperature     {result.mean():.4f}")
    print(f"  max |mlwarp - numpy| {err:.3g}")
    print(f"  first launch (compile or cache load) {first * 1e3:.1f} ms")
    print(f"  {STEPS - 1} launches {run * 1e3:.1f} ms ({run / (STEPS - 1) * 1e6:.1f} us/step); "
          f"numpy {numpy_time / STEPS * 1e6:.1f} us/step")
    if err > 1e-3:
        raise SystemExit("mlwarp and numpy disagree")


if __name__ == "__main__":
    main()
