"""Composite fuzzing: random kernels over vec2/3/4, mat22/33/44, quat and a @wp.struct (float32 and float64)
with constructors, builtins, component and field writes inside branches and static/dynamic loops,
@wp.func helpers (factory-made closures, overloads and redefinitions, typing.Any generics), wp.static() (module
constants, closures, constant locals, unrolled loops, `if wp.static(flag)`, kernels defined in a loop),
star-unpacking, locals first assigned in a branch or loop, arrays of vectors and structs, atomics into small
arrays and 2-D launches, run on the CPU
and compared thread by thread with the reference interpreter (fuzz/composite.py); their gradients (Tape
backward, float64) against central differences of the reference's forward.

CI runs a bounded, derandomised set. Campaigns:
    MLWARP_FUZZ_EXAMPLES=2000 MLWARP_FUZZ_SEED=1 python -m pytest -q test/python/test_fuzz_composite.py
    MLWARP_FUZZ_WARP_PYTHON=/path/to/venv-with-warp-lang/bin/python MLWARP_FUZZ_EXAMPLES=500 \
        python -m pytest -q test/python/test_fuzz_composite.py -k warp_lang      # differential, never in CI
(MLWARP_FUZZ_SHRINK=1 shrinks a failing program: slow, each step compiles a kernel.)
"""

import os
import random
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, seed, settings
from hypothesis import strategies as st

import mlwarp as wp
from fuzz.differential import run_mlwarp, run_warp, verdict
from fuzz.generate_composite import Draws, hypothesis_programs, program
from fuzz.loader import load_module
from fuzz.run_composite import (GRAD_INPUTS, Rejected, compare, directional_difference, launch, loss_weights,
                                make_inputs, reference, results)

EXAMPLES = os.environ.get("MLWARP_FUZZ_EXAMPLES")
SEED = os.environ.get("MLWARP_FUZZ_SEED")
WARP_PYTHON = os.environ.get("MLWARP_FUZZ_WARP_PYTHON")
PHASES = [p for p in Phase if os.environ.get("MLWARP_FUZZ_SHRINK") == "1" or p not in (Phase.shrink, Phase.explain)]
STATS = {"programs": 0, "threads_compared": 0, "threads_fragile": 0, "accumulator_slots_compared": 0,
         "rejected_ub": 0, "grad_programs": 0, "grad_threads_compared": 0, "grad_threads_skipped": 0}


def _settings(default_examples):
    def wrap(f):
        f = settings(max_examples=int(EXAMPLES or default_examples), deadline=None, database=None, phases=PHASES,
                     derandomize=SEED is None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large])(f)
        return seed(int(SEED))(f) if SEED is not None else f
    return wrap


def compiled(prog):
    module, path = load_module(prog.source("k"))
    note(f"kernel source ({path}):\n{prog.source('k')}")
    return module.k, module.k_S


@_settings(14)
@given(prog=hypothesis_programs(), input_seed=st.integers(0, 2 ** 32 - 1))
def test_generated_composite_kernels_match_the_reference(prog, input_seed):
    inputs = make_inputs(prog, np.random.default_rng(input_seed))
    try:
        expected = reference(prog, inputs)
    except Rejected:
        STATS["rejected_ub"] += 1
        assume(False)  # never launch a program with UB in a thread
    kernel, struct = compiled(prog)
    stats = compare(prog, expected, results(launch(wp, kernel, struct, prog, inputs)))
    STATS["programs"] += 1
    STATS["threads_compared"] += stats["threads_compared"]
    STATS["threads_fragile"] += stats["threads_fragile"]
    STATS["accumulator_slots_compared"] += stats["slots_compared"]


@_settings(8)
@given(prog=hypothesis_programs(grad=True), input_seed=st.integers(0, 2 ** 32 - 1))
def test_generated_composite_gradients_match_finite_differences(prog, input_seed):
    """Tape.backward with random weights on every float output and accumulator, against the directional
    derivative (a random direction per thread over xs, xv, xm, xq) of the reference's float64 forward."""
    rng = np.random.default_rng(input_seed)
    inputs = make_inputs(prog, rng)
    try:
        reference(prog, inputs)
    except Rejected:
        assume(False)
    kernel, struct = compiled(prog)
    weights = loss_weights(prog, rng)
    direction = {n: rng.normal(size=(prog.threads, *shape)) for n, shape in GRAD_INPUTS.items()}
    tape = wp.Tape()
    with tape:
        arrays = launch(wp, kernel, struct, prog, inputs, requires_grad=True)
    tape.backward(grads={arrays[n]: wp.array(w, dtype=arrays[n].dtype) for n, w in weights.items()})
    grads = {n: arrays[n].grad.numpy().reshape(prog.threads, *shape) for n, shape in GRAD_INPUTS.items()}
    STATS["grad_programs"] += 1
    for t in range(prog.threads):
        want = directional_difference(prog, inputs, t, weights, {n: d[t] for n, d in direction.items()})
        if want is None:
            STATS["grad_threads_skipped"] += 1
            continue
        STATS["grad_threads_compared"] += 1
        terms = [grads[n][t] * direction[n][t] for n in GRAD_INPUTS]
        got = sum(float(np.sum(x)) for x in terms)
        scale = max(1.0, abs(want), sum(float(np.sum(np.abs(x))) for x in terms))
        assert abs(got - want) <= 1e-4 * scale, (
            f"thread {t}: directional derivative from Tape.backward {got!r}, finite differences {want!r}; "
            f"gradients {[(n, grads[n][t].tolist()) for n in GRAD_INPUTS]}")


def test_composite_fuzz_statistics_are_meaningful():
    """Runs after the fuzz tests (file order): most threads were actually compared."""
    if STATS["programs"] or STATS["grad_programs"]:
        print(f"\ncomposite fuzz: {STATS}")
    if STATS["programs"]:
        assert STATS["threads_compared"] >= STATS["programs"] * 8 // 2, STATS
    if STATS["grad_programs"]:
        assert STATS["grad_threads_compared"] >= STATS["grad_programs"] * 8 // 3, STATS


# -- differential: the same programs under warp-lang -------------------------------------------------------
# Forward results only: the deliberate differences of docs/robustness.md are adjoints, and the generator
# writes `int(3)` where warp-lang refuses a literal-initialised local that a dynamic loop changes. These
# programs never read a scalar that a skipped branch leaves uninitialised in warp-lang (the CI programs may:
# mlwarp and the reference give 0). So any warp-lang divergence or refusal fails the test, with the batch
# module's path.
BATCH = 10


def _batches(count, base_seed):
    for start in range(0, count, BATCH):
        named = []
        for k in range(start, min(count, start + BATCH)):
            s = f"{base_seed}-{k}"
            prog = program(Draws(rng=random.Random(s)))
            inputs = make_inputs(prog, np.random.default_rng(zlib.crc32(s.encode())))
            try:
                named.append((f"w{k}", prog, inputs, reference(prog, inputs)))
            except Rejected:
                continue
        yield named


def test_programs_sharing_one_module_match_the_reference():
    """The differential mode's batching (several programs' structs, funcs and kernels in one module, named
    apart) runs under mlwarp too: every program of a batch matches the reference."""
    named = next(_batches(3, "shared-module"))
    got, path = run_mlwarp(wp, [(n, p, i) for n, p, i, _ in named])
    for name, prog, _, expected in named:
        kind, detail = verdict(prog, expected, got[name])
        assert kind == "ok", f"{name} ({path}): {detail}"


@pytest.mark.skipif(not WARP_PYTHON, reason="differential fuzzing against warp-lang needs MLWARP_FUZZ_WARP_PYTHON="
                    "<python of a venv with warp-lang 1.19.0>")
def test_generated_composite_kernels_match_warp_lang():
    count, base_seed = int(EXAMPLES or 20), SEED or "0"
    tally = {"programs": 0, "threads_compared": 0, "mlwarp_mismatches": 0, "warp_divergences": 0,
             "warp_errors": 0}
    failures = []
    for named in _batches(count, base_seed):
        triples = [(n, p, i) for n, p, i, _ in named]
        warp_results, warp_module = run_warp(WARP_PYTHON, triples)
        if len({str(r.get("error")) for r in warp_results.values()}) == 1 and "error" in next(iter(
                warp_results.values()), {}):
            warp_results = {}  # one program broke the module's compile: each on its own
            for t in triples:
                r, warp_module = run_warp(WARP_PYTHON, [t])
                warp_results.update(r)
        ml_results, ml_module = run_mlwarp(wp, triples)
        for name, prog, _, expected in named:
            tally["programs"] += 1
            kind_m, detail_m = verdict(prog, expected, ml_results[name])
            kind_w, detail_w = verdict(prog, expected, warp_results[name])
            if kind_m == "ok":
                tally["threads_compared"] += detail_m["threads_compared"]
            else:
                tally["mlwarp_mismatches"] += 1
                failures.append(f"mlwarp {kind_m} on {name} ({ml_module}): {detail_m}")
            if kind_w != "ok":
                tally["warp_errors" if kind_w == "error" else "warp_divergences"] += 1
                failures.append(f"warp-lang {kind_w} on {name} ({warp_module}): {str(detail_w)[:600]}")
    print(f"\ndifferential fuzz (seed {base_seed}): {tally}")
    assert not failures, "\n".join(failures[:10])
