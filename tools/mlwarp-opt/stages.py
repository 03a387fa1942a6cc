"""The compiler's own stage tables (compiler/targets/) as `--mlwarp-pipeline=<target>[:<stage>]`,
so a lit test runs exactly the passes the compiler runs, and follows it when they change."""

from __future__ import annotations

from mlwarp.compiler.targets import TARGETS, stage_table  # no MLIR until a table is built


def targets() -> dict:
    """target -> [(stage, [entry, ...])]: the IR stages of each target's default (release) build; an entry is an
    mlwarp pass object or upstream pipeline text (compiler/pipeline_text.py prints both)."""
    return {t: [(s.name, list(s.passes)) for s in stage_table(t) if s.emit is None] for t in TARGETS}


class StageError(Exception):
    pass


def stage_passes(spec: str) -> list:
    """`cpu` -> every entry of every CPU stage; `cpu:lowered` -> up to and including stage 'lowered'."""
    target, _, last = spec.partition(":")
    known = targets()
    if target not in known:
        raise StageError(f"unknown target '{target}' for --mlwarp-pipeline; targets: {', '.join(known)}")
    stages = known[target]
    names = [s for s, _ in stages]
    if last and last not in names:
        raise StageError(f"target '{target}' has no stage '{last}'; stages: {', '.join(names)}")
    passes = []
    for stage, stage_list in stages:
        passes += stage_list
        if stage == last:
            break
    return passes
