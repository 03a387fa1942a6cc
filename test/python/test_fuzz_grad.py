"""Gradient fuzzing: the program generator of test_fuzz_scalar.py, restricted to int32/float64, checks the
adjoint launch (`wp.launch(..., adjoint=True)`) against central finite differences of the reference.

A thread is compared only where the derivative is well defined and measurable: the reference takes the
same discrete decisions (branches, min/max picks, floors, int casts) at x-2h, x-h, x, x+h and x+2h, and the
differences with steps h and 2h agree (Richardson check against curvature and cancellation), and no
intermediate value is NaN/inf (an unselected NaN still poisons the reverse sweep: 0 * NaN, as in Warp and
PyTorch).

    MLWARP_FUZZ_EXAMPLES=500 MLWARP_FUZZ_SEED=7 python -m pytest -q test/python/test_fuzz_grad.py
"""

import math
import os

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, note, seed, settings
from hypothesis import strategies as st

import mlwarp as wp
from fuzz.generate import programs
from fuzz.loader import load_kernel
from fuzz.program import Fragile, UndefinedBehaviour

THREADS = 8
H = 1e-5
EXAMPLES = int(os.environ.get("MLWARP_FUZZ_EXAMPLES", "10"))
SEED = os.environ.get("MLWARP_FUZZ_SEED")
# Shrinking recompiles a kernel per step (minutes): off unless MLWARP_FUZZ_SHRINK=1; the note has the source.
PHASES = [p for p in Phase if os.environ.get("MLWARP_FUZZ_SHRINK") == "1" or p not in (Phase.shrink, Phase.explain)]
STATS = {"programs": 0, "threads_compared": 0, "threads_skipped": 0}

inputs = st.tuples(
    st.lists(st.integers(-20, 20), min_size=THREADS, max_size=THREADS),
    st.lists(st.floats(-3, 3), min_size=THREADS, max_size=THREADS),
)


def run_d(program, i0, d0, trace):
    return float(program.run(i0, 0.0, d0, trace)["d"][0])


def finite_difference(program, i0, d0):
    """d od / d xd at d0, or None where it is not measurable."""
    base = []
    try:
        f0 = run_d(program, i0, d0, base)
        values = {}
        for k in (-2, -1, 1, 2):
            trace = []
            values[k] = run_d(program, i0, d0 + k * H, trace)
            if trace != base:
                return None
        if "non-finite" in base:  # a NaN/inf anywhere makes the adjoint NaN (0 * NaN), as in Warp
            return None
    except (Fragile, UndefinedBehaviour):
        return None
    if not all(math.isfinite(v) for v in [f0, *values.values()]):
        return None
    g1 = (values[1] - values[-1]) / (2 * H)
    g2 = (values[2] - values[-2]) / (4 * H)
    if abs(g1 - g2) > 1e-4 * max(1.0, abs(g1)):
        return None
    return g1


def _seeded(f):
    return seed(int(SEED))(f) if SEED is not None else f


@_seeded
@settings(max_examples=EXAMPLES, deadline=None, database=None, phases=PHASES, derandomize=SEED is None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(program=programs(types=("i", "d")), data=inputs)
def test_generated_kernel_gradients_match_finite_differences(program, data):
    xi = np.array(data[0], dtype=np.int32)
    xd = np.array(data[1], dtype=np.float64)
    xf = np.zeros(THREADS, dtype=np.float32)
    for t in range(THREADS):  # never launch a program with UB in a thread
        try:
            program.run(xi[t], 0.0, xd[t])
        except UndefinedBehaviour:
            assume(False)
        except Fragile:
            pass
    kernel, path = load_kernel(program.source)
    note(f"kernel source ({path}):\n{program.source(kernel.key)}")
    note(f"inputs: xi={xi.tolist()} xd={xd.tolist()}")
    outs = [wp.zeros(THREADS, dtype=wp.int32), wp.zeros(THREADS, dtype=wp.float32),
            wp.zeros(THREADS, dtype=wp.float64)]
    adj_xd = wp.zeros(THREADS, dtype=wp.float64)
    adj_od = wp.array(np.ones(THREADS))
    args = [xi, xf, xd, *outs]
    wp.launch(kernel, THREADS, inputs=args)
    wp.launch(kernel, THREADS, inputs=args, adjoint=True,
              adj_inputs=[None, None, adj_xd, None, None, adj_od])
    got = adj_xd.numpy()
    STATS["programs"] += 1
    for t in range(THREADS):
        want = finite_difference(program, int(xi[t]), float(xd[t]))
        if want is None:
            STATS["threads_skipped"] += 1
            continue
        STATS["threads_compared"] += 1
        assert abs(got[t] - want) <= 1e-4 * max(1.0, abs(want)), (
            f"thread {t}: adjoint d od/d xd = {got[t]!r}, finite differences {want!r}")


def test_grad_fuzz_statistics_are_meaningful():
    if STATS["programs"] == 0:
        return  # the fuzz test was deselected
    print(f"\ngrad fuzz: {STATS}")
    assert STATS["threads_compared"] >= STATS["programs"] * THREADS // 3, STATS
