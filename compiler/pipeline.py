"""Running a stage's passes: mlwarp's (passes/registry.py, Python passes in MLIR's pass manager),
upstream MLIR's (pipeline text), and passes a user inserted (compiler/insert.py). A stage's entries are
pass objects and upstream pipeline text (compiler/pipeline_text.py parses and prints both). The stage
tables are compiler/targets/; the loop that runs them, dumps and times them is compiler/build.py.

`MLWARP_PRINT_IR_AFTER_ALL=1` prints the IR after every pass on stderr (kernels compiled now, not cached ones).
"""

from __future__ import annotations

import os

from mlir import ir
from mlir.passmanager import PassManager

from .insert import InsertedPass
from .passes.registry import PASSES, Pass, PassError, implemented  # noqa: F401  (PASSES: for mlwarp-opt and tests)
from .pipeline_text import resolve


def add_passes(pm: PassManager, entries) -> None:
    """Adds a stage's entries: pass objects, upstream pipeline text (an mlwarp pass named in it runs as
    ours), InsertedPass entries (text, or a Python callable run on the module)."""
    for entry in entries:
        if isinstance(entry, InsertedPass):
            if not isinstance(entry.pass_, str):
                _add_python_pass(pm, entry.pass_, entry.label())
                continue
            entry = entry.pass_
        for p in resolve(entry) if isinstance(entry, str) else (entry,):
            if isinstance(p, Pass):
                _add_pass(pm, p)
            else:
                _add_upstream(pm, p)


def _add_pass(pm: PassManager, p: Pass) -> None:
    instance = implemented(p)

    def run(op, pass_, instance=instance):
        instance.run(op)

    pm.add(run, name=p.name, argument=p.name, description=p.description)


def _add_upstream(pm: PassManager, text: str) -> None:
    try:
        pm.add(text)
    except ValueError as e:
        raise PassError(f"unknown pass or bad options: '{text}' ({str(e).splitlines()[0]})") from None


def _add_python_pass(pm: PassManager, fn, label: str) -> None:
    def run(op, pass_, fn=fn):
        fn(op)

    pm.add(run, name=label, argument=label.rsplit(".", 1)[-1], description=f"inserted Python pass {label}")


def run_passes(module: ir.Module, passes) -> None:
    pm = PassManager("builtin.module")
    add_passes(pm, passes)
    if os.environ.get("MLWARP_PRINT_IR_AFTER_ALL") == "1":  # as mlwarp-opt --mlir-print-ir-after-all, on stderr
        pm.enable_ir_printing(print_after_all=True)
    pm.run(module.operation)


def dump_ir(module, d, prefix, stage):
    """`MLWARP_DUMP_IR`: writes `<d>/<prefix>.<stage>.mlir`."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"{prefix}.{stage}.mlir"), "w") as f:
        f.write(str(module))
