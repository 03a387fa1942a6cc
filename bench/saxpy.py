"""saxpy `y = a*x + y` on float32 arrays of 1e6 and 1e7 elements, in GB/s (12 bytes per element:
x and y read, y written). References for the memory system, in the same run: OpenBLAS saxpy
(numpy's bundled OpenBLAS, all threads) and a C saxpy (stream_saxpy.c, `cc -O3 -march=native
-fopenmp`, best of one thread and all) when a C compiler is found."""


import ctypes
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, c_stream, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

SIZES = [10**6, 10**7]
BYTES_PER_ELEMENT = 12


def _timing(n):
    return dict(repeat=9, number=20) if n <= 10**6 else dict(repeat=9, number=3)


def warp_part():
    import warp as wp

    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    out = {}
    for n in SIZES:
        x, y = wp.ones(n, dtype=float, device="cpu"), wp.ones(n, dtype=float, device="cpu")
        wp.launch(saxpy, n, inputs=[x, y, 2.0], device="cpu")
        t = best_of(lambda: wp.launch(saxpy, n, inputs=[x, y, 2.0], device="cpu"), **_timing(n))
        out[str(n)] = BYTES_PER_ELEMENT * n / t / 1e9
    emit_warp(out)


def openblas_saxpy():
    """numpy's bundled OpenBLAS `saxpy` (multi-threaded): the memory-bandwidth reference."""
    import numpy as np

    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "libscipy_openblas*.so"))
    if not libs:
        return None
    lib = ctypes.CDLL(libs[0])
    f = getattr(lib, "scipy_cblas_saxpy64_", None)
    if f is None:
        return None
    f.argtypes = [ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
    f.restype = None
    return lambda n, a, x, y: f(n, a, x.ctypes.data, 1, y.ctypes.data, 1)


def main():
    if warp_mode():
        return warp_part()
    import numpy as np

    import mlwarp as wp

    @wp.kernel
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    blas = openblas_saxpy()
    c_ref = c_stream("stream_saxpy.c")
    rows, payload = [], {}
    for n in SIZES:
        x, y = wp.ones(n, dtype=float), wp.ones(n, dtype=float)
        wp.launch(saxpy, n, inputs=[x, y, 2.0])
        gbs = lambda t: BYTES_PER_ELEMENT * n / t / 1e9  # noqa: E731
        m = gbs(best_of(lambda: wp.launch(saxpy, n, inputs=[x, y, 2.0]), **_timing(n)))
        saved = wp.config.cpu_threads
        wp.config.cpu_threads = 1
        m1 = gbs(best_of(lambda: wp.launch(saxpy, n, inputs=[x, y, 2.0]), **_timing(n)))
        wp.config.cpu_threads = saved
        xn, yn, tmp = np.ones(n, np.float32), np.ones(n, np.float32), np.empty(n, np.float32)

        def numpy_saxpy():
            np.multiply(xn, np.float32(2.0), out=tmp)
            np.add(tmp, yn, out=yn)

        nps = gbs(best_of(numpy_saxpy, **_timing(n)))
        ref = gbs(best_of(lambda: blas(n, 2.0, xn, yn), **_timing(n))) if blas else None
        payload[str(n)] = {"mlwarp": m, "mlwarp_1_thread": m1, "numpy": nps, "openblas": ref,
                           "c_openmp": c_ref(n) if c_ref else None}
    warp = run_warp(__file__) or {}
    for n in SIZES:
        p = payload[str(n)]
        p["warp"] = warp.get(str(n))
        rows.append((f"saxpy {n:.0e}, all cores", p["mlwarp"], p["numpy"], p["warp"]))
        rows.append((f"saxpy {n:.0e}, 1 thread", p["mlwarp_1_thread"], p["numpy"], p["warp"]))
    lines = print_table("saxpy", "GB/s", rows, higher_is_better=True)
    for n in SIZES:
        p = payload[str(n)]
        refs = {k: p[k] for k in ("openblas", "c_openmp") if p[k]}
        if refs:
            best = max(refs, key=refs.get)
            mine = max(p["mlwarp"], p["mlwarp_1_thread"])
            note = (f"saxpy {n:.0e} references: " + ", ".join(
                f"{'OpenBLAS' if k == 'openblas' else 'C/OpenMP -O3 -march=native'} {v:.1f} GB/s" for k, v in refs.items())
                + f"; mlwarp's best reaches {100 * mine / refs[best]:.0f}% of the best")
            print(note)
            lines.append(f"\n{note}")
    save_json("saxpy", {"table": lines, "data": payload})


if __name__ == "__main__":
    main()
