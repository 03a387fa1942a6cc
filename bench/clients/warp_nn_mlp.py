"""warp-nn (PyPI `warp-nn` 0.4.1, tile MLPs) trains a 4-32-1 MLP with Adam on Warp or on mlwarp, unchanged: under
`mlwarp` the name `warp` is made to be mlwarp before warp-nn is imported. A client check, not a test (it needs
warp-nn, and warp-lang for the comparison):

    .venv/bin/pip download --no-deps -d /tmp/clients/dl warp-nn==0.4.1
    (cd /tmp/clients && mkdir -p site && cd site && unzip -qo ../dl/warp_nn-*.whl)
    PYTHONPATH=/tmp/clients/site .venv/bin/python bench/clients/warp_nn_mlp.py mlwarp
    PYTHONPATH=/tmp/clients/site /path/to/warp-venv/bin/python bench/clients/warp_nn_mlp.py warp

Both print the loss every 20 steps and the wall time of the 100 training steps (kernels compiled on the first step;
run twice for warm-cache times). Measured 2026-12-06 (AMD EPYC, 2 cores, loaded): the loss trajectories agree to
float32 rounding (step 99: 0.0273223687 under Warp, 0.0273223650 under mlwarp); warm-cache time 3.6 s under mlwarp, 0.9 s under Warp
(the per-step launch and tape overhead of 8 small launches; issue 36). Measured again 2026-12-06 (load average 7-8), best
of 3 taking turns: 0.18 s (CPU 0.09 s) under mlwarp, 0.28 s (CPU 0.14 s) under Warp (bench/README.md, issue 36)."""

import importlib
import sys
import time

import numpy as np

if len(sys.argv) < 2 or sys.argv[1] not in ("warp", "mlwarp"):
    raise SystemExit("usage: warp_nn_mlp.py warp|mlwarp [steps]")
if sys.argv[1] == "mlwarp":
    import mlwarp

    sys.modules["warp"] = mlwarp
    for _name in ("types", "utils", "config"):
        sys.modules[f"warp.{_name}"] = importlib.import_module(f"mlwarp.{_name}")

import warp as wp  # noqa: E402
import warp_nn.nn as nn  # noqa: E402
import warp_nn.optimizers as optim  # noqa: E402

wp.config.quiet = True
np.random.seed(0)  # warp-nn's initializers draw from numpy's global generator
rng = np.random.default_rng(0)
X = rng.standard_normal((64, 4)).astype(np.float32)
Y = (np.sin(X[:, :1]) + X[:, 1:2] * X[:, 2:3]).astype(np.float32)


@wp.kernel
def mse(pred: wp.array2d(dtype=float), target: wp.array2d(dtype=float), loss: wp.array(dtype=float)):
    i, j = wp.tid()
    d = pred[i, j] - target[i, j]
    wp.atomic_add(loss, 0, d * d / 64.0)


steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
start = time.perf_counter()
cpu_start = time.process_time()
model = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
opt = optim.Adam(model.parameters(), lr=0.01)
x, y = wp.array(X), wp.array(Y)
for step in range(steps):
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        pred = model(x)
        wp.launch(mse, pred.shape, inputs=[pred, y, loss])
    tape.backward(loss)
    opt.step()
    tape.zero()
    if step % 20 == 0 or step == steps - 1:
        print(step, float(loss.numpy()[0]))
print(f"time {time.perf_counter() - start:.2f} s, cpu {time.process_time() - cpu_start:.2f} s")
