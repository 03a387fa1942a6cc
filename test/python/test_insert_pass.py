"""Passes inserted into a target's stage table (compiler/insert.py): an upstream MLIR pass, a
Python pass that rewrites the IR, for one kernel or globally, and part of the kernel cache key."""

import glob
import os
import re

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.compiler import insert
from mlwarp.compiler.insert import InsertedPass
from mlwarp.compiler.targets import BuildOptions, stage_table
from mlwarp.runtime import cache


def _invariant_loop(x: wp.array(dtype=float), a: float, b: float, n: int):
    i = wp.tid()
    acc = float(0.0)
    for j in range(n):
        acc += wp.sin(a) * b  # invariant in the loop: LICM hoists it
    x[i] = acc


plain = wp.kernel(_invariant_loop, key="invariant_plain")
hoisted = wp.kernel(_invariant_loop, key="invariant_hoisted",
                    passes=[InsertedPass("loop-invariant-code-motion", after="lowered")])


def test_an_inserted_upstream_pass_runs_at_its_stage():
    # the CPU entry wraps the body in the launch's thread loop: LICM hoists sin(a) * b out of both loops
    before, after = plain.to_mlir("lowered"), hoisted.to_mlir("lowered")
    assert before.index("math.sin") > before.index("scf.for")
    assert after.index("math.sin") < after.index("scf.for")
    assert hoisted.to_mlir("warp-opt") == plain.to_mlir("warp-opt")  # nothing before the point changes
    x = wp.zeros(3, dtype=float)
    wp.launch(hoisted, dim=3, inputs=[x, 0.5, 2.0, 4])
    np.testing.assert_allclose(x.numpy(), [4 * np.sin(np.float32(0.5)) * 2.0] * 3, rtol=1e-6)


def tag_loops(module):
    """A Python pass: counts the scf.for loops and records the count on the module."""
    from mlir import ir

    loops = []

    def visit(op):
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    module.attributes["test.loops"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(loops))


def test_a_python_pass_changes_the_ir_of_one_kernel(monkeypatch, tmp_path):
    counted = wp.kernel(_invariant_loop, key="invariant_counted", passes=[InsertedPass(tag_loops, after="warp-opt")])
    assert "test.loops = 1 : i64" in counted.to_mlir("warp-opt")  # the kernel's one loop (range(n))
    assert "test.loops" not in counted.to_mlir("warp")
    assert "test.loops" not in plain.to_mlir("warp-opt")
    monkeypatch.setenv("MLWARP_DUMP_IR", str(tmp_path))
    monkeypatch.setenv("MLWARP_CACHE_DIR", str(tmp_path / "cache"))  # compiled now, whatever ran before
    x = wp.zeros(2, dtype=float)
    wp.launch(counted, dim=2, inputs=[x, 1.0, 1.0, 3])  # compiled now: its dump shows the pass's mark
    np.testing.assert_allclose(x.numpy(), [3 * np.sin(np.float32(1.0))] * 2, rtol=1e-6)
    (dump,) = glob.glob(os.path.join(tmp_path, "*.warp-opt.mlir"))
    assert "test.loops = 1 : i64" in open(dump).read()


def test_global_passes_apply_to_every_kernel_and_only_their_target():
    entry = insert.insert_pass(tag_loops, before="autodiff", target="cpu")
    try:
        assert "test.loops = 1 : i64" in plain.to_mlir("autodiff")  # before k_adj (its own two loops) exists
        assert "test.loops" not in plain.to_mlir("warp-opt")
    finally:
        insert.remove_pass(entry)
    cuda_only = insert.insert_pass(tag_loops, before="autodiff", target="cuda")
    try:
        assert "test.loops" not in plain.to_mlir("autodiff")
        assert "test.loops = 1 : i64" in cuda_compile.to_mlir(plain, "autodiff", 90)  # no GPU needed
        cuda_autodiff = [s for s in stage_table("cuda", BuildOptions.of({})) if s.name == "autodiff"][0]
        assert cuda_autodiff.passes[0] == cuda_only and str(cuda_autodiff.passes[1]) == "warp-autodiff{tape-bytes=0}"
    finally:
        insert.remove_pass(cuda_only)
    # an in-process build's MLIR context is gone before the next forked compile (it used to hang)
    x = wp.zeros(1, dtype=float)
    wp.launch(wp.kernel(_invariant_loop, key="after_in_process_builds"), dim=1, inputs=[x, 0.5, 1.0, 2])
    np.testing.assert_allclose(x.numpy(), [2 * np.sin(np.float32(0.5))], rtol=1e-6)
    assert "test.loops" not in plain.to_mlir("autodiff")


def other_tag(module):
    tag_loops(module)


def test_inserted_passes_are_part_of_the_cache_key():
    cpu = wp.get_device("cpu")
    keys = {plain.cache_key(cpu), hoisted.cache_key(cpu)}
    by_python_pass = wp.kernel(_invariant_loop, key="k", passes=[InsertedPass(tag_loops, after="warp-opt")])
    by_other_pass = wp.kernel(_invariant_loop, key="k", passes=[InsertedPass(other_tag, after="warp-opt")])
    elsewhere = wp.kernel(_invariant_loop, key="k", passes=[InsertedPass(tag_loops, after="autodiff")])
    none = wp.kernel(_invariant_loop, key="k")
    keys |= {k.cache_key(cpu) for k in (by_python_pass, by_other_pass, elsewhere, none)}
    assert len(keys) == 6
    assert by_python_pass.cache_key(cpu) == wp.kernel(_invariant_loop, key="k", passes=[
        InsertedPass(tag_loops, after="warp-opt")]).cache_key(cpu)  # stable: no object ids in the key
    before = none.cache_key(cpu)
    entry = insert.insert_pass("canonicalize", after="warp-opt")
    try:
        global_key = none.cache_key(cpu)
        assert global_key != before
        x = wp.zeros(1, dtype=float)
        wp.launch(none, dim=1, inputs=[x, 0.0, 1.0, 1])  # compiled under the key with the global pass
        assert cache.lookup(global_key) is not None
    finally:
        insert.remove_pass(entry)
    assert none.cache_key(cpu) == before


def test_a_python_pass_is_keyed_by_its_source(tmp_path):
    cpu = wp.get_device("cpu")
    keys = []
    for body in ("x = 1", "x = 2"):
        path = tmp_path / f"mod_{len(keys)}.py"
        path.write_text(f"def edited(module):\n    {body}\n")
        scope = {"__name__": "edited_mod", "__file__": str(path)}
        exec(compile(path.read_text(), str(path), "exec"), scope)
        keys.append(wp.kernel(_invariant_loop, key="k", passes=[InsertedPass(scope["edited"], after="warp-opt")])
                    .cache_key(cpu))
    assert keys[0] != keys[1]


# every IR stage of the tables (targets.stage_points), in table order: written out, not derived
CPU_POINTS = "warp, warp-opt, autodiff, asserts, bounds-check, tiles, lowered, tiles-to-llvm, llvm"


@pytest.mark.parametrize("kwargs, message", [
    (dict(pass_="cse", after="nowhere"), f"inserted pass 'cse': unknown stage 'nowhere'; stages: {CPU_POINTS}, nvvm"),
    (dict(pass_="cse", after="nvvm", target="cpu"), f"inserted pass 'cse': unknown stage 'nvvm'; stages: {CPU_POINTS}"),
    (dict(pass_="cse", after="object"), f"inserted pass 'cse': unknown stage 'object'; stages: {CPU_POINTS}, nvvm"),
    (dict(pass_="warp-unroll-loops{depth=2}", after="warp"),
     "inserted pass 'warp-unroll-loops{depth=2}': pass 'warp-unroll-loops' has no option(s) ['depth']; "
     "options: ['max-unroll']"),
    (dict(pass_="cse,(", after="warp"), "inserted pass 'cse,(': unterminated ')' in pass pipeline 'cse,('"),
    (dict(pass_="cse"), "inserted pass 'cse': give exactly one of after= or before= (a stage name)"),
    (dict(pass_="cse", after="llvm", target="tpu"), "inserted pass 'cse': unknown target 'tpu'; targets: cpu, cuda"),
])
def test_bad_insertions_are_refused_where_they_are_written(kwargs, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        InsertedPass(**kwargs)


def test_a_failing_upstream_pass_name_is_reported():
    bad = wp.kernel(_invariant_loop, key="bad_pass", passes=[InsertedPass("no-such-pass", after="warp-opt")])
    with pytest.raises(Exception, match="unknown pass or bad options: 'no-such-pass'"):
        bad.to_mlir("warp-opt")


def _unrolled_loop(x: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for j in range(8):
        acc += float(j)
    x[i] = acc


def test_pass_text_is_the_stage_tables_and_mlwarp_opts():
    # a comma list of an mlwarp pass with options and an upstream pass, as mlwarp-opt's --pass-pipeline takes it,
    # after the frontend's output ("warp"): an 8-trip loop stays a loop under max-unroll=4, is unrolled under 8
    def at_warp(text):
        return InsertedPass(text, after="warp")

    kept = wp.kernel(_unrolled_loop, key="unroll_kept", passes=[at_warp("warp-unroll-loops{max-unroll=4},canonicalize")])
    gone = wp.kernel(_unrolled_loop, key="unroll_gone", passes=[at_warp("warp-unroll-loops{max-unroll=8},canonicalize")])
    assert "scf.for" in kept.to_mlir("warp") and "scf.for" not in gone.to_mlir("warp")
    assert "scf.for" in wp.kernel(_unrolled_loop, key="unroll_plain").to_mlir("warp")
    x = wp.zeros(2, dtype=float)
    wp.launch(kept, dim=2, inputs=[x])
    np.testing.assert_allclose(x.numpy(), [28.0, 28.0])  # sum(range(8))


@pytest.mark.parametrize("point", ["warp", "asserts", "tiles", "tiles-to-llvm"])
def test_every_stage_of_the_tables_is_an_insertion_point(point):
    entry = InsertedPass(tag_loops, after=point, target="cpu")
    tables = [stage_table("cpu", BuildOptions(inserted=(entry,)))]
    assert [s.passes[-1] for t in tables for s in t if s.name == point] == [entry]
