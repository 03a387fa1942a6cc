"""GPU smoke test: compile here (MLIR, no GPU), run on a GPU machine (no MLIR).

    python bench/gpu_smoke.py compile [--out bench/gpu_cache] [--arch 90]
        compiles the kernels below for sm_<arch> (PTX + cubin) into a small folder to carry along.
    python bench/gpu_smoke.py run [--dir bench/gpu_cache]
        on the GPU machine (numpy + cuda-python; torch/cupy optional): loads them with
        wp.load_aot_module (no compiler), runs each, checks against numpy, and prints saxpy
        bandwidth and launch overhead (torch's own figures beside them when torch is there).
        Exits 1 if a check fails. The geometry checks (a wp.Mesh ray cast, wp.HashGrid neighbour
        counts) also need the compiler there: mlwarp builds the structures on the host with CPU
        kernels; without it they are reported as SKIP.

The script works from a plain checkout: when `import mlwarp` fails it maps the repository's
folders to the `mlwarp` package itself (a symlink tree in a temporary folder), so the GPU machine
needs no `pip install`. Kernels are found by the same cache keys as here: the key hashes the
kernel source and the compiler's .py files, which the checkout has, not the MLIR wheels.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _import_mlwarp():
    try:
        import mlwarp  # noqa: F401
    except ImportError:  # a plain checkout on a GPU machine: the package is the repo's python/mlwarp/ folder
        sys.path.insert(0, os.path.join(REPO, "python"))
    import mlwarp

    return mlwarp


wp = _import_mlwarp()
import numpy as np  # noqa: E402
from mlwarp.launching import cuda_compile  # noqa: E402


@wp.kernel
def saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def noop(x: wp.array(dtype=wp.float32)):
    i = wp.tid()


@wp.kernel
def math_f32(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.sin(v)
    out[i, 1] = wp.cos(v)
    out[i, 2] = wp.exp(v)
    out[i, 3] = wp.log(v)
    out[i, 4] = wp.sqrt(v)
    out[i, 5] = v ** 1.5


@wp.kernel
def index_3d(out: wp.array(dtype=wp.int32, ndim=3)):
    i, j, k = wp.tid()
    out[i, j, k] = i * 100 + j * 10 + k


@wp.kernel
def histogram(values: wp.array(dtype=wp.int32), bins: wp.array(dtype=wp.int32), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(bins, values[i] % 16, 1)
    wp.atomic_add(total, 0, wp.float64(0.25))


@wp.kernel
def mesh_ray_cast(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
                  ts: wp.array(dtype=wp.float32), faces: wp.array(dtype=wp.int32)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
    if q.result:
        ts[i] = q.t
        faces[i] = q.face


@wp.kernel
def grid_neighbour_count(grid: wp.uint64, points: wp.array(dtype=wp.vec3), radius: wp.float32,
                         counts: wp.array(dtype=wp.int32)):
    i = wp.tid()
    p = points[i]
    n = int(0)
    for j in wp.hash_grid_query(grid, p, radius):
        if wp.length(points[j] - p) <= radius:
            n += 1
    counts[i] = n


GEMM_TM, GEMM_TN, GEMM_TK = wp.constant(32), wp.constant(32), wp.constant(16)
GEMM_BLOCK = 128


@wp.kernel
def tile_gemm(A: wp.array2d(dtype=wp.float32), B: wp.array2d(dtype=wp.float32), C: wp.array2d(dtype=wp.float32)):
    # the GEMM of Warp's tile documentation: a block's lanes share its tiles (shared memory, warp-gpu-cooperative-tiles)
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(GEMM_TM, GEMM_TN), dtype=wp.float32)
    count = int(A.shape[1] / GEMM_TK)
    for k in range(0, count):
        a = wp.tile_load(A, shape=(GEMM_TM, GEMM_TK), offset=(i * GEMM_TM, k * GEMM_TK))
        b = wp.tile_load(B, shape=(GEMM_TK, GEMM_TN), offset=(k * GEMM_TK, j * GEMM_TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * GEMM_TM, j * GEMM_TN))


KERNELS = [saxpy, noop, math_f32, index_3d, histogram, tile_gemm, mesh_ray_cast, grid_neighbour_count]
DEFAULT_DIR = os.path.join(REPO, "bench", "gpu_cache")


def compile_all(out: str, arch: int) -> None:
    t = time.perf_counter()
    folders = wp.compile_aot_module(KERNELS, arch=arch, module_dir=out)
    size = sum(os.path.getsize(os.path.join(d, f)) for d in folders for f in os.listdir(d))
    print(f"compiled {len(folders)} kernels for sm_{arch} into {out} ({size / 1024:.0f} KiB) in "
          f"{time.perf_counter() - t:.1f} s")


class Checks:
    def __init__(self):
        self.failed = 0

    def __call__(self, name, fn):
        try:
            fn()
            print(f"PASS {name}")
        except Exception as e:  # report every check, fail at the end
            self.failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {str(e).strip()[:800]}")


def run_checks(dev) -> int:
    check = Checks()

    def t_saxpy():
        xs, ys = np.random.default_rng(0).standard_normal((2, 100_003)).astype(np.float32)
        x, y = wp.array(xs, device=dev), wp.array(ys, device=dev)
        wp.launch(saxpy, dim=len(xs), inputs=[x, y, 2.0], device=dev)
        np.testing.assert_allclose(y.numpy(), 2.0 * xs + ys, rtol=1e-6)

    def t_math():
        xs = np.linspace(0.1, 3.0, 1000, dtype=np.float32)
        out = wp.zeros((1000, 6), dtype=wp.float32, device=dev)
        wp.launch(math_f32, dim=1000, inputs=[wp.array(xs, device=dev), out], device=dev)
        expect = np.stack([np.sin(xs), np.cos(xs), np.exp(xs), np.log(xs), np.sqrt(xs), xs ** 1.5], 1)
        np.testing.assert_allclose(out.numpy(), expect, rtol=2e-6, atol=1e-6)

    def t_index():
        out = wp.zeros((7, 9, 11), dtype=wp.int32, device=dev)
        wp.launch(index_3d, dim=(7, 9, 11), inputs=[out], device=dev, block_dim=64, max_blocks=2)
        i, j, k = np.indices((7, 9, 11))
        np.testing.assert_array_equal(out.numpy(), i * 100 + j * 10 + k)

    def t_atomics():
        values = np.arange(1 << 20, dtype=np.int32)
        bins = wp.zeros(16, dtype=wp.int32, device=dev)
        total = wp.zeros(1, dtype=wp.float64, device=dev)
        wp.launch(histogram, dim=len(values), inputs=[wp.array(values, device=dev), bins, total], device=dev)
        np.testing.assert_array_equal(bins.numpy(), np.full(16, len(values) // 16))
        assert total.numpy()[0] == 0.25 * len(values), total.numpy()

    def t_tile_gemm():
        m, n, k = 256, 192, 320
        rng = np.random.default_rng(3)
        a0, b0 = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
        c = wp.zeros((m, n), dtype=wp.float32, device=dev)
        assert tile_gemm.compiled(dev).meta["tile_launch"]["cooperative"], tile_gemm.compiled(dev).meta
        wp.launch_tiled(tile_gemm, dim=(m // GEMM_TM, n // GEMM_TN), inputs=[wp.array(a0, device=dev),
                        wp.array(b0, device=dev), c], block_dim=GEMM_BLOCK, device=dev)
        np.testing.assert_allclose(c.numpy(), a0.astype(np.float64) @ b0, rtol=1e-4, atol=1e-3)

    def t_copies():
        src = wp.array(np.arange(1000, dtype=np.float32), device="cpu")
        d = wp.zeros(1000, dtype=wp.float32, device=dev)
        s = wp.Stream(dev)
        wp.copy(d, src, dest_offset=100, src_offset=200, count=300, stream=s)
        wp.synchronize_stream(s)
        back = wp.zeros(300, dtype=wp.float32, device="cpu")
        wp.copy(back, d, src_offset=100, count=300)
        np.testing.assert_array_equal(back.numpy(), np.arange(200, 500, dtype=np.float32))
        np.testing.assert_array_equal(d.to("cpu").numpy()[:100], 0)

    def t_interop():
        try:
            import torch
        except ImportError:
            print("     (torch not installed: __cuda_array_interface__ checked with a wp.array only)")
            torch = None
        if torch is not None and torch.cuda.is_available():
            tx = torch.arange(1000, dtype=torch.float32, device=f"cuda:{dev.ordinal}")
            ty = torch.ones(1000, dtype=torch.float32, device=f"cuda:{dev.ordinal}")
            torch.cuda.synchronize()
            wp.launch(saxpy, dim=1000, inputs=[tx, ty, 3.0], device=dev)
            wp.synchronize_device(dev)
            np.testing.assert_allclose(ty.cpu().numpy(), 3.0 * np.arange(1000) + 1.0)
            back = wp.array(tx, device=dev)  # a copy of torch's memory
            np.testing.assert_array_equal(back.numpy(), np.arange(1000, dtype=np.float32))
        owner = wp.array(np.arange(10, dtype=np.float32), device=dev)

        class Foreign:
            __cuda_array_interface__ = owner.__cuda_array_interface__

        y = wp.zeros(10, dtype=wp.float32, device=dev)
        wp.launch(saxpy, dim=10, inputs=[Foreign(), y, 2.0], device=dev)
        np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(10))

    def t_mesh_rays():
        # a triangle soup on the device, rays from inside it: first hits against Moller-Trumbore on every triangle
        rng = np.random.default_rng(1)
        n_tris, n_rays = 2000, 4096
        corners = (rng.random((n_tris, 1, 3)) * 4.0 + (rng.random((n_tris, 3, 3)) - 0.5) * 0.6).astype(np.float32)
        mesh = wp.Mesh(wp.array(corners.reshape(-1, 3), dtype=wp.vec3, device=dev),
                       wp.array(np.arange(3 * n_tris, dtype=np.int32), dtype=wp.int32, device=dev))
        starts = (rng.random((n_rays, 3)) * 4.0).astype(np.float32)
        dirs = rng.normal(size=(n_rays, 3))
        dirs = (dirs / np.linalg.norm(dirs, axis=1, keepdims=True)).astype(np.float32)
        ts = wp.full(n_rays, -1.0, dtype=wp.float32, device=dev)
        faces = wp.full(n_rays, -1, dtype=wp.int32, device=dev)
        wp.launch(mesh_ray_cast, dim=n_rays, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3, device=dev),
                                                     wp.array(dirs, dtype=wp.vec3, device=dev), ts, faces],
                  device=dev)
        a, b, c = (corners[:, k].astype(np.float64) for k in range(3))
        e1, e2 = b - a, c - a
        expect = np.full(n_rays, np.inf)
        for r in range(0, n_rays, 256):  # (rays x triangles in blocks)
            s, d = starts[r:r + 256, None].astype(np.float64), dirs[r:r + 256, None].astype(np.float64)
            pv = np.cross(d, e2)
            det = (e1 * pv).sum(-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                tv = s - a
                u = (tv * pv).sum(-1) / det
                qv = np.cross(tv, e1)
                v = (d * qv).sum(-1) / det
                t = (e2 * qv).sum(-1) / det
            ok = (det != 0) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
            expect[r:r + 256] = np.where(ok, t, np.inf).min(axis=1)
        hit = np.isfinite(expect)
        got = ts.numpy()
        assert hit.sum() > n_rays // 10, hit.sum()
        np.testing.assert_array_equal(got >= 0.0, hit)
        np.testing.assert_allclose(got[hit], expect[hit], rtol=1e-4, atol=1e-5)

    def t_hash_grid():
        # neighbours within the radius by a hash-grid query loop on the device, against all pairs of points
        rng = np.random.default_rng(2)
        pts = (rng.random((3000, 3)) * 4.0).astype(np.float32)
        points = wp.array(pts, dtype=wp.vec3, device=dev)
        grid = wp.HashGrid(32, 32, 32, device=dev)
        grid.build(points, 0.25)
        counts = wp.zeros(len(pts), dtype=wp.int32, device=dev)
        wp.launch(grid_neighbour_count, dim=len(pts), inputs=[grid.id, points, 0.25, counts], device=dev)
        p = pts.astype(np.float64)
        expect = (np.linalg.norm(p[:, None] - p[None], axis=2) <= 0.25).sum(axis=1)
        assert expect.max() > 1
        np.testing.assert_array_equal(counts.numpy(), expect)

    checks = [("saxpy", t_saxpy), ("math builtins float32 vs numpy", t_math),
              ("3-D launch, block_dim=64, max_blocks=2", t_index), ("atomics int32/float64", t_atomics),
              ("cooperative tile GEMM (shared memory), vs numpy", t_tile_gemm),
              ("copies H2D/D2H/D2D with offsets on a stream", t_copies),
              ("__cuda_array_interface__ (torch, foreign objects)", t_interop)]
    geometry = [("wp.Mesh on the device: ray casts vs every triangle", t_mesh_rays),
                ("wp.HashGrid on the device: neighbour counts vs all pairs", t_hash_grid)]
    if cuda_compile.compiler_available():
        checks += geometry
    else:  # the structures are built on the host, by CPU kernels compiled there (python/mlwarp/geometry/device_mirror.py)
        for name, _ in geometry:
            print(f"SKIP {name}: building a structure runs mlwarp's CPU build kernels, which need the compiler "
                  f"(MLIR) on this machine")
    for name, fn in checks:
        check(name, fn)
    print(f"{len(checks) - check.failed} passed, {check.failed} failed")
    return check.failed


def measure(dev) -> None:
    n = 1 << 26
    x = wp.array(np.ones(n, dtype=np.float32), device=dev)
    y = wp.zeros(n, dtype=wp.float32, device=dev)
    start, end = wp.Event(dev, enable_timing=True), wp.Event(dev, enable_timing=True)
    stream = wp.get_stream(dev)
    wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device=dev)
    iters = 20
    stream.record_event(start)
    for _ in range(iters):
        wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device=dev)
    stream.record_event(end)
    ms = wp.get_event_elapsed_time(start, end) / iters
    print(f"saxpy n=2^26 float32: {ms:.3f} ms, {3 * 4 * n / ms / 1e6:.0f} GB/s")
    ref = _torch_saxpy_ms(dev, n)
    if ref is not None:
        print(f"torch y.add_(x, alpha=2) same size: {ref:.3f} ms, {3 * 4 * n / ref / 1e6:.0f} GB/s")

    m = 1024  # the documentation's tiled GEMM: its tiles in shared memory, a block's lanes share them
    a = wp.array(np.random.default_rng(5).standard_normal((m, m)).astype(np.float32), device=dev)
    b = wp.array(np.random.default_rng(6).standard_normal((m, m)).astype(np.float32), device=dev)
    c = wp.zeros((m, m), dtype=wp.float32, device=dev)
    grid = (m // GEMM_TM, m // GEMM_TN)
    wp.launch_tiled(tile_gemm, dim=grid, inputs=[a, b, c], block_dim=GEMM_BLOCK, device=dev)
    stream.record_event(start)
    for _ in range(iters):
        wp.launch_tiled(tile_gemm, dim=grid, inputs=[a, b, c], block_dim=GEMM_BLOCK, device=dev)
    stream.record_event(end)
    ms = wp.get_event_elapsed_time(start, end) / iters
    print(f"tile GEMM {m}^3 float32 (32x32x16 tiles, block_dim {GEMM_BLOCK}): {ms:.3f} ms, "
          f"{2 * m ** 3 / ms / 1e6:.0f} GFLOP/s")
    ref = _torch_matmul_ms(dev, m)
    if ref is not None:
        print(f"torch.matmul same size (float32, no TF32): {ref:.3f} ms, {2 * m ** 3 / ref / 1e6:.0f} GFLOP/s")

    tiny = wp.zeros(1, dtype=wp.float32, device=dev)
    for _ in range(100):
        wp.launch(noop, dim=1, inputs=[tiny], device=dev)
    wp.synchronize_device(dev)
    count = 5000
    t = time.perf_counter()
    for _ in range(count):
        wp.launch(noop, dim=1, inputs=[tiny], device=dev)
    wp.synchronize_device(dev)
    print(f"launch overhead (wp.launch, 1 thread, 1 array arg): {(time.perf_counter() - t) / count * 1e6:.2f} us")


def _torch_ms(make_step):
    """torch's time per call of the step `make_step(torch)` returns, on the GPU (ms, mean of 20 after one), or None
    without torch's CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    step = make_step(torch)
    step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 20


def _torch_saxpy_ms(dev, n):
    def make(torch):
        x, y = torch.ones(n, device=f"cuda:{dev.ordinal}"), torch.zeros(n, device=f"cuda:{dev.ordinal}")
        return lambda: y.add_(x, alpha=2.0)

    return _torch_ms(make)


def _torch_matmul_ms(dev, m):
    def make(torch):
        torch.backends.cuda.matmul.allow_tf32 = False
        a, b = (torch.randn(m, m, device=f"cuda:{dev.ordinal}") for _ in range(2))
        return lambda: a @ b

    return _torch_ms(make)


def run(folder: str) -> int:
    if not wp.is_cuda_available():
        print("no CUDA device here (needs a GPU, its driver and cuda-python)")
        return 1
    dev = wp.get_device("cuda:0")
    print(f"device {dev}: {dev.name}, sm_{dev.arch}, {dev.sm_count} SMs; compiler here: "
          f"{'yes' if cuda_compile.compiler_available() else 'no (AOT only)'}")
    t = time.perf_counter()
    wp.load_aot_module(KERNELS, device=dev, module_dir=folder)
    kinds = sorted({k._compiled[dev.alias].image_kind for k in KERNELS})
    print(f"loaded {len(KERNELS)} kernels from {folder} ({'/'.join(kinds)}) in {(time.perf_counter() - t) * 1e3:.1f} ms")
    failed = run_checks(dev)
    measure(dev)
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--out", default=DEFAULT_DIR)
    c.add_argument("--arch", type=int, default=90)
    r = sub.add_parser("run")
    r.add_argument("--dir", default=DEFAULT_DIR)
    args = p.parse_args()
    if args.cmd == "compile":
        compile_all(args.out, args.arch)
        return 0
    return run(args.dir)


if __name__ == "__main__":
    sys.exit(main())
