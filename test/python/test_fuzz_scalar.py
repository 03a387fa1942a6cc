"""Fuzzing: random well-typed scalar kernels (int32/float32/float64 arithmetic, comparisons, branches,
for/while loops with break/continue, builtins, casts) run on the CPU and compared, thread by thread, with
a reference evaluation of the same program (fuzz/program.py).

CI runs a bounded, derandomised set. A longer run:
    MLWARP_FUZZ_EXAMPLES=2000 MLWARP_FUZZ_SEED=12345 python -m pytest -q test/python/test_fuzz_scalar.py
(MLWARP_FUZZ_SHRINK=1 shrinks a failing program to a small one: slow, each step compiles a kernel.)
"""

import os

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, note, seed, settings
from hypothesis import strategies as st

import mlwarp as wp
from fuzz.generate import programs
from fuzz.loader import load_kernel
from fuzz.program import Fragile, UndefinedBehaviour

THREADS = 8
EXAMPLES = int(os.environ.get("MLWARP_FUZZ_EXAMPLES", "12"))
SEED = os.environ.get("MLWARP_FUZZ_SEED")
# Shrinking recompiles a kernel per step (minutes): off unless MLWARP_FUZZ_SHRINK=1; the note has the source.
PHASES = [p for p in Phase if os.environ.get("MLWARP_FUZZ_SHRINK") == "1" or p not in (Phase.shrink, Phase.explain)]
STATS = {"programs": 0, "threads_compared": 0, "threads_fragile": 0, "rejected_ub": 0}

inputs = st.tuples(
    st.lists(st.integers(-20, 20), min_size=THREADS, max_size=THREADS),
    st.lists(st.floats(-4, 4, width=32), min_size=THREADS, max_size=THREADS),
    st.lists(st.floats(-4, 4), min_size=THREADS, max_size=THREADS),
)


def reference(program, xi, xf, xd):
    """Per thread: the expected outputs, or None where the reference cannot decide (fragile)."""
    out = []
    for t in range(THREADS):
        try:
            out.append(program.run(xi[t], xf[t], xd[t]))
        except Fragile:
            out.append(None)
        except UndefinedBehaviour:
            STATS["rejected_ub"] += 1
            assume(False)  # never launch a program with UB in a thread: poison might mean anything
    return out


def same(got, want, err) -> bool:
    got, want = float(got), float(want)
    if err == 0:
        return got == want or (np.isnan(got) and np.isnan(want))
    return abs(got - want) <= err


def check(program, data):
    xi, xf, xd = (np.array(v, dtype=dt) for v, dt in zip(data, (np.int32, np.float32, np.float64)))
    expected = reference(program, xi, xf, xd)
    kernel, path = load_kernel(program.source)
    note(f"kernel source ({path}):\n{program.source(kernel.key)}")
    note(f"inputs: xi={xi.tolist()} xf={xf.tolist()} xd={xd.tolist()}")
    oi, of, od = wp.zeros(THREADS, dtype=wp.int32), wp.zeros(THREADS, dtype=wp.float32), \
        wp.zeros(THREADS, dtype=wp.float64)
    wp.launch(kernel, THREADS, inputs=[xi, xf, xd, oi, of, od])
    got = {"i": oi.numpy(), "f": of.numpy(), "d": od.numpy()}
    STATS["programs"] += 1
    for t, want in enumerate(expected):
        if want is None:
            STATS["threads_fragile"] += 1
            continue
        STATS["threads_compared"] += 1
        for ty in "ifd":
            value, err = want[ty]
            assert same(got[ty][t], value, err), (
                f"thread {t}, output {ty}: mlwarp {got[ty][t]!r}, reference {value!r} (error bound {err})")


def _settings(f):
    f = settings(max_examples=EXAMPLES, deadline=None, database=None, phases=PHASES, derandomize=SEED is None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large])(f)
    return seed(int(SEED))(f) if SEED is not None else f


@_settings
@given(program=programs(), data=inputs)
def test_generated_scalar_kernels_match_the_reference(program, data):
    check(program, data)


@(lambda f: seed(int(SEED))(f) if SEED is not None else f)
@settings(max_examples=max(2, EXAMPLES // 6), deadline=None, database=None, phases=PHASES, derandomize=SEED is None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(program=programs(), data=inputs)
def test_debug_builds_of_generated_kernels_compute_the_same(program, data):
    """The bounds-checked debug build (warp-bounds-check) changes nothing for in-bounds kernels: no error, and
    per output the release build's bits where the reference says the value is exact. Where a libm call feeds
    it, the two builds may vectorise differently (another libmvec variant, or the scalar call: within 4 ulp
    each, docs/robustness.md): there each is within the reference's propagated bound, so they differ by at most
    twice that bound."""
    xi, xf, xd = (np.array(v, dtype=dt) for v, dt in zip(data, (np.int32, np.float32, np.float64)))
    expected = reference(program, xi, xf, xd)
    kernel, path = load_kernel(program.source)
    note(f"kernel source ({path}):\n{program.source(kernel.key)}")
    results = []
    for mode in ("release", "debug"):
        wp.config.mode = mode
        try:
            outs = [wp.zeros(THREADS, dtype=t) for t in (wp.int32, wp.float32, wp.float64)]
            wp.launch(kernel, THREADS, inputs=[xi, xf, xd, *outs])
        finally:
            wp.config.mode = "release"
        results.append(dict(zip("ifd", (o.numpy() for o in outs))))
    release, debug = results
    for t, want in enumerate(expected):
        if want is None:
            continue  # fragile: the reference cannot bound this thread's outputs
        for ty in "ifd":
            value, err = want[ty]
            r, d = release[ty][t], debug[ty][t]
            message = f"thread {t}, output {ty}: release {r!r}, debug {d!r}, reference {value!r} (error bound {err})"
            assert same(d, value, err), message
            assert (r.tobytes() == d.tobytes()) if err == 0 else abs(float(r) - float(d)) <= 2 * err, message


def test_fuzz_statistics_are_meaningful():
    """Runs after the fuzz test (file order): most threads were actually compared."""
    if STATS["programs"] == 0:
        return  # the fuzz test was deselected
    print(f"\nfuzz: {STATS}")
    assert STATS["threads_compared"] >= STATS["programs"] * THREADS // 2, STATS
