"""One language for passes: every stage table prints as pipeline text and parses back to the same entries, and
mlwarp-opt's --list-passes prints that text, which --pass-pipeline and InsertedPass take back; docs/compiler.md's
pass and stage tables are the ones the code makes."""

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlwarp.compiler.insert import InsertedPass
from mlwarp.compiler.passes.registry import Autodiff, PassError, UnrollLoops
from mlwarp.compiler.pipeline_text import PipelineSyntaxError, format_pipeline, resolve
from mlwarp.compiler.targets import TARGETS, BuildOptions, stage_table
from mlwarp.tools.doc_tables import pass_table_markdown, regenerate, stage_table_markdown

OPT = os.path.join(os.path.dirname(sys.executable), "mlwarp-opt")
DOC = Path(__file__).resolve().parents[2] / "docs" / "compiler.md"

# every variant a build can ask for (BuildOptions' fields that change a table)
VARIANTS = [BuildOptions(debug=d, jvp=j, no_avx512=n, backward=not j) for d, j, n in
            itertools.product((False, True), repeat=3)] + [BuildOptions(arch=80), BuildOptions(cubin=False)]


def _ir_stages():
    for target, options in itertools.product(TARGETS, VARIANTS):
        for stage in stage_table(target, options):
            if stage.emit is None:
                yield target, options, stage


def test_every_stage_of_every_table_round_trips_through_pipeline_text():
    count = 0
    for target, options, stage in _ir_stages():
        for anchor in (True, False):
            text = format_pipeline(stage.passes, anchor=anchor)
            assert resolve(text, anchored=anchor) == list(stage.passes), (target, options, stage.name, text)
        count += 1
    assert count > 100


def test_list_passes_prints_the_tables_as_pipeline_text_that_parses_back():
    out = subprocess.run([OPT, "--list-passes"], capture_output=True, text=True, check=True).stdout
    stages = out.split("compiler stages", 1)[1].splitlines()[1:]
    printed = {line.split()[0]: line.split(None, 1)[1] for line in stages if line.strip()}
    expected = {f"{t}:{s.name}": list(s.passes) for t in TARGETS for s in stage_table(t) if s.emit is None}
    assert set(printed) == set(expected)
    for name, text in printed.items():
        assert text.startswith("builtin.module(")
        assert resolve(text, anchored=True) == expected[name], name
        InsertedPass(text, after="warp")  # an inserted pass takes the same text


def test_the_printed_stages_run_as_pass_pipelines():
    # each cpu and cuda stage's text, pasted into --pass-pipeline, is accepted by MLIR and by our registry
    from mlwarp.tools.driver import OptDriver

    for target in TARGETS:
        for stage in stage_table(target):
            if stage.emit is None:
                OptDriver([("pipeline", format_pipeline(stage.passes))], "in.mlir").process("module {}")


def test_the_parser_types_options_and_refuses_what_it_cannot_run():
    assert resolve("warp-unroll-loops{max-unroll=4},canonicalize") == [UnrollLoops(max_unroll=4), "canonicalize"]
    assert resolve('builtin.module(warp-autodiff{tape-bytes=0 strict=true}, func.func(cse))') == [
        Autodiff(strict=True, tape_bytes=0), "func.func(cse)"]
    assert format_pipeline([Autodiff(tape_bytes=0), "func.func(cse)"]) == \
        "builtin.module(warp-autodiff{tape-bytes=0},func.func(cse))"
    with pytest.raises(PassError, match=r"^pass 'warp-unroll-loops': option max-unroll='x' is not a valid int$"):
        resolve("warp-unroll-loops{max-unroll=x}")
    with pytest.raises(PipelineSyntaxError, match=r"^pass 'warp-inline' runs on the whole module; it cannot take "
                                                  r"a nested pipeline$"):
        resolve("warp-inline(cse)")
    with pytest.raises(TypeError, match="a pipeline entry is a pass object or upstream pipeline text"):
        format_pipeline([("warp-autodiff", {"tape-bytes": 0})])


def test_docs_pass_and_stage_tables_are_current():
    # regenerate with: python -m mlwarp.tools.doc_tables docs/compiler.md
    doc = DOC.read_text()
    assert pass_table_markdown() in doc
    assert stage_table_markdown() in doc
    assert regenerate(doc) == doc
