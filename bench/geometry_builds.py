"""Issue 36: every geometry build and refit (wp.Mesh, wp.Bvh "sah" and "median", wp.HashGrid, wp.Volume from a
numpy array and by tiles) as (best wall ms, best CPU ms of the process, all its threads) over 7 runs after a
warm one. One implementation per process: `python bench/geometry_builds.py mlwarp` or, with warp-lang's
interpreter, `... warp`; prints one JSON line. On a shared machine run them taking turns and read the CPU
times (the wall times carry the other processes' load). A second argument `refits` times only the two refits,
best of 15 (`python bench/geometry_builds.py mlwarp refits`)."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from geometry import terrain  # noqa: E402

impl = sys.argv[1] if len(sys.argv) > 1 else "mlwarp"
refits_only = sys.argv[2:3] == ["refits"]
if impl == "warp":
    import warp as wp

    wp.config.quiet = True
    wp.init()
else:
    import mlwarp as wp
dev = "cpu"


def best(f, n=7):
    f()
    ts, cs = [], []
    for _ in range(n):
        t, c = time.perf_counter(), time.process_time()
        f()
        ts.append(time.perf_counter() - t)
        cs.append(time.process_time() - c)
    return round(min(ts) * 1e3, 3), round(min(cs) * 1e3, 3)


out = {}
pts, tris = terrain()
points = wp.array(pts, dtype=wp.vec3, device=dev)
indices = wp.array(tris.reshape(-1), dtype=wp.int32, device=dev)
if not refits_only:
    out["mesh build"] = best(lambda: wp.Mesh(points=points, indices=indices))
m = wp.Mesh(points=points, indices=indices)
out["mesh refit"] = best(m.refit, n=15 if refits_only else 7)
rng = np.random.default_rng(0)
c = rng.random((100_000, 3)).astype(np.float32) * 100  # 100k random boxes
e = rng.random((100_000, 3)).astype(np.float32)
lo, hi = wp.array(c, dtype=wp.vec3, device=dev), wp.array(c + e, dtype=wp.vec3, device=dev)
if not refits_only:
    out["bvh build (sah)"] = best(lambda: wp.Bvh(lo, hi))
b = wp.Bvh(lo, hi)
out["bvh refit"] = best(b.refit, n=15 if refits_only else 7)
if refits_only:
    print(json.dumps(out))
    sys.exit(0)
out["bvh build (median)"] = best(lambda: wp.Bvh(lo, hi, constructor="median"))
p0 = (rng.random((1_000_000, 3)) * 100.0).astype(np.float32)
particles = wp.array(p0, dtype=wp.vec3, device=dev)
grid = wp.HashGrid(128, 128, 128, device=dev)
out["hashgrid build"] = best(lambda: grid.build(particles, 1.0))
x = np.linspace(-1, 1, 96, dtype=np.float32)
sdf = (np.sqrt(x[:, None, None] ** 2 + x[None, :, None] ** 2 + x[None, None, :] ** 2) - 0.5).astype(np.float32)
out["volume load_from_numpy 96^3"] = best(lambda: wp.Volume.load_from_numpy(sdf, bg_value=1.0), n=3)
tp = wp.array(rng.integers(-64, 64, (4000, 3)).astype(np.int32), dtype=wp.vec3i, device=dev)
out["volume allocate_by_tiles 4000"] = best(
    lambda: wp.Volume.allocate_by_tiles(tp, voxel_size=0.1, bg_value=0.0, device=dev), n=3)
print(json.dumps(out))
