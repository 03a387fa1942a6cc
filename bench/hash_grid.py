"""Hash-grid build and neighbour queries, 1M points (issue 17). Not yet in run_all.py.

    .venv/bin/python bench/hash_grid.py mlwarp
    /tmp/compatvenv/bin/python bench/hash_grid.py warp      # warp-lang 1.19 on the CPU, same script
"""
import sys, time, numpy as np
impl = sys.argv[1]
if impl == "warp":
    import warp as wp; wp.config.quiet = True; wp.init()
else:
    import mlwarp as wp
n = 1_000_000
rng = np.random.default_rng(0)
pts = (rng.random((n, 3)) * 100.0).astype(np.float32)
points = wp.array(pts, dtype=wp.vec3, device="cpu")
grid = wp.HashGrid(128, 128, 128, device="cpu")
grid.build(points, 1.0)
t = []
for _ in range(3):
    t0 = time.perf_counter(); grid.build(points, 1.0); t.append(time.perf_counter() - t0)

@wp.kernel
def count(grid: wp.uint64, points: wp.array(dtype=wp.vec3), r: float, out: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = points[i]
    n = int(0)
    query = wp.hash_grid_query(grid, p, r)
    index = int(0)
    while wp.hash_grid_query_next(query, index):
        if wp.length(points[index] - p) <= r:
            n += 1
    out[i] = n

out = wp.zeros(n, dtype=int, device="cpu")
wp.launch(count, dim=n, inputs=[grid.id, points, 1.0, out], device="cpu"); wp.synchronize()
q = []
for _ in range(3):
    t0 = time.perf_counter(); wp.launch(count, dim=n, inputs=[grid.id, points, 1.0, out], device="cpu"); wp.synchronize(); q.append(time.perf_counter() - t0)
print(impl, "build %.1f ms" % (min(t) * 1e3), "query %.1f ms" % (min(q) * 1e3), "mean neighbours", out.numpy().mean())
