"""Targets, in Triton's shape: per target one function that builds its ordered stage table from the
build's options, and one loop (compiler/build.py) that runs any table.

A stage is a name and either its passes (IR -> IR; dumped with MLWARP_DUMP_IR: mlwarp pass objects and
upstream pipeline text, compiler/pipeline_text.py) or an `emit` step that writes an artifact from the final IR (the CPU's object file and shared library, CUDA's
PTX and cubin). Every variant of a build is an explicit entry chosen by the target's `stages()`:
the debug build's bounds checks and line tables, forward mode's warp-jvp, the CPU build without
AVX-512 that compile_cpu falls back to after LLVM crashed. mlwarp-opt lists them (`--list-passes`)
and replays them (`--mlwarp-pipeline=<target>:<stage>`). Building a table imports no MLIR (its passes are
the registry's declarations; the artifact steps import MLIR when they run), so compiler/insert.py checks an
inserted pass's stage against the tables themselves.
"""

from __future__ import annotations

import dataclasses

from .common import (CPU_LINE_INFO, CUDA_LINE_INFO, DEFAULT_CUDA_ARCH, STAGE_VARIANTS, BuildOptions,  # noqa: F401
                     Stage, warp_stages)

from .cpu import table as cpu_table
from .cuda import table as cuda_table

_TABLES = {"cpu": cpu_table, "cuda": cuda_table}
TARGETS = tuple(_TABLES)


def stage_table(target: str, options: BuildOptions | None = None) -> list:
    """The ordered stages of a `target` ("cpu", "cuda") build with these options."""
    options = options or BuildOptions()
    return _with_inserted(target, target_module(target).stages(options), options.inserted)


def stage_points(target: str) -> tuple:
    """The IR stages of `target`'s tables, in table order: where a pass can be inserted (compiler/insert.py)."""
    points = []
    for options in STAGE_VARIANTS:
        previous = None
        for stage in target_module(target).stages(options):
            if stage.emit is None and stage.name not in points:  # (a variant's own stage: after its predecessor)
                points.insert(points.index(previous) + 1 if previous else 0, stage.name)
            previous = stage.name if stage.emit is None else previous
    return tuple(points)


def target_module(target: str):
    """The module of `target`'s table (cpu/table.py, cuda/table.py; no MLIR: their artifact steps import it)."""
    if target not in _TABLES:
        raise ValueError(f"unknown target {target!r}; targets: {', '.join(TARGETS)}")
    return _TABLES[target]


def _with_inserted(target, stages, inserted) -> list:
    """The table with the user's inserted passes at their stages (compiler/insert.py)."""
    out = []
    for stage in stages:
        before = tuple(p for p in inserted if p.applies_to(target) and p.before == stage.name)
        after = tuple(p for p in inserted if p.applies_to(target) and p.after == stage.name)
        if (before or after) and stage.emit is not None:
            raise ValueError(f"stage '{stage.name}' of target '{target}' writes an artifact; passes go before "
                             f"or after the IR stages")
        out.append(dataclasses.replace(stage, passes=before + stage.passes + after) if before or after else stage)
    return out
