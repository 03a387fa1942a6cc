"""Running a stage's passes: mlwarp's (passes/registry.py, Python passes in MLIR's pass manager),
upstream MLIR's (pipeline text), and passes a user inserted (compiler/insert.py). The stage tables
are compiler/targets/; the loop that runs them, dumps and times them is compiler/build.py.

`MLWARP_PRINT_IR_AFTER_ALL=1` prints the IR after every pass on stderr (kernels compiled now, not cached ones).
"""

from __future__ import annotations

import os
import re

from mlir import ir
from mlir.passmanager import PassManager

from .insert import InsertedPass
from .passes.registry import PASSES, PassError, pass_class  # noqa: F401  (PASSES: for mlwarp-opt and tests)

_PASS_RE = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*(\{[^}]*\})?\s*(,|$)")


def parse_pipeline(text: str) -> list:
    """`a,b{x=1 y=2}` -> [("a", {}), ("b", {"x": "1", "y": "2"})]."""
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _PASS_RE.match(text, pos)
        if not m:
            raise PassError(f"cannot parse pass pipeline at: {text[pos:]!r}")
        opts = {}
        if m.group(2):
            for item in m.group(2)[1:-1].split():
                if "=" not in item:
                    raise PassError(f"pass option {item!r} must be key=value")
                k, v = item.split("=", 1)
                opts[k] = v
        out.append((m.group(1), opts))
        pos = m.end()
    return out


def add_passes(pm: PassManager, passes) -> None:
    """Adds pass specs: "name" / "name{opt=v}" text, (name, {option: value}) pairs, InsertedPass entries.
    Ours run as Python passes, others as upstream pipeline text."""
    for spec in passes:
        if isinstance(spec, InsertedPass):
            if not isinstance(spec.pass_, str):
                _add_python_pass(pm, spec.pass_, spec.label())
                continue
            spec = spec.pass_
        if isinstance(spec, str):
            m = _PASS_RE.fullmatch(spec)
            name, opts = parse_pipeline(spec)[0] if m and m.group(3) == "" else (spec, None)
        else:
            name, opts = spec
        cls = pass_class(name)
        if cls is None:
            text = name if not opts else name + "{" + " ".join(f"{k}={v}" for k, v in opts.items()) + "}"
            try:
                pm.add(text)
            except ValueError as e:
                raise PassError(f"unknown pass or bad options: '{text}' ({str(e).splitlines()[0]})") from None
            continue
        instance = cls.parse(opts)

        def run(op, pass_, instance=instance):
            instance.run(op)

        pm.add(run, name=name, argument=name, description=cls.description)


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
